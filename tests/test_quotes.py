"""Quotes checked word by word (issue 28 item 4, issue 29 items 6 and 14): what `find_quote` folds, what it
never lets through, the sentence around a match, occurrence counts; Hypothesis properties against a plain
model of the folding; and `verify` doing its matching off the event loop."""

from __future__ import annotations

import asyncio
import re
import unicodedata

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from plugin.errors import FetchError
from plugin.reading import verify as verify_module
from plugin.reading.verify import (MAX_QUOTE_CHARS, check_quote, find_quote, fold_for_matching, locate,
                                   sentence_around)


# Generation is timed by Hypothesis's health checks; on a shared, loaded machine it can be slow without
# anything being wrong.
SLOW_ON_A_LOADED_MACHINE = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


def examples(count: int) -> hypothesis_settings:
    """`count` examples in CI (the `stable` profile), more in the nightly-style `explore` profile."""
    return hypothesis_settings(max_examples=scaled(count), deadline=None,
                               suppress_health_check=SLOW_ON_A_LOADED_MACHINE)


def span(text: str, quote: str) -> tuple[int, int] | None:
    found = find_quote(text, quote)
    return None if found is None else (found.start, found.end)


# ----- word boundaries -----
@pytest.mark.parametrize("page, quote", [
    ("a therapist said so", "the rapist"),            # a boundary in the quote where the page has none
    ("the rapist said so", "therapist"),              # and none in the quote where the page has one
    ("the drug can't be used", "the drug can"),       # an apostrophe is inside its word
    ("the drug can’t be used", "the drug can"),
    ("I ﬁnd it hard", "ind it hard"),                 # never from inside a ligature
    ("I ﬁnd it hard", "I f"),                         # nor to inside one
    ("Die Straße", "die stra"),                       # ß folds to ss: half of it is not a match
    ("concatenate", "cat"), ("concatenate", "conca"), ("concatenate", "tenate"),
    ("re**ad**able", "read"),                         # Markdown marks split no word
    ("price 1,000 dollars", "price 1000 dollars"),    # punctuation counts
    ("foo, bar", "foo bar"),
    ("well - known", "wellknown"),                    # a dash with a space before it is a plain boundary
    ("snake_case", "snake case"),
])
def test_a_quote_whose_word_boundaries_differ_from_the_page_s_is_not_found(page, quote):
    assert find_quote(page, quote) is None


@pytest.mark.parametrize("page, quote, expected", [
    ("a therapist said so", "therapist", (2, 11)),
    ("the rapist said so", "the  RAPIST\nsaid", (0, 15)),
    ("the drug can't be used", "the drug can't", (0, 14)),
    ("the drug can't be used", "the drug can’t", (0, 14)),      # apostrophes fold
    ("the drug can't be used", "the drug cant", (0, 14)),
    ("I ﬁnd it hard", "find it hard", (2, 13)),                 # the ligature is one character of the page
    ("I ﬁnd it hard", "I ﬁnd", (0, 5)),
    ("Die Straße", "die strasse", (0, 10)),
    ("re**ad**able here", "readable", (0, 12)),
    ("see **bold claim** here", "see bold claim here", (0, 23)),
    ("“well-known” result", "well known result", (1, 19)),      # starts at the word, not at the quote mark
    ("“well-known” result", "wellknown result", (1, 19)),       # a dash stands for a space or for nothing
    ("“well-known” result", "well–known", (1, 11)),
    ("thera-\npist", "therapist", (0, 11)),                      # hyphenated at a line end
    ("thera- pist", "therapist", (0, 11)),
    ("thera\u00adpist", "therapist", (0, 10)),                   # a soft hyphen
    ("well - known", "well known", (0, 12)),
    ("Dr. Ada Byron", "dr.ada byron", (0, 13)),                  # whitespace next to punctuation folds
    ("Dr.Ada", "Dr. Ada", (0, 6)),
    ("ＰＹＴＨＯＮ 3", "python 3", (0, 8)),                      # width
    ("(cat) and cat.", "cat", (1, 4)),
    ("a cat", "cat", (2, 5)),
    ("concat cat", "cat", (7, 10)),                              # the first occurrence at word boundaries
    ("東京は日本の首都です。", "日本の首都", (3, 8)),            # no word boundaries in CJK
    ("東京は日本の首都です。", "日本 の 首都", (3, 8)),          # and spaces between CJK characters do not count
    ("使用 Python 编程", "使用Python编程", (0, 12)),
    ("ภาษาไทยสวยงาม", "ไทยสวย", (4, 10)),
    ("ខ្ញុំស្រឡាញ់ភាសាខ្មែរណាស់", "ភាសាខ្មែរ", (12, 21)),            # Khmer and Myanmar are written without spaces too
    ("မြန်မာနိုင်ငံ", "နိုင်ငံ", (6, 13)),
    ("ok 👍 then", "ok 👍 then", (0, 9)),
])
def test_a_quote_is_found_whatever_its_whitespace_case_width_quote_marks_and_dashes(page, quote, expected):
    assert span(page, quote) == expected


