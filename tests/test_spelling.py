"""Misspelt queries against the real Bing and Brave pages for "javascript tutorial": the engines' own
correction and independent engines agreeing overrule the word gate; Bing's love poems for
"tình hình thời tiết" (weather) are still dropped."""

from __future__ import annotations

import pytest

from conftest import corpus_path
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import ddg_page, page


async def search(standins, query: str, pages: dict[str, bytes]):
    endpoints = {}
    for engine, body in pages.items():
        endpoints[engine] = (await standins(page(body))).url
    async with Searcher(Settings(endpoints=endpoints, engines=list(pages))) as searcher:
        return await searcher.search(query)


# Misspelt beyond a typing slip (the gate accepts those itself): only the engines' agreement keeps them.
@pytest.mark.parametrize("query", ["jvscrpt ttrl", "jvscrpt ttrl fr bgnnrs"])
async def test_independent_engines_agreeing_keep_a_misspelt_query_answered(query, standins):
    bing = corpus_path("bing", "websearchmcp__javascript-tutorial.html").read_bytes()
    brave = corpus_path("brave", "websearchmcp__javascript-tutorial.html").read_bytes()
    response = await search(standins, query, {"bing": bing, "brave": brave})
    statuses = {report.name: report for report in response.engines}
    assert statuses["bing"].status == "ok" and statuses["brave"].status == "ok", statuses
    assert "also found by brave" in statuses["bing"].detail
    assert len(response.results) == 8
    assert any("w3schools.com" in row.url for row in response.results)


async def test_agreeing_primaries_answer_without_starting_the_fallback(standins):
    # The gate drops both misspelt lists; the two indexes agreeing restores them before the tier decides,
    # so the fallback engine is not asked (it used to be, and its rows joined the answer).
    bing = corpus_path("bing", "websearchmcp__javascript-tutorial.html").read_bytes()
    brave = corpus_path("brave", "websearchmcp__javascript-tutorial.html").read_bytes()
    spare = await standins(page(ddg_page([("JavaScript Tutorial", "https://spare.example/js", "js")])))
    endpoints = {"bing": (await standins(page(bing))).url, "brave": (await standins(page(brave))).url,
                 "duckduckgo-html": spare.url}
    settings = Settings(endpoints=endpoints, engines=list(endpoints),
                        tiers={"bing": "primary", "brave": "primary", "duckduckgo-html": "fallback"})
    async with Searcher(settings) as searcher:
        response = await searcher.search("jvscrpt ttrl")
    statuses = {report.name: report.status for report in response.engines}
    assert statuses == {"bing": "ok", "brave": "ok", "duckduckgo-html": "skipped"}, response.engines
    assert spare.requests == [] and len(response.results) == 8


async def test_one_engine_alone_is_no_agreement(standins):
    # Too far from any page word for a typing slip (three and four letters dropped): only agreement
    # between indexes could keep this list, and one engine is none.
    bing = corpus_path("bing", "websearchmcp__javascript-tutorial.html").read_bytes()
    response = await search(standins, "jvscrpt ttrl", {"bing": bing})
    assert response.engines[0].status == "irrelevant" and response.results == []


@pytest.mark.parametrize("query", ["javscript tutoral", "javascrpt tutorail", "javasscript tuotrial"])
async def test_typing_slips_keep_engines_of_one_index_answered(query, standins):
    """Issue 21 item 4: both words a dropped, swapped or doubled letter away from the pages' words, no
    "Including results for" on the page, and the two engines draw on one index (no agreement between
    indexes to restore them): the Latin gate itself accepts a typing slip."""
    bing = corpus_path("bing", "websearchmcp__javascript-tutorial.html").read_bytes()
    response = await search(standins, query, {"bing": bing, "bing-cn": bing})
    statuses = {report.name: report.status for report in response.engines}
    assert statuses == {"bing": "ok", "bing-cn": "ok"}, response.engines
    assert len(response.results) == 8 and any("w3schools.com" in row.url for row in response.results)


