"""Where a `metasearch` command's start-up goes: the import time of each package it loads.

Runs the command under `python -X importtime` several times and splits the import time by package (each
module's own time, so the parts add up to the whole): `plugin.pipeline`, `engines`, `pydantic`, `aiohttp`,
`vcr` … Median over the runs, next to the whole process's wall time. The command runs as given, so point it
at loopback only (`--replay DIR`, a page served on 127.0.0.1):

    python scripts/cli_imports.py -- search hello --replay ../shared/serp-corpus --engines bing
    METASEARCH_ALLOW_PRIVATE_HOSTS=127.0.0.1/32 python scripts/cli_imports.py -- fetch http://127.0.0.1:8000/
    python scripts/cli_imports.py --runs 9 --top 20 -- --help

-X importtime itself slows imports (its figures run above a plain start-up's); compare commands with each
other, and measure the plain wall time with hyperfine.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def package(module: str) -> str:
    """The group a module's time is counted under: ours by subpackage (plugin.pipeline, plugin.surfaces.cli),
    engines whole, anything else by its top-level package (pydantic, aiohttp, asyncio)."""
    parts = module.split(".")
    if parts[0] == "plugin":
        return ".".join(parts[:3]) if parts[1:2] == ["surfaces"] else ".".join(parts[:2])
    return parts[0].lstrip("_") if parts[0] not in ("_frozen_importlib_external",) else "importlib"


def one_run(command: list[str]) -> tuple[float, dict[str, float], int]:
    """Wall seconds, import milliseconds by package, exit status."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "plugin.surfaces.cli", *command],
                          capture_output=True, text=True, cwd=ROOT, env=environment, timeout=300)
    wall = time.perf_counter() - started
    by_package: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        if match := LINE.match(line):
            by_package[package(match[4])] += int(match[1]) / 1000
    return wall, by_package, done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of the command (default 5); medians are shown")
    parser.add_argument("--top", type=int, default=15, help="packages to list (default 15), largest first")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the metasearch arguments, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the metasearch arguments after --, e.g. -- search hello --replay DIR")
    walls, totals, runs = [], [], []
    statuses = set()
    for _ in range(args.runs):
        wall, by_package, status = one_run(command)
        walls.append(wall)
        totals.append(sum(by_package.values()))
        runs.append(by_package)
        statuses.add(status)
    names = {name for run in runs for name in run}
    median = {name: statistics.median(run.get(name, 0.0) for run in runs) for name in names}
    print(f"metasearch {' '.join(command)}")
    print(f"  exit status {sorted(statuses)}; wall {statistics.median(walls):.2f} s (median of {args.runs}, "
          f"with -X importtime); imports {statistics.median(totals):.0f} ms; load average "
          f"{os.getloadavg()[0]:.1f}")
    for name, ms in sorted(median.items(), key=lambda item: -item[1])[:args.top]:
        print(f"  {ms:8.1f} ms  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
