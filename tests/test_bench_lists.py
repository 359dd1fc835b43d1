"""The ranked-lists bench (issue 20): loading a lists folder, the baselines and metrics on a hand-made set
with known answers, the cross-validation splitter, and the script's JSON contract."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plugin.bench import lists as bench_lists
from plugin.bench.lists import (ListsError, Scored, combmnz, cross_validate_scored, engine_rows, folds,
                                judgment_key, load_lists, report, rrf, score_queries, score_urls)
from plugin.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SHARED_LISTS = ROOT.parent / "shared" / "multi-engine-lists"

# Two queries, three engines (google -> startpage, bing, ask: an engine the project lacks), graded URLs.
LISTS = {"queries": [
    {"id": "Q1", "query": "how to bake bread", "set": "A", "lists": {
        "google": ["https://www.a.org/bread/", "https://b.org/x", "https://c.org/"],
        "bing": ["https://b.org/x", "https://d.org/", "http://a.org/bread"]}},
    {"id": "Q2", "query": "what is a leap year", "set": "B", "lists": {
        "google": ["https://e.org/", "https://f.org/leap"],
        "ask": ["https://f.org/leap", "https://g.org/", "https://e.org/"]}},
]}
JUDGMENTS = {"protocol": "hand-made", "judgments": {
    "Q1": {"https://www.a.org/bread/": 2, "http://a.org/bread": 2, "https://b.org/x": 1, "https://c.org/": 0,
           "https://d.org/": 2},
    "Q2": {"https://e.org/": 0, "https://f.org/leap": 2, "https://g.org/": 1},
}}


def write_folder(tmp_path: Path, lists: object = LISTS, judgments: object = JUDGMENTS) -> Path:
    folder = tmp_path / "lists"
    folder.mkdir(exist_ok=True)
    (folder / "lists.json").write_text(lists if isinstance(lists, str) else json.dumps(lists), encoding="utf-8")
    (folder / "judgments.json").write_text(judgments if isinstance(judgments, str) else json.dumps(judgments),
                                           encoding="utf-8")
    return folder


def dcg(grades: list[int]) -> float:
    return sum((2 ** g - 1) / math.log2(r + 1) for r, g in enumerate(grades, start=1))


def test_the_judgment_key_is_the_one_the_judgments_use():
    assert judgment_key("https://WWW.Example.org/Path/?q=1#frag") == "example.org/Path?q=1"
    assert judgment_key("http://example.org/path") == judgment_key("https://www.example.org/path/")
    assert judgment_key("https://www.example.org/") == "example.org"


def test_a_folder_loads_with_engines_named_by_their_index(tmp_path):
    queries = load_lists(write_folder(tmp_path))
    assert [q.id for q in queries] == ["Q1", "Q2"]
    assert list(queries[0].lists) == ["startpage", "bing"] and list(queries[1].lists) == ["startpage", "ask"]
    assert queries[0].sources == {"startpage": "google", "bing": "bing"}
    assert queries[0].grade_of("https://a.org/bread") == 2 and queries[1].grade_of("https://nowhere.org/") is None


@pytest.mark.parametrize("lists,judgments,message", [
    ("{not json", JUDGMENTS, "lists.json: not valid JSON"),
    ({"items": []}, JUDGMENTS, 'expected {"queries": [...]}'),
    ({"queries": []}, JUDGMENTS, "holds no queries"),
    ({"queries": ["Q1"]}, JUDGMENTS, "query 1 is not an object"),
    ({"queries": [{"query": "x", "lists": {"bing": ["https://a.org/"]}}]}, JUDGMENTS, "query 1 has no string id"),
    ({"queries": [LISTS["queries"][0], LISTS["queries"][0]]}, JUDGMENTS, "query 'Q1' appears twice"),
    ({"queries": [{"id": "Q1", "query": " ", "lists": {"bing": []}}]}, JUDGMENTS, "query 'Q1' has no query text"),
    ({"queries": [{"id": "Q1", "query": "x", "lists": {}}]}, JUDGMENTS, "query 'Q1' has no lists"),
    ({"queries": [{"id": "Q1", "query": "x", "lists": {"bing": "https://a.org/"}}]}, JUDGMENTS,
     "the list of 'bing' must be a list of URLs"),
    ({"queries": [{"id": "Q1", "query": "x", "lists": {"bing": ["https://a.org/", 3]}}]}, JUDGMENTS,
     "the list of 'bing' must be a list of URLs"),
    ({"queries": [{"id": "Q1", "query": "x", "lists": {"google": ["https://a.org/"], "startpage": []}}]}, JUDGMENTS,
     "'startpage' and 'google' are both startpage"),
    ({"queries": [{"id": "Q9", "query": "x", "lists": {"bing": ["https://a.org/"]}}]}, JUDGMENTS,
     "no judgments for query 'Q9'"),
    (LISTS, {"judgments": {"Q1": {"https://b.org/x": 3}, "Q2": {}}}, "grade of https://b.org/x must be 0, 1 or 2"),
    (LISTS, {"judgments": {"Q1": {"https://b.org/x": True}, "Q2": {}}}, "must be 0, 1 or 2"),
    (LISTS, {"protocol": "x"}, 'expected {"judgments"'),
    (LISTS, "[]", 'expected {"judgments"'),
])
def test_a_malformed_folder_is_refused_naming_what_is_wrong(tmp_path, lists, judgments, message):
    with pytest.raises(ListsError) as refused:
        load_lists(write_folder(tmp_path, lists, judgments))
    assert message in str(refused.value)


def test_a_missing_folder_or_file_is_refused(tmp_path):
    with pytest.raises(ListsError, match="is not a folder"):
        load_lists(tmp_path / "absent")
    folder = write_folder(tmp_path)
    (folder / "judgments.json").unlink()
    with pytest.raises(ListsError, match=r"judgments.json not found"):
        load_lists(folder)


def test_the_script_refuses_a_malformed_folder_without_a_traceback(tmp_path):
    folder = write_folder(tmp_path, {"queries": [{"id": "Q1"}]})
    done = subprocess.run([sys.executable, "scripts/bench.py", "--lists", str(folder)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "query 'Q1' has no query text" in done.stderr


def test_metrics_on_known_rankings():
    grades = {"a": 2, "b": 1, "c": 0, "d": 2}
    # Keys are URL identities; score_urls reads URLs, so use URLs whose identity is predictable.
    urls = {k: f"https://{k}.org/" for k in grades}
    from plugin.pipeline.canonical import identity
    graded = {identity(urls[k]): g for k, g in grades.items()}
    m = score_urls([urls["b"], urls["a"], urls["c"]], graded)
    assert m["ndcg@8"] == pytest.approx(dcg([1, 2, 0]) / dcg([2, 2, 1, 0]))
    assert m["p@8"] == 2 / 8 and m["mrr@8"] == 0.5
    # A URL twice (another spelling) counts once; nothing graded 2 gives MRR 0.
    again = score_urls([urls["b"], "https://www.b.org/", urls["c"]], graded)
    assert again["p@8"] == 1 / 8 and again["mrr@8"] == 0.0


def test_each_baseline_on_a_two_query_set_with_known_answers(tmp_path):
    q1, q2 = load_lists(write_folder(tmp_path))
    rows = engine_rows(q1)
    # SearXNG's merge: b.org/x is listed by both (2 engines x (1/2 + 1/1) = 3), a.org/bread by both
    # (2 x (1/1 + 1/3)) = 2.67; then c.org (1/3) and d.org (1/2).
    assert bench_lists.BASELINES["searxng_merge"](q1, rows) == [
        "https://b.org/x", "https://www.a.org/bread/", "https://d.org/", "https://c.org/"]
    # Plain RRF k=60: b = 1/62 + 1/61 beats a = 1/61 + 1/63.
    assert rrf(rows, 60) == ["https://b.org/x", "https://www.a.org/bread/", "https://d.org/", "https://c.org/"]
    # CombMNZ over rank scores (n - rank + 1)/n: a = 2 x (3/3 + 1/3), b = 2 x (2/3 + 3/3): b first.
    assert combmnz(rows) == ["https://b.org/x", "https://www.a.org/bread/", "https://d.org/", "https://c.org/"]
    assert bench_lists.BASELINES["round_robin"](q1, rows) == [
        "https://www.a.org/bread/", "https://b.org/x", "https://d.org/", "https://c.org/"]

    scored = score_queries([q1, q2], Settings())
    ideal1, ideal2 = dcg([2, 2, 1, 0]), dcg([2, 1, 0])
    by = {name: values for name, values in scored.systems.items()}
    assert by["searxng_merge"][0]["ndcg@8"] == pytest.approx(dcg([1, 2, 2, 0]) / ideal1)
    assert by["round_robin"][0]["ndcg@8"] == pytest.approx(dcg([2, 1, 2, 0]) / ideal1)
    assert by["alone:startpage"][0]["ndcg@8"] == pytest.approx(dcg([2, 1, 0]) / ideal1)
    assert by["alone:bing"][0] == {"ndcg@8": pytest.approx(dcg([1, 2, 2]) / ideal1), "p@8": 3 / 8, "mrr@8": 0.5}
    # Q2: ask lists the leap-year page first, google second; bing did not answer Q2.
    assert by["alone:ask"][1]["mrr@8"] == 1.0 and by["alone:startpage"][1]["mrr@8"] == 0.5
    assert by["alone:bing"][1] is None and by["alone:ask"][0] is None
    # The oracle takes the engine with the best nDCG@8 on each query, all three of its metrics.
    assert by["oracle"][0] == by["alone:bing"][0] and by["oracle"][1] == by["alone:ask"][1]
    assert by["alone:ask"][1]["ndcg@8"] == pytest.approx(dcg([2, 1, 0]) / ideal2)


def test_the_report_names_systems_and_comparisons_as_the_contract_says(tmp_path):
    result = report(load_lists(write_folder(tmp_path)), Settings(), label="hand-made")
    assert result["queries"] == 2
    assert {"ours", "searxng_merge", "rrf60", "combmnz", "round_robin", "oracle", "alone:startpage", "alone:bing",
            "alone:ask"} <= set(result["systems"])
    for metrics in result["systems"].values():
        assert set(metrics) == {"ndcg@8", "p@8", "mrr@8", "n"}
    assert result["systems"]["alone:ask"]["n"] == 1 and result["systems"]["ours"]["n"] == 2
    comparison = result["comparisons"][0]
    assert set(comparison) >= {"a", "b", "metric", "diff", "ci", "p", "wins", "losses", "ties"}
    assert comparison["a"] == "ours" and len(comparison["ci"]) == 2
    assert {c["b"] for c in result["comparisons"]} == set(result["systems"]) - {"ours"}
    assert result["engine_map"] == {"ask": "ask", "bing": "bing", "google": "startpage"}
    assert set(result["groups"]["set"]) == {"A", "B"} and set(result["groups"]["engines"]) == {"2"}
    assert any("relevance gate" in note for note in result["notes"])


def test_the_script_prints_the_json_report(tmp_path):
    done = subprocess.run([sys.executable, "scripts/bench.py", "--lists", str(write_folder(tmp_path)), "--json"],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["queries"] == 2 and "ours" in result["systems"] and result["comparisons"]


def _fake(values: list[float]) -> list[dict[str, float]]:
    return [{"ndcg@8": v, "p@8": v, "mrr@8": v} for v in values]


def test_cross_validation_never_tunes_on_the_fold_it_scores(tmp_path):
    """One point per fold that is perfect on that fold's queries and 0 elsewhere, and a steady point at 0.15.
    Tuned honestly, each fold picks another fold's point (mean 0.25 on its training folds) and scores 0 on
    its own; had a fold's own queries leaked into its tuning, its own point (0.2 over all five) would beat
    the steady one and score 1."""
    ids = [f"Q{i:02d}" for i in range(20)]
    queries = [bench_lists.ListQuery(i, "q", "S", {"bing": ("https://a.org/",)}) for i in ids]
    split = folds(ids, 5, 20)
    assert sorted(i for fold in split for i in fold) == list(range(20))  # every query in exactly one fold
    assert all(not set(a) & set(b) for n, a in enumerate(split) for b in split[n + 1:])
    points = {"steady": Scored(queries, {"ours": _fake([0.15] * 20)})}
    for f, members in enumerate(split):
        points[f"fold {f}"] = Scored(queries, {"ours": _fake([1.0 if i in members else 0.0 for i in range(20)])})
    reference = Scored(queries, {name: _fake([0.5] * 20) for name in
                                 ("ours", "searxng_merge", "rrf60", "combmnz", "round_robin", "oracle")})
    result = cross_validate_scored(reference, points, k=5, seed=20)
    assert all(fold["chosen"] != f"fold {fold['fold']}" for fold in result["folds"])
    assert result["cv"]["ndcg@8"] == 0.0
    # The reference is what "ours" means in the comparisons.
    assert result["ours"]["ndcg@8"] == 0.5
    assert next(c for c in result["comparisons"] if c["b"] == "ours" and c["metric"] == "ndcg@8")["diff"] == -0.5


def test_folds_do_not_depend_on_the_order_of_the_file():
    ids = [f"Q{i}" for i in range(12)]
    a = [sorted(ids[i] for i in fold) for fold in folds(ids, 3, 5)]
    reversed_ids = ids[::-1]
    b = [sorted(reversed_ids[i] for i in fold) for fold in folds(reversed_ids, 3, 5)]
    assert a == b
    with pytest.raises(ValueError):
        folds(ids, 13)


needs_shared = pytest.mark.skipif(not SHARED_LISTS.is_dir(),
                                  reason=f"{SHARED_LISTS} is absent (the shared multi-engine lists sit beside the "
                                         "project); the hand-made set above still tests the bench")


@needs_shared
def test_the_shared_lists_stay_above_their_floors():
    floors = json.loads((ROOT / "bench" / "floors.json").read_text(encoding="utf-8"))["lists"]
    queries = load_lists(SHARED_LISTS)
    scored = score_queries(queries, Settings())
    for system, values in floors.items():
        measured = [m for m in scored.systems[system] if m is not None]
        for metric, floor in values.items():
            got = sum(m[metric] for m in measured) / len(measured)
            assert got >= floor, f"{system} {metric} {got:.4f} < floor {floor}"
