"""Relevance gate, query intent and fusion, on rows built in the test."""

from __future__ import annotations

import itertools
import unicodedata
from datetime import date, datetime

import pytest
from hypothesis import assume, given, strategies as st

from engines import ENGINES
from engines.base import Row
from plugin.pipeline.fusion import EngineList, freshness, fuse, interleave, vote
from plugin.pipeline.intent import Intent, is_timely, official_domains, query_subject, read_intent
from plugin.pipeline.operators import parse_operators
from plugin.pipeline.relevance import build_gate, core_words, fold
from plugin.settings import Settings

NOW = datetime(2026, 11, 29)


def intent_of(query: str) -> Intent:
    return read_intent(query, parse_operators(query, now=NOW), official_sites=Settings().official_sites, now=NOW)


def rows(*urls: str, title: str = "python notes") -> list[Row]:
    return [Row(title=title, url=u, snippet="", position=i) for i, u in enumerate(urls, start=1)]


def test_weighted_round_robin_gives_weight_two_two_slots_a_round():
    a = EngineList("a", 2.0, "global", "ia", rows(*[f"https://a{i}.org/" for i in range(4)]))
    b = EngineList("b", 1.0, "global", "ib", rows(*[f"https://b{i}.org/" for i in range(4)]))
    order = [(lst.engine, row.position) for lst, row in interleave([b, a], "global", 0.5)]
    assert order[:6] == [("a", 1), ("a", 2), ("b", 1), ("a", 3), ("a", 4), ("b", 2)]


def test_an_engine_whose_list_runs_out_mid_round_gives_what_it_has_and_the_round_goes_on():
    # Weight 2 takes two slots a round; with three rows the second round has only one left to give.
    a = EngineList("a", 2.0, "global", "ia", rows("https://a1.org/", "https://a2.org/", "https://a3.org/"))
    b = EngineList("b", 1.0, "global", "ib", rows("https://b1.org/", "https://b2.org/", "https://b3.org/"))
    order = [(lst.engine, row.position) for lst, row in interleave([a, b], "global", 1.0)]
    assert order == [("a", 1), ("a", 2), ("b", 1), ("a", 3), ("b", 2), ("b", 3)]


def test_a_weight_within_float_tolerance_of_one_takes_a_slot_every_round():
    # Credit adds up in floats (ten rounds of 0.1 make 0.9999999999999999): a slot is earned within
    # 1e-9 of a whole one, so an engine weighted 1 - 1e-9 keeps pace with one weighted 1.
    a = EngineList("a", 1.0, "global", "ia", rows("https://a1.org/", "https://a2.org/"))
    b = EngineList("b", 1.0 - 1e-9, "global", "ib", rows("https://b1.org/", "https://b2.org/"))
    assert [row.url for _, row in interleave([a, b], "global", 1.0)] == [
        "https://a1.org/", "https://b1.org/", "https://a2.org/", "https://b2.org/"]
    tenth = EngineList("c", 0.1, "global", "ic", rows("https://c1.org/"))
    many = EngineList("d", 1.0, "global", "id", rows(*[f"https://d{i}.org/" for i in range(1, 12)]))
    order = [row.url for _, row in interleave([tenth, many], "global", 1.0)]
    assert order.index("https://c1.org/") == 10  # after d's tenth row, in the tenth round


def test_lead_region_goes_first_and_other_region_still_contributes():
    cn = EngineList("bing-cn", 1.0, "cjk", "bing", rows("https://cn1.cn/", "https://cn2.cn/"))
    web = EngineList("bing", 1.0, "global", "bing2", rows("https://g1.org/", "https://g2.org/"))
    cjk_order = [row.url for _, row in interleave([web, cn], "cjk", 0.5)]
    assert cjk_order[0] == "https://cn1.cn/" and set(cjk_order) == {"https://cn1.cn/", "https://cn2.cn/",
                                                                     "https://g1.org/", "https://g2.org/"}
    assert [row.url for _, row in interleave([web, cn], "global", 0.5)][0] == "https://g1.org/"


def test_rrf_merges_votes_and_ties_break_deterministically():
    settings = Settings(official_sites={}, authority_domains=[])
    a = EngineList("a", 1.0, "global", "ia", rows("https://x.org/1", "https://shared.org/"))
    b = EngineList("b", 1.0, "global", "ib", rows("https://y.org/1", "https://shared.org/"))
    fused = fuse([a, b], settings, lead_region="global", now=NOW)
    assert fused[0].url == "https://shared.org/" and fused[0].engines == ["a", "b"]
    # Second in both lists: each engine's vote for its second row, in units of a top vote (the two lists
    # agree exactly as much, so trust leaves both at 1).
    assert fused[0].score == 2 * vote(2, settings.rrf_k) == 1.5
    assert fused[0].votes_by == {"a": 0.75, "b": 0.75}
    again = fuse([a, b], settings, lead_region="global", now=NOW)
    assert [f.url for f in fused] == [f.url for f in again]
    # Equal scores: the earlier slot first, then the URL identity. (At rrf_k 2**60 a vote no longer
    # fades within float precision: every slot is worth exactly 1.0.)
    tie = fuse([EngineList("a", 1.0, "global", "ia", rows("https://b.org/")),
                EngineList("b", 1.0, "global", "ib", rows("https://a.org/"))], Settings(rrf_k=2.0 ** 60),
               lead_region="global", now=NOW)
    assert [f.score for f in tie] == [1.0, 1.0]
    assert [f.url for f in tie] == ["https://b.org/", "https://a.org/"]


def test_the_unit_is_one_engines_top_vote():
    assert vote(1, 60) == 1.0 and vote(1, 10) == 1.0 and vote(1, 2) == 1.0
    assert vote(2, 60) == 61 / 62 and vote(20, 10) == 11 / 30 and vote(3, 2) == 0.6
    # Authority 0.4 counts an official row's votes 1.4 times: first in its engine's list, it scores 1.4.
    only = fuse([EngineList("a", 1.0, "global", "ia", rows("https://docs.python.org/3/"))], Settings(),
                lead_region="global", now=NOW, intent=intent_of("python asyncio"))
    assert only[0].score == 1.4 and only[0].votes == 1.0 and only[0].official
    assert only[0].boosts == {"authority": 0.4, "coverage": 0.0, "freshness": 0.0}


def test_coverage_of_the_query_by_a_rows_text():
    latin = build_gate("replace coolant thermostat")
    assert latin.coverage("Coolant thermostat", "", "https://x.example/") == pytest.approx(2 / 3)
    assert latin.coverage("", "", "https://x.example/replace-coolant-thermostat") == 1.0
    assert latin.coverage("Downloads", "", "https://x.example/") == 0.0
    cjk = build_gate("机器学习 python")  # bigrams 机器 器学 学习, and one ASCII word worth two units
    assert cjk.units() == 5 and cjk.coverage("机器学习入门", "", "https://x.example/") == pytest.approx(3 / 5)
    assert build_gate("the of and").coverage("the of and", "", "https://x.example/") == 0.0


