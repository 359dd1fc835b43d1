"""`metasearch cooldowns [--json] [--clear [ENGINE]]`, `engines --endpoint`, `search --ignore-cooldowns`
(issue 10): users see and clear what is benched, for the same upstream the search used."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from standins import bing_page, page

ROOT = Path(__file__).resolve().parents[1]
ROWS = [("Rust async book", "https://rust-lang.github.io/async-book/", "rust async guide")]


async def run_cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "plugin.surfaces.cli", *args, cwd=ROOT,
                                                env={**os.environ, "PYTHONPATH": str(ROOT)},
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


async def test_list_see_in_engines_try_anyway_and_clear(standins, private_state):
    failing = await standins(page("down", status=503))
    endpoint = f"bing={failing.url}"
    search = ("search", "rust async", "--engines", "bing", "--endpoint", endpoint, "--json")
    code, out, _ = await run_cli(*search)
    assert code == 3 and json.loads(out)["engines"][0]["status"] == "error"  # 3: no engine could answer

    code, out, _ = await run_cli("cooldowns", "--json")
    listed = json.loads(out)
    assert code == 0 and listed["store"] == f"sqlite {private_state / 'state.sqlite3'}"
    [entry] = listed["cooldowns"]
    assert entry["upstream"] == f"bing@{failing.url}" and entry["engine"] == "bing"
    assert entry["endpoint"] == failing.url and entry["status"] == "error" and entry["failures"] == 1
    assert 0 < entry["seconds_left"] <= 30

    code, out, _ = await run_cli("cooldowns")
    assert code == 0 and f"bing@{failing.url}" in out and "state store: sqlite" in out

    # `engines` with the same --endpoint shows the same upstream's cooldown; without it, bing.com's.
    code, out, _ = await run_cli("engines", "--endpoint", endpoint, "--json")
    bing = next(row for row in json.loads(out) if row["name"] == "bing")
    assert code == 0 and bing["cooldown"]["active"] is True and bing["cooldown"]["last_failure"] == "error"
    code, out, _ = await run_cli("engines", "--json")
    assert next(row for row in json.loads(out) if row["name"] == "bing")["cooldown"]["active"] is False

    code, out, _ = await run_cli(*search)
    assert code == 3 and json.loads(out)["engines"][0]["status"] == "cooldown" and len(failing.requests) == 1
    failing.behaviour = page(bing_page(ROWS))
    code, out, _ = await run_cli(*search, "--ignore-cooldowns")
    assert code == 0 and json.loads(out)["engines"][0]["status"] == "ok" and len(failing.requests) == 2

    failing.behaviour = page("down", status=503)
    await run_cli(*search, "--no-cache")
    code, out, _ = await run_cli("cooldowns", "--clear", "bing", "--json")
    assert code == 0 and json.loads(out)["cleared"] == [f"bing@{failing.url}"]
    assert json.loads(out)["cooldowns"] == []
    code, out, _ = await run_cli("cooldowns")
    assert "no engine is cooling down" in out


async def test_clear_everything_and_refuse_an_unknown_engine(standins):
    failing = await standins(page("down", status=503))
    for name in ("bing", "brave"):
        await run_cli("search", "rust async", "--engines", name, "--endpoint", f"{name}={failing.url}", "--json")
    code, out, _ = await run_cli("cooldowns", "--json")
    assert sorted(entry["engine"] for entry in json.loads(out)["cooldowns"]) == ["bing", "brave"]
    code, out, _ = await run_cli("cooldowns", "--clear", "nope", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "unknown_engine"
    # the engine@endpoint spelling names an engine too (it cleared nothing and exited 0)
    code, out, _ = await run_cli("cooldowns", "--clear", f"nope@{failing.url}", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "unknown_engine"
    code, out, _ = await run_cli("cooldowns", "--clear", "--json")
    assert code == 0 and len(json.loads(out)["cleared"]) == 2 and json.loads(out)["cooldowns"] == []