def test_text_in_another_normal_form_matches_both_ways_with_its_marks():
    nfc, nfd = "Le café est à côté.", unicodedata.normalize("NFD", "Le café est à côté.")
    assert nfd != nfc
    assert span(nfd, "café est à côté") == (3, len(nfd) - 1)  # the match ends after the combining mark
    assert span(nfc, unicodedata.normalize("NFD", "café est à côté")) == (3, len(nfc) - 1)
    assert span(nfd, "cafe est") is None  # the accent counts
    korean = unicodedata.normalize("NFD", "한국어 문장")  # Hangul in NFD: conjoining jamo, not combining marks
    assert len(korean) > 6 and span(korean, "한국어") == (0, korean.index(" "))
    assert span("한국어 문장", unicodedata.normalize("NFD", "문장")) == (4, 6)
    assert span(nfd, "caf") is None  # the page's word is "café", in either form


def test_a_match_never_starts_or_ends_inside_what_one_character_folds_to():
    assert span("a ½ cup", "1") is None and span("a ½ cup", "a ½ cup") == (0, 7)
    assert span("a ½ cup", "a 1⁄2 cup") == (0, 7)  # its fold, whole, is the character
    assert span("x ㎏ y", "kg") == (2, 3)
    assert span("x ㎏ y", "k") is None and span("x ㎏ y", "g y") is None


def test_invisible_characters_and_emphasis_are_left_out_without_a_boundary():
    assert span("zero\u200bwidth", "zerowidth") == (0, 10)
    assert span("I don´t know", "don't know") == (2, 12)  # a spacing accent used as an apostrophe
    assert span("x ¨ y", "x ¨ y") == (0, 5) and span("x ¨ y", "x y") is None and span("x ¨ y", "x ¨") == (0, 3)
    assert span("thera\u00ad\npist", "therapist") == (0, 11)  # a soft hyphen at a line end
    assert span("`code` word", "code word") == (1, 11)
    assert span("> quoted line", "quoted line") == (2, 13)


def test_an_empty_fold_finds_nothing_and_is_refused_as_a_quote():
    assert find_quote("some text", "“ ” - **") is None
    for bad in ("", "  ", "“”", "-- *", None, 3, ["x"]):
        with pytest.raises(FetchError) as caught:
            check_quote(bad)
        assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "quote"
    assert check_quote("x" * MAX_QUOTE_CHARS) == "x" * MAX_QUOTE_CHARS
    with pytest.raises(FetchError):
        check_quote("x" * (MAX_QUOTE_CHARS + 1))
    assert check_quote("...") == "..."  # punctuation is text that counts (the refusal's words say so)
    with pytest.raises(FetchError, match="something besides whitespace, quote marks, dashes and Markdown marks"):
        check_quote("“ -- ”")
    with pytest.raises(FetchError, match="quote must be text, not int"):  # the wrong type is named
        check_quote(5)
    with pytest.raises(FetchError, match="quote is required"):
        check_quote(None)


# ----- occurrences -----
def test_occurrences_count_every_match_at_word_boundaries_overlapping_ones_included():
    assert find_quote("aa aa aa", "aa aa").occurrences == 2
    assert find_quote("cat cat cat", "cat").occurrences == 3
    found = find_quote("concat cat scat cat", "cat")
    assert (found.start, found.end, found.occurrences) == (7, 10, 2)
    assert find_quote("the the the the", "the the the").occurrences == 2
    assert find_quote("x", "x").occurrences == 1


