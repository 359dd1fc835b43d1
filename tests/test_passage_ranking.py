"""Terms and passage ranking (plugin.reading.terms, plugin.reading.passages), pinned by the properties they
promise rather than by scores (the weights are tuned by cross-validation and change): folding and prefixes,
CJK and Thai bigrams to the last one, function words out of a question unless nothing else is left; windows
made of whole units within one section, best first, never overlapping; the lead prior favouring earlier
windows; context from neighbouring sentences that never crosses a heading; what a question asks for. The
speed-ups are pinned to the plain definitions they replaced (the sentence stop pattern, each window's sums,
names beside long runs), and a page's scores are the same to the last bit in every process."""

from __future__ import annotations

import dataclasses

from examples import scaled
from hypothesis import HealthCheck, example, given, settings as hypothesis_settings, strategies as st

from plugin.reading.passages import RankOptions, Window, answer_kind, best_passages, fits, pick, rank_windows
from plugin.reading.sentences import HEADING, segment
from plugin.reading.terms import FUNCTION_WORDS, content_terms, fold, terms


# Generation is timed by Hypothesis's health checks; on a shared, loaded machine it can be slow without
# anything being wrong.
SLOW_ON_A_LOADED_MACHINE = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


def examples(count: int) -> hypothesis_settings:
    return hypothesis_settings(max_examples=scaled(count), deadline=None,
                               suppress_health_check=SLOW_ON_A_LOADED_MACHINE)


def options(window_chars: int = RankOptions.window_chars, **weights: float) -> RankOptions:
    """Words only (no meaning model), with some fitted weights overridden by feature name."""
    return RankOptions(window_chars=window_chars, meaning=False, weights=tuple(weights.items()))


NO_TYPED = {name: 0.0 for name in ("typed", "typed_bm25", "typed_proximity", "typed_context", "typed_heading",
                                   "typed_cover")}


# ----- terms -----
def test_a_word_is_folded_for_width_case_and_latin_greek_cyrillic_accents_only():
    assert fold("ＰＹＴＨＯＮ") == "python" and fold("Café") == "cafe" and fold("ÉLAN") == "elan"
    assert fold("Ἀθῆναι") == "αθηναι" and fold("Ёлка") == "елка"
    assert fold("Straße") == "strasse"
    assert fold("東京") == "東京" and fold("ภาษา") == "ภาษา"  # Thai vowel marks stay: they spell the word


def test_a_word_keeps_its_combining_marks():
    # Python's \\w has no marks: the vowel signs and tone marks of Devanagari, Thai, Khmer … cut words
    # into pieces (दान, दिन and देना were all द, न), and a passage about the wrong word could win.
    assert terms("दान") != terms("दिन") != terms("देना") and terms("हिन्दी भाषा", prefix=0) == [
        fold("हिन्दी"), "भाषा"]
    assert terms("ที่นี่") != terms("ที่นั่น") and "นี" in terms("ที่นี่")
    assert content_terms("ما هو الطقس اليوم") == terms("ما هو الطقس اليوم")  # Arabic: no function words
    page = "आज दिन है। आज दान है।"
    top = best_passages(page, "दान", 1, options=options(12, lead=0))
    assert page[top[0].start:top[0].end] == "आज दान है।"
    thai = "ผมอยู่ที่นั่น ผมอยู่ที่นี่"
    top = best_passages(thai, "ที่นี่", 1, options=options(12, lead=0))
    assert thai[top[0].start:top[0].end] == "ผมอยู่ที่นี่"


def test_khmer_and_myanmar_runs_become_bigrams_as_thai_does():
    assert terms("ភាសា") == ["ភា", "ាស", "សា"]  # written without spaces between words
    assert terms("မြန်မာ")[:2] == ["မြ", "ြန"]


def test_words_are_cut_to_their_prefix_except_numbers():
    assert terms("Elections electoral election", prefix=5) == ["elect", "elect", "elect"]
    assert terms("Elections", prefix=0) == ["elections"]
    assert terms("cat cats", prefix=4) == ["cat", "cats"]
    assert terms("12345678 2024", prefix=4) == ["12345678", "2024"]
    assert terms("snake_case and-dash", prefix=0) == ["snake", "case", "and", "dash"]


