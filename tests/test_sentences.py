"""A page's text cut into units (plugin.reading.sentences), behaviour by behaviour: blocks (fences, tables,
headings, items, wrapped lines), sentence ends in each script, abbreviations and initials, long sentences
cut at a clause; a part of a page cut as the whole would be; and, for any text (any script, both normal
forms, unclosed fences, long sentences), units that cover it in order, trimmed, within their limit."""

from __future__ import annotations

import unicodedata

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from plugin.reading.sentences import (CODE, HEADING, ITEM, SENTENCE, TABLE, segment, split_sentences)


# Generation is timed by Hypothesis's health checks; on a shared, loaded machine it can be slow without
# anything being wrong.
SLOW_ON_A_LOADED_MACHINE = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


def examples(count: int) -> hypothesis_settings:
    """`count` examples in CI (the `stable` profile), more in the nightly-style `explore` profile."""
    return hypothesis_settings(max_examples=scaled(count), deadline=None,
                               suppress_health_check=SLOW_ON_A_LOADED_MACHINE)


def sentences(text: str, max_chars: int = 600) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text, 0, len(text), max_chars)]


def units(text: str, markdown: bool = True, max_chars: int = 600) -> list[tuple[str, str]]:
    return [(u.kind, text[u.start:u.end]) for u in segment(text, markdown=markdown, max_chars=max_chars).units]


def paths(text: str, markdown: bool = True) -> list[tuple[str, tuple[str, ...]]]:
    seg = segment(text, markdown=markdown)
    return [(text[u.start:u.end], seg.sections[u.section]) for u in seg.units]


# ----- Latin-script sentence ends -----
@pytest.mark.parametrize("text, expected", [
    ("One. Two.", ["One.", "Two."]),
    ("One! Two? Three… Four‼ Five.", ["One!", "Two?", "Three…", "Four‼", "Five."]),
    ("He said \"stop.\" Then left.", ["He said \"stop.\"", "Then left."]),
    ("(A quote.) Next.", ["(A quote.)", "Next."]),
    ("It cost 3.5 dollars. Fine.", ["It cost 3.5 dollars.", "Fine."]),   # no space after the stop
    ("It ended. then more.", ["It ended. then more."]),                   # lower case goes on
    ("Wait. \"Yes,\" she said.", ["Wait.", "\"Yes,\" she said."]),        # an opening quote, then a capital
    ("Wait. ¿Qué? Bien.", ["Wait.", "¿Qué?", "Bien."]),
    ("Wait. (maybe) ok.", ["Wait. (maybe) ok."]),                         # an opening bracket, then lower case
    ("It was 1999. 2000 came.", ["It was 1999.", "2000 came."]),          # a digit starts a sentence
    ("End.  \t Next.", ["End.", "Next."]),
    ("Trailing space. ", ["Trailing space."]),
    ("No stop at all", ["No stop at all"]),
    ("Ends.\u00a0Next.", ["Ends.", "Next."]),                              # any whitespace after the stop
])
def test_latin_sentences_end_at_a_stop_followed_by_space_and_a_sentence_start(text, expected):
    assert sentences(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Mr. Smith came. He sat.", ["Mr. Smith came.", "He sat."]),
    ("Ask Dr. Who. Then go.", ["Ask Dr. Who.", "Then go."]),
    ("See e.g. Table 2. Next.", ["See e.g. Table 2.", "Next."]),
    ("That is i.e. A thing.", ["That is i.e. A thing."]),
    ("J. K. Rowling wrote it.", ["J. K. Rowling wrote it."]),               # initials
    ("Born in the U.S. Army.", ["Born in the U.S. Army."]),                 # a dotted abbreviation
    ("Signed in the US. Then sold.", ["Signed in the US.", "Then sold."]),  # US and EU are words, not initials
    ("Made in the EU. Sold abroad.", ["Made in the EU.", "Sold abroad."]),
    ("He told us. Then he left.", ["He told us.", "Then he left."]),
    ("Plan a. Then b.", ["Plan a.", "Then b."]),                            # one lower-case letter is no initial
    ("Fig. 3 shows it. Done.", ["Fig. 3 shows it.", "Done."]),
    ("It weighs approx. 5 kg. Done.", ["It weighs approx. 5 kg.", "Done."]),  # a longer abbreviation
    ("Vgl. Abschnitt 2. Ende.", ["Vgl. Abschnitt 2.", "Ende."]),
    ("Is it Mr.? Yes.", ["Is it Mr.?", "Yes."]),                             # not a lone stop: it ends
    ("Call Mr.\" Then go.", ["Call Mr.\" Then go."]),                        # a closing quote keeps the abbreviation
    ("A very long word Supercalifragilistic. Next.", ["A very long word Supercalifragilistic.", "Next."]),
])
def test_abbreviations_and_initials_do_not_end_a_sentence(text, expected):
    assert sentences(text) == expected