def test_folded_text_passed_in_is_the_one_searched():
    page = "One fish, two fish."
    folded = fold_for_matching(page)
    assert find_quote(page, "two fish", folded) == find_quote(page, "two fish")
    assert find_quote("unrelated words", "two fish", folded).start == 10  # offsets come from the folded text


def test_the_folded_text_reads_as_the_words_with_their_boundaries():
    folded = fold_for_matching("The “Well-known”  RESULT, e.g. ﬁne")
    assert folded.text == "the well-known result,e.g.fine"
    assert folded.chars == "thewellknownresult,e.g.fine"
    assert folded.starts[folded.chars.index("fi")] == folded.starts[folded.chars.index("fi") + 1]
    assert folded.whole[folded.chars.index("fi")] == 1 and folded.whole[folded.chars.index("fi") + 1] == 2


# ----- the sentence around a match -----
PAGE = """# Title

First sentence here. The quote sits in this second sentence. A third one.

## Section

- an item with words
- another item

```
code line one
code line two
```
"""


def around(quote: str, markdown: bool = True) -> str:
    found = find_quote(PAGE, quote)
    s, e = sentence_around(PAGE, found.start, found.end, markdown=markdown)
    return PAGE[s:e]


def test_the_sentence_around_a_match_is_its_sentence_item_or_block():
    assert around("quote sits") == "The quote sits in this second sentence."
    assert around("here. The quote") == "First sentence here. The quote sits in this second sentence."
    assert around("an item with") == "- an item with words"
    assert around("line one") == "```\ncode line one\ncode line two\n```"
    assert around("Section") == "## Section"  # a heading only when the match starts in it
    assert around("A third one. Section") == "A third one.\n\n## Section"
    assert around("Title", markdown=False) == "# Title"
    text = "Just one line without a stop"
    assert sentence_around(text, 5, 8, markdown=True) == (0, len(text))
    assert sentence_around("a\n\n\nb", 2, 3, markdown=True) == (2, 3)  # no unit there: the match itself


def test_the_sentence_around_comes_from_the_match_s_own_lines_of_a_long_page():
    page = "\n\n".join(f"Paragraph {i} has a sentence. It has another." for i in range(5000))
    found = find_quote(page, "Paragraph 4321 has")
    s, e = sentence_around(page, found.start, found.end, markdown=True)
    assert page[s:e] == "Paragraph 4321 has a sentence."
    match, (s2, e2) = locate(page, "paragraph 4321 HAS", markdown=True)
    assert (match.start, match.end, s2, e2) == (found.start, found.end, s, e)
    assert locate(page, "no such words", markdown=True) == (None, (0, 0))


# ----- properties -----
# A plain model of the folding for texts made of letters (NFC or NFD), digits, spaces and line breaks,
# apostrophes and quote marks, Markdown emphasis and two punctuation marks: both sides become lists of
# words and marks, and the quote occurs where its list is a run of the page's.
_MODEL_TRANSPARENT = re.compile(r"['’\"“”*_`]")
_MODEL_TOKEN = re.compile(r"[^\W_]+|[,.]")


def model_tokens(text: str) -> list[str]:
    return _MODEL_TOKEN.findall(_MODEL_TRANSPARENT.sub("", unicodedata.normalize("NFC", text).casefold()))


def model_count(page: str, quote: str) -> int:
    words, wanted = model_tokens(page), model_tokens(quote)
    if not wanted:
        return 0
    return sum(words[i:i + len(wanted)] == wanted for i in range(len(words) - len(wanted) + 1))


_PIECES = ["a", "b", "ab", "ba", "aa", "Ab", "é", "e\u0301", "1", "10", "’", "'", "\"", "“", "*", "_", "`", ",",
           ".", " ", " ", "\n", "  "]
model_text = st.lists(st.sampled_from(_PIECES), max_size=14).map("".join)