def _two_engines_ranking_downloads_first() -> list[EngineList]:
    """Two engines, each ranking a page without the query's words first and the one that holds them second:
    votes 2.0 against 1.5 (rrf_k 2)."""
    return [EngineList(name, 1.0, "global", f"i{name}", [Row("Downloads", "https://a.example/", "", 1),
                                                         Row("Replace a coolant thermostat", "https://b.example/", "", 2)])
            for name in ("a", "b")]


def test_coverage_boost_counts_a_rows_votes_more_when_its_text_holds_the_query():
    gate = build_gate("replace coolant thermostat")
    off = fuse(_two_engines_ranking_downloads_first(), Settings(coverage_boost=0), lead_region="global", now=NOW,
               gate=gate)
    assert [f.url for f in off] == ["https://a.example/", "https://b.example/"]
    on = fuse(_two_engines_ranking_downloads_first(), Settings(), lead_region="global", now=NOW, gate=gate)
    assert [f.url for f in on] == ["https://b.example/", "https://a.example/"]  # default coverage_boost 0.35
    assert on[0].coverage == 1.0 and on[0].boosts["coverage"] == pytest.approx(0.35 * on[0].votes)
    assert on[0].score == pytest.approx(1.5 * 1.35) and on[1].score == pytest.approx(2.0)


def test_coverage_never_reorders_a_lone_engine():
    gate = build_gate("replace coolant thermostat")
    settings = Settings()
    lone = [EngineList("a", 1.0, "global", "ia", [Row("Downloads", "https://a.example/", "", 1),
                                                  Row("Replace a coolant thermostat", "https://b.example/", "", 2)])]
    fused = fuse(lone, settings, lead_region="global", now=NOW, gate=gate)
    assert [f.url for f in fused] == ["https://a.example/", "https://b.example/"]
    assert fused[1].coverage == 1.0 and fused[1].boosts["coverage"] == 0.0


def test_same_index_votes_can_be_discounted():
    a = EngineList("bing", 1.0, "global", "bing", rows("https://shared.org/"))
    b = EngineList("ddg", 1.0, "global", "bing", rows("https://shared.org/"))
    full = fuse([a, b], Settings(same_index_discount=1.0), lead_region="global", now=NOW)[0].score
    half = fuse([a, b], Settings(same_index_discount=0.5), lead_region="global", now=NOW)[0].score
    assert half == 1 + 0.5 and full == 2


def test_the_same_index_discount_applies_per_url_not_to_every_later_vote_of_that_index():
    # Bing and a Bing-fed engine listing different pages: neither vote repeats the other, so neither is
    # discounted; only the page both listed is.
    a = EngineList("bing", 1.0, "global", "bing", rows("https://a.org/", "https://shared.org/"))
    b = EngineList("ddg", 1.0, "global", "bing", rows("https://b.org/", "https://shared.org/"))
    votes = {f.url: f.votes for f in fuse([a, b], Settings(same_index_discount=0.5), lead_region="global",
                                          now=NOW)}
    assert votes == {"https://a.org/": 1.0, "https://b.org/": 1.0, "https://shared.org/": 0.75 + 0.5 * 0.75}


def test_one_engine_votes_once_for_a_url_however_it_spells_it():
    spellings = EngineList("a", 1.0, "global", "ia", [Row("x", "https://www.x.org/page", "", 1),
                                                      Row("y", "https://y.org/", "", 2),
                                                      Row("x again", "http://x.org/page/", "", 3),
                                                      Row("z", "https://z.org/", "", 4)])
    fused = fuse([spellings], Settings(), lead_region="global", now=NOW)
    assert [f.url for f in fused] == ["https://www.x.org/page", "https://y.org/", "https://z.org/"]
    assert fused[0].votes == 1.0 and fused[0].engines == ["a"] and fused[0].positions == {"a": 1}


def test_a_merged_row_keeps_its_earliest_date():
    early, late = date(2026, 11, 1), date(2026, 11, 28)
    # Interleaving orders engines by name at equal weight: each permutation of names is another order
    # in which the dates arrive (undated first, latest first, earliest first, ...).
    for names in itertools.permutations("abc"):
        lists = [EngineList(name, 1.0, "global", f"i{name}", [Row("t", "https://x.org/", "", 1, when)])
                 for name, when in zip(names, (late, early, None))]
        fused = fuse(lists, Settings(), lead_region="global", now=NOW, intent=intent_of("latest news"))[0]
        assert fused.date == early and fused.freshness == freshness(early, NOW, 30)


def test_a_merged_row_takes_the_complete_title_and_the_longer_snippet():
    def merged(first: Row, second: Row) -> tuple[str, str]:
        fused = fuse([EngineList("a", 1.0, "global", "ia", [first]), EngineList("b", 1.0, "global", "ib", [second])],
                     Settings(), lead_region="global", now=NOW)
        assert len(fused) == 1
        return fused[0].title, fused[0].snippet

    url = "https://docs.python.org/3/library/asyncio-task.html"
    complete = "Coroutines and Tasks"
    cut, cut_unicode = "Coroutines and Tasks — Python 3.14...", "Coroutines and Tasks — P…"
    for truncated in (cut, cut_unicode):
        # A complete title beats a longer truncated one, whichever engine gave it.
        assert merged(Row(truncated, url, "", 1), Row(complete, url, "", 1))[0] == complete
        assert merged(Row(complete, url, "", 1), Row(truncated, url, "", 1))[0] == complete
    # Between complete titles the longer one; at equal quality the first engine's stays.
    longer = "Coroutines and Tasks — Python 3.14 documentation"
    assert merged(Row(complete, url, "", 1), Row(longer, url, "", 1))[0] == longer
    assert merged(Row(longer, url, "", 1), Row(complete, url, "", 1))[0] == longer
    assert merged(Row("Tasks and Coroutines", url, "", 1), Row(complete, url, "", 1))[0] == "Tasks and Coroutines"
    # The longer snippet; at equal length the first engine's.
    assert merged(Row(complete, url, "short", 1), Row(complete, url, "a longer one", 1))[1] == "a longer one"
    assert merged(Row(complete, url, "a longer one", 1), Row(complete, url, "short", 1))[1] == "a longer one"
    assert merged(Row(complete, url, "first", 1), Row(complete, url, "other", 1))[1] == "first"


def test_rows_without_a_usable_url_are_skipped_not_the_rest_of_the_list():
    engine = EngineList("a", 1.0, "global", "ia", [Row("a", "https://a.org/", "", 1),
                                                   Row("js", "javascript:void(0)", "", 2),
                                                   Row("rel", "/relative/page", "", 3),
                                                   Row("b", "https://b.org/", "", 4)])
    fused = fuse([engine], Settings(), lead_region="global", now=NOW)
    assert [f.url for f in fused] == ["https://a.org/", "https://b.org/"]
    assert fused[1].first_slot == 4  # the slot stays the engine's own place