# ----- other scripts -----
@pytest.mark.parametrize("text, expected", [
    ("东京是首都。它很大！真的吗？是的。", ["东京是首都。", "它很大！", "真的吗？", "是的。"]),
    ("「行こう」と言った。彼は来なかった。", ["「行こう」と言った。", "彼は来なかった。"]),
    ("他说：「好。」然后走了。", ["他说：「好。」", "然后走了。"]),                    # the closing bracket goes with it
    ("真的？!好的。", ["真的？!", "好的。"]),
    ("半角｡次", ["半角｡", "次"]),
    ("यह पहला है। यह दूसरा है॥ अंत", ["यह पहला है।", "यह दूसरा है॥", "अंत"]),
    ("هل هذا صحيح؟ نعم۔ تمام", ["هل هذا صحيح؟", "نعم۔", "تمام"]),
    ("Բարեւ։ Ինչպես ես", ["Բարեւ։", "Ինչպես ես"]),
    ("ሰላም። እንዴት ነህ", ["ሰላም።", "እንዴት ነህ"]),
    ("សួស្តី។ លាហើយ៕ ចប់", ["សួស្តី។", "លាហើយ៕", "ចប់"]),
    ("မင်္ဂလာပါ။ နောက်တစ်ခု", ["မင်္ဂလာပါ။", "နောက်တစ်ခု"]),
    ("ภาษาไทยสวยงาม ฉันชอบเรียน\u00a0มากมาย", ["ภาษาไทยสวยงาม", "ฉันชอบเรียน", "มากมาย"]),
    ("ພາສາລາວ ງາມຫຼາຍ", ["ພາສາລາວ", "ງາມຫຼາຍ"]),
    ("ไทย Thai word", ["ไทย Thai word"]),                                      # a space next to Latin is no end
])
def test_sentences_of_other_scripts_end_at_their_own_marks_and_thai_at_spaces(text, expected):
    assert sentences(text) == expected


# ----- long sentences -----
def test_a_long_sentence_is_cut_after_its_last_clause_mark_within_the_limit():
    text = "alpha beta, gamma delta; epsilon zeta, eta theta iota kappa lambda"
    assert sentences(text, max_chars=40) == ["alpha beta, gamma delta; epsilon zeta,", "eta theta iota kappa lambda"]


def test_a_clause_mark_in_the_first_third_is_not_used_and_a_space_is_the_fallback():
    text = "ab, " + "word " * 20
    pieces = sentences(text, max_chars=30)
    assert pieces[0] != "ab," and all(len(p) <= 30 for p in pieces)
    assert pieces[0] == "ab, word word word word word"  # cut at the last space within 30 characters


def test_a_comma_inside_a_number_is_no_clause_end():
    text = "totals 1,000,000,000,000,000 and 2,000,000,000,000,000 and more words here"
    pieces = sentences(text, max_chars=40)
    assert all("," not in p or not p.endswith(",") for p in pieces)
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")
    assert all(not p[-1].isdigit() or text[text.index(p) + len(p):][:1] in ("", " ") for p in pieces)


def test_arabic_clause_marks_cut_a_long_sentence():
    text = "ذهب الولد إلى المدرسة الكبيرة، ثم عاد إلى البيت بعد ذلك ولعب مع أصدقائه في الحديقة الكبيرة"
    pieces = sentences(text, max_chars=45)
    assert pieces[0] == "ذهب الولد إلى المدرسة الكبيرة،" and all(len(p) <= 45 for p in pieces)
    assert sentences("كلمة كلمة كلمة كلمة؛ كلمة كلمة كلمة كلمة كلمة", max_chars=30)[0].endswith("؛")
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")


def test_cjk_clause_marks_cut_without_a_space_and_text_without_any_is_cut_at_the_limit():
    text = "一二三四五六七八九十、" * 6
    pieces = sentences(text, max_chars=25)
    assert all(len(p) <= 25 for p in pieces) and all(p.endswith("、") for p in pieces)
    assert sentences("x" * 25, max_chars=10) == ["x" * 10, "x" * 10, "x" * 5]


