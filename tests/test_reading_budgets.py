"""What a model reads of a page, and its budgets (plugin.reading.evidence): the checked arguments, the
passage budget in characters (fetch_passage_chars, max_chars) and in tokens (max_tokens, the line saying
what was left out included), passage offsets that read back for any text, the part of a long page that is
searched, and ranking done off the event loop for fetch and for search's read=N."""

from __future__ import annotations

import asyncio

import pytest
from examples import scaled
from off_the_loop import other_request, ran_off_the_loop, waiting_for_the_loop
from hypothesis import HealthCheck, example, given, settings as hypothesis_settings, strategies as st

from plugin.errors import FetchError, SearchError
from plugin.models import FetchResponse, Passage
from plugin.reading import evidence
from plugin.reading.evidence import (MIN_MAX_TOKENS, PAGE_FRAME_TOKENS, Focus, check_focus,
                                     focus_fetch, omitted_tokens, page_frame_tokens, passage_label, passage_tokens,
                                     passages_of)
from plugin.reading.reader import slice_text
from plugin.reading.tokens import estimate_tokens
from plugin.settings import Settings
from plugin.surfaces.render import render_page_for_model

SETTINGS = Settings()
ARTICLE = "\n\n".join(
    f"## Part {i}\n\nSection {i} talks about topic number {i} in some detail. The scheduler moves task {i} "
    f"between threads when a core runs dry. Filler sentence {i} follows here, saying nothing much."
    for i in range(40))


# Generation is timed by Hypothesis's health checks; on a shared, loaded machine it can be slow without
# anything being wrong.
SLOW_ON_A_LOADED_MACHINE = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


def examples(count: int) -> hypothesis_settings:
    return hypothesis_settings(max_examples=scaled(count), deadline=None,
                               suppress_health_check=SLOW_ON_A_LOADED_MACHINE)


def response_for(content: str, *, title: str | None = "A page", url: str = "https://example.org/a",
                 warnings: list[str] | None = None, offset: int = 0) -> FetchResponse:
    piece, next_offset = slice_text(content, offset, SETTINGS.fetch_max_chars)
    return FetchResponse(url=url, final_url=url, status=200, content_type="text/html", title=title, content=piece,
                         offset=offset, next_offset=next_offset, total_chars=len(content),
                         truncated=next_offset is not None, elapsed_ms=1, warnings=warnings or [])


def focused(content: str, query: str | None, *, passages=None, max_tokens=None, max_chars=None,
            settings: Settings = SETTINGS, **kwargs) -> FetchResponse:
    focus = check_focus(query, passages, max_tokens, settings, error=FetchError)
    return focus_fetch(response_for(content, **kwargs), content, focus, settings, markdown=True, max_chars=max_chars)


# ----- the arguments -----
def test_the_focus_arguments_are_checked_and_passages_clamped_to_passages_max():
    assert check_focus(None, None, None, SETTINGS) is None
    assert check_focus("  q  ", None, None, SETTINGS) == Focus("q", None, None)
    assert check_focus(None, None, 300, SETTINGS) == Focus(None, None, 300)
    assert check_focus("q", 1, None, SETTINGS).count == 1
    assert check_focus("q", "7", None, SETTINGS).count == 7
    assert check_focus("q", SETTINGS.passages_max, None, SETTINGS).count == SETTINGS.passages_max
    assert check_focus("q", SETTINGS.passages_max + 1, None, SETTINGS).count == SETTINGS.passages_max
    assert check_focus("q", 10_000, None, Settings(passages_max=3)).count == 3
    assert check_focus("x" * 1000, None, None, SETTINGS).query == "x" * 1000
    assert check_focus("q", None, MIN_MAX_TOKENS, SETTINGS).max_tokens == MIN_MAX_TOKENS == 300
    for query, passages, max_tokens, parameter in (
            (3, None, None, "query"), ("", None, None, "query"), ("   ", None, None, "query"),
            ("x" * 1001, None, None, "query"), ("q", 0, None, "passages"), ("q", -1, None, "passages"),
            ("q", "two", None, "passages"), ("q", 1.5, None, "passages"), ("q", None, 299, "max_tokens"),
            ("q", None, "many", "max_tokens"), (None, None, 0, "max_tokens")):
        with pytest.raises(FetchError) as caught:
            check_focus(query, passages, max_tokens, SETTINGS, error=FetchError)
        assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == parameter
    with pytest.raises(SearchError):  # the search's own error class by default
        check_focus("", None, None, SETTINGS)