def test_lead_region_goes_first_in_every_round():
    # Same weight and no off-region penalty: only the query's region decides who opens each round,
    # against the alphabetical order of the names.
    cjk = EngineList("zz-cn", 1.0, "cjk", "i1", rows("https://cn1.cn/", "https://cn2.cn/"))
    web = EngineList("aa-web", 1.0, "global", "i2", rows("https://g1.org/", "https://g2.org/"))
    order = [row.url for _, row in interleave([web, cjk], "cjk", 1.0)]
    assert order == ["https://cn1.cn/", "https://g1.org/", "https://cn2.cn/", "https://g2.org/"]
    order = [row.url for _, row in interleave([cjk, web], "global", 1.0)]
    assert order == ["https://g1.org/", "https://cn1.cn/", "https://g2.org/", "https://cn2.cn/"]
    fused = fuse([web, cjk], Settings(off_region_weight=1.0), lead_region="cjk", now=NOW)
    assert [f.url for f in fused][:2] == ["https://cn1.cn/", "https://g1.org/"]


def test_off_region_engines_count_at_off_region_weight():
    web = EngineList("web", 1.0, "global", "i1", rows(*[f"https://g{i}.org/" for i in range(1, 5)]))
    cjk = EngineList("cn", 1.0, "cjk", "i2", rows("https://c1.cn/", "https://c2.cn/"))
    order = [row.url for _, row in interleave([cjk, web], "global", 0.5)]
    assert order == ["https://g1.org/", "https://g2.org/", "https://c1.cn/", "https://g3.org/", "https://g4.org/",
                     "https://c2.cn/"]
    fused = {f.url: f for f in fuse([cjk, web], Settings(off_region_weight=0.5), lead_region="global", now=NOW)}
    assert fused["https://c1.cn/"].votes == 0.5 * vote(1, 2) and fused["https://g1.org/"].votes == 1.0
    assert fused["https://c2.cn/"].votes == 0.5 * vote(2, 2) < fused["https://g4.org/"].votes == vote(4, 2)
    assert [row.url for _, row in interleave([cjk, web], "global", 0.0)] == [f"https://g{i}.org/" for i in range(1, 5)]


# ----- consensus first -----
GLOBAL_PRIMARY = sorted(name for name, engine in ENGINES.items()
                        if engine.facts.tier == "primary" and engine.facts.region == "global")
INDEPENDENT_PAIRS = [(a, b) for a in GLOBAL_PRIMARY for b in GLOBAL_PRIMARY
                     if a < b and ENGINES[a].facts.index != ENGINES[b].facts.index]
BOOSTS = {
    "authority": {"freshness_boost": 0.0},
    "freshness": {"authority_boost": 0.0},
    "both": {},
    "all, coverage at its most": {"coverage_boost": 0.35},
}


def _engine_list(name: str, settings: Settings, urls: list[str], dated: dict[str, date] | None = None,
                 titles: dict[str, str] | None = None) -> EngineList:
    engine = ENGINES[name]
    return EngineList(name, settings.weights[name], engine.facts.region, engine.facts.index,
                      [Row((titles or {}).get(u, f"python release {i}"), u, "", i, (dated or {}).get(u))
                       for i, u in enumerate(urls, 1)])


def test_two_engines_spelling_one_path_in_different_case_vote_for_one_row():
    settings = Settings()
    lists = [_engine_list("bing", settings, ["https://a.example.org/", "https://www.w3schools.com/Js/"]),
             _engine_list("brave", settings, ["https://b.example.net/", "https://www.w3schools.com/js/"])]
    fused = fuse(lists, settings, lead_region="global", now=NOW, intent=Intent())
    w3 = [f for f in fused if f.domain == "w3schools.com"]
    assert len(w3) == 1 and sorted(w3[0].engines) == ["bing", "brave"]
    assert fused[0] is w3[0]


@pytest.mark.parametrize("boost", list(BOOSTS))
@pytest.mark.parametrize("first,second", INDEPENDENT_PAIRS)
def test_two_engines_top_8_beat_a_lone_19th_row_whatever_its_domain_or_date(first, second, boost):
    """A row two independent engines rank 8th must not lose to a row one of them ranked 19th because it is
    official for the query, dated today and holds every word of the query while the agreed row holds none,
    with every boost at its default (and coverage_boost at its highest allowed value)."""
    settings = Settings().model_copy(update=BOOSTS[boost])
    agreed = "https://agreed.example.com/"
    lone = "https://docs.python.org/3/whatsnew/"  # official for a python query, dated today
    filler_a = [f"https://a{i}.example.org/" for i in range(30)]
    filler_b = [f"https://b{i}.example.net/" for i in range(30)]
    list_a = filler_a[:7] + [agreed] + filler_a[7:17] + [lone] + filler_a[17:25]
    list_b = filler_b[:7] + [agreed] + filler_b[7:25]
    assert list_a.index(lone) == 18 and list_a.index(agreed) == list_b.index(agreed) == 7
    query = "latest python release"
    intent = intent_of(query)
    assert intent.timely and "python.org" in intent.official
    titles = {lone: "Latest Python release", agreed: "Downloads"}
    gate = build_gate(query)
    dated = {lone: NOW.date()}
    for lists in ([_engine_list(first, settings, list_a, dated, titles), _engine_list(second, settings, list_b, {}, titles)],
                  [_engine_list(first, settings, list_b, {}, titles), _engine_list(second, settings, list_a, dated, titles)]):
        fused = {f.url: f for f in fuse(lists, settings, lead_region="global", now=NOW, intent=intent, gate=gate)}
        assert fused[lone].official and fused[lone].freshness == 1.0
        assert fused[lone].coverage == 1.0 and fused[agreed].coverage == 0.0
        assert fused[agreed].score > fused[lone].score, (fused[agreed].score, fused[lone].score)


def test_the_consensus_test_fails_on_the_old_scale():
    """The property test above is not vacuous: with boosts on the old scale (a top vote was 1/61) the lone
    official, fresh row wins."""
    settings = Settings(authority_boost=0.25 * 61, freshness_boost=0.2 * 61)
    agreed, lone = "https://agreed.example.com/", "https://docs.python.org/3/whatsnew/"
    list_a = [f"https://a{i}.org/" for i in range(7)] + [agreed] + [f"https://c{i}.org/" for i in range(10)] + [lone]
    list_b = [f"https://b{i}.org/" for i in range(7)] + [agreed]
    fused = fuse([_engine_list("bing", settings, list_a, {lone: NOW.date()}), _engine_list("brave", settings, list_b)],
                 settings, lead_region="global", now=NOW, intent=intent_of("latest python release"))
    assert fused[0].url.startswith("https://docs.python.org/")


