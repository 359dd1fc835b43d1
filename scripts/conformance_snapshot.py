#!/usr/bin/env python3
"""What every engine parser makes of every real page in ../shared/serp-corpus, as JSON.

    python scripts/conformance_snapshot.py --out /tmp/before.json [--corpus ../shared/serp-corpus]
    python scripts/conformance_snapshot.py --out /tmp/after.json --compare /tmp/before.json

Every file under a corpus folder named like an engine (cassettes excepted) is parsed by that engine
with a fixed `now`, as the transport would hand it over (the engine's own results URL, HTTP 200).
The snapshot keeps status, detail and every row (title, url, snippet, position, date), plus any
further Parsed field that is set (correction, ...). `--compare` prints what changed per page and
exits 1 when anything did: the check that a refactor left every page's rows alone.

The snapshot is a working file, not a fixture: it is not committed (the corpus lives outside the repo).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engines import ENGINES  # noqa: E402
from engines.base import Headers, Response, SearchOptions  # noqa: E402

NOW = datetime(2026, 11, 29, 12, 0, 0)  # the tests' FIXED_NOW
# The URL a results page arrives from, where the engine's first request is not the results page.
RESULTS_URL = {"startpage": "https://www.startpage.com/sp/search", "searxng": "http://127.0.0.1:8888/search"}
# Fields of a row, in order; further Parsed fields are added when an engine sets them.
ROW_FIELDS = ("title", "url", "snippet", "position", "date")
_SKIPPED_PARSED_FIELDS = {"status", "rows", "detail", "follow_up", "failure"}


def _options() -> SearchOptions:
    return SearchOptions(now=NOW, api_key="k", base_url="http://127.0.0.1:8888")


def _decode(body: bytes) -> str:
    if body[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return body.decode("utf-16", errors="replace")
    return body.decode("utf-8", errors="replace")


def _value(value: object) -> object:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    return str(value)


def parse_page(engine_name: str, path: Path) -> dict:
    engine = ENGINES[engine_name]
    options = _options()
    url = RESULTS_URL.get(engine_name) or engine.build("q", options).url
    body = path.read_bytes()
    response = Response(status=200, url=url, headers=Headers({}), body=body, text=_decode(body))
    parsed = engine.parse(response, "q", options)
    entry: dict = {"status": parsed.status, "detail": parsed.detail,
                   "rows": [{name: _value(getattr(row, name)) for name in ROW_FIELDS} for row in parsed.rows]}
    # Row fields added later (e.g. source) are recorded only where set, so an old snapshot still compares.
    for index, row in enumerate(parsed.rows):
        for field in dataclasses.fields(row):
            if field.name not in ROW_FIELDS and getattr(row, field.name) not in (None, "", ()):
                entry["rows"][index][field.name] = _value(getattr(row, field.name))
    for field in dataclasses.fields(parsed):
        if field.name not in _SKIPPED_PARSED_FIELDS and getattr(parsed, field.name) not in (None, "", ()):
            entry[field.name] = _value(getattr(parsed, field.name))
    return entry


def snapshot(corpus: Path) -> dict[str, dict]:
    pages: dict[str, dict] = {}
    for folder in sorted(p for p in corpus.iterdir() if p.is_dir() and p.name in ENGINES):
        for path in sorted(folder.iterdir()):
            if path.is_file() and "CASSETTE" not in path.name:
                pages[f"{folder.name}/{path.name}"] = parse_page(folder.name, path)
    return pages


def compare(before: dict[str, dict], after: dict[str, dict]) -> list[str]:
    lines = []
    for page in sorted(set(before) | set(after)):
        old, new = before.get(page), after.get(page)
        if old is None:
            lines.append(f"+ {page}: new page ({new['status']}, {len(new['rows'])} rows)")
            continue
        if new is None:
            lines.append(f"- {page}: no longer parsed")
            continue
        if old == new:
            continue
        lines.append(f"~ {page}")
        for key in sorted((set(old) | set(new)) - {"rows"}):
            if old.get(key) != new.get(key):
                lines.append(f"    {key}: {old.get(key)!r} -> {new.get(key)!r}")
        old_rows, new_rows = old["rows"], new["rows"]
        if len(old_rows) != len(new_rows):
            lines.append(f"    rows: {len(old_rows)} -> {len(new_rows)}")
        for index in range(max(len(old_rows), len(new_rows))):
            a = old_rows[index] if index < len(old_rows) else {}
            b = new_rows[index] if index < len(new_rows) else {}
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    lines.append(f"    row {index + 1} {key}: {a.get(key)!r} -> {b.get(key)!r}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "serp-corpus")
    parser.add_argument("--out", type=Path, required=True, help="where to write the snapshot JSON")
    parser.add_argument("--compare", type=Path, help="an earlier snapshot to diff against")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found at {args.corpus}", file=sys.stderr)
        return 2
    pages = snapshot(args.corpus)
    args.out.write_text(json.dumps(pages, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    rows = sum(len(p["rows"]) for p in pages.values())
    print(f"{len(pages)} pages, {rows} rows -> {args.out}")
    if args.compare:
        lines = compare(json.loads(args.compare.read_text(encoding="utf-8")), pages)
        print("\n".join(lines) if lines else "no page changed")
        return 1 if lines else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