@examples(400)
@given(page=model_text, quote=model_text)
def test_a_quote_is_found_exactly_where_the_plain_model_finds_its_words(page, quote):
    found = find_quote(page, quote)
    expected = model_count(page, quote)
    assert (found.occurrences if found else 0) == expected, (page, quote)
    if found:  # the match as written is the quote, and it starts and ends between the page's words
        assert model_tokens(page[found.start:found.end]) == model_tokens(quote)
        assert model_tokens(page[:found.start]) + model_tokens(page[found.start:]) == model_tokens(page)
        assert model_tokens(page[:found.end]) + model_tokens(page[found.end:]) == model_tokens(page)


@examples(200)
@given(page=model_text, data=st.data())
def test_every_run_of_the_page_s_words_is_found(page, data):
    tokens = model_tokens(page)
    if not tokens:
        return
    i = data.draw(st.integers(0, len(tokens) - 1))
    j = data.draw(st.integers(i + 1, len(tokens)))
    separator = data.draw(st.sampled_from([" ", "\n", "  "]))
    quote = ""
    for token in tokens[i:j]:  # words joined by whitespace, punctuation as it comes
        quote += (separator if quote and token[0].isalnum() and quote[-1].isalnum() else "") + token
    found = find_quote(page, quote.upper() if data.draw(st.booleans()) else quote)
    assert found is not None and found.occurrences == model_count(page, quote)


# Any text: any script, both normal forms, ligatures, emoji, CJK and Thai. A quote made of whole
# whitespace-separated pieces of it, its whitespace, its normal form, its ASCII case and its apostrophes
# changed, is found, no later than where it was taken from.
_ANY = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
_WORDS = st.lists(st.one_of(
    st.sampled_from(["the", "rapist", "therapist", "can't", "ﬁnd", "ﬃ", "café", "cafe\u0301", "Straße", "東京",
                     "の", "ภาษา", "ไทย", "한국어", "👍", "👩‍💻", "e-mail", "well–known", "1,000", "½", "İstanbul",
                     "**bold**", "«quoted»", "x\u200by", "Ⅻ", "ｗｉｄｅ", "Ǆemal", "ﬀ", "ǰ", "ΣΊΣΥΦΟΣ"]),
    _ANY.filter(lambda w: w.strip() and not any(ch.isspace() for ch in w))), min_size=1, max_size=12)


@examples(300)
@given(words=_WORDS, spaces=st.lists(st.sampled_from([" ", "\n", "  ", "\t", " \n "]), min_size=12, max_size=12),
       data=st.data())
def test_any_whole_words_of_any_text_are_found_however_they_are_written(words, spaces, data):
    page = "".join(w + s for w, s in zip(words, spaces))
    i = data.draw(st.integers(0, len(words) - 1))
    j = data.draw(st.integers(i + 1, len(words)))
    quote = " ".join(words[i:j])
    if re.search(r"\|\s*\n\s*\|", page):  # a line break between two `|` ends a table row: only one fits it
        quote = "".join(w + s for w, s in zip(words[i:j], spaces[i:j])).strip()
    form = data.draw(st.sampled_from(["NFC", "NFD", "NFKC", None]))
    if form and not (form == "NFKC" and "´" in quote):  # `´` folds as an apostrophe; its NFKC form, a space
        quote = unicodedata.normalize(form, quote)      # and a combining accent, does not
    if data.draw(st.booleans()):
        quote = "".join(ch.swapcase() if ch.isascii() else ch for ch in quote)
    if data.draw(st.booleans()):
        quote = quote.replace("'", "’")
    if not fold_for_matching(quote).chars:
        return
    found = find_quote(page, quote)
    taken_at = sum(len(w) + len(s) for w, s in zip(words[:i], spaces[:i]))
    assert found is not None, (page, quote)
    first_char = min(start for start in fold_for_matching(page).starts if start >= taken_at)
    assert found.start <= first_char and found.occurrences >= 1  # there, or earlier
    assert find_quote(page[found.start:found.end], quote) is not None


@examples(300)
@given(text=st.text(max_size=60), quote=st.text(max_size=12))
def test_any_match_is_the_quote_folded_and_starts_and_ends_between_words(text, quote):
    found = find_quote(text, quote)
    if found is None:
        return
    assert 0 <= found.start < found.end <= len(text)
    again = find_quote(text[found.start:found.end], quote)  # the match as written is the quote, whole
    assert again is not None and (again.start, again.end) == (0, found.end - found.start)
    folded = fold_for_matching(text)
    first = folded.starts.index(found.start)
    last = max(k for k, end in enumerate(folded.ends) if end == found.end)
    assert not verify_module._inside_word(folded, first) and not verify_module._inside_word(folded, last + 1)