# ----- authority: official for this query -----
def test_official_site_of_the_query_beats_a_suffix_only_domain():
    listed = [Row("k8s on gov", "https://www.nist.gov/kubernetes", "", 1),
              Row("Deployments", "https://kubernetes.io/docs/deployment/", "", 2),
              Row("edu", "https://cs.stanford.edu/k8s", "", 3)]
    engine = EngineList("a", 1.0, "global", "ia", listed)
    intent = intent_of("kubernetes deployment")
    fused = fuse([engine], Settings(), lead_region="global", now=NOW, intent=intent)
    assert [f.url for f in fused] == ["https://kubernetes.io/docs/deployment/", "https://www.nist.gov/kubernetes",
                                      "https://cs.stanford.edu/k8s"]
    assert [f.official for f in fused] == [True, False, False]
    # Suffixes count only where a user asks for them, and then for every query (and only where more than
    # one engine answered: a lone engine's order yields only to a site the query names).
    both = [engine, EngineList("b", 1.0, "global", "ib", listed)]
    opted = fuse(both, Settings(authority_suffixes=[".gov"]), lead_region="global", now=NOW, intent=intent)
    assert {f.url: f.official for f in opted} == {"https://www.nist.gov/kubernetes": True,
                                                  "https://kubernetes.io/docs/deployment/": True,
                                                  "https://cs.stanford.edu/k8s": False}
    alone = fuse([engine], Settings(authority_suffixes=[".gov"]), lead_region="global", now=NOW, intent=intent)
    assert {f.url: f.official for f in alone}["https://www.nist.gov/kubernetes"] is False
    # A query about something else: kubernetes.io is just another site.
    other = fuse([engine], Settings(), lead_region="global", now=NOW, intent=intent_of("container orchestration"))
    assert not any(f.official for f in other) and [f.url for f in other][0] == "https://www.nist.gov/kubernetes"


def test_authority_suffixes_count_on_a_label_boundary_in_any_case():
    """`gov.uk` makes x.gov.uk official, not notgov.uk; `.GOV.UK` (any case, leading dot or not) is the same
    suffix."""
    def officials(suffixes: list[str]) -> dict[str, bool]:
        listed = rows("https://www.notgov.uk/a", "https://service.gov.uk/b", "https://gov.uk/c")
        lists = [EngineList("a", 1.0, "global", "ia", listed), EngineList("b", 1.0, "global", "ib", listed)]
        fused = fuse(lists, Settings(authority_suffixes=suffixes), lead_region="global", now=NOW,
                     intent=intent_of("visa rules"))
        return {f.url: f.official for f in fused}

    expected = {"https://www.notgov.uk/a": False, "https://service.gov.uk/b": True, "https://gov.uk/c": True}
    for spelled in (["gov.uk"], [".gov.uk"], [".GOV.UK"], [" Gov.UK "]):
        assert officials(spelled) == expected, spelled


def test_the_official_site_is_lifted_once_not_every_page_of_it():
    engine = EngineList("a", 1.0, "global", "ia", rows("https://www.python.org/", "https://en.wikipedia.org/wiki/Python",
                                                       "https://www.python.org/downloads/",
                                                       "https://docs.python.org/3/tutorial/"))
    fused = fuse([engine], Settings(), lead_region="global", now=NOW, intent=intent_of("python"))
    assert [f.url for f in fused][:2] == ["https://www.python.org/", "https://en.wikipedia.org/wiki/Python"]
    assert [f.official for f in fused] == [True, False, False, False]


def test_reference_sites_count_for_documentation_and_package_queries_only():
    listed = rows("https://blog.example.com/httpx", "https://pypi.org/project/httpx/")
    engine = [EngineList("a", 1.0, "global", "ia", listed), EngineList("b", 1.0, "global", "ib", listed)]
    package = fuse(engine, Settings(), lead_region="global", now=NOW, intent=intent_of("httpx package install"))
    assert package[0].url == "https://pypi.org/project/httpx/" and package[0].official
    chat = fuse(engine, Settings(), lead_region="global", now=NOW, intent=intent_of("is httpx any good"))
    assert chat[0].url == "https://blog.example.com/httpx" and not any(f.official for f in chat)
    assert not fuse(engine, Settings(authority_domains=[]), lead_region="global", now=NOW,
                    intent=intent_of("httpx package install"))[0].official
    # One engine alone: a registry is not a site the query names, so its own order stands.
    alone = fuse(engine[:1], Settings(), lead_region="global", now=NOW, intent=intent_of("httpx package install"))
    assert alone[0].url == "https://blog.example.com/httpx" and not any(f.official for f in alone)


def test_a_query_that_is_only_a_name_makes_the_site_spelled_like_it_official():
    engine = EngineList("a", 1.0, "global", "ia", rows("https://www.reddit.com/r/bilibili", "https://www.bilibili.com/"))
    assert fuse([engine], Settings(), lead_region="global", now=NOW, intent=intent_of("bilibili"))[0].url == \
        "https://www.bilibili.com/"
    assert fuse([engine], Settings(official_from_name=False), lead_region="global", now=NOW,
                intent=intent_of("bilibili"))[0].url == "https://www.reddit.com/r/bilibili"


def test_a_name_makes_its_site_official_under_any_public_suffix_and_without_its_hyphens():
    def top(query: str, *urls: str) -> str:
        engine = EngineList("a", 1.0, "global", "ia", rows(*urls))
        return fuse([engine], Settings(official_sites={}), lead_region="global", now=NOW, intent=intent_of(query))[0].url

    assert top("T-Mobile", "https://www.reddit.com/r/tmobile", "https://www.t-mobile.com/") == "https://www.t-mobile.com/"
    assert top("asahi", "https://en.wikipedia.org/wiki/Asahi", "https://www.asahi.co.jp/") == "https://www.asahi.co.jp/"
    # Spelled like the name, not containing it.
    assert top("asahi", "https://en.wikipedia.org/wiki/Asahi", "https://www.asahi-beer.co.jp/") == \
        "https://en.wikipedia.org/wiki/Asahi"


def test_query_subjects_and_official_domains():
    assert query_subject("Tauri v2") == "tauri" and query_subject("apple inc") == "apple"
    assert query_subject("What is Firecrawl?") == "firecrawl"
    for several_words_or_short in ("hello world", "onimai wiki", "hi", "python asyncio gather", "成都"):
        assert query_subject(several_words_or_short) == ""
    table = Settings().official_sites
    assert official_domains("react native navigation", table) == ("reactnative.dev",)
    assert official_domains("react useEffect cleanup", table) == ("react.dev", "reactjs.org")
    assert official_domains("Go 1.23 发布说明", table) == ("go.dev", "golang.org")
    assert official_domains("let us go shopping", table) == ()
    assert official_domains("python3 asyncio", table) == ("python.org",)
    assert official_domains("pythonic code", table) == ()
    assert official_domains("Vue3 组合式 API 文档", table) == ("vuejs.org",)
    assert official_domains("飞桨 安装", table) == ("paddlepaddle.org.cn",)
    # Hangul names are matched inside words too: Korean attaches particles (카카오의 = Kakao's).
    assert official_domains("카카오의 새 서비스", {"카카오": ["kakao.com"]}) == ("kakao.com",)


