#!/usr/bin/env python3
"""Real BPE token counts of the token estimator's sample texts, for tests/test_tokens.py.

    pip install -e '.[tokens]'
    python scripts/token_samples.py            # writes tests/data/token_counts.json
    python scripts/token_samples.py --check    # exit 1 when the file differs from what the package counts

The samples (tests/data/token_texts.json: prose in a dozen scripts, numbers, a Markdown table, code,
punctuation, line breaks) are counted with o200k_base and cl100k_base through the `bpe-openai` package, which
ships OpenAI's vocabularies (tiktoken would download them). The counts are kept in the repository so the tests
that hold the estimator to them run without the package.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ROOT / "tests" / "data" / "token_texts.json"
COUNTS = ROOT / "tests" / "data" / "token_counts.json"
ENCODINGS = ("o200k_base", "cl100k_base")


def real_counts() -> dict:
    import bpe_openai

    texts = json.loads(TEXTS.read_text(encoding="utf-8"))
    encodings = {name: bpe_openai.get_encoding(name) for name in ENCODINGS}
    return {"package": f"bpe-openai {bpe_openai.__version__}",
            "counts": {key: {name: len(encoding.encode(text)) for name, encoding in encodings.items()}
                       for key, text in texts.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the kept file instead of writing it")
    args = parser.parse_args()
    counts = real_counts()
    if args.check:
        kept = json.loads(COUNTS.read_text(encoding="utf-8"))
        if kept["counts"] != counts["counts"]:
            print("tests/data/token_counts.json differs from the package's counts", file=sys.stderr)
            return 1
        print("token counts match")
        return 0
    COUNTS.write_text(json.dumps(counts, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {COUNTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
