"""The README's engine table ("## Engines") and the engines' own facts say the same thing.

One test instead of a per-engine restatement of each constant: a changed weight, tier, region, index or
key variable fails here until the README says it too, and an engine missing from the table fails.
"""

from __future__ import annotations

import re
from pathlib import Path

from engines import ENGINES

README = Path(__file__).resolve().parents[2] / "README.md"


def engine_table() -> dict[str, dict[str, str]]:
    """Rows of the first table under "## Engines", keyed by engine name, cells by column header."""
    section = README.read_text(encoding="utf-8").split("\n## Engines\n", 1)[1].split("\n## ", 1)[0]
    lines = [line.strip() for line in section.splitlines() if line.strip().startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:  # after the header and its |---| rule
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        row = dict(zip(header, cells))
        rows[row["engine"].strip("`")] = row
    return rows


def _region(cell: str) -> str:
    return "cjk" if cell.lower().startswith("cjk") else "global" if cell.lower().startswith("global") else cell


def _index(cell: str) -> str:
    """The index id a cell names: a `code` id where the display name differs ("360 Search (`so360`)"),
    else the name itself, lower-cased, without a remark ("SearXNG (mixed)" -> "searxng")."""
    code = re.search(r"`([^`]+)`", cell)
    return code.group(1) if code else re.sub(r"\s*\(.*\)$", "", cell).lower()


def test_every_engine_is_in_the_table_and_nothing_else():
    assert sorted(engine_table()) == sorted(ENGINES)


def test_the_table_states_each_engines_facts():
    for name, row in engine_table().items():
        facts = ENGINES[name].facts
        key = facts.key_env or facts.url_env
        assert row["tier"] == facts.tier, name
        assert float(row["weight"]) == facts.weight, name
        assert _region(row["region"]) == facts.region, name
        assert _index(row["index"]) == facts.index, name
        assert row["key"] == (f"`{key}`" if key else "–"), name