# ----- freshness: only where time matters, only with a date the engine gave -----
@pytest.mark.parametrize("query", ["latest python release", "new features in python", "python news",
                                   "python 3.14 released", "python 2026", "python 最新 版本", "python 发布",
                                   "今天 天气", "本周 python 动态", "thời tiết hôm nay", "giá vàng hôm nay", "python past week",
                                   "python 最近一周", "what's new in python"])
def test_timely_queries(query):
    assert intent_of(query).timely


@pytest.mark.parametrize("query", ["python", "javascript tutorial", "new york pizza", "python 2019 benchmark",
                                   "Kubernetes Deployment 滚动更新 配置", "attention mechanisms", "hello world"])
def test_queries_where_time_does_not_matter(query):
    assert not intent_of(query).timely


def test_the_news_category_is_timely():
    assert is_timely("成都", None, category="news") and not is_timely("成都", None, category="web")


def test_freshness_counts_on_timely_queries_with_an_engine_date_only():
    def ranked(query: str, when: date | None, **settings) -> list[str]:
        engine = EngineList("a", 1.0, "global", "ia", [Row("python", "https://old.example.com/", "", 1),
                                                       Row("python", "https://recent.example.com/", "", 2, when)])
        return [f.url for f in fuse([engine], Settings(**settings), lead_region="global", now=NOW,
                                    intent=intent_of(query))]

    today = NOW.date()
    assert ranked("latest python release", today)[0] == "https://recent.example.com/"
    assert ranked("python tutorial", today)[0] == "https://old.example.com/"  # not timely: engine order
    assert ranked("python tutorial", today, freshness_scope="all")[0] == "https://recent.example.com/"
    assert ranked("latest python release", None)[0] == "https://old.example.com/"  # undated: no boost
    assert ranked("latest python release", date(2027, 3, 1))[0] == "https://old.example.com/"  # an event date
    assert ranked("latest python release", date(2026, 9, 1))[0] == "https://old.example.com/"  # older than 30 days
    assert ranked("latest python release", today, freshness_boost=0)[0] == "https://old.example.com/"


def test_undated_rows_are_neither_boosted_nor_punished():
    engine = EngineList("a", 1.0, "global", "ia", [Row("a", "https://a.org/", "", 1),
                                                   Row("b", "https://b.org/", "", 2, date(2020, 1, 1))])
    fused = fuse([engine], Settings(), lead_region="global", now=NOW, intent=intent_of("latest news"))
    assert [(f.url, f.score) for f in fused] == [("https://a.org/", 1.0), ("https://b.org/", 0.75)]


def test_freshness_curve():
    assert freshness(date(2026, 11, 29), NOW, 30) == 1.0
    assert freshness(date(2026, 10, 30), NOW, 30) == 0.0
    assert abs(freshness(date(2026, 11, 14), NOW, 30) - 0.5) < 1e-9
    assert freshness(None, NOW, 30) == 0.0 and freshness(date(2027, 6, 1), NOW, 30) == 0.0
    assert freshness(date(2026, 11, 30), NOW, 30) == 1.0  # tomorrow's date: a time zone, not an event
    assert freshness(date(2026, 12, 1), NOW, 30) == 0.0  # the day after: an event


def test_cjk_gate_units():
    gate = build_gate("东数西算 八个国家枢纽节点 定位")
    assert gate.kind == "cjk" and gate.required == 2
    assert not gate.keeps("定位_百度百科", "定位，汉语词语", "https://baike.baidu.com/item/定位")
    assert gate.keeps("国家枢纽节点", "", "https://x.cn/")
    mixed = build_gate("如何配置 postgres 逻辑复制")
    assert mixed.keeps("PostgreSQL Documentation", "", "https://www.postgresql.org/")
    assert not mixed.keeps("如何（汉语词语）_百度百科", "", "https://baike.baidu.com/item/如何")
    single = build_gate("日本")
    assert single.required == 1 and single.keeps("日本", "", "https://x.jp/")


@pytest.mark.parametrize(("query", "title"), [
    ("iPhone15价格", "iPhone 15 价格"), ("gpt4教程", "GPT-4 使用教程"), ("python3 安装", "Python 3 安装"),
    ("gpt-4 教程", "GPT4 教程"),
])
def test_cjk_gate_finds_a_latin_name_written_with_or_without_its_gaps(query, title):
    """Chinese queries glue a model name to its number ("iPhone15价格"); pages write it apart ("iPhone 15").
    The gate looked for "iphone15" as written, so the row held one unit of two and was dropped."""
    assert build_gate(query).keeps(title, "", "https://x.cn/")


@given(st.from_regex(r"[A-Za-z]{2,8}[0-9]{1,3}", fullmatch=True), st.sampled_from([" ", "-", "_", "."]),
       st.sampled_from(["价格", "教程", "安装", "配置"]))
def test_cjk_gate_keeps_a_row_spelling_the_querys_latin_name_apart(name, gap, word):
    letters = name.rstrip("0123456789")
    gate = build_gate(name + word)
    assert gate.keeps(letters + gap + name[len(letters):] + " " + word, "", "https://x.cn/")


def test_a_query_in_half_width_katakana_gets_the_cjk_gate():
    """"ｿｳﾙ" (Seoul, half-width) has no character of the CJK ranges, so it got the word gate, whose folding
    turned it into "ソウル" and whose rows' text has CJK taken out: no row could match, every list was
    dropped as irrelevant and the search came back empty."""
    gate = build_gate("ｿｳﾙ")
    assert gate.kind == "cjk" and gate.keeps("ソウル特別市", "", "https://x.kr/")
    assert not gate.keeps("東京タワー", "", "https://x.jp/")


@given(st.text(min_size=1, max_size=12))
def test_a_row_whose_title_is_the_query_is_kept(query):
    # As typed, or in the normal form pages write it in (NFKC: ｿｳﾙ is ソウル, ㍻ is 平成).
    gate = build_gate(query)
    assert any(gate.keeps(title, "", "https://x.example/") for title in (query, unicodedata.normalize("NFKC", query)))


def test_latin_gate_folds_case_and_diacritics_and_ignores_stop_words():
    gate = build_gate("The Tình hình thời tiết")
    assert gate.words == ("tinh", "hinh", "thoi", "tiet") and gate.required == 2
    assert gate.keeps("THỜI TIẾT hôm nay", "", "https://x.vn/")
    assert not gate.keeps("Thơ tình", "", "https://x.vn/")
    assert build_gate("the of and").kind == "none"