_CLUSTERS = ["क्ष", "त्रि", "य", "👩\u200d💻", "👍🏽", "🇺🇸", "ที่", "น้ำ", "e\u0301", "가", "\u1100\u1161\u11a8", "x", "字"]


def _joined(text: str, k: int) -> bool:
    """text[k] is part of the character before it (a mark, a ZWJ or what follows one, a skin tone, the second
    regional indicator of a flag, a Hangul jamo vowel or final)."""
    ch, code = text[k], ord(text[k])
    ri = [0x1F1E6 <= ord(c) <= 0x1F1FF for c in text[:k + 1]]
    run = 0
    while run < k and ri[k - 1 - run]:
        run += 1
    return (unicodedata.category(ch)[0] == "M" or ch == "\u200d" or text[k - 1] == "\u200d"
            or 0x1F3FB <= code <= 0x1F3FF or 0x1160 <= code <= 0x11FF or (ri[k] and run % 2 == 1))


@examples(200)
@given(clusters=st.lists(st.sampled_from(_CLUSTERS), min_size=1, max_size=60),
       max_chars=st.integers(min_value=6, max_value=40))
def test_a_long_run_without_spaces_is_never_cut_inside_a_character(clusters, max_chars):
    """Text with no space or clause mark within the limit (Devanagari conjuncts, Thai, emoji sequences) is cut
    at the limit: at the last boundary between user-perceived characters before it, not inside one."""
    text = "".join(clusters)
    for s, e in split_sentences(text, 0, len(text), max_chars):
        assert e - s <= max_chars
        assert not _joined(text, s) if s > 0 else True, (text[s:e], s)
        assert e == len(text) or not _joined(text, e), (text[s:e], e)


def test_a_devanagari_run_is_cut_between_its_letters():
    text = "क्षत्रिय" * 10
    pieces = sentences(text, max_chars=15)
    assert "".join(pieces) == text and all(len(p) <= 15 for p in pieces)
    assert all(unicodedata.category(p[0])[0] != "M" for p in pieces)


def test_a_sentence_of_exactly_the_limit_is_not_cut():
    assert sentences("abcd efghi", max_chars=10) == ["abcd efghi"]
    assert sentences("abcd efghij", max_chars=10) == ["abcd", "efghij"]


def test_pieces_of_a_long_sentence_fill_up_to_the_limit():
    text = " ".join(["abcd"] * 30)  # 149 characters, spaces every 5
    pieces = sentences(text, max_chars=50)
    assert [len(p) for p in pieces] == [49, 49, 49]


# ----- blocks -----
def test_a_fence_is_one_code_unit_through_its_closing_fence():
    text = "Before.\n```py\nx = 1\n\ny = 2\n```\nAfter."
    assert units(text) == [(SENTENCE, "Before."), (CODE, "```py\nx = 1\n\ny = 2\n```"), (SENTENCE, "After.")]
    tilde = "~~~\ncode\n~~~\nAfter."
    assert units(tilde) == [(CODE, "~~~\ncode\n~~~"), (SENTENCE, "After.")]
    indented = "   ```\ncode\n   ```\nAfter."
    assert units(indented)[0] == (CODE, "```\ncode\n   ```")  # a unit starts at its first character
    assert units("    ```\ncode")[0][0] != CODE  # four spaces: not a fence
    longer = "````\n```\ninner\n````\nAfter."  # a shorter marker does not close a longer fence
    assert units(longer) == [(CODE, "````\n```\ninner\n````"), (SENTENCE, "After.")]
    assert units("```\ncode\n~~~\nmore\n```") == [(CODE, "```\ncode\n~~~\nmore\n```")]  # nor another kind


def test_an_unclosed_fence_runs_to_the_end_of_the_text_and_never_raises():
    assert units("Intro.\n```\nnever closed\n\nstill code  \n") == [(SENTENCE, "Intro."),
                                                                    (CODE, "```\nnever closed\n\nstill code")]
    assert units("```") == [(CODE, "```")]
    assert units("text\n```") == [(SENTENCE, "text"), (CODE, "```")]
    assert units("```\ncode", markdown=False) == [(SENTENCE, "```\ncode")]  # plain text has no fences


