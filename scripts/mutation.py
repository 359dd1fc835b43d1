"""Mutation testing over the core modules: how many small deliberate bugs the test suite catches.

    python scripts/mutation.py                       # every module in [tool.mutmut] only_mutate
    python scripts/mutation.py fusion cooldown       # modules whose dotted name contains these words
    python scripts/mutation.py --survivors fusion    # ... and print each surviving mutant's diff
    python scripts/mutation.py --report-only         # re-read the last run's results
    python scripts/mutation.py --rerun fusion        # after adding tests: re-run only the survivors and the
                                                     # unchecked (killed and timed-out ones stay as they were)
    python scripts/mutation.py --sample 60 searcher  # a seeded random sample of 60 mutants per module, and
                                                     # the score estimated from it with a 95 % interval

Runs mutmut (pip install mutmut; it copies the project into ./mutants and runs the tests covering each
mutated function), then prints the score per module: killed / (mutants - known equivalents). Not part of
CI: a full run takes tens of minutes on two cores. Known equivalent mutants (a change no test can observe)
are listed with the reason in scripts/mutation_equivalents.json and excluded from the score.

mutmut numbers a function's mutants in order, so editing the function renumbers them and an entry can come
to name another, real mutant. An entry may therefore pin the mutant's changed line: `{"reason": ...,
"mutation": "<the line as mutated>"}`; an entry whose mutant no longer changes the line that way is reported
as stale and not counted. `--pin-equivalents` writes the current line into the entries of the chosen
modules that have none (check each first: it records what the number names now).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENTS = ROOT / "scripts" / "mutation_equivalents.json"
_RESULT = re.compile(r"^\s*(?P<name>[\w.ǁ]+__mutmut_\d+): (?P<status>.+?)\s*$")


def show_mutant(name: str) -> str:
    """The lines mutant `name` writes (its diff's added lines, stripped), as `mutmut show` prints them."""
    shown = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=ROOT, capture_output=True, text=True)
    return "\n".join(line[1:].strip() for line in shown.stdout.splitlines()
                     if line.startswith("+") and not line.startswith("+++"))


def load_equivalents(modules: list[str] | None = None) -> dict[str, str]:
    """Name -> reason of the known equivalent mutants (of `modules`, when given). An entry that pins its
    mutation and whose mutant now writes something else is stale: said on stderr and left out."""
    entries = json.loads(EQUIVALENTS.read_text()) if EQUIVALENTS.exists() else {}
    out: dict[str, str] = {}
    for name, entry in entries.items():
        if modules is not None and module_of(name) not in modules:
            continue
        if isinstance(entry, str):
            out[name] = entry
            continue
        now = show_mutant(name)
        # Nothing shown: mutmut has not generated the module's mutants yet (a fresh checkout), or the
        # function is gone; either way the entry cannot name another mutant.
        if now and now != entry["mutation"]:
            print(f"warning: stale equivalent {name}: its entry is about `{entry['mutation']}`, the mutant now "
                  f"writes `{now}`; not counted (renumber it in {EQUIVALENTS.name})", file=sys.stderr)
            continue
        out[name] = entry["reason"]
    return out