def test_latin_gate_matches_inflections_of_words_of_three_letters_or_more_only():
    gate = build_gate("api pagination")
    assert gate.required == 1
    assert gate.keeps("Stripe APIs", "", "https://x.com/")  # api -> apis
    assert build_gate("unit tests").keeps("Test runner", "", "https://x.com/")  # tests <- test: a 4-letter stem
    assert build_gate("tester jobs").keeps("Test runner", "", "https://x.com/")  # up to two letters longer
    assert not build_gate("testing").keeps("Test runner", "", "https://x.com/")  # three: another word
    # A word of five letters or more also matches inside a compound; a shorter one does not.
    assert build_gate("track").keeps("Soundtrack album", "", "https://x.com/")
    assert not build_gate("rack").keeps("Soundtrack album", "", "https://x.com/")


def test_latin_gate_reads_words_split_by_spaces_or_by_cjk_runs():
    # A word spelled apart in the row ("La Liga" for laliga, five letters or more) still matches...
    assert build_gate("laliga").keeps("La Liga standings", "", "https://x.com/")
    assert build_gate("webui").keeps("Open Web UI", "", "https://x.com/")
    # ... and a CJK run between Latin words separates them like a space.
    assert build_gate("tests").keeps("test测试", "", "https://x.com/")


def test_a_thai_word_is_found_glued_to_its_neighbours():
    """Thai, Lao, Myanmar and Khmer write no spaces between words: "ข้าวผัด" (fried rice) sits inside
    "สูตรข้าวผัดกุ้ง" (shrimp fried rice recipe). The gate looked for it as a whole token, or inside a
    longer one only from five letters, so a Thai engine's on-topic list was dropped whole as irrelevant."""
    gate = build_gate("ข้าวผัด")
    assert gate.keeps("สูตรข้าวผัดกุ้ง ทำง่าย", "", "https://x.co.th/")
    assert not gate.keeps("ข้าวมันไก่ สูตรง่าย", "", "https://x.co.th/")  # chicken rice: another dish


_SPACELESS_BLOCKS = {"thai": (0x0E01, 0x0E5B), "lao": (0x0E81, 0x0EDF), "myanmar": (0x1000, 0x109F),
                     "khmer": (0x1780, 0x17F9)}


@given(st.data())
def test_a_query_in_a_script_without_spaces_is_kept_inside_any_run_of_that_script(data):
    low, high = _SPACELESS_BLOCKS[data.draw(st.sampled_from(sorted(_SPACELESS_BLOCKS)))]
    letters = st.characters(min_codepoint=low, max_codepoint=high, categories=("Lo", "Mn", "Mc", "Nd"))
    query, before, after = (data.draw(st.text(letters, min_size=size, max_size=12)) for size in (1, 0, 0))
    gate = build_gate(query)
    assume(gate.kind == "latin")
    assert gate.keeps(before + query + after, "", "https://x.example/")


def test_an_arabic_or_hebrew_word_is_found_behind_its_article_and_prepositions():
    """"طقس" (weather) is written "الطقس" (the weather), "وطقس", "بالطقس" on the page; the gate matched only
    the bare word, so four of five on-topic rows failed and the list (under 40% matching) was dropped."""
    gate = build_gate("طقس")
    titles = ["الطقس في القاهرة اليوم", "حالة الطقس - الأرصاد", "طقس اليوم", "توقعات الطقس لمدة أسبوع", "بالطقس"]
    assert all(gate.keeps(title, "", "https://x.eg/") for title in titles)
    assert len(gate.filter(rows(*[f"https://x{i}.eg/" for i in range(5)], title=titles[1]))) == 5
    assert not gate.keeps("نقس", "", "https://x.eg/")  # another word, not a prefix
    hebrew = build_gate("שלום")
    assert hebrew.keeps("השלום", "", "https://x.il/") and hebrew.keeps("ולשלום", "", "https://x.il/")
    assert not hebrew.keeps("תשלום", "", "https://x.il/")  # payment: ת is no prefix


@given(st.text(st.characters(min_codepoint=0x0628, max_codepoint=0x064A, categories=("Lo",)), min_size=3, max_size=7),
       st.sampled_from(["", "ال", "و", "ب", "ل", "ف", "ك", "وال", "بال", "فال", "لل", "كال"]))
def test_an_arabic_word_with_any_attached_prefix_is_kept(word, prefix):
    assert build_gate(word).keeps(f"عنوان {prefix}{word} اليوم", "", "https://x.example/")


def test_fold_turns_the_vietnamese_d_with_stroke_into_d_in_either_case():
    # NFKD does not decompose đ: without its own rule "Đà Nẵng đẹp" would never match "Da Nang dep".
    assert fold("Đà Nẵng đẹp") == "da nang dep"


def test_a_query_of_stop_words_only_gates_nothing():
    gate = build_gate("the of and")
    assert gate.kind == "none" and gate.score("Anything", "", "https://x.com/") == 0
    assert gate.keeps("Anything", "", "https://x.com/")


def test_cjk_gate_counts_a_shared_ascii_word_as_two_units():
    gate = build_gate("如何配置 postgres 逻辑复制", min_units=3)
    assert gate.score("PostgreSQL Documentation", "", "https://www.postgresql.org/") == 2
    assert not gate.keeps("PostgreSQL Documentation", "", "https://www.postgresql.org/")  # 2 of the 3 required
    assert gate.keeps("PostgreSQL 逻辑复制", "", "https://www.postgresql.org/")  # + 逻辑, 辑复, 复制
    short = build_gate("go tutorial")
    assert not short.keeps("Python basics", "", "https://x.com/")  # a two-letter word matches only itself
    assert not short.keeps("Good morning", "", "https://x.com/")  # go is not a prefix match
    assert short.keeps("Go by example", "", "https://x.com/")


def test_core_words_drop_particles_and_keep_content():
    assert core_words("请问如何在集群中配置滚动更新策略呢") == "在集群中配置滚动更新策略"
    assert core_words("如何配置 postgres 逻辑复制") == "配置 postgres 逻辑复制"
    assert core_words("中国的能源政策有哪些最新变化") == "中国 能源政策 最新变化"


def test_core_words_remove_the_longest_function_word_first_and_punctuation_with_it():
    # 为什么 whole, not 什么 out of it leaving a stray 为; full-width punctuation is not a term either.
    assert core_words("为什么天空是蓝色的？") == "天空是蓝色"
    assert core_words("好用的（开源）数据库") == "好用 开源 数据库"


def test_diversify_moves_a_domains_extra_rows_behind_the_others():
    from plugin.pipeline.fusion import Fused, diversify

    def f(url: str, domain: str) -> Fused:
        return Fused(title=url, url=url, snippet="", domain=domain, date=None, score=0.0)

    ranked = [f("a1", "a.org"), f("a2", "a.org"), f("a3", "a.org"), f("b1", "b.org"), f("a4", "a.org")]
    assert [x.url for x in diversify(ranked, 2)] == ["a1", "a2", "b1", "a3", "a4"]
    assert [x.url for x in diversify(ranked, None)] == ["a1", "a2", "a3", "b1", "a4"]