@pytest.mark.parametrize("joint_page, joint_quote, found", [
    (" ", " ", True), (" ", "-", True), (" ", "", False), ("\n", " ", True),
    ("-", " ", True), ("-", "-", True), ("-", "", True), ("–", "", True), ("—", " ", True), ("-\n", "", True),
    ("", "", True), ("", "-", True), ("", " ", False), (" - ", "", False), (" - ", " ", True), ("*", "", True),
    ("'", "", True), ("'", " ", False), (" '", " ", True),
])
def test_what_lies_between_two_words_on_the_page_and_in_the_quote(joint_page, joint_quote, found):
    page = f"see alpha{joint_page}beta here"
    assert (find_quote(page, f"alpha{joint_quote}beta") is not None) is found


_GAPS = st.text(alphabet=[verify_module.SPACE, verify_module.DASH, verify_module.NONE, verify_module.BREAK],
                max_size=80)


@examples(400)
@given(quote_gaps=_GAPS, page_gaps=_GAPS, data=st.data())
def test_gaps_fit_exactly_where_they_fit_gap_by_gap(quote_gaps, page_gaps, data):
    """The quote's boundaries are tested on whole runs at once (a page of one repeated word against a long
    quote had taken minutes gap by gap); the answer is the plain rule's, gap by gap."""
    start = data.draw(st.integers(0, len(page_gaps)))
    run = page_gaps[start:start + len(quote_gaps)]
    quote_gaps = quote_gaps[:len(run)]
    dash, row_break = verify_module.DASH, verify_module.BREAK  # a dash fits anything but the end of a table row
    plain = all(q == p or (dash in (q, p) and row_break not in (q, p)) for q, p in zip(quote_gaps, run))
    assert verify_module._Boundaries(quote_gaps, page_gaps).fit(start, start + len(quote_gaps)) is plain


# ----- characters made of several code points -----
@pytest.mark.parametrize("page, quote", [
    ("I am 👩\u200d💻 now", "👩"),            # the woman of the woman-technologist sequence (ZWJ)
    ("I am 👩\u200d💻 now", "💻"),
    ("go 👍🏽 yes", "👍"),                      # a thumb without its skin tone
    ("flags 🇦🇺🇸🇪 here", "🇺🇸"),              # no US flag between Australia's and Sweden's
    ("flags 🇦🇺🇸🇪 here", "🇸"),
    ("a 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f b", "🏴"),  # a subdivision flag
])
def test_a_quote_never_ends_inside_an_emoji_sequence(page, quote):
    assert find_quote(page, quote) is None


def test_emoji_sequences_are_found_whole():
    assert span("I am 👩\u200d💻 now", "am 👩\u200d💻 now") == (2, 12)
    assert span("flags 🇦🇺🇸🇪 here", "🇸🇪") == (8, 10)
    assert span("go 👍🏽 yes", "go 👍🏽") == (0, 5)


def test_arabic_tatweel_is_left_out():
    """Tatweel (kashida, U+0640) only stretches a word for justification: الكتـــاب is الكتاب."""
    assert span("قال إن الكتـــاب مفيد", "الكتاب مفيد") == (7, 21)
    assert span("قال إن الكتاب مفيد", "الكتـاب") == (7, 13)
    assert find_quote("قال إن الكتـــاب مفيد", "الكت") is None  # still whole words


def test_a_zero_width_non_joiner_stands_for_a_space_or_for_nothing():
    """Persian writes می‌خواهم with a zero-width non-joiner (U+200C); it is typed as a space or left out as often."""
    page = "او گفت می\u200cخواهم بروم"
    for quote in ("می\u200cخواهم بروم", "میخواهم بروم", "می خواهم بروم"):
        assert find_quote(page, quote) is not None, quote
    assert find_quote("او گفت می خواهم بروم", "می\u200cخواهم") is not None
    assert find_quote(page, "خواهم بروم") is not None and find_quote(page, "واهم") is None