# ----- the passage budget in characters -----
def test_a_query_without_passages_or_max_chars_keeps_to_the_passage_budget():
    answer = focused(ARTICLE, "scheduler moves task between threads")
    used = sum(len(p.text) for p in answer.passages)
    assert 0 < used <= SETTINGS.fetch_passage_chars == 1200
    assert answer.omitted is not None and answer.omitted.passages > 0 and "raise max_chars" in answer.omitted.how
    small = focused(ARTICLE, "scheduler moves task between threads", settings=Settings(fetch_passage_chars=300))
    assert 0 < sum(len(p.text) for p in small.passages) <= 300 < used
    assert answer.content == "" and answer.next_offset is None and not answer.truncated


def test_passages_that_fill_max_chars_exactly_are_all_kept():
    """max_chars is a bound the passages may reach: those that sum to it exactly are all returned."""
    every = focused(ARTICLE, "scheduler moves task between threads", passages=3)
    exactly = sum(len(p.text) for p in every.passages)
    same = focused(ARTICLE, "scheduler moves task between threads", passages=3, max_chars=exactly)
    assert [p.text for p in same.passages] == [p.text for p in every.passages] and same.omitted is None
    fewer = focused(ARTICLE, "scheduler moves task between threads", passages=3, max_chars=exactly - 1)
    assert len(fewer.passages) < 3


def test_passages_without_max_chars_are_as_many_as_asked_and_max_chars_caps_them():
    many = focused(ARTICLE, "scheduler moves task between threads", passages=12)
    assert len(many.passages) == 12 and sum(len(p.text) for p in many.passages) > 1200
    capped = focused(ARTICLE, "scheduler moves task between threads", passages=12, max_chars=500)
    assert 0 < sum(len(p.text) for p in capped.passages) <= 500
    assert capped.omitted.passages == 12 - len(capped.passages)
    wide = focused(ARTICLE, "scheduler moves task between threads", max_chars=3000)
    assert 1200 < sum(len(p.text) for p in wide.passages) <= 3000


def test_a_passage_that_does_not_fit_is_skipped_and_a_later_smaller_one_may_still_fit():
    text = ("# A\n\nAlpha beta gamma one.\n\n# B\n\n" + "Filler words here. " * 30 + "\n\n# C\n\n"
            + "Alpha beta gamma " * 8 + "two.")
    best = focused(text, "alpha beta gamma", passages=1)
    assert best.passages[0].text.startswith("Alpha beta gamma Alpha")  # the best one is long
    answer = focused(text, "alpha beta gamma", passages=5, max_chars=60)
    assert answer.passages[0].text == "Alpha beta gamma one."  # it does not fit: the next one does
    assert sum(len(p.text) for p in answer.passages) <= 60
    assert answer.omitted.starts[0] == best.passages[0].start
    assert answer.omitted.next_offset == min(answer.omitted.starts) < answer.omitted.starts[0]  # the earliest


# ----- the passage budget in tokens -----
def test_the_left_out_line_is_reserved_for_the_largest_starts():
    """Passages best first may be left out in any order: the line naming the first five left out must be
    paid for whichever they are. It was sized from the first five candidates, so when the best passages
    sit early (starts of 1 to 3 digits) and the ones left out late (4 digits), a budget was exceeded."""
    strong = "\n\n".join(f"# S{i}\n\nAlpha beta gamma delta {i}." for i in range(8))
    weak = "\n\n".join(f"# W{i}\n\nAlpha filler {i} " + "words " * 20 for i in range(40))
    page = strong + "\n\n" + "Padding sentence here. " * 60 + "\n\n" + weak
    assert page.index("Alpha filler") > 1000 > page.index("Alpha beta gamma delta 7")
    for budget in range(300, 420):
        answer = focused(page, "alpha beta gamma delta", passages=50, max_tokens=budget, title=None)
        rendered = estimate_tokens(render_page_for_model(answer))
        assert rendered <= answer.tokens <= budget, budget


