"""Passages (issue 22), the pure parts: sentences, windows and their ranking, the token estimate, quote
matching; and, on the article corpus's dev questions, the bench's floors and verify's recall and false
matches (skipped when ../shared is absent)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from plugin.reading.passages import RankOptions, answer_kind, best_passages
from plugin.reading.sentences import CODE, HEADING, TABLE, segment, split_sentences
from plugin.reading.terms import content_terms, terms
from plugin.reading.tokens import chars_within, estimate_tokens
from plugin.reading.verify import find_quote, fold_for_matching, sentence_around

ROOT = Path(__file__).resolve().parents[1]
ARTICLE_CORPUS = Path(os.environ.get("METASEARCH_ARTICLE_CORPUS", ROOT.parent / "shared" / "article-corpus"))


NO_LEAD = (("lead", 0.0),)  # ranked on the words alone, not where they stand


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text, 0, len(text))]


# ----- sentences -----
def test_latin_sentences_split_at_stops_but_not_at_abbreviations_initials_or_lower_case():
    text = ("Mr. Smith met J. K. Rowling in the U.S. on Monday. It rained! \"Really?\" she asked. "
            "Prices rose 3.5 percent, e.g. bread. then it ended… Next one.")
    assert sentences(text) == ["Mr. Smith met J. K. Rowling in the U.S. on Monday.", "It rained!",
                               "\"Really?\" she asked.", "Prices rose 3.5 percent, e.g. bread. then it ended…",
                               "Next one."]


def test_cjk_sentences_split_at_their_own_stops_without_spaces():
    assert sentences("东京是日本的首都。它很大！真的吗？是的。") == ["东京是日本的首都。", "它很大！", "真的吗？", "是的。"]
    assert sentences("「行こう」と言った。彼は来なかった。") == ["「行こう」と言った。", "彼は来なかった。"]
    assert sentences("서울은 크다. 부산도 크다.") == ["서울은 크다.", "부산도 크다."]
    assert sentences("यह पहला वाक्य है। यह दूसरा है।") == ["यह पहला वाक्य है।", "यह दूसरा है।"]


def test_thai_sentences_split_at_spaces_between_thai_words():
    assert sentences("ภาษาไทยสวยงาม ฉันชอบเรียนภาษาไทย") == ["ภาษาไทยสวยงาม", "ฉันชอบเรียนภาษาไทย"]


def test_a_sentence_longer_than_the_limit_is_cut_at_a_clause_within_it():
    text = "word, " * 200 + "end."
    spans = split_sentences(text, 0, len(text), max_chars=100)
    assert all(e - s <= 100 for s, e in spans) and len(spans) > 5
    assert text[spans[0][0]:spans[0][1]].endswith(",")


MARKDOWN = """# Guide

Intro sentence one. Intro sentence two.

## Install

Run the installer. It takes a minute.

```python
def main():

    return 1
```

| tool | speed |
| --- | --- |
| fast | 1 s |

### Notes