# ----- tables -----
# A table's cells, quoted as prose ("Kyle Busch 5040"), are found in its row; a quote never runs from one row
# into the next (nor across the header's separator line) unless the page has those words together elsewhere.
TABLE = ("Standings after the final race.\n\n| Driver | Points | Wins |\n| --- | --- | --- |\n"
         "| Kyle Busch | 5040 | 5 |\n| Denny Hamlin | 4000 | 3 |\n\nHamlin won three.")
COMPACT = "|Driver|Points|Wins|\n|---|---|---|\n|Kyle Busch|5040|5|\n|Denny Hamlin|4000|3|"
PLAIN = "Standings.\n\nDriver | Points | Wins\nKyle Busch | 5040 | 5\nDenny Hamlin | 4000 | 3\n\nHamlin won three."


@pytest.mark.parametrize("page", [TABLE, COMPACT, PLAIN])
def test_a_quote_across_the_cells_of_one_row_is_found(page):
    for quote in ("Kyle Busch 5040", "Busch 5040 5", "Kyle Busch | 5040", "Denny Hamlin 4000 3", "Driver Points Wins",
                  "| Kyle Busch | 5040 | 5 |", "Points"):
        found = find_quote(page, quote)
        assert found is not None, (page, quote)
    assert find_quote(page, "Busch5040") is None  # two cells are two words


@pytest.mark.parametrize("page", [TABLE, COMPACT])
def test_a_quote_never_bridges_two_rows_of_a_table(page):
    for quote in ("5 Denny", "5040 5 Denny Hamlin", "Wins Kyle", "Points Wins Kyle Busch", "5-Denny", "5 | Denny",
                  "Wins --- Kyle"):
        assert find_quote(page, quote) is None, (page, quote)
    # The match as written is found again, in the page and by itself: a row's end is told from the `|` on either
    # side of its line break, which a match over it holds.
    for quote in ("| Kyle Busch | 5040 | 5 |\n| Denny", "5 |\n| Denny Hamlin", "Busch 5040"):
        found = find_quote(page, quote)
        if found is not None:
            written = page[found.start:found.end]
            assert find_quote(page, written) is not None and find_quote(written, quote) is not None


def test_plain_text_rows_are_lines():
    """Plain text writes a table's rows as lines with nothing to tell them from prose: they run on like lines."""
    assert find_quote(PLAIN, "5 Denny") is not None and find_quote(PLAIN, "Busch 5040") is not None


def test_a_quote_over_two_rows_is_found_where_the_page_has_the_words_together():
    page = TABLE + "\n\nIn race 5 Denny Hamlin led."
    found = find_quote(page, "5 Denny")
    assert found is not None and found.occurrences == 1 and page[found.start:found.end] == "5 Denny"
    assert found.start > page.index("In race")
    # A quote written as the table's two rows is the page's two rows.
    assert find_quote(TABLE, "| Kyle Busch | 5040 | 5 |\n| Denny Hamlin | 4000 | 3 |") is not None


def test_rows_end_at_punctuation_and_in_scripts_without_spaces_too():
    assert find_quote("| Total. |\n| Next |", "Total. Next") is None
    assert find_quote("| 北京 | 2100 |\n| 上海 | 2400 |", "北京 2100") is not None
    assert find_quote("| 北京 | 2100 |\n| 上海 | 2400 |", "2100 上海") is None
    assert find_quote("| 北京 | 2100 |\n| 上海 | 2400 |", "北京上海") is None


def test_a_pipe_in_a_cell_is_written_escaped_and_reads_as_a_pipe():
    page = "| Name | Plan |\n| --- | --- |\n| Pro\\|Team | 12 |"
    assert find_quote(page, "Pro|Team 12") is not None and find_quote(page, "Pro Team") is not None
    assert find_quote("a pipe|joined word", "pipe joined") is not None  # a pipe is a boundary anywhere
    assert find_quote("a pipe|joined word", "pipejoined") is None


_CELL_WORDS = st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=4), min_size=1, max_size=3).map(" ".join)


@examples(200)
@given(rows=st.lists(st.lists(_CELL_WORDS, min_size=2, max_size=4), min_size=2, max_size=5), data=st.data(),
       markdown=st.booleans())