def pin_equivalents(modules: list[str]) -> int:
    """Record the current mutation in the entries of `modules` that have none; how many were pinned. An
    entry whose mutant mutmut cannot show (not generated yet, or gone with its code) is left as it is."""
    entries = json.loads(EQUIVALENTS.read_text())
    pinned = 0
    for name, entry in entries.items():
        if module_of(name) in modules and isinstance(entry, str):
            mutation = show_mutant(name)
            if not mutation:
                print(f"not pinned: mutmut cannot show {name} (run the module once, or drop the entry)",
                      file=sys.stderr)
                continue
            entries[name] = {"reason": entry, "mutation": mutation}
            pinned += 1
    EQUIVALENTS.write_text(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
    return pinned


def configured_modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    return [path.removesuffix(".py").replace("/", ".") for path in config["only_mutate"]
            if (ROOT / path).exists()]


def module_of(mutant: str) -> str:
    # plugin.pipeline.fusion.x_fuse__mutmut_3 / plugin.infra.state.xǁMemoryStateǁspend__mutmut_1
    return mutant.split(".x_")[0].split(".xǁ")[0]


def run_mutmut(modules: list[str], children: int, names: list[str] | None = None) -> int:
    env = dict(os.environ)
    # Inside ./mutants the tests look for ../shared next to the copy; point them at the real corpus.
    env.setdefault("METASEARCH_CORPUS", str(ROOT.parent / "shared" / "serp-corpus"))
    log = ROOT / "mutants" / "mutation-run.log"
    log.parent.mkdir(exist_ok=True)
    patterns = names if names is not None else [f"{module}.*" for module in modules]
    with log.open("w") as out:
        done = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(children), *patterns],
                              cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode:
        print(f"mutmut exited {done.returncode}; see {log}", file=sys.stderr)
    return done.returncode


def results() -> dict[str, str]:
    done = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode:  # never an empty table that looks like a run with nothing to report
        raise SystemExit(f"mutation: `mutmut results` failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return {m["name"]: m["status"] for m in map(_RESULT.match, done.stdout.splitlines()) if m}


def require_mutmut() -> None:
    import importlib.util

    if importlib.util.find_spec("mutmut") is None:
        raise SystemExit("mutation: mutmut is not installed in this environment "
                         f"({sys.executable}); install it with: pip install -e '.[all,mutation]'")


def report(found: dict[str, str], modules: list[str], survivors: bool) -> dict:
    equivalents = load_equivalents(modules)
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for name, status in found.items():
        module = module_of(name)
        if module not in modules:
            continue
        table[module]["equivalent" if name in equivalents and status != "killed" else status] += 1
    rows = {}
    for module in modules:
        counts = table.get(module, {})
        total = sum(counts.values())
        scored = total - counts.get("equivalent", 0)
        killed = counts.get("killed", 0)
        rows[module] = {"mutants": total, "killed": killed, "score": round(killed / scored, 3) if scored else None,
                        **{k: v for k, v in counts.items() if k != "killed"}}
    width = max(map(len, modules), default=10)
    print(f"{'module':<{width}}  mutants  killed  score  other")
    for module, row in rows.items():
        other = ", ".join(f"{k} {v}" for k, v in row.items() if k not in ("mutants", "killed", "score"))
        score = "-" if row["score"] is None else f"{row['score']:.0%}"
        print(f"{module:<{width}}  {row['mutants']:>7}  {row['killed']:>6}  {score:>5}  {other}")
    # Mutant numbers shift when a function changes: an "equivalent" that a test now kills is a stale entry.
    stale = sorted(name for name in equivalents if module_of(name) in modules and found.get(name) == "killed")
    for name in stale:
        print(f"warning: {name} is listed as equivalent but was killed: a stale entry in {EQUIVALENTS.name}?")
    if survivors:
        for name, status in sorted(found.items()):
            if module_of(name) in modules and status != "killed" and name not in equivalents:
                print(f"\n### {name}: {status}")
                print(subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=ROOT,
                                     capture_output=True, text=True).stdout)
    return rows


