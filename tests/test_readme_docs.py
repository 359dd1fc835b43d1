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
        # --config, which every command that reads settings takes, is said once below the block.
        options = {o for action in parser._actions for o in action.option_strings
                   if o not in ("-h", "--help", "--config")}
        assert all(re.search(rf"{option}\b", entries[name]) for option in options), (name, options, entries[name])
    assert "Every command but `schema` takes `--config FILE`, before or after the subcommand" in flat(README)
    assert all(any("--config" in a.option_strings for a in parser._actions)
               for name, parser in commands.choices.items() if name != "schema")
    assert "--ignore-cooldowns" in entries["search"] and "--endpoint" in entries["engines"]
    assert {"--json", "--clear"} <= set(re.findall(r"--\w+", entries["cooldowns"]))


def test_mcp_clients_are_told_to_use_the_absolute_path():
    harness = section("## Plugging into an agent harness")
    assert "absolute path" in flat(harness).lower()
    commands = re.findall(r'"command": "([^"]+)"', harness) + re.findall(r'^command = "([^"]+)"', harness, flags=re.M)
    commands += re.findall(r"^claude mcp add metasearch -- (\S+)", harness, flags=re.M)
    assert len(commands) >= 3
    assert all(command.startswith("/") and command.endswith("/bin/metasearch") for command in commands), commands


# ----- every figure names the command that produced it (issue 21, item 18) -----
# A figure is a measured number: a decimal, a time (ms, s) or a ratio (×) in a block that speaks of a
# measurement (a percentile, agreement, a retrieval metric, F1, CPU, throughput, overhead). Settings
# tables and prose about defaults speak of none of these, so their numbers are not figures.
MEASUREMENT = re.compile(r"\b(p50|p90|p95|p99|median|agreement|nDCG@8|MRR@8|p@8|r@8|F1|precision|recall|"
                         r"searches/s|CPU|overhead)\b", re.I)
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])|\b\d+(?:\.\d+)? ?(?:ms|s)\b|\d+(?:\.\d+)?×")
# A command: `python scripts/x.py ...` or `metasearch ...` in backticks, or a line of a code block.
COMMAND = re.compile(r"`(?:python scripts/[\w./-]+\.py|metasearch )[^`]*`|^(?:python scripts/[\w./-]+\.py|metasearch )",
                     re.M)


def readme_blocks(text: str) -> list[tuple[str, str]]:
    """(heading, block) for every paragraph, table and code block, in order."""
    found, heading = [], ""
    for chunk in re.split(r"(```.*?```)|\n\s*\n", text, flags=re.S):
        lines = (chunk or "").strip().splitlines()
        while lines and lines[0].startswith("#"):
            heading, lines = lines[0], lines[1:]
        if lines:
            found.append((heading, "\n".join(lines)))
    return found


def figures_without_a_command(text: str) -> list[str]:
    """Blocks holding figures that name no command, and that no command reaches. A command reaches the
    blocks after it in the same section as long as each of them holds figures or introduces what follows
    (ends with a colon): "Results (`python scripts/bench.py ...`):" covers the tables and the paragraphs
    discussing them. In a table only its header reaches the rows; a table reached by no command needs a
    command in every row that holds a figure."""
    orphans, covered, section = [], False, None
    for heading, block in readme_blocks(text):
        if heading != section:
            section, covered = heading, False
        lines = block.splitlines()
        table = block.startswith("|")
        has_figures = bool(MEASUREMENT.search(block) and NUMBER.search(block))
        introduces = block.rstrip().endswith(":") or block.startswith("```")
        # A command reaches figures in its own block, or those it introduces; prose that merely mentions
        # `metasearch serve` produced nothing.
        names_command = bool(COMMAND.search(lines[0] if table else block)) and (has_figures or introduces)
        covered = covered or names_command
        if has_figures and not covered:
            if table:
                orphans += [f"{heading}: {row[:100]}" for row in lines[1:]
                            if NUMBER.search(row) and not COMMAND.search(row)]
            else:
                orphans.append(f"{heading}: {block[:100]}")
        if not (names_command or has_figures or introduces):
            covered = False
    return orphans


def test_every_figure_in_the_readme_names_the_command_that_produced_it():
    assert figures_without_a_command(README) == []


def test_the_figure_rule_finds_a_figure_without_its_command():
    """The rule itself: a measured number with no command reaching it is found, in prose or a table row."""
    prose = "## Speed\n\nA search takes p50 1.10 s on this machine.\n"
    assert len(figures_without_a_command(prose)) == 1
    assert figures_without_a_command(prose.replace("machine.", "machine (`python scripts/latency.py hung`).")) == []
    table = ("## Speed\n\n| scenario | p50 |\n|---|---|\n| hung (`python scripts/latency.py hung`) | 1.1 s |\n"
             "| burst | 8.5 s |\n")
    assert [orphan.split(": ", 1)[1] for orphan in figures_without_a_command(table)] == ["| burst | 8.5 s |"]
    introduced = "## Speed\n\nFrom `python scripts/latency.py hung`:\n\n| q | p50 |\n|---|---|\n| 0.5 | 1.1 s |\n"
    assert figures_without_a_command(introduced) == []
    broken = introduced.replace("hung`:", "hung`.\n\nSomething else entirely.")
    assert len(figures_without_a_command(broken)) == 1
    assert figures_without_a_command("## Settings\n\n| `quorum` | 0.5 | share of engines |\n") == []
    mentioned = "## Speed\n\n`metasearch serve` keeps one searcher.\n\nMeasured:\n\n| q | p50 |\n|---|---|\n| 0.5 | 1.1 s |\n"
    assert len(figures_without_a_command(mentioned)) == 1  # a mention is not the command that measured