def test_any_run_of_one_row_s_cells_is_found_and_no_run_over_two_rows(rows, data, markdown):
    width = max(len(r) for r in rows)
    rows = [r + ["x"] * (width - len(r)) for r in rows]
    if markdown:
        lines = ["| " + " | ".join(r) + " |" for r in rows]
        lines.insert(1, "|" + " --- |" * width)
    else:
        lines = [" | ".join(r) for r in rows]
    page = "\n".join(lines)
    r = data.draw(st.integers(0, len(rows) - 1))
    i = data.draw(st.integers(0, width - 1))
    j = data.draw(st.integers(i + 1, width))
    assert find_quote(page, " ".join(rows[r][i:j])) is not None
    # The last cell of a row and the first of the next, as prose: in a Markdown table found only if some row
    # holds them together; plain text's rows are lines, which run on.
    below = data.draw(st.integers(0, len(rows) - 2))
    quote = rows[below][-1] + " " + rows[below + 1][0]
    wanted = quote.split()
    together = any(words[k:k + len(wanted)] == wanted for words in (" ".join(row).split() for row in rows)
                   for k in range(len(words)))
    assert (find_quote(page, quote) is not None) is (together or not markdown), (page, quote)


# ----- verify off the event loop -----
async def test_verify_matches_in_a_worker_thread_while_the_loop_goes_on(standins, monkeypatch):
    """Folding a long page takes a while: it must not stall the other requests of a serve or MCP process.
    The matching waits until a coroutine on the loop has run: on the loop itself it would wait in vain."""
    from pages import routes
    from plugin.reading.reader import Reader
    from plugin.reading.verify import verify_with
    from standins import page as served
    from off_the_loop import other_request, ran_off_the_loop, waiting_for_the_loop
    from pages import ROBOTS_OPEN, reading_settings as settings

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN,
                                  "/doc": served("The quote is here. Nothing else.", content_type="text/plain")}))
    seen, loop_ran = waiting_for_the_loop(monkeypatch, verify_module, "locate")
    async with Reader(settings()) as reader:
        checked, _ = await asyncio.gather(verify_with(reader, site.url + "/doc", "quote is HERE"),
                                          other_request(seen, loop_ran))
    assert checked.found and checked.text == "quote is here" and checked.sentence == "The quote is here."
    assert ran_off_the_loop(seen)


def test_arabic_and_hebrew_vowel_points_are_left_out_either_way():
    """Arabic and Hebrew are written with or without their vowel points, on pages and in the quotes models
    make of them: a quote that leaves them out, or writes them where the page does not, is the same words.
    The span still covers the page's own points; other marks (Latin accents) still count."""
    page = "قال إن الطالبَ كَتَبَ الدرسَ أمس"
    assert span(page, "كتب الدرس") == (15, 28)  # the last word with its point
    assert span("قال إن الطالب كتب الدرس أمس", "كَتَبَ الدَّرْسَ") == (14, 23)
    assert find_quote(page, "كت") is None  # still whole words
    assert span("הוא אמר שָׁלוֹם לכולם", "שלום לכולם") == (8, 21)
    assert span("הוא אמר שלום לכולם", "אָמַר שָׁלוֹם") == (4, 12)
    assert span("ein Café hier", "ein Cafe") is None


# ----- verify as the Python API calls it -----
async def test_verify_honours_robots_unless_told_to_ignore_them_and_reads_the_format_asked(standins):
    """A page's robots.txt binds `verify` as it binds `fetch` (a quote check reads the page too); a person who
    asks past them says so with ignore_robots. The format asked is the text searched: the sentence around
    the match holds Markdown's emphasis marks, or none in plain text."""
    import plugin
    from pages import reading_settings, routes
    from standins import page as served

    robots = served("User-agent: metasearch\nDisallow: /private/\n", content_type="text/plain")
    html = ("<html><body><article><h1>Release notes</h1><p>The release ships three fixes.</p>"
            "<p>Every command now has a <b>faster start-up</b> than before.</p></article></body></html>")
    site = await standins(routes({"/robots.txt": robots, "/private/notes": served(html), "/notes": served(html)}))
    settings = reading_settings()
    with pytest.raises(FetchError) as refused:
        await plugin.verify(site.url + "/private/notes", "three fixes", settings=settings)
    assert refused.value.code == "blocked_by_robots"
    asked = await plugin.verify(site.url + "/private/notes", "three fixes", settings=settings, ignore_robots=True)
    assert asked.found and asked.text == "three fixes"
    markdown = await plugin.verify(site.url + "/notes", "faster start-up", settings=settings)
    assert markdown.found and markdown.text == "faster start-up" and markdown.format == "markdown", markdown
    assert markdown.sentence == "Every command now has a **faster start-up** than before."
    text = await plugin.verify(site.url + "/notes", "faster start-up", settings=settings, format="text")
    assert text.found and text.text == "faster start-up" and text.format == "text", text
    assert text.sentence == "Every command now has a faster start-up than before."