def test_a_typing_slip_is_one_edit_up_to_eight_letters_two_beyond_never_for_short_words_or_numbers():
    from plugin.pipeline.relevance import build_gate, typo_allowance, within_edits

    assert [typo_allowance(w) for w in ("node", "react", "tutorial", "javascript", "3000000", "python3")] == \
        [0, 1, 1, 2, 0, 0]
    assert within_edits("tutorail", "tutorial", 1)  # two neighbours swapped: one edit
    assert within_edits("tutoral", "tutorial", 1) and within_edits("tutorrial", "tutorial", 1)
    assert not within_edits("ttorial", "tutoriak", 1) and within_edits("ttorial", "tutoriak", 2)
    assert within_edits("javscrpt", "javascript", 2) and not within_edits("jvscrpt", "javascript", 2)
    assert within_edits("ca", "ac", 1) and not within_edits("abc", "cab", 1)  # a swap of neighbours only

    def keeps(query: str, title: str) -> bool:
        return build_gate(query).keeps(title, "", "https://example.org/")

    assert keeps("kubernetes deploymnet", "Deployment docs") and keeps("pyhton", "Python releases")
    assert keeps("tutroials", "Tutorials for all")  # 9 letters: two edits allowed
    # Short words and numbers only match as they are: "node" is not "nose", 2025 is not 2026.
    assert not keeps("node", "Nose surgery") and not keeps("2025", "Shop 2026 deals")
    assert keeps("react", "Reach out")  # 5 letters, one edit: accepted
    assert not keeps("reacts", "Reach out")  # 6 letters, two edits away (t->h, drop s): no
    # The page word must be letters too: a query word is never "one edit" from a number or a code.
    assert not keeps("model", "mode1 x")


async def test_the_engines_own_correction_is_read(standins):
    bing = corpus_path("bing", "websearchmcp__javascript-tutorial.html").read_text(encoding="utf-8")
    # Bing's "Including results for" notice, as it heads the results list.
    notice = ('<li class="b_ans"><div id="sp_requery"><h2>Including results for <a href="/search?q=javascript+'
              'tutorial">javascript tutorial</a>.</h2><div id="sp_recourse">Do you want results only for '
              '<a href="/search?q=javascrpt+tutorail&amp;nfpr=1">javascrpt tutorail</a>?</div></div></li>')
    corrected = bing.replace('<ol id="b_results"', '<ol id="b_results"', 1)
    marker = corrected.index(">", corrected.index('<ol id="b_results"')) + 1
    corrected = corrected[:marker] + notice + corrected[marker:]
    response = await search(standins, "jvscrpt ttrl", {"bing": corrected.encode()})
    report = response.engines[0]
    assert report.status == "ok" and "javascript tutorial" in report.detail, report
    assert len(response.results) == 8


async def test_the_love_poems_are_still_dropped(standins):
    poems = corpus_path("bing", "kaiz__tinh-hinh-thoi-tiet.html").read_bytes()
    response = await search(standins, "tình hình thời tiết", {"bing": poems})
    assert response.engines[0].status == "irrelevant" and response.results == []
    # ...also beside an independent engine that found other pages.
    brave = corpus_path("brave", "websearchmcp__javascript-tutorial.html").read_bytes()
    response = await search(standins, "tình hình thời tiết", {"bing": poems, "brave": brave})
    assert {report.name: report.status for report in response.engines} == {"bing": "irrelevant",
                                                                           "brave": "irrelevant"}


def test_a_correction_exactly_as_close_as_the_threshold_is_a_respelling():
    """CORRECTION_MIN_SIMILARITY is inclusive: 'abcxy' shares 3 of 5 letters in order with 'abcde', a
    ratio of exactly 0.6; one letter fewer in common and it is another question."""
    from plugin.pipeline.filters import CORRECTION_MIN_SIMILARITY, spelling_of

    assert CORRECTION_MIN_SIMILARITY == 0.6
    assert spelling_of("abcxy", "abcde") and spelling_of("ABCXY", "abcde")  # folded before comparing
    assert not spelling_of("abxyz", "abcde") and not spelling_of(None, "abcde") and not spelling_of("", "x")
    assert spelling_of("javascrpt tutorail", "javascript tutorial")