def test_a_one_line_code_span_with_backticks_inside_opens_no_fence():
    # Our Markdown writes a one-line code box holding `` as ```const s = ``;``` (markdown._wrap). CommonMark:
    # a backtick fence's info string holds no backtick, so this line is text, not a fence running on to the
    # end of the page (which had swallowed the heading and every sentence after it).
    from plugin.reading.markdown import _wrap

    line = _wrap("const s = ``;", "`")
    assert line == "```const s = ``;```"
    text = f"Intro.\n\n{line}\n\n## Cats\n\nCats purr. Dogs bark."
    assert units(text) == [(SENTENCE, "Intro."), (SENTENCE, line), (HEADING, "## Cats"), (SENTENCE, "Cats purr."),
                           (SENTENCE, "Dogs bark.")]
    assert units("```py\ncode `x`\n```\nAfter.") == [(CODE, "```py\ncode `x`\n```"), (SENTENCE, "After.")]
    assert units("~~~ `info`\ncode\n~~~")[0] == (CODE, "~~~ `info`\ncode\n~~~")  # tildes may have them


def test_a_heading_s_words_come_whole_whatever_runs_of_spaces_or_hashes_it_holds():
    assert segment("# a" + " " * 200 + "b").sections == [(), ("a" + " " * 200 + "b",)]
    assert segment("# a " + "#" * 400 + " b").sections == [(), ("a " + "#" * 400 + " b",)]
    assert segment("## C#\nText").sections == [(), ("C#",)]  # a closing run needs a space before it
    assert segment("## Title ###   \nText").sections == [(), ("Title",)]
    assert segment("# ###\n#\tx #\nText").sections == [(), ("x",)]


def test_a_heading_with_a_long_run_of_spaces_or_hashes_does_not_hang_a_worker():
    # The heading pattern held the text, the closing # and the spaces around them, all optional: a run of
    # spaces inside a heading cost the cube of its length (2,000 spaces: ~15 s; these 5,000: minutes), a
    # run of # its square. Cut with string operations it takes microseconds; a separate process, so a
    # return of the old pattern fails here after a minute instead of holding the suite.
    import subprocess
    import sys
    from pathlib import Path

    code = ("from plugin.reading.sentences import segment\n"
            "assert segment('# a' + ' ' * 5000 + 'b').sections[1] == ('a' + ' ' * 5000 + 'b',)\n"
            "assert segment('# a ' + '#' * 100000 + ' b').sections[1] == ('a ' + '#' * 100000 + ' b',)\n")
    subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], check=True, timeout=60)


def test_a_sentence_limit_below_one_character_is_refused_not_looped_on():
    # (in a separate process: without the check, cutting a sentence into pieces of 0 never ends)
    import subprocess
    import sys
    from pathlib import Path

    code = ("import pytest\nfrom plugin.reading.sentences import segment, split_sentences\n"
            "for call in (lambda: segment('A long sentence here.', max_chars=0),\n"
            "             lambda: split_sentences('A long sentence here.', 0, 21, 0)):\n"
            "    with pytest.raises(ValueError, match='max_chars must be at least 1'):\n"
            "        call()\n")
    subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], check=True, timeout=60)
    assert units("Ab cd.", max_chars=1) == [(SENTENCE, c) for c in "Abcd."]


def test_a_full_width_decimal_point_ends_no_sentence():
    assert [text for _, text in units("チケットの価格は１２．５０ドルです。本社は東京にある。")] == [
        "チケットの価格は１２．５０ドルです。", "本社は東京にある。"]
    assert [text for _, text in units("バージョン１．２．３をリリース。次へ．")] == ["バージョン１．２．３をリリース。", "次へ．"]
    assert [text for _, text in units("東京は大きい．大阪も大きい．")] == ["東京は大きい．", "大阪も大きい．"]


def test_markdown_table_rows_are_one_table_and_plain_text_needs_two_rows():
    text = "| a | b |\n|---|---|\n| 1 | 2 |\nAfter."
    assert units(text) == [(TABLE, "| a | b |\n|---|---|\n| 1 | 2 |"), (SENTENCE, "After.")]
    assert units("| only | row |") == [(TABLE, "| only | row |")]
    assert units("| not closed\nNext.")[0] == (SENTENCE, "| not closed")
    plain = "a | b\nc | d\nAfter."
    assert units(plain, markdown=False) == [(TABLE, "a | b\nc | d"), (SENTENCE, "After.")]
    assert units("Ls|grep x\nCat|sort", markdown=False) == [(SENTENCE, "Ls|grep x"), (SENTENCE, "Cat|sort")]
    assert units("  | a |\n  |---|")[0] == (TABLE, "| a |\n  |---|")
    assert units("  ## Indented heading")[0] == (HEADING, "## Indented heading")
    assert units("a | b\nAfter.", markdown=False) == [(SENTENCE, "a | b"), (SENTENCE, "After.")]


