"""Passages, round 2 (issue 28): the meaning signal (wordllama's word vectors, read from the installed wheel,
loaded lazily, never from a hub), windows that grow to hold the question's words, headings as context, the
fitted weights and their settings. Tests that need the model skip, saying so, when the `semantic` extra is
not installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from plugin.reading import meaning
from plugin.reading.passages import FEATURES, RankOptions, best_passages, window_features

ROOT = Path(__file__).resolve().parents[1]
needs_model = pytest.mark.skipif(meaning._package_folder() is None,
                                 reason="wordllama is not installed (pip install 'metasearch[semantic]'): "
                                        "no meaning model to test")
FESTIVAL = ("The festival opened on a cold Friday evening in the old town. Artists from sixteen countries took "
            "part in the show. Tickets were sold out within hours of the start.")


def first(text: str, question: str, **options) -> str:
    top = best_passages(text, question, 1, options=RankOptions(**options))[0]
    return text[top.start:top.end]


def run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}).stdout.strip()


@needs_model
def test_a_question_in_other_words_is_answered_by_meaning_where_words_miss():
    # No content word of either question is on the page: words alone fall back on the lead prior. (Not "how
    # many nations": "sixteen" is a number, which words alone now see the question asks for.)
    assert first(FESTIVAL, "Which nations were represented?", window_chars=80, meaning=False) == \
        "The festival opened on a cold Friday evening in the old town."
    assert first(FESTIVAL, "Which nations were represented?", window_chars=80) == \
        "Artists from sixteen countries took part in the show."
    assert first(FESTIVAL, "When did the shows begin?", window_chars=80, grow_chars=0) == \
        "Tickets were sold out within hours of the start."


@needs_model
def test_meaning_features_credit_similar_words_but_not_unrelated_ones():
    model = meaning.model()
    found = window_features(FESTIVAL, "How many nations were represented?", options=RankOptions(window_chars=80),
                            model=model)
    assert found.meaning and set(found.values) == set(FEATURES)
    soft = found.values["soft_cover"]
    assert soft[1] > 0.3 and soft[0] == 0.0 == soft[2]  # "countries" for "nations"; nothing else near
    vectors = model.word_vectors(["nations", "countries", "weather"])
    assert float(vectors[0] @ vectors[1]) > 0.6 > 0.1 > float(vectors[0] @ vectors[2])


@needs_model
def test_each_word_vector_is_the_unit_mean_of_its_tokens_vectors_however_many_tokens_it_has():
    import numpy as np

    model = meaning.model()
    words = ["nations", "supercomputer", "antidisestablishmentarianism", "東京都", "café", "", "nations", "weather",
             "tickets", "reunion", "festival", "oxygen", "biodiversity", "photosynthesis"]
    model.forget_words()
    vectors = model.word_vectors(words)
    ids = model.token_ids(words)
    assert len({len(i) for i in ids if i}) >= 3  # words of one, several and many tokens, together
    for word, token_ids, vector in zip(words, ids, vectors):
        if not token_ids:
            assert not vector.any(), word
            continue
        mean = model.table[token_ids].mean(axis=0)
        assert np.allclose(vector, mean / np.linalg.norm(mean), atol=1e-6), word
    assert np.array_equal(model.word_vectors(words[::-1]), vectors[::-1])  # kept, same rows


ODD_WORDS = ["", "nations", "countries", "antidisestablishmentarianism", "東京都", "ภาษาไทย", "café", "e\u0301", "😀",
             "x" * 300, "1⁄4", "2019", "ﷺ", "صلى الله", "a\u2581b", "\u2581x", "ǆ", "ß", "İstanbul", "naïve", "z"]


@needs_model
def test_words_encoded_together_get_the_tokens_each_gets_alone():
    import re

    from plugin.reading.terms import fold

    model = meaning.model()
    assert model._joins_words  # the shipped tokenizer is the one the fast path was written for
    words = list(ODD_WORDS) + [fold("ﷺ")]
    truth = ROOT.parent / "shared" / "article-corpus" / "ground-truth.json"
    if truth.is_file():  # real articles' words, when the shared corpus is at hand
        import json

        for article in json.loads(truth.read_text(encoding="utf-8")).values():
            words += dict.fromkeys(fold(w) for w in re.findall(r"[^\W_]+", article["articleBody"]))
    words += [w + "s" for w in words[:200]] + [w[:-1] for w in words[:200]]
    assert model.token_ids(words) == model._encoded_alone(words)
    assert model.token_ids(words[::-1]) == model._encoded_alone(words[::-1])
    # and only words with a space or a `▁` in them (folding's NFKC makes "ﷺ" four words) are encoded one by one
    encoded_alone: list[str] = []
    original = model._encoded_alone
    model._encoded_alone = lambda some: encoded_alone.extend(some) or original(some)
    try:
        model.token_ids(words)
    finally:
        del model._encoded_alone
    assert set(encoded_alone) == {w for w in words if " " in w or "\u2581" in w}


@needs_model
def test_a_tokenizer_other_than_the_shipped_one_has_each_word_encoded_alone():
    from tokenizers import normalizers

    model = meaning.model()
    other = model.tokenizer.__class__.from_str(model.tokenizer.to_str())
    assert meaning._joins_words(other)
    other.normalizer = normalizers.Sequence([normalizers.Lowercase(), other.normalizer])
    assert not meaning._joins_words(other)


def test_when_a_token_spans_two_joined_words_each_word_is_encoded_alone():
    pytest.importorskip("tokenizers", reason="the semantic extra is not installed")
    from tokenizers import Tokenizer, normalizers
    from tokenizers.models import BPE

    mark = meaning.MARK
    vocabulary = {mark: 0, "a": 1, "b": 2, f"a{mark}": 3, f"{mark}b": 4}
    tokenizer = Tokenizer(BPE(vocabulary, [("a", mark), (mark, "b")]))  # "a▁" would span "a" and "b"
    tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend(mark), normalizers.Replace(" ", mark)])
    model = meaning.Meaning.__new__(meaning.Meaning)
    model.tokenizer, model._joins_words = tokenizer, meaning._joins_words(tokenizer)
    assert model._joins_words
    assert tokenizer.encode("a b").tokens == [mark, f"a{mark}", "b"]  # the trap: one token over the space
    assert model.token_ids(["a", "b"]) == model._encoded_alone(["a", "b"]) == [[0, 1], [4]]
    assert model.token_ids(["b", "b"]) == [[4], [4]]


@needs_model
def test_the_model_is_read_from_the_installed_wheel_and_nothing_reaches_the_network():
    # Every socket connection refused in a fresh process: the load must not try one (wordllama's own load()
    # would, for its tokenizer); the vectors are the wheel's.
    out = run_python(
        "import socket\n"
        "def refuse(*a, **k): raise AssertionError('the meaning model tried the network')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse\n"
        "from plugin.reading import meaning\n"
        "m = meaning.model(); print(m.source, meaning.status()['loaded'])\n"
        "import os; print(os.environ.get('HF_HUB_OFFLINE'))")
    assert out.splitlines() == ["wordllama l2_supercat_256 (32000 tokens x 256) True", "1"]


def test_nothing_of_the_model_is_loaded_at_import_or_at_mcp_start():
    out = run_python(
        "import asyncio, sys, plugin, plugin.reading.passages, plugin.reading.evidence\n"
        "from plugin.surfaces.mcp_server import build_server\n"
        "asyncio.run(build_server().list_tools())\n"
        "from plugin.reading import meaning\n"
        "print(meaning.loaded(), sorted(m for m in ('numpy', 'tokenizers', 'safetensors', 'wordllama') if m in sys.modules))")
    assert out == "False []"


@needs_model
def test_the_model_loads_once_on_the_first_ranking_that_asks():
    out = run_python(
        "from plugin.reading import meaning\n"
        "from plugin.reading.passages import RankOptions, best_passages\n"
        "best_passages('One sentence here. Another one there.', 'which one', options=RankOptions(meaning=False))\n"
        "print(meaning.loaded())\n"
        "best_passages('One sentence here. Another one there.', 'which one')\n"
        "first = meaning.model(); best_passages('A third sentence.', 'third')\n"
        "print(meaning.loaded(), meaning.model() is first)")
    assert out.splitlines() == ["False", "True True"]


def test_without_the_model_ranking_is_by_words_and_status_says_why(monkeypatch):
    monkeypatch.setattr(meaning, "_package_folder", lambda: None)
    meaning._load.cache_clear()
    try:
        assert meaning.model() is None
        assert meaning.status()["available"] is False
        assert "wordllama is not installed" in meaning.status()["reason"]
        found = window_features(FESTIVAL, "How many nations were represented?", model=meaning.model())
        assert not found.meaning and "soft_cover" not in found.values
        assert first(FESTIVAL, "sixteen countries", window_chars=80) == \
            "Artists from sixteen countries took part in the show."
    finally:
        meaning._load.cache_clear()


# ----- windows that follow the question -----
SPREAD = ("Unrelated opening words fill this first line. The harbour bridge was closed on Monday. "
          "Engineers found cracks in its steel cables. More unrelated words close the page here.")


def test_a_passage_grows_to_hold_question_words_spread_over_neighbouring_sentences():
    question = "When did the harbour bridge's steel cables crack?"
    grown = first(SPREAD, question, window_chars=60, meaning=False)
    assert grown == "The harbour bridge was closed on Monday. Engineers found cracks in its steel cables."
    assert first(SPREAD, question, window_chars=60, meaning=False, grow_chars=0) in (
        "The harbour bridge was closed on Monday.", "Engineers found cracks in its steel cables.")
    # Within grow_chars only: a limit shorter than the two sentences keeps one.
    assert len(first(SPREAD, question, window_chars=60, meaning=False, grow_chars=70)) < 60
    # Every passage stays whole sentences and none overlaps another.
    passages = best_passages(SPREAD, question, options=RankOptions(window_chars=60, meaning=False))
    spans = sorted((p.start, p.end) for p in passages)
    assert all(e <= s2 for (_, e), (s2, _) in zip(spans, spans[1:]))


def test_headings_count_as_context_for_the_sentences_under_them():
    text = ("# Opening hours\n\nThe museum opens at nine on weekdays.\n\n"
            "# Ticket prices\n\nAdults pay twelve euros and the museum is free for children.\n")
    # "ticket" and "prices" are only in the heading: the sentence under it wins over the other museum one.
    assert first(text, "museum ticket prices", meaning=False, weights=(("lead", 0.0),)) == \
        "Adults pay twelve euros and the museum is free for children."
    found = window_features(text, "museum ticket prices", options=RankOptions(meaning=False))
    assert found.values["cover"][1] > found.values["cover"][0]


# ----- weights and settings -----
def test_weights_are_fitted_for_both_rankers_and_can_be_overridden():
    from plugin.reading.passage_weights import LEXICAL_WEIGHTS, MEANING_WEIGHTS

    assert set(LEXICAL_WEIGHTS) <= set(FEATURES) and set(MEANING_WEIGHTS) <= set(FEATURES)
    assert {"soft_cover", "soft_proximity"} <= set(MEANING_WEIGHTS) and "soft_cover" not in LEXICAL_WEIGHTS
    text = "Cats sleep a lot. Dogs bark at night. Cats purr when they are happy."
    assert first(text, "cats", window_chars=20, meaning=False) == "Cats sleep a lot."
    # Only the lead prior, reversed: the last sentence comes first.
    only = tuple((name, 0.0) for name in FEATURES if name != "lead") + (("lead", -1.0),)
    assert first(text, "cats", window_chars=20, meaning=False, weights=only) == "Cats purr when they are happy."


def test_settings_map_onto_the_ranker_and_reject_an_unknown_feature():
    from plugin.reading.evidence import rank_options
    from plugin.settings import Settings

    assert rank_options(Settings()) == RankOptions()
    options = rank_options(Settings(passage_meaning=False, passage_grow_chars=0, passage_weights={"lead": 2.0}))
    assert options.meaning is False and options.grow_chars == 0 and options.weights == (("lead", 2.0),)
    with pytest.raises(Exception, match="unknown passage feature"):
        Settings(passage_weights={"leed": 1.0})


def test_the_fit_learns_the_feature_that_separates_answers():
    sys.path.insert(0, str(ROOT / "scripts"))
    import passage_bench
    from plugin.reading.passages import LEXICAL, Features, Window

    collected = []
    labels = []
    for k in range(6):  # the answer window always has the higher proximity; bm25 says nothing
        windows = [Window(0, 10, 0.0, ()), Window(10, 20, 0.0, ()), Window(20, 30, 0.0, ())]
        values = {name: [0.0, 0.0, 0.0] for name in LEXICAL}
        values["proximity"] = [0.2, 0.9, 0.1 * k]
        values["bm25"] = [0.5, 0.5, 0.5]
        collected.append(Features(windows, values))
        labels.append([False, True, False])
    weights = passage_bench.fit(passage_bench.Collected(collected, labels, LEXICAL), range(6))
    assert weights["proximity"] > 1.0 and abs(weights["bm25"]) < 1e-6


def test_each_answer_type_rule_can_be_left_out_for_the_bench_s_ablation():
    from plugin.reading.passages import ANSWER_KINDS, answer_kind

    assert answer_kind("How many people live there?") == "number"
    assert answer_kind("How many people live there?", tuple(k for k in ANSWER_KINDS if k != "number")) is None
    assert answer_kind("Where is the museum?") == "name"
    assert answer_kind("Where is the museum?", ("number", "date", "name")) is None
    text = "The company was founded long ago. It employs 4,200 people today."
    with_rule = window_features(text, "How many people work there?", options=RankOptions(window_chars=40, meaning=False))
    without = window_features(text, "How many people work there?",
                              options=RankOptions(window_chars=40, meaning=False, answer_kinds=("date",)))
    assert with_rule.values["typed"] == [0.0, 1.0] and without.values["typed"] == [0.0, 0.0]
