"""scripts/mutation.py's arithmetic: the per-module score and the sampled estimate (mutmut itself is not
run here: that takes minutes per module)."""

from __future__ import annotations

import importlib.util
import json

import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "scripts" / "mutation.py")
mutation = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutation)


def test_wilson_interval_matches_the_formula_and_stays_within_0_and_1():
    low, high = mutation.wilson(45, 50)
    assert (round(low, 3), round(high, 3)) == (0.786, 0.957)
    assert mutation.wilson(0, 10)[0] == 0.0 and mutation.wilson(10, 10)[1] == 1.0
    assert mutation.wilson(0, 0) == (0.0, 1.0)


def test_a_sample_is_seeded_per_module_and_never_larger_than_the_module():
    found = {f"plugin.pipeline.searcher.x_run__mutmut_{i}": "killed" for i in range(1, 101)}
    found |= {f"plugin.infra.state.xǁMemoryStateǁspend__mutmut_{i}": "survived" for i in range(1, 6)}
    modules = ["plugin.pipeline.searcher", "plugin.infra.state"]
    first = mutation.sample_of(found, modules, 20, seed=3)
    assert first == mutation.sample_of(found, modules, 20, seed=3)
    assert first != mutation.sample_of(found, modules, 20, seed=4)
    assert len(first["plugin.pipeline.searcher"]) == 20 and len(first["plugin.infra.state"]) == 5
    assert all(name.startswith("plugin.pipeline.searcher.") for name in first["plugin.pipeline.searcher"])


def test_the_sampled_score_leaves_known_equivalents_out(tmp_path, monkeypatch, capsys):
    equivalents = tmp_path / "equivalents.json"
    equivalents.write_text(json.dumps({"m.x_f__mutmut_3": "no input tells them apart"}))
    monkeypatch.setattr(mutation, "EQUIVALENTS", equivalents)
    found = {"m.x_f__mutmut_1": "killed", "m.x_f__mutmut_2": "survived", "m.x_f__mutmut_3": "survived",
             "m.x_f__mutmut_4": "killed"}
    rows = mutation.report_sample(found, {"m": sorted(found)})
    assert rows["m"]["score"] == 0.667 and rows["m"]["equivalent"] == 1
    assert rows["m"]["interval"][0] < 2 / 3 < rows["m"]["interval"][1]
    assert "m  4  2  67%" in capsys.readouterr().out


def test_an_equivalent_whose_mutant_was_renumbered_is_stale_and_not_counted(tmp_path, monkeypatch, capsys):
    """mutmut numbers a function's mutants in order: after an edit, an entry's number can name another,
    real mutant. An entry that pins its mutation is counted only while the mutant still writes it."""
    equivalents = tmp_path / "equivalents.json"
    equivalents.write_text(json.dumps({
        "m.x_f__mutmut_2": {"reason": "equal dates: the same date again", "mutation": "if a <= b:"},
        "m.x_f__mutmut_3": {"reason": "split's first field ignores maxsplit", "mutation": "x.split('.', 2)[0]"},
        "m.x_f__mutmut_4": "an entry that pins nothing is taken as written"}))
    monkeypatch.setattr(mutation, "EQUIVALENTS", equivalents)
    now = {"m.x_f__mutmut_2": "if a <= b:", "m.x_f__mutmut_3": "x.replace('-', 'XXXX')", "m.x_f__mutmut_4": "y = None"}
    monkeypatch.setattr(mutation, "show_mutant", lambda name: now[name])
    found = {f"m.x_f__mutmut_{i}": status for i, status in enumerate(["killed", "survived", "survived",
                                                                         "survived"], start=1)}
    rows = mutation.report_sample(found, {"m": sorted(found)})
    assert rows["m"]["equivalent"] == 2 and rows["m"]["survived"] == 1 and rows["m"]["score"] == 0.5
    err = capsys.readouterr().err
    assert "stale equivalent m.x_f__mutmut_3" in err and "x.replace('-', 'XXXX')" in err
    assert "mutmut_2" not in err

    assert mutation.pin_equivalents(["m"]) == 1  # the one entry without a pinned mutation
    monkeypatch.setattr(mutation, "show_mutant", lambda name: "renumbered")
    assert mutation.load_equivalents(["m"]) == {}  # every entry pinned now, and none still names its mutant
    # Before mutmut has generated the module's mutants (a fresh checkout) nothing can be shown: entries stand.
    monkeypatch.setattr(mutation, "show_mutant", lambda name: "")
    assert set(mutation.load_equivalents(["m"])) == {"m.x_f__mutmut_2", "m.x_f__mutmut_3", "m.x_f__mutmut_4"}


@pytest.mark.skipif(importlib.util.find_spec("mutmut") is not None,
                    reason="mutmut is installed here: running the script would start a real mutation run")
def test_without_mutmut_the_script_says_so_instead_of_printing_an_empty_table():
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "scripts/mutation.py", "--sample", "3", "fusion"], cwd=root,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=60)
    assert done.returncode != 0 and "mutmut is not installed" in done.stderr
    assert "pip install -e '.[all,mutation]'" in done.stderr and done.stdout == ""