def test_a_table_with_a_row_longer_than_the_limit_is_prose_cut_into_sentences():
    text = "| One sentence. Two sentence. | - |\n| Short cell. | x \\| y |"
    assert units(text, max_chars=30) == [(SENTENCE, "One sentence."), (SENTENCE, "Two sentence."),
                                         (SENTENCE, "Short cell."), (SENTENCE, "x \\| y")]
    assert units(text, max_chars=200)[0][0] == TABLE  # rows within the limit: data
    row = "| " + "w" * 26 + " |"  # 30 characters
    assert units(row, max_chars=30) == [(TABLE, row)] and units(row, max_chars=29) == [(SENTENCE, "w" * 26)]
    plain = "long cell text here that goes on | b\nc | d"
    assert units(plain, markdown=False, max_chars=20) == [(SENTENCE, "long cell text here"),
                                                          (SENTENCE, "that goes on"),
                                                          (SENTENCE, "b"), (SENTENCE, "c"), (SENTENCE, "d")]
    assert units("one long single row of plain text | b", markdown=False, max_chars=20)[0] == (
        SENTENCE, "one long single row")  # one row of plain text is no table at all


def test_headings_make_the_path_of_the_units_under_them():
    text = ("# A\nIn A.\n## B\nIn B.\n### C\nIn C.\n## D ##\nIn D.\n# E\nIn E.\n#\nHash alone.\n"
            "####### Seven\n#NoSpace")
    assert paths(text) == [
        ("# A", ("A",)), ("In A.", ("A",)), ("## B", ("A", "B")), ("In B.", ("A", "B")),
        ("### C", ("A", "B", "C")), ("In C.", ("A", "B", "C")), ("## D ##", ("A", "D")), ("In D.", ("A", "D")),
        ("# E", ("E",)), ("In E.", ("E",)), ("#", ("E",)), ("Hash alone.", ("E",)),
        ("####### Seven", ("E",)), ("#NoSpace", ("E",))]
    kinds = [k for k, _ in units(text)]
    assert kinds.count(HEADING) == 5
    assert segment("# A\ntext").sections == [(), ("A",)]
    assert units("# A\n#  \n## ##\nText") == [(HEADING, "# A"), (SENTENCE, "#"), (SENTENCE, "## ##"),
                                               (SENTENCE, "Text")]  # a heading needs words
    assert paths("# Not a heading", markdown=False) == [("# Not a heading", ())]


def test_a_list_item_s_marker_belongs_to_its_first_sentence():
    text = "- First. Second.\n* star\n+ plus\n• bullet\n1. one\n12) twelve\n1234. not an item\n-not an item"
    assert units(text) == [(ITEM, "- First."), (SENTENCE, "Second."), (ITEM, "* star"), (ITEM, "+ plus"),
                           (ITEM, "• bullet"), (ITEM, "1. one"), (ITEM, "12) twelve"),
                           (SENTENCE, "1234. not an item"), (SENTENCE, "-not an item")]
    # a number's stop before a capital is no sentence end: "1." was a unit of its own before "Step one."
    assert units("1. Step one runs. Step two.\n10) Last") == [(ITEM, "1. Step one runs."), (SENTENCE, "Step two."),
                                                              (ITEM, "10) Last")]


def test_a_fence_in_a_list_item_is_code_however_wide_the_item_s_marker():
    # Our Markdown indents a code block in a list item by the item's marker (markdown.list_lines): 4 spaces
    # under "10. ", which read as no fence (its lines became sentences, the closing fence one of its own).
    text = "9. Nine.\n10. Run:\n    ```\n    make build\n    ```\n\nAfter."
    assert units(text) == [(ITEM, "9. Nine."), (ITEM, "10. Run:"), (CODE, "```\n    make build\n    ```"),
                           (SENTENCE, "After.")]
    nested = "- Outer\n  10. Inner:\n      ~~~\n      code\n      ~~~"
    assert units(nested)[-1] == (CODE, "~~~\n      code\n      ~~~")
    assert units("10. Item\n\nText.\n    ```\ncode")[-1][0] != CODE  # the list ended: 4 spaces are no fence