def test_a_cjk_list_is_restored_to_the_pages_another_index_shares_only():
    """For a CJK query the gate judges rows, so agreement restores rows: the pages another index also
    found, not the rest of the list."""
    from engines import ENGINES
    from engines.base import Row
    from plugin.pipeline.filters import restore_agreeing
    from plugin.pipeline.plan import make_plan
    from plugin.pipeline.runner import EngineRun

    plan = make_plan(Settings(), "成都天气预报")
    shared = [Row("Weather A", "https://a.example/w", "", 1), Row("Weather B", "https://b.example/w", "", 2)]
    own = Row("Other", "https://c.example/", "", 3)
    bing_cn = EngineRun(ENGINES["bing-cn"], "primary", "irrelevant", rows=3, all_rows=[*shared, own])
    baidu = EngineRun(ENGINES["baidu"], "primary", "irrelevant", rows=3,
                      all_rows=[Row("天气 B", "https://b.example/w", "", 1), Row("天气 A", "https://a.example/w/", "", 2),
                                Row("Else", "https://d.example/", "", 3)])
    restored = {run.engine.name: run for run in restore_agreeing([bing_cn, baidu], plan)}
    assert [row.url for row in restored["bing-cn"].kept] == [row.url for row in shared]
    assert restored["bing-cn"].status == "ok"
    assert restored["bing-cn"].detail == ("kept: 2 of its pages also found by baidu (another index), "
                                          "though none shares the query's words")
    assert bing_cn.status == "irrelevant" and bing_cn.kept == []  # the run itself is not changed
    # Two other indexes agreeing on different pages: the list keeps the pages either shares.
    sogou = EngineRun(ENGINES["sogou"], "primary", "ok", rows=2,
                      all_rows=[own, Row("Weather B", "https://b.example/w", "", 2)])
    again = {run.engine.name: run for run in restore_agreeing([bing_cn, baidu, sogou], plan)}
    assert {row.url for row in again["bing-cn"].kept} == {row.url for row in [*shared, own]}
    assert again["bing-cn"].detail == ("kept: 3 of its pages also found by baidu, sogou (another index), "
                                       "though none shares the query's words")


def test_rows_all_outside_the_operators_say_which_filter():
    from datetime import datetime

    from engines import ENGINES
    from engines.base import Row
    from plugin.pipeline.filters import survivors
    from plugin.pipeline.plan import make_plan

    plan = make_plan(Settings(), "rust async site:docs.rs", now=datetime(2026, 11, 30), time_range="week")
    rows = [Row("Rust async", "https://other.example/a", "rust async", 1),
            Row("Rust async 2", "https://x.example/b", "rust async", 2)]
    assert survivors(ENGINES["bing"], rows, plan) == ([], "empty", "2 rows, none inside the site=docs.rs/time=week filter")


def test_engines_of_one_index_are_no_agreement():
    """Issue 23 survivor (filters.restore_agreeing): Bing, Bing China, both DuckDuckGos and Yahoo draw on one
    index; their lists sharing pages is one index repeating itself, not a second opinion, so a gated list
    is not restored by them. A list of another index sharing as many pages is."""
    from engines import ENGINES
    from engines.base import Row
    from plugin.pipeline.filters import AGREEMENT_MIN_URLS, restore_agreeing
    from plugin.pipeline.plan import make_plan
    from plugin.pipeline.runner import EngineRun

    plan = make_plan(Settings(), "jvscrpt ttrl")
    pages = [Row(f"Page {i}", f"https://site{i}.example/", "", i) for i in range(1, AGREEMENT_MIN_URLS + 2)]
    bing_index = [name for name, engine in ENGINES.items() if engine.facts.index == "bing"]
    assert {"bing", "bing-cn", "duckduckgo-html", "duckduckgo-lite", "yahoo"} <= set(bing_index)
    runs = [EngineRun(ENGINES[name], "primary", "irrelevant", rows=len(pages), all_rows=list(pages))
            for name in bing_index]
    assert all(run.status == "irrelevant" for run in restore_agreeing(runs, plan))
    brave = EngineRun(ENGINES["brave"], "primary", "irrelevant", rows=len(pages), all_rows=list(pages))
    restored = {run.engine.name: run.status for run in restore_agreeing([*runs, brave], plan)}
    assert set(restored.values()) == {"ok"}
