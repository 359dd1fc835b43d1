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
    assert code == 0
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
    assert data["engines"][0] == {"name": "bing", "tier": "primary", "status": "ok", "latency_ms":
                                  data["engines"][0]["latency_ms"], "queue_ms": 0, "rows": 1, "kept": 1,
                                  "detail": "", "cached": False}
    assert set(data) >= {"query", "results", "engines", "partial", "elapsed_ms"}


def test_version_does_not_import_heavy_modules():
    code = ("import sys; from plugin.surfaces.cli import main; main(['--version']); "
            "heavy = [m for m in ('aiohttp', 'pydantic', 'mcp', 'selectolax', 'tldextract') if m in sys.modules]; "
            "print('HEAVY', heavy)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert f"metasearch {VERSION}" in result.stdout
    assert "HEAVY []" in result.stdout
