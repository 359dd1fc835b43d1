"""The command line: bad input answers with a code and exit status 2, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plugin.surfaces.cli import main
from plugin.version import VERSION
from standins import bing_page, page

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "plugin.surfaces.cli", *args], capture_output=True, text=True,
                          env=environment, timeout=60, cwd=ROOT)


@pytest.mark.parametrize(("args", "code"), [
    (["search", "", "--json"], "query_required"),
    (["search", "   \t ", "--json"], "query_required"),
    (["search", "x" * 501, "--json"], "query_too_long"),
    (["search", "hello", "--engines", "bing,nosuch", "--json"], "unknown_engine"),
    (["search", "hello", "--limit", "ten", "--json"], "invalid_parameter"),
    (["search", "hello", "--limit", "2.5", "--json"], "invalid_parameter"),
    (["search", "hello", "--timeout-ms", "soon", "--json"], "invalid_parameter"),
    (["search", "hello", "--endpoint", "bing", "--json"], "invalid_parameter"),
    (["search", "hello", "--endpoint", "altavista=http://127.0.0.1:9", "--json"], "unknown_engine"),
    (["search", "hello", "--time-range", "fortnight", "--json"], "invalid_parameter"),
    (["search", "hello", "--no-such-flag", "--json"], "invalid_parameter"),
])
def test_bad_input_gets_a_json_error_and_exit_2(args, code):
    result = run_cli(*args)
    assert result.returncode == 2, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == code and error["message"]
    assert "Traceback" not in result.stderr


def test_unknown_engine_lists_the_known_ones(capsys):
    assert main(["search", "hello", "--engines", "nosuch", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert "bing" in error["known"] and error["unknown"] == ["nosuch"]


def test_bad_input_without_json_is_a_clear_message(capsys):
    assert main(["search", "  "]) == 2
    captured = capsys.readouterr()
    assert "query_required" in captured.err and captured.out == ""


def test_query_of_exactly_500_characters_is_accepted_and_trimmed(capsys, monkeypatch):
    monkeypatch.setenv("METASEARCH_TIMEOUT_MS", "200")
    # All engines pointed at a closed port: the search itself fails softly, the input is fine.
    code = main(["search", "  " + "a" * 500 + "  ", "--engines", "bing", "--endpoint", "bing=http://127.0.0.1:9",
                 "--json"])
    assert code == 3  # no engine could answer
    assert json.loads(capsys.readouterr().out)["query"] == "a" * 500


async def test_search_json_against_a_stand_in(standins):
    engine = await standins(page(bing_page([("Python docs", "https://docs.python.org/3/", "python documentation")])))
    # The CLI runs its own event loop, so run it in a subprocess while this loop serves the stand-in.
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", "search", "python documentation", "--engines", "bing",
        "--endpoint", f"bing={engine.url}", "--json", stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    data = json.loads(out)
    assert data["results"][0]["url"] == "https://docs.python.org/3/"
    assert data["results"][0]["engines"] == ["bing"]
    report = data["engines"][0]
    # Times are measured, not fixed: queue time includes the state store's reads (SQLite on a loaded
    # machine takes a few ms), so only their type is pinned here.
    assert isinstance(report["latency_ms"], int) and isinstance(report["queue_ms"], int) and report["queue_ms"] >= 0
    assert report == {"name": "bing", "tier": "primary", "status": "ok", "latency_ms": report["latency_ms"],
                      "queue_ms": report["queue_ms"], "rows": 1, "kept": 1, "detail": "", "cached": False}
    assert set(data) >= {"query", "results", "engines", "partial", "elapsed_ms"}


def test_version_does_not_import_heavy_modules():
    code = ("import sys; from plugin.surfaces.cli import main; main(['--version']); "
            "heavy = [m for m in ('aiohttp', 'pydantic', 'mcp', 'selectolax', 'tldextract', 'curl_cffi') if m in sys.modules]; "
            "print('HEAVY', heavy)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert f"metasearch {VERSION}" in result.stdout
    assert "HEAVY []" in result.stdout


# ----- exit status: 0 rows, 1 no results, 2 bad input, 3 no engine could answer, 4 internal error -----
async def run_cli_async(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


async def test_exit_status_tells_rows_from_no_results_from_no_engine(standins):
    from standins import bing_no_results

    good = await standins(page(bing_page([("Python docs", "https://docs.python.org/3/", "python documentation")])))
    nothing = await standins(page(bing_no_results("python documentation")))
    code, out, err = await run_cli_async("search", "python documentation", "--engines", "bing", "--endpoint",
                                         f"bing={good.url}")
    assert code == 0, err
    code, out, err = await run_cli_async("search", "python documentation", "--engines", "bing", "--endpoint",
                                         f"bing={nothing.url}", "--json")
    assert code == 1 and json.loads(out)["engines"][0]["status"] == "empty", err
    code, out, err = await run_cli_async("search", "python documentation", "--engines", "bing", "--endpoint",
                                         "bing=http://127.0.0.1:9", "--json", env={"METASEARCH_TIMEOUT_MS": "500"})
    assert code == 3 and json.loads(out)["engines"][0]["status"] == "error", err


def test_a_disabled_engine_the_caller_named_is_shown_with_why(capsys, monkeypatch):
    monkeypatch.delenv("EXA_API_KEY", raising=False)
    assert main(["search", "hello", "--engines", "exa"]) == 3  # nothing could answer
    table = capsys.readouterr().out
    line = next(line for line in table.splitlines() if line.startswith("exa "))
    assert "disabled" in line and "EXA_API_KEY" in line


def test_internal_errors_exit_4_not_the_bad_input_status(monkeypatch, capsys):
    from plugin.settings import Settings

    def broken(*args, **kwargs):
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(Settings, "load", broken)
    assert main(["engines", "--json"]) == 4
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "internal_error"


@pytest.mark.parametrize("endpoint", ["bing=http://[::1", "bing=http://", "bing=http://127.0.0.1:99999",
                                      "bing=http://exa mple.com", "bing=ftp://x.org", "bing=127.0.0.1:8080"])
def test_bad_endpoints_are_invalid_parameter_without_a_cooldown(endpoint, tmp_path):
    env = {"METASEARCH_STATE_DIR": str(tmp_path / "state")}
    result = run_cli("search", "hello", "--engines", "bing", "--endpoint", endpoint, "--json", env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "invalid_parameter" and "--endpoint bing" in error["message"]
    assert "Traceback" not in result.stderr
    # Nothing ran, so nothing was benched.
    engines = json.loads(run_cli("engines", "--json", env=env).stdout)
    assert not next(e for e in engines if e["name"] == "bing")["cooldown"]["active"]


def test_a_huge_limit_is_clamped_like_any_out_of_range_limit(capsys):
    from plugin.pipeline.query import clamp_limit

    assert clamp_limit("9999999999", 8) == 20 and clamp_limit("-9999999999", 8) == 1
    assert clamp_limit("9" * 5000, 8) == 20
    code = main(["search", "hello", "--engines", "bing", "--endpoint", "bing=http://127.0.0.1:9",
                 "--limit", "9999999999", "--timeout-ms", "300", "--json"])
    assert code == 3  # the limit was accepted; the closed port answered nothing
    assert "error" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--http"]])
def test_a_port_in_use_is_one_clear_message_and_the_same_status(command):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli(*command, "--port", str(port))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"metasearch: error [invalid_parameter]: cannot listen on 127.0.0.1:{port}: Address already in use; "
        "choose another with --port"]


async def test_verbose_logs_each_engines_exchange_to_stderr_also_with_json(standins, tmp_path):
    """--verbose says on stderr what each engine did (issue 21, item 10): its HTTP status and bytes, its
    time, rows parsed and kept and why the others were dropped; stdout stays the JSON alone."""
    import asyncio
    import re

    rows = [("Rust async book", "https://www.rust-lang.org/learn/async", "rust async await tutorial"),
            ("Async in Rust", "https://doc.rust-lang.org/std/keyword.async.html", "rust async keyword"),
            ("Rust async tutorial", "https://example.com/rust-async", "rust async tutorial blog")]
    engine = await standins(page(bing_page(rows)))
    body_bytes = len(bing_page(rows).encode())
    env = {**os.environ, "PYTHONPATH": str(ROOT), "METASEARCH_STATE_DIR": str(tmp_path)}
    env.pop("METASEARCH_LOG", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", "search", "rust async tutorial", "--engines", "bing",
        "--endpoint", f"bing={engine.url}", "--allow-domain", "rust-lang.org", "--json", "--verbose", cwd=ROOT,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = (part.decode() for part in await asyncio.wait_for(proc.communicate(), 60))
    assert proc.returncode == 0, err
    assert [row["url"] for row in json.loads(out)["results"]][:1]  # stdout is the JSON, nothing else
    assert re.search(rf"bing: GET 127\.0\.0\.1:\d+/\S* -> HTTP 200, {body_bytes} bytes", err), err
    summary = re.search(r"bing \(primary\): ok; (\d+) ms.*; 3 rows, 2 kept; dropped 1 outside the .*filter", err)
    assert summary, err
    # Without --verbose, stderr stays quiet.
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", "search", "rust async tutorial", "--engines", "bing",
        "--endpoint", f"bing={engine.url}", "--json", "--no-cache", cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert b"bing" not in err


def test_every_command_and_option_says_what_it_does():
    """`metasearch <command> --help` explains every option, and `schema` says what it prints (issue 21,
    item 17: `schema --format`, `engines --json`, `serve --port` and others had no help text)."""
    import argparse

    from plugin.surfaces.cli import build_parser

    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    said = {choice.dest: choice.help for choice in commands._choices_actions}
    undocumented = [f"{name or 'metasearch'} {' '.join(action.option_strings) or action.dest}"
                    for name, command in [(None, parser), *commands.choices.items()] for action in command._actions
                    if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
                    and not (action.help or "").strip()]
    assert undocumented == []
    assert all(said.get(name) for name in commands.choices), said
    assert "web_fetch" in said["schema"] and "JSON" in said["schema"]


def test_a_misspelt_option_is_told_the_closest_of_its_command(capsys):
    """Unknown arguments are invalid_parameter with did-you-mean on every surface, the CLI included, and
    the hint comes from the options of the command used."""
    assert main(["search", "rust", "--limt", "3", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "invalid_parameter" and "--limt (did you mean --limit?)" in error["message"]
    assert main(["fetch", "http://example.org/", "--ignore-robot", "--jsn", "--json"]) == 2
    assert "--jsn (did you mean --json?)" in json.loads(capsys.readouterr().out)["error"]["message"]
    assert main(["search", "rust", "--max-char", "3", "--json"]) == 2  # a fetch option: no hint from search's
    assert "did you mean" not in json.loads(capsys.readouterr().out)["error"]["message"]


@pytest.mark.parametrize("args", [["fetch", "http://127.0.0.2:9/", "--json"], ["verify", "http://127.0.0.2:9/", "a quote"],
                                  ["engines", "--json"], ["cooldowns"]])
def test_a_misspelt_variable_is_said_by_every_command_not_only_search(args, tmp_path):
    """A newcomer who types METASEARCH_ALLOW_PRIVATE_HOST (no S) to read a loopback page gets
    `private_address` back: the command must say that the variable it was given is no setting, as
    `search` (in its warnings) and `config` do, or the refusal reads as if the setting did not work."""
    env = {"METASEARCH_ALLOW_PRIVATE_HOST": "127.0.0.1/32", "METASEARCH_STATE_DIR": str(tmp_path)}
    result = run_cli(*args, env=env)
    assert "Traceback" not in result.stderr
    assert ("metasearch: warning: METASEARCH_ALLOW_PRIVATE_HOST is no setting and is ignored; did you mean "
            "METASEARCH_ALLOW_PRIVATE_HOSTS?") in result.stderr, result.stderr
    if "--json" in args:
        json.loads(result.stdout)  # stdout stays the JSON alone


@pytest.mark.parametrize(("flags", "said"), [(["--port", "9"], "--port only applies with --http"),
                                             (["--host", "::1"], "--host only applies with --http"),
                                             (["--port", "9", "--host", "::1"], "--port and --host only apply with --http")])
def test_mcp_flags_that_need_http_say_so_in_plain_english(flags, said):
    # In a process of its own: the MCP SDK binds sys.stderr when first imported, and capsys's stand-in for it
    # has no file number for the stdio clients of later tests in this worker.
    result = run_cli("mcp", *flags)
    assert result.returncode == 2
    assert f"metasearch: error [invalid_parameter]: {said} (streamable HTTP)" in result.stderr


@pytest.mark.parametrize(("args", "hint"), [(["searhc", "rust"], "did you mean search?"),
                                            (["fecth", "http://example.org/"], "did you mean fetch?"),
                                            (["schema", "--tool", "web_serch"], "did you mean web_search?")])
def test_a_misspelt_command_or_choice_is_told_the_closest(args, hint, capsys):
    assert main([*args, "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "invalid_parameter" and hint in error["message"], error


@pytest.mark.parametrize(("args", "parameter", "said"), [
    (["search", "rust", "--time-range", "fortnight"], "time_range", "--time-range must be one of day, week"),
    (["search", "rust", "--max-tokens", "10"], "max_tokens", "--max-tokens must be an integer of at least 300"),
    (["search", "rust", "--limit", "ten"], "limit", "--limit must be an integer"),
    (["fetch", "http://127.0.0.2/", "--max-chars", "-1"], "max_chars", "--max-chars must be at least 1"),
    (["fetch", "http://127.0.0.2/", "--format", "html"], "format", "--format must be markdown or text"),
    (["search", "rust", "--allow-domain", "a b"], "allowed_domains", "--allow-domain must hold domains"),
])
def test_a_refused_flag_value_is_told_by_the_flag_the_user_typed(args, parameter, said, capsys):
    """The command line says `--time-range must be …`, as `--timeout-ms must be …` always did, not the
    Python argument's name `time_range`; the JSON's `parameter` keeps the argument's name for programs."""
    assert main([*args, "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["message"].startswith(said) and error["parameter"] == parameter, error
    assert main(args) == 2
    assert capsys.readouterr().err.startswith(f"metasearch: error [invalid_parameter]: {said}")


def test_no_command_is_bad_input_with_the_help_on_stderr():
    """`metasearch` alone exits 2 (bad input): the help goes to stderr with the error, so a harness reading
    stdout for JSON gets nothing rather than a page of usage."""
    result = run_cli()
    assert result.returncode == 2 and result.stdout == ""
    assert "usage: metasearch" in result.stderr and "a command is required" in result.stderr
    result = run_cli("--json")
    assert result.returncode == 2 and json.loads(result.stdout)["error"]["code"] == "invalid_parameter"


def test_help_shows_each_option_s_value_as_the_readme_s_synopsis_does():
    """`search --help` said `--time-range TIME_RANGE`, `--safesearch SAFESEARCH`, `--format FORMAT`: the
    values they take were in the README's synopsis only. Each option's placeholder in `--help` is now the
    synopsis's (`--time-range day|week|month|year`); --host and --region show an example there, not a
    placeholder."""
    import argparse
    import re

    from plugin.surfaces.cli import build_parser

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    synopsis = readme[readme.index("## Command line"):readme.index("### Exit status")].split("```")[1]
    documented: dict[tuple[str, str], str] = {}
    command = ""
    for line in synopsis.splitlines():
        line = line.split("  #")[0]
        if found := re.match(r"metasearch (\w+)", line):
            command = found[1]
        for flag, value in re.findall(r"(--[a-z-]+) ([^\s\]\[|.]+(?:\|[^\s\]\[]+)*)", line):
            documented[(command, flag)] = value
    [commands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    shown = {(name, option): action.metavar or action.dest.upper() for name, parser in commands.choices.items()
             for action in parser._actions if action.nargs != 0 for option in action.option_strings
             if option.startswith("--") and option not in ("--help", "--host", "--region", "--config")}
    assert {key: value for key, value in shown.items() if key in documented} == \
        {key: documented[key] for key in shown if key in documented}
    assert len([key for key in shown if key in documented]) >= 30
    assert "[--time-range day|week|month|year]" in " ".join(commands.choices["search"].format_usage().split())