def sample_of(found: dict[str, str], modules: list[str], size: int, seed: int) -> dict[str, list[str]]:
    """`size` mutants of each module drawn uniformly at random (seeded, so a rerun draws the same ones).
    The modules that run most of the suite per mutant (the searcher, runner, tiers) take hours in full;
    a sample of every kind of mutant, killed or not, estimates their score without that bias."""
    rng = random.Random(seed)
    by_module: dict[str, list[str]] = defaultdict(list)
    for name in sorted(found):
        by_module[module_of(name)].append(name)
    return {module: sorted(rng.sample(by_module[module], min(size, len(by_module[module]))))
            for module in modules if by_module.get(module)}


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion (sound near 0 and 1, unlike the normal one)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def report_sample(found: dict[str, str], sample: dict[str, list[str]]) -> dict:
    equivalents = load_equivalents(list(sample))
    rows = {}
    print("module  sampled  killed  estimate [95% interval]  other")
    for module, names in sample.items():
        counts: dict[str, int] = defaultdict(int)
        for name in names:
            status = found.get(name, "not checked")
            counts["equivalent" if name in equivalents and status != "killed" else status] += 1
        scored = len(names) - counts.get("equivalent", 0)
        killed = counts.get("killed", 0)
        low, high = wilson(killed, scored)
        rows[module] = {"sampled": len(names), "killed": killed, "score": round(killed / scored, 3) if scored else None,
                        "interval": [round(low, 3), round(high, 3)],
                        **{k: v for k, v in counts.items() if k != "killed"}}
        other = ", ".join(f"{k} {v}" for k, v in counts.items() if k != "killed")
        estimate = f"{killed / scored:.0%} [{low:.0%}, {high:.0%}]" if scored else "-"
        print(f"{module}  {len(names)}  {killed}  {estimate}  {other}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("words", nargs="*", help="only modules whose dotted name contains one of these")
    parser.add_argument("--children", type=int, default=2, help="parallel mutant runs (default 2)")
    parser.add_argument("--survivors", action="store_true", help="print the diff of every surviving mutant")
    parser.add_argument("--report-only", action="store_true", help="do not run; report the last results")
    parser.add_argument("--json", action="store_true", help="print the per-module table as JSON too")
    parser.add_argument("--sample", type=int, metavar="N",
                        help="run a seeded random sample of N mutants per module (those not yet killed, timed out "
                             "or known equivalent) and estimate each module's score from the sample")
    parser.add_argument("--seed", type=int, default=14, help="the sample's seed (default 14)")
    parser.add_argument("--pin-equivalents", action="store_true",
                        help="write each chosen module's equivalent mutants' current mutation into their entries "
                             "(check them first), so that a later renumbering is caught")
    parser.add_argument("--rerun", action="store_true",
                        help="re-run only the last run's survivors and unchecked mutants (not the killed, "
                             "timed-out or known equivalent ones)")
    args = parser.parse_args(argv)
    require_mutmut()
    modules = [m for m in configured_modules() if not args.words or any(w in m for w in args.words)]
    if not modules:
        print("no configured module matches; see [tool.mutmut] only_mutate in pyproject.toml", file=sys.stderr)
        return 2
    if args.pin_equivalents:
        print(f"pinned {pin_equivalents(modules)} entries of {', '.join(modules)} in {EQUIVALENTS.name}")
        return 0
    if args.sample:
        equivalents = load_equivalents(modules)
        found = results()
        sample = sample_of(found, modules, args.sample, args.seed)
        if not any(sample.values()):
            print("mutation: no mutants are known yet for " + ", ".join(modules) + ": run "
                  "`python scripts/mutation.py " + " ".join(args.words) + "` once (mutmut lists them as it runs), "
                  "then sample", file=sys.stderr)
            return 2
        names = [name for names in sample.values() for name in names
                 if found.get(name) not in ("killed", "timeout") and name not in equivalents]
        if names and not args.report_only:
            run_mutmut(modules, args.children, names)
        rows = report_sample(results(), sample)
        if args.json:
            print(json.dumps(rows, indent=2))
        return 0
    if args.rerun:
        equivalents = load_equivalents(modules)
        names = sorted(name for name, status in results().items() if module_of(name) in modules
                       and status not in ("killed", "timeout") and name not in equivalents)
        if names:
            run_mutmut(modules, args.children, names)
    elif not args.report_only:
        run_mutmut(modules, args.children)
    rows = report(results(), modules, args.survivors)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
