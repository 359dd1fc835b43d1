"""The extraction bench: its metric on known cases, and our extractor's floors on the article corpus."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import extract_bench  # noqa: E402

ARTICLE_CORPUS = Path(os.environ.get("METASEARCH_ARTICLE_CORPUS", ROOT.parent / "shared" / "article-corpus"))


def test_shingle_metric_on_known_cases():
    text = "one two three four five six seven eight"
    assert extract_bench.page_counts(text, text) == (1.0, 0.0, 0.0)
    # Nothing in common: 4 predicted shingles all false, 5 true ones all missed.
    assert extract_bench.page_counts(text, "nothing of the sort at all here") == pytest.approx((0.0, 4 / 9, 5 / 9))
    # Half the true shingles found, nothing extra: precision 1, recall 0.5.
    tp, fp, fn = extract_bench.page_counts("a b c d e f g h i j", "a b c d e f")
    assert (tp, fp) == (3 / 7, 0.0) and fn == pytest.approx(4 / 7)
    scores = extract_bench.scores([extract_bench.page_counts("a b c d e f g h i j", "a b c d e f")])
    assert scores["precision"] == 1.0 and scores["recall"] == pytest.approx(3 / 7)
    # Punctuation and markup markers are not tokens: Markdown and plain text score alike.
    assert extract_bench.page_counts("## Title: one, two three", "Title one two three") == (1.0, 0.0, 0.0)


def test_paired_bootstrap_of_identical_extractors_is_zero():
    import random

    counts = [extract_bench.page_counts("a b c d e f", p) for p in ("a b c d e f", "a b c d", "x y z w")]
    interval = extract_bench.bootstrap(counts, 200, random.Random(1), other=counts)
    assert interval["f1"] == (0.0, 0.0)


def test_extraction_meets_its_floors_on_the_article_corpus():
    if not (ARTICLE_CORPUS / "ground-truth.json").is_file():
        pytest.skip(f"article corpus not found at {ARTICLE_CORPUS} (../shared is absent); the extraction "
                    "floors need it")
    floors = json.loads((ROOT / "bench" / "extract-floors.json").read_text(encoding="utf-8"))
    assert floors["ours"]["f1"] >= floors["trafilatura_defaults_f1"]  # the floor keeps the target
    report = extract_bench.run(ARTICLE_CORPUS, samples=50, names=["ours"])
    ours = report["extractors"]["ours"]
    assert report["pages"] >= 100
    for metric, floor in floors["ours"].items():
        assert ours[metric] >= floor, f"{metric} {ours[metric]} fell below its floor {floor}"


def test_the_long_page_cost_reports_extraction_and_the_split_body_check():
    # (what it reports, not how fast: scripts/extract_bench.py --long-page is the measurement)
    rows = extract_bench.long_page_cost((20, 40))
    assert set(rows) == {20, 40}
    assert all(row["extraction_ms"] >= 0 and row["split_check_ms"] >= 0 for row in rows.values())
