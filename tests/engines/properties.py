"""What every parse outcome must satisfy, for the property tests: the parser did not crash (so the
never-raise wrapper did not have to step in), and whatever it returned is well-formed."""

from __future__ import annotations

import json

from engines.base import PARSER_FAILURE, Parsed

STATUSES = ("ok", "empty", "blocked", "ratelimited", "error")


def well_formed(parsed: Parsed) -> Parsed:
    """Assert `parsed` is a proper outcome of a parser that did not crash; return it for further checks."""
    assert isinstance(parsed, Parsed) and parsed.status in STATUSES
    # A crash would be turned into an "error" by the wrapper: that must never be what happened.
    assert parsed.failure is None and not parsed.detail.startswith(PARSER_FAILURE), parsed.detail
    assert (parsed.status == "ok") == bool(parsed.rows) or (parsed.status == "ok" and parsed.follow_up is not None)
    for position, row in enumerate(parsed.rows, start=1):
        assert row.position == position
        assert row.title.strip() and row.url.startswith(("http://", "https://"))
    return parsed


def json_object(body: bytes) -> bool:
    try:
        return isinstance(json.loads(body.decode("utf-8", "replace")), dict)
    except (ValueError, RecursionError):
        return False


def not_understood_unless_json(parsed: Parsed, body: bytes) -> None:
    """Bytes that are no JSON object can only be a page not understood (or a wall the wrapper found)."""
    well_formed(parsed)
    if not json_object(body):
        assert parsed.status == "error" and parsed.detail.startswith("page not understood"), parsed.detail
        assert parsed.rows == ()