def test_omitted_says_what_was_left_out_and_how_to_read_it():
    answer = focused(ARTICLE, "scheduler moves task between threads", passages=20, max_tokens=600)
    omitted = answer.omitted
    kept = {p.start for p in answer.passages}
    assert omitted.passages == 20 - len(answer.passages) == len(omitted.starts) > 5
    assert not kept & set(omitted.starts) and omitted.next_offset == min(omitted.starts)
    assert omitted.how.startswith("fetch(url, offset=start, max_chars=end-start) reads one; starts ")
    assert ", ".join(str(s) for s in omitted.starts[:5]) + " …; or raise max_tokens" in omitted.how
    assert str(omitted.starts[5]) not in omitted.how.split("…")[0].split("; starts ")[1].split(", ")
    assert omitted.chars > 0
    few = focused(ARTICLE, "scheduler moves task between threads", passages=4, max_chars=400)
    assert few.omitted.how.endswith("; or raise max_chars") and "…" not in few.omitted.how
    assert omitted_tokens(omitted) == estimate_tokens(omitted.how) + 25


def test_a_slice_cut_to_max_tokens_counts_its_frame_its_text_and_the_line_to_read_on():
    sliced = focused(ARTICLE, None, max_tokens=400)
    assert sliced.truncated and sliced.content and ARTICLE.startswith(sliced.content)
    assert sliced.tokens == page_frame_tokens(sliced) + estimate_tokens(sliced.content) + 40 <= 400
    assert sliced.omitted.how == f"read on with offset={sliced.next_offset}, or raise max_tokens"
    assert sliced.omitted.chars == len(ARTICLE) - len(sliced.content)
    whole = focused("A short page.", None, max_tokens=400)
    assert not whole.truncated and whole.omitted is None
    assert whole.tokens == page_frame_tokens(whole) + estimate_tokens("A short page.")


def test_a_budget_that_holds_everything_leaves_nothing_out_and_counts_what_is_shown():
    answer = focused(ARTICLE, "scheduler moves task between threads", passages=2, max_tokens=5000)
    assert answer.omitted is None and len(answer.passages) == 2
    expected = page_frame_tokens(answer, answer.query) + sum(
        passage_tokens(k, p) for k, p in enumerate(answer.passages, start=1))
    assert answer.tokens == expected and estimate_tokens(render_page_for_model(answer)) <= expected


def test_the_page_frame_counts_title_address_query_and_each_warning():
    bare = response_for("text", title=None)
    assert page_frame_tokens(bare) == PAGE_FRAME_TOKENS + estimate_tokens(bare.final_url)
    titled = response_for("text", title="A title of some words", warnings=["w" * 1000, "short one"])
    assert page_frame_tokens(titled, "the query") == (
        PAGE_FRAME_TOKENS + estimate_tokens("A title of some words") + estimate_tokens(titled.final_url)
        + estimate_tokens("the query") + estimate_tokens("w" * 300) + 3 + estimate_tokens("short one") + 3)


def test_a_passage_s_label_and_cost():
    passage = Passage(text="Some words here.", start=10, end=26, score=1.0, heading_path=["A", "B"])
    assert passage_label(3, passage) == "[3] characters 10-26 · A › B"
    assert passage_label("2.1", passage.model_copy(update={"heading_path": []})) == "[2.1] characters 10-26"
    assert passage_tokens(3, passage) == estimate_tokens("[3] characters 10-26 · A › B") + estimate_tokens(
        "Some words here.") + 2


_WORDS = st.sampled_from(["scheduler", "task", "threads", "core", "the", "a", "moves", "東京", "ภาษา", "ไทย",
                          "1,000", "Ünïcödé", "x" * 40, "—", "**bold**", "\n\n", "\n", ". ", ", ", "# Head\n",
                          "```\n", "- item ", "| a | b |\n"])
_PAGES = st.lists(_WORDS, min_size=1, max_size=300).map(" ".join)


@examples(60)
@given(page=_PAGES, query=st.lists(_WORDS, min_size=1, max_size=4).map(" ".join),
       budget=st.integers(300, 1500), count=st.sampled_from([None, 1, 5, 50]),
       title=st.text(max_size=80), warnings=st.lists(st.text(max_size=400), max_size=2))
