"""The README documents what issue 10 asked for, checked against the code it describes: the MCP tool's
arguments (safesearch and its levels included), the CLI's exit statuses, where the state file lives and
the `cooldowns` command, and the absolute path MCP clients must be given."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from plugin.infra.state import state_path
from plugin.settings import Settings
from plugin.surfaces import cli
from plugin.surfaces.schemas import input_schema

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def section(heading: str) -> str:
    """From `heading` to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = README.index(f"\n{heading}\n") + 1
    following = re.compile(rf"^#{{1,{len(level)}}} ", flags=re.M).search(README, start + len(heading))
    return README[start:following.start() if following else len(README)]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_every_web_search_argument_is_documented_with_the_safesearch_levels():
    harness = section("## Plugging into an agent harness")
    signature = re.search(r"`web_search\((.*?)\)`", harness, flags=re.S).group(1)
    documented = {re.match(r"\s*(\w+)", part).group(1) for part in signature.split(",")}
    properties = input_schema()["properties"]
    assert documented == set(properties)
    [levels] = [option["enum"] for option in properties["safesearch"]["anyOf"] if "enum" in option]
    assert set(levels) == {"off", "moderate", "strict"}
    assert "`safesearch` is `off`, `moderate` or `strict`" in flat(harness)


def test_the_exit_statuses_are_documented_as_the_cli_returns_them():
    table = dict(re.findall(r"^\| (\d) \| (.+?) \|$", section("### Exit status"), flags=re.M))
    meanings = {cli.EXIT_OK: "rows returned", cli.EXIT_NO_RESULTS: "no results", cli.EXIT_BAD_INPUT: "bad input",
                cli.EXIT_NO_ENGINE: "no engine could answer", cli.EXIT_INTERNAL: "internal error"}
    assert sorted(map(int, table)) == sorted(meanings)
    for status, meaning in meanings.items():
        assert table[str(status)].startswith(meaning), (status, table[str(status)])


def test_the_state_file_and_the_cooldowns_command_are_documented(monkeypatch, tmp_path):
    for variable in ("METASEARCH_STATE_DIR", "XDG_STATE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert state_path(Settings()) == tmp_path / ".local" / "state" / "metasearch" / "state.sqlite3"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_path(Settings()) == tmp_path / "xdg" / "metasearch" / "state.sqlite3"
    monkeypatch.setenv("METASEARCH_STATE_DIR", str(tmp_path / "mine"))
    assert state_path(Settings()) == tmp_path / "mine" / "state.sqlite3"
    assert ("`state.sqlite3` in `METASEARCH_STATE_DIR`, else `$XDG_STATE_HOME/metasearch/`, else "
            "`~/.local/state/metasearch/`") in flat(README)

    # Every command of the CLI is in its usage block with every option: `cooldowns`, `engines --endpoint`
    # and `search --ignore-cooldowns` among them.
    [commands] = [a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    usage = re.search(r"```sh\n(metasearch search .*?)```", README, flags=re.S).group(1)
    entries = dict(re.findall(r"^metasearch (\w+)(.*?)(?=^metasearch |\Z)", usage, flags=re.M | re.S))
    assert set(entries) == set(commands.choices)
    for name, parser in commands.choices.items():
        options = {o for action in parser._actions for o in action.option_strings if o not in ("-h", "--help")}
        assert all(re.search(rf"{option}\b", entries[name]) for option in options), (name, options, entries[name])
    assert "--ignore-cooldowns" in entries["search"] and "--endpoint" in entries["engines"]
    assert {"--json", "--clear"} <= set(re.findall(r"--\w+", entries["cooldowns"]))


def test_mcp_clients_are_told_to_use_the_absolute_path():
    harness = section("## Plugging into an agent harness")
    assert "absolute path" in flat(harness).lower()
    commands = re.findall(r'"command": "([^"]+)"', harness) + re.findall(r'^command = "([^"]+)"', harness, flags=re.M)
    commands += re.findall(r"^claude mcp add metasearch -- (\S+)", harness, flags=re.M)
    assert len(commands) >= 3
    assert all(command.startswith("/") and command.endswith("/bin/metasearch") for command in commands), commands
