"""Page memory is compact (issue 29, item 23): a row a page showed is kept as its URL alone, the
rows not shown yet keep their text, and page n ranks from that memory exactly as it would from the whole
rows (a property over generated engine lists: votes, trust, boosts, domains and order all equal)."""

from __future__ import annotations

import asyncio
import json
from datetime import date, datetime

from examples import scaled
from hypothesis import given, settings as hypothesis_settings, strategies as st

from engines import ENGINES
from engines.base import Row
from plugin.infra.state import MemoryState
from plugin.pipeline import pages
from plugin.pipeline.canonical import identity
from plugin.pipeline.runner import EngineRun
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings

NOW = datetime(2026, 11, 29, 12, 0, 0)
KEY = "q" * 64


def row(i: int, position: int, *, domain: int = 0, content: str | None = None, day: int | None = None) -> Row:
    return Row(title=f"Python asyncio guide {i}", url=f"https://site{domain or i}.example.org/asyncio/{i}",
               snippet=f"python asyncio part {i} " + "words " * 20, position=position,
               date=date(2026, 11, day) if day else None, source=f"Source {i}" if day else None, content=content)


async def test_a_shown_row_is_kept_as_its_url_and_place_and_the_others_keep_their_text():
    state = MemoryState()
    rows = {"bing": [row(1, 1), row(2, 2, content="the page text the engine sent"), row(3, 3, day=20)],
            "brave": [row(2, 1), row(4, 2)]}
    shown = [identity(rows["bing"][0].url), identity(rows["bing"][1].url)]
    await pages.remember(state, KEY, 1, shown, rows, 3600, shown_before={identity(rows["brave"][1].url)})
    raw = await state.cache_get(f"pages:{KEY}:1")
    stored = json.loads(raw)
    assert stored["shown"] == shown
    assert stored["rows"] == {
        "bing": [[rows["bing"][0].url], [rows["bing"][1].url],
                 [rows["bing"][2].url, 3, "Python asyncio guide 3", rows["bing"][2].snippet, "2026-11-20", "Source 3"]],
        "brave": [[rows["brave"][0].url], [rows["brave"][1].url]]}  # row 4: shown on an earlier page
    assert "the page text the engine sent" not in raw and "Python asyncio guide 1" not in raw
    memory = await pages.recalled(state, KEY, 1)
    assert memory.shown == shown
    assert memory.rows["bing"][2] == rows["bing"][2]  # a row not shown comes back whole (but the sent text)
    assert memory.rows["bing"][0] == Row(title="", url=rows["bing"][0].url, snippet="", position=0)


async def test_a_memory_of_an_earlier_version_is_still_read_and_a_broken_one_is_worked_out_again():
    state = MemoryState()
    old = {"shown": ["site1.example.org/asyncio/1"],
           "rows": {"bing": [{"title": "T", "url": "https://site1.example.org/asyncio/1", "snippet": "S",
                              "position": 1, "date": "2026-11-02", "source": None}]}}
    await state.cache_put(f"pages:{KEY}:1", json.dumps(old), 60)
    memory = await pages.recalled(state, KEY, 1)
    assert memory.rows["bing"] == [Row(title="T", url="https://site1.example.org/asyncio/1", snippet="S",
                                       position=1, date=date(2026, 11, 2))]
    for broken in ('{"shown": [], "rows": {"bing": [["https://x.example/", 1]]}}', "not json", '{"rows": {}}',
                   '{"shown": [], "rows": {"bing": [[1]]}}', '{"shown": [], "rows": {"bing": [[]]}}',
                   '{"shown": [], "rows": {"bing": ["https://x.example/"]}}'):
        await state.cache_put(f"pages:{KEY}:2", broken, 60)
        assert await pages.recalled(state, KEY, 2) is None
    assert await pages.recalled(state, KEY, 3) is None


def engine_lists():
    """Two or three engines' page-1 and page-2 rows over a small pool of URLs (so that engines agree, lists
    repeat a URL, and domains hold several rows)."""
    pool = st.integers(min_value=1, max_value=14)
    one_list = st.lists(pool, min_size=0, max_size=8)
    return st.fixed_dictionaries({"bing": st.tuples(one_list, one_list), "brave": st.tuples(one_list, one_list),
                                  "mojeek": st.tuples(one_list, one_list)})


def run_of(name: str, numbers: list[int]) -> EngineRun:
    kept = [row(n, place, domain=n % 5 + 1, day=n if n % 3 == 0 else None)
            for place, n in enumerate(numbers, start=1)]
    return EngineRun(ENGINES[name], "primary", "ok", rows=len(kept), kept=kept)


@hypothesis_settings(max_examples=scaled(60), deadline=None)
@given(lists=engine_lists(), limit=st.integers(min_value=1, max_value=6), per_domain=st.sampled_from([None, 1, 2]))
def test_page_two_ranks_from_the_compact_memory_as_from_the_whole_rows(lists, limit, per_domain):
    settings = Settings(engines=list(lists), max_per_domain=per_domain, state_backend="memory")
    searcher = Searcher(settings, state=MemoryState())

    async def check() -> None:
        plan = searcher.plan("python asyncio guide", now=NOW, limit=limit)
        first_runs = [run_of(name, pair[0]) for name, pair in lists.items()]
        first = searcher.rank(plan, first_runs)
        shown = [k for k in (identity(r.url) for r in first) if k]
        whole = {run.engine.name: list(run.kept) for run in first_runs if run.kept}
        await pages.remember(searcher.state, KEY, 1, shown, whole, 3600)
        memory = await pages.recalled(searcher.state, KEY, 1)
        second_plan = searcher.plan("python asyncio guide", now=NOW, limit=limit, page=2)
        second_runs = [run_of(name, pair[1]) for name, pair in lists.items()]
        from_whole = searcher.rank(second_plan, second_runs, set(shown), whole)
        from_memory = searcher.rank(second_plan, second_runs, set(memory.shown), memory.rows)
        assert [r.model_dump() for r in from_memory] == [r.model_dump() for r in from_whole]

    asyncio.run(check())
