#!/usr/bin/env python3
"""What passage selection costs on pages of unusual shapes, per 1,000 characters, at two page lengths.

    python scripts/passage_shapes.py [--chars 200000] [--repeats 3] [--json]

Protocol. For each shape a page of `--chars` characters and one of a quarter of that are built (the same
pieces repeated, seeded), and the passages a fetch with a query returns are sought in each
(`plugin.reading.evidence.passages_of`: the default settings, the meaning signal when installed, the
scanned part bounded as a fetch bounds it) for three questions, one asking how many, one who, one when (each
answer type has its own pattern run on every unit); the least process CPU time of `--repeats` runs of the
three is kept, divided by three (a question's), with the characters that were searched (`scanned`: all of
them unless a page of short lines reached its bound in units).
Reported per shape: ms of CPU per 1,000 characters and question at each length, and `growth`, the ratio of the two: about
1 when the cost follows the page's length, about 4 when it follows its square (a page four times longer
costing sixteen times more). Prose is the corpus-like baseline; the other shapes are the ones whose cost
once grew faster than their length (a long run of dots: the sentence stop pattern; a line per letter: window
sums over many tiny units; a code block's long line of capitalised hyphenated words: the name pattern) or
hold many units per character.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = ("How many tickets for the festival went on sale in the spring?",
             "Who opened the museum for the city council?", "When did the river tower open to visitors?")
_WORDS = ("festival tickets sale spring river tower city council vote budget museum opened visitors morning "
          "evening year report said people number the of and in to was were").split()


def _prose(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 24))]
    return " ".join(words).capitalize() + ". "


SHAPES = {
    "prose": lambda rng: _prose(rng) + ("\n\n" if rng.random() < 0.2 else ""),
    "a line per word": lambda rng: rng.choice(_WORDS) + "\n\n",
    "a line per letter": lambda rng: rng.choice("abcxyz") + "\n\n",
    "list items": lambda rng: f"- {rng.choice(_WORDS)} {rng.randint(1, 99)}\n",
    "one line, no stops": lambda rng: rng.choice(_WORDS) + " ",
    "CJK, no spaces": lambda rng: "".join(rng.choice("節日票售開始東京大阪人口增加春天") for _ in range(12)) + "。",
    "a run of dots": lambda rng: ".",
    "runs of ?!": lambda rng: rng.choice("?!."),
    "numbers": lambda rng: f"{rng.randint(0, 10**6)} ",
    "a table": lambda rng: "| " + " | ".join(rng.choice(_WORDS) for _ in range(6)) + " |\n",
    "headings": lambda rng: f"## {rng.choice(_WORDS)}\n\n{_prose(rng)}\n\n",
    "a code block's long line": lambda rng: rng.choice(("Ab-", "Cd-", "Ef-")),
}
PREFIX = {"a code block's long line": "```\n"}  # what the page starts with before its repeated pieces


def page(shape: str, chars: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts = [PREFIX.get(shape, "")]
    size = len(parts[0])
    while size < chars:
        piece = SHAPES[shape](rng)
        parts.append(piece)
        size += len(piece)
    return "".join(parts)[:chars]


def cpu_ms(text: str, repeats: int, settings) -> float:
    from plugin.reading.evidence import passages_of

    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for question in QUESTIONS:
            passages_of(text, question, 5, settings)
        best = min(best, time.process_time() - started)
    return best * 1000 / len(QUESTIONS)


def measure(chars: int, repeats: int) -> dict:
    from plugin.reading.evidence import passages_of, scanned
    from plugin.settings import Settings

    settings = Settings()
    passages_of("warm the meaning model and the word caches up", QUESTIONS[0], 5, settings)
    report = {}
    for shape in SHAPES:
        small, large = page(shape, chars // 4), page(shape, chars)
        per_small = cpu_ms(small, repeats, settings) / len(small) * 1000
        per_large = cpu_ms(large, repeats, settings) / len(large) * 1000
        report[shape] = {"chars": len(large), "scanned": scanned(large, 0, settings)[1],
                         "ms_per_1000_quarter": round(per_small, 3), "ms_per_1000": round(per_large, 3),
                         "growth": round(per_large / max(per_small, 1e-6), 2)}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.chars < 400 or args.repeats < 1:
        parser.error("--chars must be at least 400 and --repeats at least 1")
    report = measure(args.chars, args.repeats)
    if args.json:
        print(json.dumps({"chars": args.chars, "shapes": report}, indent=2))
        return 0
    print(f"| shape | ms CPU per 1,000 chars and question at {args.chars // 4:,} | at {args.chars:,} | growth | searched at "
          f"{args.chars:,} |")
    print("|---|---|---|---|---|")
    for shape, row in report.items():
        print(f"| {shape} | {row['ms_per_1000_quarter']:.2f} | {row['ms_per_1000']:.2f} | {row['growth']:.2f} | "
              f"{row['scanned']:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