def test_max_tokens_is_never_exceeded_and_the_rendering_is_within_the_count(page, query, budget, count, title,
                                                                            warnings):
    if not query.strip():
        return
    answer = focused(page, query, passages=count, max_tokens=budget, title=title, warnings=warnings)
    assert estimate_tokens(render_page_for_model(answer)) <= answer.tokens <= budget
    sliced = focused(page, None, max_tokens=budget, title=title, warnings=warnings)
    assert estimate_tokens(render_page_for_model(sliced)) <= sliced.tokens <= budget
    assert page.startswith(sliced.content)
    if sliced.truncated:
        assert sliced.omitted.next_offset == sliced.next_offset == len(sliced.content)
        # the frame, the text and the line saying where to read on (40 tokens, rendered below the text)
        assert sliced.tokens == page_frame_tokens(sliced) + estimate_tokens(sliced.content) + 40


# ----- offsets read back -----
_TEXTS = st.one_of(
    _PAGES,
    st.lists(st.sampled_from(["ภาษาไทยเป็นภาษาที่สวยงาม", "ประเทศไทย", "มีประชากร", " ", " ", "\n",
                              "กรุงเทพ"]), min_size=20, max_size=200).map("".join),
    # long sentences: cut at a clause mark or a space to fit a passage
    st.lists(st.sampled_from(["item", "number", "of", "the", "long", "inventory", ", ", " ", "、", "。", "；",
                              "東京", "1,000", "!", "？!", "」", "।"]), min_size=150, max_size=400).map(" ".join),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))


@examples(150)
@given(text=_TEXTS, query=st.sampled_from(["inventory number", "ประเทศไทย ประชากร", "scheduler threads", "東京",
                                            "item", "the"]),
       offset=st.integers(0, 50))
def test_every_passage_of_any_text_reads_back_through_fetch_s_slice(text, query, offset):
    found = passages_of(text, query, 50, SETTINGS, offset=offset)
    previous: list[tuple[int, int]] = []
    for passage in found:
        assert passage.text == text[passage.start:passage.end] and passage.start >= offset
        assert slice_text(text, passage.start, passage.end - passage.start) == (
            passage.text, passage.end if passage.end < len(text) else None)
        assert all(passage.end <= s or passage.start >= e for s, e in previous)
        previous.append((passage.start, passage.end))


def test_a_slice_ending_after_a_stop_without_a_space_is_not_moved():
    # (a space in the slice's last fifth: a slice that had to move would end after it)
    assert slice_text("abcdefghijklmnopq r。」然后走了再见", 0, 21) == ("abcdefghijklmnopq r。」", 21)  # a closing bracket
    assert slice_text("abcdefghijklmnopq r？!然后走了再见", 0, 21) == ("abcdefghijklmnopq r？!", 21)  # ？ then !
    assert slice_text("abcdefghijklmnopqr s，然后走了再见", 0, 21) == ("abcdefghijklmnopqr s，", 21)  # a clause mark
    assert slice_text("abcdefghijklmnopq r!然后走了再见", 0, 20) == ("abcdefghijklmnopq ", 18)  # ! alone needs a space
    assert slice_text("abcdefgh !jkl mno", 0, 10) == ("abcdefgh ", 9)  # an ASCII stop needs a space after it
    assert slice_text("word next more", 0, 4) == ("word", 4)  # a word's end: before whitespace


def test_thai_passages_and_long_sentences_cut_at_a_comma_or_space_read_back():
    thai = " ".join(["ภาษาไทยเป็นภาษาที่สวยงามมาก", "ฉันชอบเรียนภาษาไทยทุกวัน", "ประเทศไทยมีประชากรประมาณเจ็ดสิบล้านคน",
                     "กรุงเทพมหานครเป็นเมืองหลวง"] * 6)
    commas = "The report lists " + ", ".join(f"item number {i} of the long inventory" for i in range(60)) + "."
    spaces = "The report lists " + " ".join(f"item number {i} of the long inventory" for i in range(60)) + "."
    for text, query in ((thai, "ประชากร ประเทศไทย"), (commas, "item number 33"), (spaces, "item number 33")):
        found = passages_of(text, query, 50, SETTINGS)
        assert len(found) >= 3
        for passage in found:
            assert slice_text(text, passage.start, passage.end - passage.start)[0] == passage.text