def test_cjk_and_thai_runs_become_bigrams_to_the_last_one():
    assert terms("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert terms("東") == ["東"]  # a lone character stays
    assert terms("東京abc") == ["東京", "abc"] and terms("abc東京def") == ["abc", "東京", "def"]
    assert terms("xyzlongword東京", prefix=4) == ["xyzl", "東京"]  # letters glued to a run are cut to the prefix
    assert terms("東京longerword", prefix=4) == ["東京", "long"]
    assert terms("東京x") == ["東京", "x"] and terms("x東京") == ["x", "東京"]  # one letter on either side counts
    assert terms("ภาษาไทย") == ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย"]
    assert terms("서울시") == ["서울", "울시"]


def test_the_last_cjk_bigram_of_a_question_counts_in_ranking():
    text = "東京に行く。タワーは高い。"
    top = best_passages(text, "東京タワー", 1, options=options(5, lead=0))
    assert text[top[0].start:top[0].end] == "タワーは高い。"  # タワ, ワー against 東京 alone: the later wins


def test_function_words_leave_a_question_unless_nothing_else_is_left():
    assert content_terms("What is the capital of France?", prefix=0) == ["capital", "france"]
    assert content_terms("the capital of France France", prefix=5) == ["capit", "franc"]  # distinct, in order
    assert content_terms("What is the", prefix=0) == ["what", "is", "the"]
    assert content_terms("Who is it?", prefix=0) == ["who", "is", "it"]
    assert content_terms("Wer ist es? Qui est-ce?", prefix=0) == ["wer", "ist", "es", "qui", "est", "ce"]
    assert content_terms("Wer ist Ada?", prefix=0) == ["ada"]
    assert {"what", "der", "quien", "когда", "siapa"} <= FUNCTION_WORDS  # held folded, as they are looked up
    text = "Nobody knows. Who is it, then? It rained."
    top = best_passages(text, "who is it", 1, options=options(10, lead=0))
    assert text[top[0].start:top[0].end].startswith("Who is it, then?")  # (with what answers it: "It rained.")


def test_function_words_written_with_accents_leave_a_question_too():
    # The list is written with its accents and a question's words are folded before they are looked up:
    # unfolded, "cuántos", "são", "était", "какой" (й folds to и) stayed in questions as content.
    assert content_terms("¿Cuántos años tiene Ana?", prefix=0) == ["anos", "tiene", "ana"]
    assert content_terms("Quais são os planos?", prefix=0) == ["planos"]
    assert content_terms("Quand était-il né ?", prefix=0) == ["ne"]
    assert content_terms("Какой город?", prefix=0) == ["город"]


def test_according_to_is_no_content_in_any_language():
    # as "according" in English: the source a question names is not what it asks about
    for question in ("Segundo o autor, quantos pilotos?", "De acordo com o autor, quantos pilotos?",
                     "Según el autor, cuántos pilotos?", "Selon l'auteur, combien de pilotes ?",
                     "Laut dem Autor, wie viele Piloten?", "Menurut penulis, berapa pilot?"):
        kept = content_terms(question, prefix=0)
        assert not {"segundo", "acordo", "segun", "selon", "laut", "menurut"} & set(kept), question


def test_a_small_number_in_words_is_the_term_its_digits_make():
    assert terms("seis anos") == terms("6 anos") == ["6", "anos"]
    assert terms("Six years, zwölf Monate, три дня") == ["6", "years", "12", "monat", "3", "дня"]
    # words with another common meaning keep it
    assert terms("one once dos due", prefix=0) == ["one", "once", "dos", "due"]
    text = "The school opened in 1990. Children of 6 years read 60 words a minute. Reading is fun."
    top = best_passages(text, "How many words a minute should six-year-old children read?", 1,
                        options=options(10, lead=0))
    assert "60 words" in text[top[0].start:top[0].end]


# ----- windows -----
PAGE = """# Guide

The scheduler moves tasks. It keeps cores busy. Nothing else here.

## Other

Plain words only. More plain words.

## Scheduler notes

The scheduler steals tasks between threads when a core runs dry.
"""


def test_windows_are_whole_units_within_one_section_and_skip_headings():
    seg = segment(PAGE)
    starts = {u.start: u for u in seg.units if u.kind != HEADING}
    ends = {u.end: u for u in seg.units if u.kind != HEADING}
    windows = rank_windows(PAGE, "scheduler tasks threads", options=RankOptions(window_chars=60))
    assert len(windows) == len(starts)  # one window from every unit that is not a heading
    for window in windows:
        assert window.start in starts and window.end in ends
        assert starts[window.start].section == ends[window.end].section
        assert window.section == seg.sections[starts[window.start].section]
    scores = [(w.score, -w.start) for w in windows]
    assert scores == sorted(scores, reverse=True)  # best first, the earlier of equals first


def test_a_window_grows_by_whole_units_while_it_stays_within_window_chars():
    text = "Aa aa. Bb bb. Cc cc. Dd dd."
    spans = {(w.start, w.end) for w in rank_windows(text, "aa", options=RankOptions(window_chars=13))}
    assert spans == {(0, 13), (7, 20), (14, 27), (21, 27)}
    single = {(w.start, w.end) for w in rank_windows(text, "aa", options=RankOptions(window_chars=3))}
    assert single == {(0, 6), (7, 13), (14, 20), (21, 27)}  # one unit always fits


def test_windows_start_at_or_after_the_offset_and_an_empty_text_has_none():
    offset = PAGE.index("Plain words")
    assert all(w.start >= offset for w in rank_windows(PAGE, "scheduler", offset=offset))
    assert rank_windows("", "anything") == [] and rank_windows("# Only a heading", "heading") == []
    assert best_passages(PAGE, "scheduler", 2) == pick(rank_windows(PAGE, "scheduler"), 2)


def test_windows_come_only_from_the_units_a_caller_cut():
    """A caller that cut a part of a long page into units (plugin.reading.evidence) gets windows of those
    units only, with the part's heading path."""
    start, end = PAGE.index("## Scheduler notes"), len(PAGE)
    part = segment(PAGE, start=start, end=end)
    windows = rank_windows(PAGE, "scheduler", segmented=part)
    assert windows and all(w.start >= start for w in windows), windows
    assert {w.section[-1] for w in windows} == {"Scheduler notes"}
    assert best_passages(PAGE, "scheduler", 1, segmented=part) == pick(windows, 1)


def test_pick_chooses_the_best_windows_that_do_not_overlap():
    windows = [Window(0, 10, 5.0, ()), Window(5, 15, 4.0, ()), Window(10, 20, 3.0, ()), Window(20, 30, 2.0, ()),
               Window(9, 11, 1.0, ())]
    assert pick(windows) == [windows[0], windows[2], windows[3]]
    assert pick(windows, 2) == [windows[0], windows[2]]
    assert pick(windows, 0) == [] and pick([], 3) == []
    assert pick([Window(0, 10, 1.0, ()), Window(10, 20, 0.5, ())], 5) == [Window(0, 10, 1.0, ()),
                                                                          Window(10, 20, 0.5, ())]  # touching is fine
    assert pick([Window(10, 20, 1.0, ()), Window(0, 10, 0.5, ())]) == [Window(10, 20, 1.0, ()),
                                                                       Window(0, 10, 0.5, ())]  # either way round


# ----- what scores -----
def scores(text: str, query: str, window_chars: int, **weights: float) -> dict[str, float]:
    return {text[w.start:w.end]: w.score for w in rank_windows(text, query, options=options(window_chars, **weights))}


def test_the_lead_prior_favours_earlier_windows_and_only_by_its_weight():
    text = "Same words here. " * 6
    without = rank_windows(text, "unrelated", options=options(10, lead=0))
    with_lead = rank_windows(text, "unrelated", options=options(10, lead=0.3))
    assert {w.score for w in without} == {0.0}
    assert [w.start for w in without] == sorted(w.start for w in without)  # equals: the earlier first
    bonus = {w.start: w.score for w in with_lead}
    ordered = [bonus[s] for s in sorted(bonus)]
    assert ordered == sorted(ordered, reverse=True) and ordered[0] > ordered[-1] > 0
    assert max(ordered) <= 0.3
    assert [w.start for w in with_lead] == sorted(bonus)  # the earliest first


def test_context_comes_from_the_neighbouring_sentences_but_never_across_a_heading():
    joined = "Plain opening words. The volcano erupted in spring."
    split = "# A\n\nPlain opening words.\n\n# B\n\nThe volcano erupted in spring."
    for text, crosses in ((joined, False), (split, True)):
        on = scores(text, "volcano erupted", context=0.6, lead=0, window_chars=5)
        off = scores(text, "volcano erupted", context=0.0, lead=0, window_chars=5)
        if crosses:
            assert on["Plain opening words."] == off["Plain opening words."] == 0.0
        else:
            assert on["Plain opening words."] > off["Plain opening words."] == 0.0
    before = "The volcano erupted in spring. Plain closing words."
    assert scores(before, "volcano erupted", context=0.6, lead=0, window_chars=5)["Plain closing words."] > 0


def test_a_passage_ending_in_a_question_or_a_colon_takes_the_sentence_that_answers_it():
    # A dev question ("What is the main feature of Uber Money?") ranked "… with Uber Money. The headline
    # feature?" first and its answer, the next sentence, 35th.
    text = ("Filler opens the page here. Uber got into finance recently, with Uber Money. The headline feature? "
            "Real-time earnings for drivers, paid at once. Other words close the page.")
    first = best_passages(text, "What is the main feature of Uber Money?", options=options(window_chars=80))[0]
    assert text[first.start:first.end].endswith("Real-time earnings for drivers, paid at once.")
    for ending, grows in ((" feature:", True), (" feature?**", True), ("：", True), (" feature.", False)):
        page = f"Uber Money has one{ending} Real-time earnings for drivers. Other words close the page."
        found = best_passages(page, "Uber Money", options=options(window_chars=20))[0]
        assert ("Real-time" in page[found.start:found.end]) is grows, ending
    # never across a heading, nor past grow_chars
    page = "Uber Money has one feature?\n\n# Other\n\nReal-time earnings for drivers."
    found = best_passages(page, "Uber Money", options=options(window_chars=20))[0]
    assert page[found.start:found.end] == "Uber Money has one feature?"
    page = "Uber Money has one feature? " + "Real-time earnings for drivers " * 20 + "end."
    found = best_passages(page, "Uber Money", options=dataclasses.replace(options(window_chars=20), grow_chars=200))[0]
    assert page[found.start:found.end] == "Uber Money has one feature?"


def test_more_of_the_question_and_the_question_together_score_higher():
    text = "Volcano. Volcano erupted. Volcano erupted violently."
    got = scores(text, "volcano erupted violently", lead=0, context=0, window_chars=5)
    assert got["Volcano erupted violently."] > got["Volcano erupted."] > got["Volcano."] > 0
    together = "The volcano erupted today. Other words fill this. More filler is here."
    apart = "The volcano stood still. Other words fill this. Then it erupted again."
    a = max(scores(together, "volcano erupted", lead=0, context=0, window_chars=500).values())
    b = max(scores(apart, "volcano erupted", lead=0, context=0, window_chars=500).values())
    assert a > b


def test_question_words_in_the_headings_above_a_window_count():
    text = "# Volcano\n\nIt erupted in spring.\n\n# Other\n\nIt erupted in spring."
    got = [(w.section, w.score) for w in rank_windows(text, "volcano erupted", options=options(lead=0))]
    by_section = dict(got)
    assert by_section[("Volcano",)] > by_section[("Other",)]
    flat = {w.section: w.score for w in rank_windows(text, "volcano erupted",
                                                     options=options(lead=0, heading=0, cover=0, **NO_TYPED))}
    assert flat[("Volcano",)] == flat[("Other",)]


def test_a_window_holding_what_the_question_asks_for_gains():
    text = "The company grew fast in those years. The company employs 4,200 people."
    on = scores(text, "How many people does the company employ?", lead=0, context=0, window_chars=5)
    off = scores(text, "How many people does the company employ?", lead=0, context=0, window_chars=5, **NO_TYPED)
    assert on["The company employs 4,200 people."] > off["The company employs 4,200 people."]
    assert on["The company grew fast in those years."] == off["The company grew fast in those years."]
    both = "The company grew fast. It employs 4,200 people."  # the number in the window's second sentence
    on = scores(both, "How many people does the company employ?", lead=0, context=0, window_chars=100)
    off = scores(both, "How many people does the company employ?", lead=0, context=0, window_chars=100,
                 **NO_TYPED)
    assert on[both] > off[both]


def test_proximity_counts_the_window_s_best_sentence_wherever_it_is():
    text = "Plain words first. The volcano erupted violently."
    on = scores(text, "volcano erupted violently", lead=0, context=0, window_chars=100, proximity=0.5, typed_proximity=0)
    off = scores(text, "volcano erupted violently", lead=0, context=0, window_chars=100, proximity=0, typed_proximity=0)
    assert on[text] > off[text]


def test_what_a_question_asks_for_and_what_holds_it():
    assert answer_kind("How many people live there?") == "number"
    assert answer_kind("What percentage voted?") == "number"
    assert answer_kind("Сколько стоит?") == "number" and answer_kind("いくらですか") == "number"
    assert answer_kind("When did it open?") == "date" and answer_kind("In what year was it built?") == "date"
    assert answer_kind("Who founded it?") == "name" and answer_kind("Which company bought it?") == "name"
    assert answer_kind("Where is it?") == "name" and answer_kind("In which city is it?") == "name"
    assert answer_kind("Why is the sky blue?") is None and answer_kind("Explain the sky") is None
    assert fits("number", "It has 4,200 staff.") and not fits("number", "No digits here.")
    assert not fits("number", "In 2020 it grew.", {"2020"})  # the question's own number is no answer
    assert fits("date", "It opened in March.") and fits("date", "It opened in 1999.")
    assert not fits("date", "It opened long ago.")
    assert fits("name", "It was founded by Ada Lovelace.") and not fits("name", "it was founded by someone.")
    assert not fits("name", "Met Ada Lovelace.", {"ada", "lovelace"})


def test_rank_options_default_values_are_those_the_settings_ship():
    from plugin.reading.evidence import rank_options
    from plugin.settings import Settings

    shipped = rank_options(Settings())
    assert dataclasses.asdict(shipped) == dataclasses.asdict(RankOptions())


# ----- properties -----
_WORDS = st.sampled_from(["volcano", "erupted", "the", "in", "spring", "東京", "タワー", "ภาษา", "4,200", "Ada",
                          "Lovelace", ". ", "\n\n", "# Head\n\n", "## Sub\n\n", "- ", "```\n", "| a | b |\n"])


@examples(100)
@given(words=st.lists(_WORDS, max_size=120), query=st.lists(_WORDS, min_size=1, max_size=4),
       count=st.one_of(st.none(), st.integers(1, 8)), offset=st.integers(0, 100))
def test_passages_of_any_page_are_whole_units_best_first_and_never_overlap(words, query, count, offset):
    text = " ".join(words)
    question = " ".join(query)
    seg = segment(text)
    starts = {u.start for u in seg.units}
    ends = {u.end for u in seg.units}
    found = best_passages(text, question, count, offset=offset)
    assert count is None or len(found) <= count
    assert [w.score for w in found] == sorted((w.score for w in found), reverse=True)
    for k, window in enumerate(found):
        assert window.start >= offset and window.start in starts and window.end in ends
        assert all(window.end <= other.start or other.end <= window.start for other in found[:k])


# The speed-ups of the sentence cutter and of `terms` against the plain definitions they replaced: what
# follows a full stop is the rest of the line, spaces stripped; a text's terms are its words' terms in order.
_SENTENCE_BITS = st.sampled_from(["The", "volcano", "erupted", "again", "Dr.", "U.S.", "e.g.", "J.", "K.", "Rowling",
                                  "Prof.", "approx.", "Sept.", "Capt.", "(Corp.)",
                                  "said", "it", ".", "!", "?", "…", "\u201d", "\u00bb", ")", " ", "  ", "\t",
                                  "\u00a0", "\u3000", "\u201c", "(", "¿", "*", "_", "a", "b", "東京。", "ภาษา",
                                  "4.2", "3", "x" * 30])


def _cuts_by_copying_the_rest(piece: str) -> list[int]:
    from plugin.reading import sentences as cutter

    cuts = []
    for found in cutter._LATIN_END.finditer(piece):
        rest = piece[found.end():].lstrip()
        if not rest or not cutter._starts_sentence(rest):
            continue
        if found.group(0).rstrip("\"'\u201d\u2019\u00bb)]") == "." and cutter._abbreviation(piece[:found.start()]):
            continue
        cuts.append(found.end())
    return cuts


@examples(300)
@given(bits=st.lists(_SENTENCE_BITS, max_size=60), glue=st.sampled_from(["", " "]))
def test_sentences_end_where_reading_the_whole_rest_of_the_line_says(bits, glue):
    from plugin.reading.sentences import latin_stops

    piece = glue.join(bits)
    assert latin_stops(piece) == _cuts_by_copying_the_rest(piece)


@examples(200)
@given(words=st.lists(_WORDS, max_size=40), prefix=st.integers(0, 6))
def test_a_text_s_terms_are_its_words_terms_in_order(words, prefix):
    import re

    from plugin.reading.terms import word_terms

    text = " ".join(words)
    expected = [t for word in re.findall(r"[^\W_]+", text) for t in word_terms(word, prefix)]
    assert terms(text, prefix) == expected
    for word in re.findall(r"[^\W_]+", text):
        folded = fold(word)
        if folded.isascii():
            assert word_terms(word, prefix) == (folded if prefix <= 0 or len(folded) <= prefix or folded.isdigit()
                                                else folded[:prefix],)


# The stop pattern starts only where a run of terminators starts and never backtracks into it (a long run
# of dots with no space after it cost the square of its length): it must find what the plain pattern finds.
_PLAIN_LATIN_END = r"[.!?…‼⁇⁈⁉]+[\"'”’»)\]]*(?=\s)"


@examples(300)
@given(bits=st.lists(st.one_of(st.text(".!?…‼⁇", min_size=1, max_size=4),  # runs of stops,
                               st.text("\"'”’»)]", min_size=1, max_size=3),  # of closing quotes and brackets
                               st.sampled_from([" ", "\n", "\t", "\u00a0", "a", "B", "4", "(", "“"])), max_size=30))
@example(bits=["a", ".", "”’", " ", "b"]).via("two closing quotes")
@example(bits=["x"] + ["...."] * 20 + ["y"]).via("a long run of dots and no space")
def test_the_sentence_stop_pattern_finds_what_the_plain_pattern_finds(bits):
    import re

    from plugin.reading import sentences as cutter

    piece = "".join(bits)
    assert ([m.span() for m in cutter._LATIN_END.finditer(piece)]
            == [m.span() for m in re.finditer(_PLAIN_LATIN_END, piece)])


# Window features are summed from running totals as windows slide: they must be the sums and maxima over
# each window's own units, taken one window at a time.
_UNIT_BITS = st.sampled_from(["volcano", "volcanoes", "erupted", "spring", "in", "the", "1815", "Tambora",
                              "East", "Sumbawa", ".", ". ", "\n", "\n\n", "\n\n# Eruption\n\n", "\n\n## Ash\n\n",
                              "- ", "x", "a\nb", "東京", "when"])


def _features_one_window_at_a_time(text: str, query: str, window_chars: int) -> list[tuple]:
    import re
    from collections import Counter

    from plugin.reading import passages as ranking

    found = ranking.window_features(text, query, options=options(window_chars))
    units, idf = found.units, found.idf
    question = content_terms(query, RankOptions.prefix)
    total = sum(idf.values()) or 1.0
    unit_terms = [terms(text[u.start:u.end], RankOptions.prefix) for u in units]
    share = [sum(idf[t] for t in question if t in set(ts)) / total for ts in unit_terms]
    wanted = answer_kind(query)
    asked = set(re.findall(r"\w+", query.casefold()))
    typed = [bool(wanted) and fits(wanted, text[u.start:u.end], asked) for u in units]
    lengths = [sum(len(unit_terms[k]) for k in range(w.first, w.last + 1)) for w in found.windows]
    average = (sum(lengths) / len(lengths) if lengths else 0.0) or 1.0
    rows = []
    for i, (w, length) in enumerate(zip(found.windows, lengths)):
        last = i  # from each unit, the longest run within one section whose span stays within window_chars
        while (last + 1 < len(units) and units[last + 1].section == units[i].section
               and units[last + 1].end - units[i].start <= window_chars):
            last += 1
        tf = Counter(t for k in range(w.first, w.last + 1) for t in unit_terms[k] if t in idf)
        heads = set(terms(" ".join(w.section), RankOptions.prefix))
        rows.append(((w.first, w.last), (i, last),
                     round(ranking._bm25(tf, question, idf, length / average, options(window_chars)) / total, 9),
                     round(max(share[w.first:w.last + 1]), 9),
                     round(sum(idf[t] for t in question if t in tf or t in heads) / total, 9),
                     any(typed[w.first:w.last + 1])))
    return rows


@examples(150)
@given(bits=st.lists(_UNIT_BITS, max_size=80), query=st.sampled_from(
           ["When did Tambora erupt?", "volcano spring", "How many volcanoes erupted in 1815?", "東京 volcano"]),
       window_chars=st.sampled_from([1, 12, 40, 120, 400]))
@example(bits=["spring", ". ", "East", ". ", "1815"], query="When did Tambora erupt?", window_chars=40)
@example(bits=["x", "\n"] * 30 + ["volcano", "erupted"], query="volcano spring", window_chars=120)
def test_window_features_are_each_window_s_own_units_sums(bits, query, window_chars):
    from plugin.reading import passages as ranking

    text = " ".join(bits)
    found = ranking.window_features(text, query, options=options(window_chars))
    got = [((w.first, w.last), (k, w.last), round(bm25, 9), round(proximity, 9), round(cover, 9), bool(typed))
           for k, (w, bm25, proximity, cover, typed) in enumerate(zip(
               found.windows, found.values["bm25"], found.values["proximity"], found.values["cover"],
               found.values["typed"]))]
    assert got == _features_one_window_at_a_time(text, query, window_chars)


# A run of word characters and hyphens of 100 or more (a hash, a slug, a code block's long line) is no part
# of a name, so the name pattern is not retried at every capital inside it; shorter words are read as ever.
_NAME_BITS = st.sampled_from(["Ada", "Lovelace", "ex-President", "Obama", "anti-Trump", "the", "met", "O'Neil",
                              "Jean-Luc", "said", ".", ",", " ", "  ", "\n", "-", "'", "’", "Ab-" * 30, "x" * 60])


@examples(200)
@given(bits=st.lists(_NAME_BITS, max_size=30), glue=st.sampled_from(["", " "]))
@example(bits=["ex-President", " ", "Obama", " ", "x" * 60], glue=" ").via("a name beside long words")
def test_a_name_is_found_as_the_plain_pattern_finds_it_among_words_under_100_characters(bits, glue):
    import re

    from plugin.reading import passages as ranking

    text = glue.join(bits)
    if re.search(r"[\w'’-]{100,}", text):
        return  # (a long run: the next test)
    plain = any(not set(re.findall(r"\w+", m.group(0).casefold())) <= {"ada"} for m in ranking._NAME.finditer(text))
    assert fits("name", text, {"ada"}) == plain


def test_a_long_run_of_capitalised_hyphenated_words_is_no_name_but_a_name_beside_it_is():
    run = "Ab-" * 40
    assert not fits("name", f"the tag {run} follows", set())
    assert not fits("name", f"```\n{run * 200}\n```", set())  # (the pattern retried along it: seconds)
    assert fits("name", f"the tag {run} was made by Ada Lovelace.", set())
    assert fits("name", "ex-President Obama spoke.", set())  # a capital after a hyphen still starts a name


_SCORES_IN_A_FRESH_PROCESS = """
import json, random
from plugin.reading.passages import RankOptions, best_passages, rank_windows
rng = random.Random(3)
vocab = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river".split()
sentences = []
for _ in range(120):
    words = rng.sample(vocab, rng.randint(2, 7)) + ["filler"] * rng.randint(0, 5)
    rng.shuffle(words)
    sentences.append(" ".join(words).capitalize() + ".")
text = " ".join(sentences)
question = "alpha beta gamma delta epsilon zeta theta kappa"
options = RankOptions(meaning=False, grow_share=0.05)
print(json.dumps([[w.start, w.end, w.score.hex()] for w in rank_windows(text, question, options=options)]
                 + [[w.start, w.end] for w in best_passages(text, question, options=options)]))
"""


def test_a_page_and_question_score_alike_to_the_last_bit_in_every_process():
    # Sums over a set's terms took the set's order, which changes with each process's hash seed: the
    # same page and question scored a bit apart (and could swap tied passages) from one process to the next.
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run([sys.executable, "-c", _SCORES_IN_A_FRESH_PROCESS], env=env, cwd=root,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.add(done.stdout)
    assert len(outputs) == 1