async def test_the_search_ranks_with_the_querys_intent():
    """Searcher.rank reads the intent from the plan: the news category makes a query timely, and the
    query's own words name its official site."""
    from plugin.infra.state import MemoryState
    from plugin.pipeline.runner import EngineRun
    from plugin.pipeline.searcher import Searcher

    rows_ = [Row("成都 新闻", "https://a.example.cn/", "", 1),
             Row("成都 新闻", "https://www.python.org/cd", "", 2),
             Row("成都 新闻", "https://b.example.cn/", "", 3, NOW.date())]
    searcher = Searcher(Settings(), state=MemoryState())
    try:
        run = [EngineRun(ENGINES["baidu"], "primary", "ok", rows=3, kept=rows_)]
        web = searcher.rank(searcher.plan("成都", now=NOW), run)
        news = searcher.rank(searcher.plan("成都", now=NOW, category="news"), run)
        named = searcher.rank(searcher.plan("成都 python", now=NOW), run)
    finally:
        await searcher.close()
    assert [r.url for r in web] == ["https://a.example.cn/", "https://www.python.org/cd", "https://b.example.cn/"]
    # One engine: freshness lifts its fresh row one place, no further.
    assert [r.url for r in news] == ["https://a.example.cn/", "https://b.example.cn/", "https://www.python.org/cd"]
    assert [r.url for r in named][0] == "https://www.python.org/cd"


def test_gate_words_count_years_not_short_numbers_and_a_lone_cjk_character_is_a_unit():
    assert build_gate("python 2026 release").words == ("python", "2026", "release")
    assert build_gate("Voyager 1 news").words == ("voyager", "news")
    assert build_gate("python 猫 教程").bigrams == frozenset({"猫", "教程"})


def test_cjk_gate_units_ascii_stop_words_and_what_it_keeps_of_its_settings():
    gate = build_gate("how to 安装 python")
    assert gate.ascii_words == frozenset({"python"}) and gate.bigrams == frozenset({"安装"})
    # One CJK unit and one ASCII word (worth two): at most 3 units can match, so 5 asked is 3 required.
    gate = build_gate("猫 python", 5)
    assert gate.required == 3 and gate.min_units == 5
    assert build_gate("猫 python", 2).required == 2


def test_official_names_short_ones_with_a_version_longest_first_and_by_category():
    table = Settings().official_sites
    assert official_domains("go v1.22 release notes", table) == ("go.dev", "golang.org")  # v before the number
    assert official_domains("vue router guide", table) == ("vuejs.org",)  # three letters: a name on its own
    assert official_domains("git rebase onto", table) != ()
    # The longer name is read first, whatever the alphabet says, and the shorter one inside it then does not count.
    assert official_domains("android studio download", {"studio": ["studio.example"],
                                                         "android studio": ["developer.android.com"]}) == (
        "developer.android.com",)
    for category in ("docs", "package"):
        assert read_intent("tokio spawn", official_sites=table, category=category).reference
    assert not read_intent("tokio spawn", official_sites=table, category="general").reference


def test_a_year_is_timely_against_the_searchs_own_clock():
    """A replayed search reads "python 2021" as recent at its recording time (2021), not at today's."""
    then = datetime(2021, 6, 1)
    assert read_intent("python 2021", official_sites={}, now=then).timely
    assert not read_intent("python 2021", official_sites={}, now=datetime(2026, 11, 30)).timely


# ----- a lone engine's own order; query-dependent trust -----
def test_freshness_never_lifts_a_lone_engines_third_row_over_its_first():
    """Held-out failure of issue 20: one engine left after the gate, a timely query, a page dated today at the
    engine's third place. Its order stands but for one place: the fresh row may pass the stale row just
    above it, never the engine's first."""
    listed = [Row("a", "https://first.org/", "", 1, date(2024, 1, 1)), Row("b", "https://second.org/", "", 2),
              Row("c", "https://third.org/", "", 3, NOW.date()), Row("d", "https://fourth.org/", "", 4)]
    intent = intent_of("latest release news")
    assert intent.timely
    alone = fuse([EngineList("a", 1.0, "global", "ia", listed)], Settings(), lead_region="global", now=NOW,
                 intent=intent)
    assert [f.url for f in alone] == ["https://first.org/", "https://third.org/", "https://second.org/",
                                      "https://fourth.org/"]
    assert all(f.boosts["freshness"] == 0.0 for f in alone)  # not added to the score: it only reorders nearby
    still = fuse([EngineList("a", 1.0, "global", "ia", listed)], Settings(lone_freshness_places=0),
                 lead_region="global", now=NOW, intent=intent)
    assert [f.url for f in still] == ["https://first.org/", "https://second.org/", "https://third.org/",
                                      "https://fourth.org/"]
    # Two places allowed: the third row may now lead.
    two = fuse([EngineList("a", 1.0, "global", "ia", listed)], Settings(lone_freshness_places=2),
               lead_region="global", now=NOW, intent=intent)
    assert [f.url for f in two][0] == "https://third.org/"
    # With a second engine the boost is added again (between engines it informs the vote).
    other = EngineList("b", 1.0, "global", "ib", [Row("z", "https://elsewhere.org/", "", 1)])
    pair = {f.url: f for f in fuse([EngineList("a", 1.0, "global", "ia", listed), other], Settings(),
                                   lead_region="global", now=NOW, intent=intent)}
    assert pair["https://third.org/"].boosts["freshness"] == Settings().freshness_boost


def test_a_lone_engines_order_yields_only_to_a_site_the_query_names():
    listed = rows("https://www.reddit.com/r/httpx", "https://pypi.org/project/httpx/", "https://www.python-httpx.org/")
    engine = EngineList("a", 1.0, "global", "ia", listed)
    settings = Settings(official_sites={"httpx": ["python-httpx.org"]}, authority_suffixes=["pypi.org"])
    fused = fuse([engine], settings, lead_region="global", now=NOW, intent=intent_of("httpx package docs"))
    # The named site gains (third: 0.6 x 1.4 = 0.84 passes the second's 0.75); the registry, official for
    # a package query and by suffix, stays where the engine put it.
    assert [f.url for f in fused] == ["https://www.reddit.com/r/httpx", "https://www.python-httpx.org/",
                                      "https://pypi.org/project/httpx/"]
    assert [f.official for f in fused] == [False, True, False]


def test_authority_multiplies_the_rows_own_votes():
    """An official row the engine ranks second leads; one it ranks deep gains only a share of its small vote."""
    second = fuse([EngineList("a", 1.0, "global", "ia", rows("https://x.org/", "https://www.bilibili.com/"))],
                  Settings(), lead_region="global", now=NOW, intent=intent_of("bilibili"))
    assert second[0].url == "https://www.bilibili.com/" and second[0].score == pytest.approx(0.75 * 1.4)
    deep = [f"https://x{i}.org/" for i in range(1, 10)] + ["https://www.bilibili.com/"]
    fused = fuse([EngineList("a", 1.0, "global", "ia", rows(*deep))], Settings(), lead_region="global", now=NOW,
                 intent=intent_of("bilibili"))
    # 10th: 0.25 x 1.4 = 0.35, past the 8th (0.3) and 7th (0.33), not the 6th (0.375).
    assert [f.url for f in fused].index("https://www.bilibili.com/") == 6