# ----- the part of a long page that is searched -----
def test_passages_are_sought_in_passage_scan_chars_from_the_offset_and_a_warning_says_so():
    own = Settings(passage_scan_chars=2000)
    page = ("Nothing to see in this sentence. " * 100) + "The answer word is here. " + ("More filler. " * 300)
    answer_at = page.index("The answer")
    assert 2000 < answer_at
    missed = focused(page, "answer word", settings=own)
    assert all(p.end <= 2000 for p in missed.passages) and not any("answer" in p.text for p in missed.passages)
    [warning] = missed.warnings
    assert warning == (f"passages were sought in characters 0-2000 of the page's {len(page)} "
                       "(passage_scan_chars); a fetch with the same query and offset=2000 looks further")
    found = focused(page, "answer word", settings=own, offset=2000)
    assert "The answer word is here." in found.passages[0].text and found.passages[0].start >= 2000
    assert found.warnings == [f"passages were sought in characters 2000-4000 of the page's {len(page)} "
                              "(passage_scan_chars); a fetch with the same query and offset=4000 looks further"]
    whole = focused(page, "answer word", settings=Settings(passage_scan_chars=len(page)))
    assert whole.warnings == [] and "The answer word is here." in whole.passages[0].text
    assert evidence.scan_end(page, 10, Settings(passage_scan_chars=len(page))) == len(page)
    assert evidence.scan_warning(page, 0, Settings(passage_scan_chars=len(page) - 1)) is not None


def test_a_page_of_short_lines_is_sought_in_one_unit_per_20_characters_of_passage_scan_chars():
    from plugin.reading.sentences import segment

    # A scan of 120,000 characters ranks at most 6,000 units. Prose of that length holds ~1,100 sentences; a
    # word list holds a unit per 7 characters, so it is sought in its first 6,000 lines and the warning says
    # where the next fetch starts, exactly at the first line left out.
    own = Settings(passage_scan_chars=120_000)
    assert evidence.scan_units(own) == 6000 and evidence.scan_units(Settings(passage_scan_chars=2000)) == 5000
    lines = [f"w{i:04d}" for i in range(9000)]
    lines[7000] = "the answer word"
    page = "\n\n".join(lines)
    first = focused(page, "answer word", settings=own)
    cut = page.index("w6000")
    assert all(p.end <= cut for p in first.passages) and not any("answer" in p.text for p in first.passages)
    [warning] = first.warnings
    assert warning == (f"passages were sought in characters 0-{cut} of the page's {len(page)} (a page of short "
                       "lines: at most 6000 sentences or lines, one per 20 characters of passage_scan_chars and "
                       f"at least 5000); a fetch with the same query and offset={cut} looks further")
    further = focused(page, "answer word", settings=own, offset=cut)
    assert "the answer word" in further.passages[0].text and further.warnings == []
    seg, end = evidence.scanned(page, 0, own)
    assert len(seg.units) == 6000 and end == cut and seg.units[-1].end < cut
    assert len(segment(page, max_units=6000).units) == 6001  # the cutting itself stops there, not only the ranking
    # prose is cut by its length, not its units; a page within both bounds is not cut at all
    prose = " ".join(f"Sentence {i} says a thing about the weather in some town." for i in range(2500))
    assert evidence.scanned(prose, 0, own)[1] == 120_000
    assert focused(page, "answer word", settings=Settings(passage_scan_chars=len(page) * 20)).warnings == []


@examples(100)
@given(text=_TEXTS, start=st.integers(0, 60), most=st.integers(1, 12))
@example(text="# Head\n\n" + "\n\n".join("abcdefg"), start=8, most=3).via("a heading before the part asked for")
def test_segment_stops_after_the_units_asked_for_and_they_are_its_first_ones(text, start, most):
    from plugin.reading.sentences import segment

    whole = segment(text, start=start).units
    cut = segment(text, start=start, max_units=most).units
    assert cut == whole[:len(cut)]
    assert len(cut) == len(whole) or len(cut) > most


def test_a_block_running_past_the_searched_part_is_left_out_not_cut():
    own = Settings(passage_scan_chars=1000)
    code = "```\n" + "\n".join(f"answer line {i}" for i in range(100)) + "\n```"
    page = "Some answer text first.\n\n" + code
    found = passages_of(page, "answer line", 10, own)
    assert [p.text for p in found] == ["Some answer text first."]
    assert passages_of(page, "answer line", 10, Settings(passage_scan_chars=len(page)))[0].text == code


def test_passages_keep_their_heading_path_when_sought_from_an_offset():
    found = passages_of(ARTICLE, "topic number 30", 1, SETTINGS, offset=ARTICLE.index("## Part 29"))
    assert found[0].heading_path == ["Part 30"] and "topic number 30" in found[0].text