def test_verify_sync_checks_the_quote_it_is_given_on_the_page_it_is_given_as_asked():
    """verify_sync passes on what it is given (the format) and keeps the defaults `verify` has (robots
    honoured)."""
    from pages import reading_settings
    from plugin.bench.loopback import LoopbackSite
    from plugin.reading.verify import verify_sync

    pages = {"/robots.txt": ("text/plain", b"User-agent: *\nDisallow: /private/\n"),
             "/a": ("text/html", b"<html><body><p>Alpha comes first. <b>Beta</b> follows.</p></body></html>"),
             "/b": ("text/plain", b"Gamma only."), "/private/c": ("text/plain", b"Beta follows.")}

    def answer(path: str) -> tuple[int, str, bytes]:
        return (200, *pages[path]) if path in pages else (404, "text/plain", b"")

    with LoopbackSite(answer) as site:
        found = verify_sync(site.base + "/a", "beta FOLLOWS", settings=reading_settings())
        as_text = verify_sync(site.base + "/a", "beta FOLLOWS", settings=reading_settings(), format="text")
        missing = verify_sync(site.base + "/b", "beta follows", settings=reading_settings())
        with pytest.raises(FetchError) as refused:
            verify_sync(site.base + "/private/c", "beta follows", settings=reading_settings())
    assert found.found and found.url == site.base + "/a" and found.sentence == "**Beta** follows."
    assert as_text.found and as_text.format == "text" and as_text.sentence == "Beta follows."
    assert not missing.found and missing.url == site.base + "/b"
    assert refused.value.code == "blocked_by_robots"


def test_a_quote_over_the_limit_is_refused_as_an_invalid_quote():
    with pytest.raises(FetchError) as refused:
        check_quote("word " * (MAX_QUOTE_CHARS // 5 + 1))
    assert refused.value.code == "invalid_parameter" and refused.value.details["parameter"] == "quote"
    assert f"at most {MAX_QUOTE_CHARS} characters" in refused.value.message


def test_a_row_s_end_is_a_row_s_end_with_spaces_around_its_line_break_too():
    """Markdown allows spaces after a row's last `|` and before the next row's first: still two rows."""
    page = "| Driver | Points |\n| --- | --- |\n| Kyle Busch | 5040 | \n  | Denny Hamlin | 4000 |"
    assert find_quote(page, "5040 Denny") is None
    assert find_quote(page, "Kyle Busch 5040") is not None


def test_a_subdivision_flag_is_one_whole_symbol_tags_and_cancel_tag_included():
    """🏴 with the tags g b s c t and the cancel tag (U+E007F) draws Scotland's flag: a quote of it is found
    whole, and another subdivision's flag (its tags differ) is not it."""
    scotland = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
    wales = "\U0001F3F4\U000E0067\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F"
    page = f"Fans waved {scotland} flags."
    assert span(page, f"waved {scotland} flags") == (5, page.index(" flags") + 6)
    assert find_quote(page, f"waved {wales} flags") is None
    assert find_quote(page, "waved \U0001F3F4 flags") is None  # the black flag alone is another symbol
    assert find_quote(page, f"waved {scotland[:-1]} flags") is None  # without its cancel tag: not the flag
    spaced = "\U0001F3F4\U000E0020\U000E0067\U000E007F"  # a tag space is a tag too
    assert find_quote(f"a {spaced} b", "a \U0001F3F4\U000E0067\U000E007F b") is None