def test_trust_follows_how_much_the_other_engines_back_each_list():
    from plugin.pipeline.fusion import agreement_trust

    shared = [f"https://s{i}.org/" for i in range(1, 7)]
    backed_a = EngineList("a", 1.0, "global", "ia", rows(*shared))
    backed_b = EngineList("b", 1.0, "global", "ib", rows(*shared))
    alone = EngineList("c", 1.0, "global", "ic", rows(*[f"https://c{i}.org/" for i in range(1, 7)]))
    trust = agreement_trust([backed_a, backed_b, alone], Settings())
    assert trust["a"] == trust["b"] > 1 > trust["c"] > 0
    assert abs(sum(trust.values()) - 3) < 1e-9  # trust moves say between engines, it adds none
    # (0.25 + agreement) ** 0.5 scaled to mean 1. a's rows are all backed by b at the same place (each row
    # weighted 1/place, each backing worth b's vote there), and by c not at all: averaged over the two others.
    backing = sum(vote(p, 2) / p for p in range(1, 7)) / sum(1 / p for p in range(1, 7)) / 2
    raw = {"a": (0.25 + backing) ** 0.5, "b": (0.25 + backing) ** 0.5, "c": 0.25 ** 0.5}
    scale = 3 / sum(raw.values())
    assert all(abs(trust[n] - raw[n] * scale) < 1e-12 for n in raw)
    # The unbacked engine's first row now ranks below the backed engines' second rows' agreement, and below
    # their first row, though each engine put its own first.
    fused = fuse([alone, backed_a, backed_b], Settings(), lead_region="global", now=NOW)
    assert fused[0].url == "https://s1.org/" and fused[0].votes_by == {"a": trust["a"], "b": trust["b"]}
    c1 = next(f for f in fused if f.url == "https://c1.org/")
    assert c1.votes == trust["c"] < 1
    # Strength 0, or a single engine: every engine as weighted.
    assert agreement_trust([backed_a, backed_b, alone], Settings(trust_strength=0)) == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert agreement_trust([alone], Settings()) == {"c": 1.0}


def test_trust_counts_each_backing_by_the_backers_vote_and_only_the_top_of_the_list():
    from plugin.pipeline.fusion import agreement_trust, vote

    a = EngineList("a", 1.0, "global", "ia", rows("https://x.org/", "https://y.org/"))
    b_high = EngineList("b", 1.0, "global", "ib", rows("https://x.org/", "https://z.org/"))
    b_low = EngineList("b", 1.0, "global", "ib", rows(*[f"https://z{i}.org/" for i in range(5)], "https://x.org/"))
    high = agreement_trust([a, b_high], Settings(trust_strength=1))
    low = agreement_trust([a, b_low], Settings(trust_strength=1))
    # a's agreement: x backed at the backer's place 1 (vote 1) or 6 (vote 3/8), its rows weighted 1 and 1/2.
    assert abs(high["a"] / high["b"] - (0.25 + 1 / 1.5) / (0.25 + 1 / (1 + 1 / 2))) < 1e-12
    assert abs(low["a"] / low["b"] - (0.25 + vote(6, 2) / 1.5) / (0.25 + (vote(1, 2) / 6) / sum(1 / p for p in range(1, 7)))) < 1e-12
    # Only the top `trust_depth` rows of a list count.
    shallow = agreement_trust([a, b_low], Settings(trust_strength=1, trust_depth=5))
    assert abs(shallow["a"] / shallow["b"] - (0.25 + vote(6, 2) / 1.5) / 0.25) < 1e-12


def test_a_year_one_away_from_now_is_timely_two_away_is_not():
    """Issue 23 survivor (intent.is_timely): "python 2025" asked in 2026 wants recent pages; 2024 asks for its
    own time."""
    now = datetime(2026, 3, 1)
    assert is_timely("python 2025", now=now) and is_timely("python 2027", now=now) and is_timely("python 2026", now=now)
    assert not is_timely("python 2024", now=now) and not is_timely("python 2028", now=now)


def test_a_name_of_three_letters_is_not_a_site_to_make_official():
    """Issue 23 survivor (intent.query_subject): one-word queries bun, npm, vue are too short to be the
    name of the site spelled like them (bun.com, npm.com, vue.com): a name needs four letters."""
    for short in ("bun", "npm", "vue", "Vue 3"):
        assert query_subject(short) == "", short
    assert query_subject("deno") == "deno"
    engine = EngineList("a", 1.0, "global", "ia", rows("https://bun.sh/", "https://www.bun.com/"))
    fused = fuse([engine], Settings(official_sites={}), lead_region="global", now=NOW, intent=intent_of("bun"))
    assert [f.url for f in fused] == ["https://bun.sh/", "https://www.bun.com/"] and not any(f.official for f in fused)


def test_a_merged_news_row_names_the_publisher_of_the_first_engine_that_names_one():
    """Issue 23 survivor (fusion): two engines name different publishers for one story; the row keeps the
    first in the interleaving, not the last."""
    url = "https://news.example.org/story"
    first = EngineList("a", 1.0, "global", "ia", [Row("Story", url, "", 1, None, "Reuters")])
    second = EngineList("b", 1.0, "global", "ib", [Row("Story", url, "", 1, None, "AP")])
    third = EngineList("c", 1.0, "global", "ic", [Row("Story", url, "", 1, None, None)])
    assert fuse([first, second, third], Settings(), lead_region="global", now=NOW)[0].source == "Reuters"
    assert fuse([third, second, first], Settings(), lead_region="global", now=NOW)[0].source == "Reuters"
    assert fuse([third, second], Settings(), lead_region="global", now=NOW)[0].source == "AP"


def test_a_mobile_wikipedia_row_and_its_desktop_row_fuse_into_one_shown_under_the_desktop_url():
    a = EngineList("a", 1.0, "global", "ia", rows("https://en.m.wikipedia.org/wiki/Python_(programming_language)",
                                                   "https://m.example.com/python"))
    b = EngineList("b", 1.0, "global", "ib", rows("https://en.wikipedia.org/wiki/Python_(programming_language)",
                                                   "https://example.com/python"))
    fused = fuse([a, b], Settings(), lead_region="global", now=NOW)
    urls = [f.url for f in fused]
    assert urls.count("https://en.wikipedia.org/wiki/Python_(programming_language)") == 1
    assert not any(".m.wikipedia.org" in url for url in urls)
    wiki = next(f for f in fused if "wikipedia" in f.url)
    assert sorted(wiki.engines) == ["a", "b"]
    # An unknown site's m. host is not assumed to be its desktop site: two rows.
    assert "https://m.example.com/python" in urls and "https://example.com/python" in urls