# ----- off the event loop -----
async def test_fetch_ranks_passages_off_the_event_loop(standins, monkeypatch):
    from pages import article_html, routes
    from plugin.reading.reader import Reader
    from standins import page
    from pages import ROBOTS_OPEN, reading_settings as settings

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    seen, loop_ran = waiting_for_the_loop(monkeypatch, evidence, "passages_of")
    async with Reader(settings()) as reader:
        answer, _ = await asyncio.gather(reader.fetch(site.url + "/post", query="work-stealing scheduler"),
                                         other_request(seen, loop_ran))
    assert answer.passages and "work-stealing" in answer.passages[0].text
    assert ran_off_the_loop(seen)


async def test_search_read_with_passages_ranks_off_the_event_loop(standins, monkeypatch):
    from pages import article_html, routes
    from plugin.pipeline.searcher import Searcher
    from standins import bing_page, page
    from pages import ROBOTS_OPEN, reading_settings as settings

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    engine = await standins(page(bing_page([("How async Rust works", site.url + "/post", "async rust scheduling")])))
    seen, loop_ran = waiting_for_the_loop(monkeypatch, evidence, "passages_of")
    async with Searcher(settings(engines=["bing"], endpoints={"bing": engine.url}, cache_ttl_s=0)) as searcher:
        answer, _ = await asyncio.gather(searcher.search("rust work-stealing scheduler", read=1, passages=2),
                                         other_request(seen, loop_ran))
    assert answer.results[0].passages and "work-stealing" in answer.results[0].passages[0].text
    assert ran_off_the_loop(seen)


async def test_search_rows_say_when_only_part_of_a_page_was_searched(standins):
    # A search row's passages are sought in the same part of the page a fetch's are (passage_scan_chars, the
    # unit bound); the response says so for that row, as a fetch does, instead of passages from the first
    # part passing for the whole page's best.
    from pages import ROBOTS_OPEN, article_html, routes, reading_settings as settings
    from plugin.pipeline.searcher import Searcher
    from standins import bing_page, page

    filler = "".join(f"<p>Filler sentence number {i} says nothing about the topic at all.</p>" for i in range(60))
    long_page = article_html(extra_body=filler + "<p>The answer word sits here, far down the page.</p>")
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/long": page(long_page),
                                  "/short": page(article_html())}))
    engine = await standins(page(bing_page([("Long answer word", site.url + "/long", "the answer word"),
                                            ("Short answer word", site.url + "/short", "the answer word")])))
    own = settings(engines=["bing"], endpoints={"bing": engine.url}, cache_ttl_s=0, passage_scan_chars=2000)
    async with Searcher(own) as searcher:
        answer = await searcher.search("answer word", read=2, passages=2)
        reader = searcher.page_reader()
        content = (await reader.fetch(site.url + "/long", max_chars=100000)).content
        short = (await reader.fetch(site.url + "/short", max_chars=100000)).content
    assert content.index("The answer word") > 2000 and len(short) < 2000
    urls = [row.url for row in answer.results]
    assert set(urls[:2]) == {site.url + "/long", site.url + "/short"}
    row = urls.index(site.url + "/long")
    assert not any("answer" in p.text for p in answer.results[row].passages)
    _, end = evidence.scanned(content, 0, own)
    said = [w for w in answer.warnings if "passages were sought" in w]
    assert said == [f"result {row + 1} ({site.url}/long): passages were sought in characters 0-2000 of the page's "
                    f"{len(content)} (passage_scan_chars); a fetch with the same query and offset=2000 looks further"]
    assert end == 2000


def test_the_shapes_bench_reports_every_shape_at_two_lengths(capsys):
    # scripts/passage_shapes.py: the CPU per 1,000 characters of the odd shapes (how a cost growing faster
    # than the page is caught); run small here, for what it reports, not how fast.
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "passage_shapes.py"
    spec = importlib.util.spec_from_file_location("passage_shapes", path)
    shapes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shapes)
    assert shapes.main(["--chars", "2000", "--repeats", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["shapes"]) == set(shapes.SHAPES) and "a run of dots" in report["shapes"]
    for shape, row in report["shapes"].items():
        assert row["chars"] == 2000 == row["scanned"] and len(shapes.page(shape, 2000)) == 2000
        assert row["ms_per_1000"] > 0 and row["ms_per_1000_quarter"] > 0 and row["growth"] > 0