def test_a_sentence_wrapped_onto_lines_in_lower_case_is_one_sentence():
    text = "The sentence goes\non here and\nends here. Next one.\nNew line."
    assert units(text) == [(SENTENCE, "The sentence goes\non here and\nends here."), (SENTENCE, "Next one."),
                           (SENTENCE, "New line.")]
    assert units("Stops here.\nlower next") == [(SENTENCE, "Stops here."), (SENTENCE, "lower next")]
    assert units("No stop\nUpper next") == [(SENTENCE, "No stop"), (SENTENCE, "Upper next")]
    assert units("No stop\n- item") == [(SENTENCE, "No stop"), (ITEM, "- item")]
    assert units("No stop\n  \nlower after a blank") == [(SENTENCE, "No stop"), (SENTENCE, "lower after a blank")]
    assert units("Colon:\nlower") == [(SENTENCE, "Colon:"), (SENTENCE, "lower")]
    assert units("No stop\n| a |")[1][0] == TABLE
    assert units("No stop\n```\ncode\n```")[1][0] == CODE
    assert units("No stop\na | b", markdown=False) == [(SENTENCE, "No stop"), (SENTENCE, "a | b")]
    assert units("No stop\nx | y\nz | w", markdown=False)[1][0] == TABLE


def test_leading_and_trailing_whitespace_is_not_part_of_a_unit():
    text = "   Indented sentence.   \n\t- indented item  "
    assert units(text) == [(SENTENCE, "Indented sentence."), (ITEM, "- indented item")]


# ----- a part of a page -----
PAGE = """# Guide

Intro one. Intro two.

```
fenced
# not a heading
```

## Part

| a | b |
|---|---|

Body one. Body two. Body three.
- item one
- item two

### Deep

Deep one. Deep two.
"""


def described(text: str, seg) -> list[tuple]:
    return [(u.start, u.end, u.kind, seg.sections[u.section]) for u in seg.units]


def test_a_part_of_a_page_is_cut_as_the_whole_page_would_be():
    whole = described(PAGE, segment(PAGE))
    for start in range(0, len(PAGE) + 1, 3):
        for end in range(start, len(PAGE) + 2, 7):
            part = described(PAGE, segment(PAGE, start=start, end=end))
            assert part == [u for u in whole if u[1] > start and u[0] < end], (start, end)
    assert described(PAGE, segment(PAGE, start=PAGE.index("fenced"))) [0][2] == CODE  # inside a fence
    assert described(PAGE, segment(PAGE, start=PAGE.index("Deep one")))[0][3] == ("Guide", "Part", "Deep")


# ----- properties -----
_FRAGMENTS = st.sampled_from([
    "Word", "word", "Mr.", "U.S.", "e.g.", "3.5", "1,000", ". ", "! ", "? ", "… ", ", ", "; ", " ", "  ", "\n",
    "\n\n", "# ", "## ", "- ", "1. ", "```", "~~~", "> ", "\"", "”", ")", "。", "、", "！", "।", "ภาษา", " ไทย",
    "東京", "한국어", "café", "cafe\u0301", "ﬁnd", "👩‍💻", "\u00a0", "\t", "x" * 70, "abcdefgh" * 9, "Ünïcödé",
])
any_text = st.one_of(st.lists(_FRAGMENTS, max_size=40).map("".join),
                     st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="|"),
                             max_size=120))


@examples(200)
@given(text=any_text, markdown=st.booleans(), max_chars=st.sampled_from([20, 45, 600]),
       form=st.sampled_from(["NFC", "NFD", None]))
def test_units_cover_any_text_in_order_trimmed_and_within_their_limit(text, markdown, max_chars, form):
    if form:
        text = unicodedata.normalize(form, text)
    seg = segment(text, markdown=markdown, max_chars=max_chars)
    covered = [False] * len(text)
    previous_end = 0
    for unit in seg.units:
        assert previous_end <= unit.start < unit.end <= len(text)
        assert not text[unit.start].isspace() and not text[unit.end - 1].isspace()
        assert 0 <= unit.section < len(seg.sections)
        if unit.kind in (SENTENCE, ITEM):
            assert unit.end - unit.start <= max_chars
        for k in range(unit.start, unit.end):
            covered[k] = True
        previous_end = unit.end
    assert all(covered[k] or text[k].isspace() for k in range(len(text)))


@examples(100)
@given(text=any_text, markdown=st.booleans(), data=st.data())
def test_any_part_of_any_text_is_cut_as_the_whole_would_be(text, markdown, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text) + 1))
    whole = described(text, segment(text, markdown=markdown, max_chars=45))
    part = described(text, segment(text, markdown=markdown, max_chars=45, start=start, end=end))
    assert part == [u for u in whole if u[1] > start and u[0] < end]