- first item. Second part.
- second item
"""


def test_blocks_code_and_tables_are_whole_units_under_their_heading_path():
    seg = segment(MARKDOWN, markdown=True)
    kinds = [(u.kind, MARKDOWN[u.start:u.end]) for u in seg.units]
    code = [t for k, t in kinds if k == CODE]
    table = [t for k, t in kinds if k == TABLE]
    assert code == ["```python\ndef main():\n\n    return 1\n```"]  # a blank line inside does not cut it
    assert table == ["| tool | speed |\n| --- | --- |\n| fast | 1 s |"]
    by_text = {MARKDOWN[u.start:u.end]: seg.sections[u.section] for u in seg.units}
    assert by_text["Intro sentence two."] == ("Guide",)
    assert by_text["Run the installer."] == ("Guide", "Install")
    assert by_text["- second item"] == ("Guide", "Install", "Notes")
    assert sum(1 for u in seg.units if u.kind == HEADING) == 3


def test_plain_text_tables_are_whole():
    text = "A table follows.\ntool | speed\nfast | 1 s\nslow | 9 s\nAfter it."
    seg = segment(text, markdown=False)
    assert [text[u.start:u.end] for u in seg.units if u.kind == TABLE] == ["tool | speed\nfast | 1 s\nslow | 9 s"]


def test_a_table_laid_around_running_text_is_cut_into_sentences():
    """A page whose whole article sits in one cell of a layout table (a real page of the article corpus: one
    12,528-character row) is prose, not data: kept whole, it is one unit no passage budget can hold."""
    article = " ".join(f"Sentence {i} tells the story of the rocket." for i in range(30))
    text = f"| | {article} |\n| --- | --- |\n| The core stage at Michoud. | credit: NASA |"
    seg = segment(text, max_chars=600)
    assert not [u for u in seg.units if u.kind == TABLE]
    pieces = [text[u.start:u.end] for u in seg.units]
    assert "Sentence 3 tells the story of the rocket." in pieces and max(len(p) for p in pieces) <= 600
    assert all(u.end - u.start > 0 and "---" not in text[u.start:u.end] for u in seg.units)
    assert all(not text[u.start:u.end].startswith("|") and not text[u.start:u.end].endswith("|") for u in seg.units)
    top = best_passages(text, "which facility holds the core stage", 1, options=RankOptions(window_chars=200))[0]
    assert top.end - top.start <= 200 and "Michoud" in text[top.start:top.end]
    # A data table (short cells) stays whole, however many rows it has.
    data = "| a | b |\n| --- | --- |\n" + "\n".join(f"| row {i} | {i} |" for i in range(100))
    assert [(u.kind, u.start, u.end) for u in segment(data).units] == [(TABLE, 0, len(data))]


# ----- passages -----
def test_passages_are_whole_sentences_and_never_cut_a_code_block_or_table():
    code = "```\n" + "\n".join(f"line {i} of the frobnicate example" for i in range(40)) + "\n```"
    table = "| a | b |\n| --- | --- |\n" + "\n".join(f"| frobnicate {i} | {i} |" for i in range(30))
    text = (f"# Doc\n\nThe frobnicate call is slow. It waits on the disk.\n\n{code}\n\n"
            f"After the code, frobnicate is fast. The end.\n\n{table}\n\nLast words on frobnicate here.")
    seg = segment(text)
    whole = [(u.start, u.end) for u in seg.units if u.kind in (CODE, TABLE)]
    starts = {u.start for u in seg.units}
    ends = {u.end for u in seg.units}
    found = best_passages(text, "how fast is frobnicate", None, options=RankOptions(window_chars=200))
    assert len(found) >= 4
    for window in found:
        assert window.start in starts and window.end in ends  # whole units only
        for s, e in whole:
            assert e <= window.start or s >= window.end or (window.start <= s and e <= window.end)
    assert any(text[w.start:w.end] == code for w in found)  # longer than the window, kept whole


def test_ranking_folds_case_accents_width_and_inflections_and_reads_cjk_by_bigrams():
    text = ("Der Wetterbericht kam früh. Die Regierung plant neue Wahlen im Frühjahr. "
            "Das Café öffnet um acht Uhr. Ein Hund bellte laut.")
    top = best_passages(text, "CAFE OFFNET", 1, options=RankOptions(window_chars=30, weights=NO_LEAD))[0]
    assert text[top.start:top.end] == "Das Café öffnet um acht Uhr."
    top = best_passages(text, "Wahl geplant", 1, options=RankOptions(window_chars=30, weights=NO_LEAD))[0]
    assert "Wahlen" in text[top.start:top.end]
    assert terms("Ｐｙｔｈｏｎ") == terms("python")
    jp = "今日は晴れです。東京の人口は約千四百万人です。明日は雨でしょう。"
    top = best_passages(jp, "東京の人口は？", 1, options=RankOptions(window_chars=20, weights=NO_LEAD))[0]
    assert jp[top.start:top.end] == "東京の人口は約千四百万人です。"


def test_function_words_leave_the_question_and_answer_types_are_read():
    assert content_terms("What is the capital of France?", prefix=0) == ["capital", "france"]
    assert answer_kind("How many people live there?") == "number"
    assert answer_kind("When did it open?") == "date"
    assert answer_kind("Who founded the company?") == "name"
    assert answer_kind("Why is the sky blue?") is None
    text = ("The company was founded long ago in a small garage. The founders worked hard in the garage. "
            "It employs 4,200 people today.")
    top = best_passages(text, "How many people does the company employ?", 1,
                        options=RankOptions(window_chars=60, weights=NO_LEAD))[0]
    assert "4,200" in text[top.start:top.end]


# ----- token estimate -----
def test_token_estimate_grows_with_the_text_and_chars_within_fits_the_budget():
    assert estimate_tokens("") == 0
    assert estimate_tokens("Hello world.") >= 3
    assert estimate_tokens("東京の人口") >= 5
    text = "The quick brown fox jumps over the lazy dog. " * 40
    for budget in (1, 10, 57, 200):
        n = chars_within(text, budget)
        assert estimate_tokens(text[:n]) <= budget and (n == len(text) or estimate_tokens(text[:n + 1]) > budget)


# ----- quotes -----
PAGE = ("The “well-known” result holds.  It was\nfirst shown in 1999 by Dr. Ada Byron–Lovelace; "
        "see **bold claim** here. 東京は日本の首都です。")


@pytest.mark.parametrize("quote", [
    "the \"well known\" result HOLDS", "It was first shown", "well known result", "wellknown result",
    "It   was first\nshown in 1999", "see bold claim here", "Byron Lovelace", "日本の首都", "'well-known'"])
def test_quotes_match_whatever_their_whitespace_case_quote_marks_hyphens_and_emphasis(quote):
    found = find_quote(PAGE, quote)
    assert found is not None, quote
    assert PAGE[found.start].isalnum() or PAGE[found.start] in "“*"
    again = find_quote(PAGE[found.start:found.end], quote)  # the match as written is the quote, whole
    assert again is not None and (again.start, again.end) == (0, found.end - found.start)


@pytest.mark.parametrize("quote", ["first shown in 2000", "ell-known", "It wa", "shown in 199", "Ada Lovelace",
                                   "\"\" --", "bold claims"])
def test_other_words_or_part_of_a_word_do_not_match(quote):
    assert find_quote(PAGE, quote) is None


def test_a_match_comes_with_its_sentence():
    found = find_quote(PAGE, "first shown in 1999")
    start, end = sentence_around(PAGE, found.start, found.end, markdown=True)
    assert PAGE[start:end] == ("It was\nfirst shown in 1999 by Dr. Ada Byron–Lovelace; see **bold claim** here.")


# ----- the dev questions of the article corpus -----
def corpus() -> tuple[dict[str, str], list[dict]]:
    if not (ARTICLE_CORPUS / "qa.json").is_file():
        pytest.skip(f"article corpus with questions not found at {ARTICLE_CORPUS} (../shared is absent)")
    truth = json.loads((ARTICLE_CORPUS / "ground-truth.json").read_text(encoding="utf-8"))
    questions = json.loads((ARTICLE_CORPUS / "qa.json").read_text(encoding="utf-8"))
    return {key: value["articleBody"] for key, value in truth.items()}, questions


def test_verify_finds_every_dev_answer_in_its_article_and_no_answer_in_another():
    bodies, questions = corpus()
    folded = {key: fold_for_matching(text) for key, text in bodies.items()}
    assert all(find_quote(bodies[q["id"]], q["answer"], folded[q["id"]]) for q in questions)
    false = []
    for q in questions:
        for key, text in bodies.items():
            if key == q["id"]:
                continue
            found = find_quote(text, q["answer"], folded[key])
            # A short answer ("2019") may truly occur in another article: only a match that is not there
            # as written (case aside) is a false one.
            if found and q["answer"].casefold() not in text.casefold():
                false.append((q["answer"], text[found.start:found.end]))
    assert false == []


def test_passages_meet_their_floors_on_the_dev_questions():
    corpus()
    sys.path.insert(0, str(ROOT / "scripts"))
    import passage_bench

    floors = json.loads((ROOT / "bench" / "passage-floors.json").read_text(encoding="utf-8"))
    report = passage_bench.run(ARTICLE_CORPUS, markdown=True)
    # The lexical ranker is always held to its floors; with the semantic extra installed, the ranker with
    # the meaning signal to its own too.
    for system, scope in passage_bench.floor_scopes(report):
        measured = report["systems"][system]
        for key, floor in floors[scope].items():
            assert measured[key] >= floor, f"{system} {key} {measured[key]} fell below its floor {floor} ({scope})"
    assert report["systems"]["ours"]["r@1200"] > report["systems"]["bm25"]["r@1200"] > report["systems"]["lead"]["r@1200"]
    # issue 28's measure of cost is reported beside the table's first pass (measured, not asserted: timings)
    cost = report["cost"]
    assert cost["median_page_runs"] == 10 and cost["median_page_cpu_ms_p90"] > 0 and cost["warm_cpu_ms_p90"] > 0
    lengths = sorted(len(text) for text in passage_bench.load(ARTICLE_CORPUS, True)[0].values())
    assert lengths[0] < cost["median_page_chars"] < lengths[-1]
    assert "the median page" in passage_bench.render(report)



def test_the_bench_counts_what_a_fetch_returns_as_the_check_reads_it():
    """The bench's fetch@600/1200 (in process) and its --through-fetch mode (the pages served on 127.0.0.1,
    every question through Reader.fetch(url, query=...)) agree question by question, and every passage's
    offsets read back as its text."""
    _, questions = corpus()
    sys.path.insert(0, str(ROOT / "scripts"))
    import passage_bench

    some = questions[::20]  # 12 questions on 12 articles
    texts, _ = passage_bench.load(ARTICLE_CORPUS, True)
    in_process = passage_bench.measure(texts, some, passage_bench.ours(), True)
    through = passage_bench.through_fetch(ARTICLE_CORPUS, some)
    assert through["failed"] == 0 and through["offsets_wrong"] == 0
    assert through["offsets_checked"] >= len(some)
    for budget in (600, 1200):
        assert through[f"fetch@{budget}"] == round(sum(in_process[f"fetch@{budget}"]) / len(some), 4)

def test_the_settings_ship_the_ranker_s_defaults():
    from plugin.reading.evidence import rank_options
    from plugin.settings import Settings

    assert rank_options(Settings()) == RankOptions()


def test_a_number_in_words_answers_how_many_as_digits_do():
    from plugin.reading.passages import fits

    asked = {"how", "many", "countries", "took", "part"}
    assert fits("number", "Artists from sixteen different countries share their work.", asked)
    assert fits("number", "Eight out of ten companies write custom apps.", asked)
    assert fits("number", "It employs 4,200 people.", asked)
    assert not fits("number", "Artists from many countries share their work.", asked)
    assert not fits("number", "Someone wrote it often.", asked)  # "one" and "ten" inside words are no numbers
    # a number the question itself names is no answer
    assert not fits("number", "Two teams played.", {"which", "two", "teams", "played"})
