"""JSON-RPC text holding a lone UTF-16 surrogate escape (`"\\ud83d"` without its pair), repaired.

JSON allows such an escape, and a JavaScript client writes one whenever a string was cut inside a
surrogate pair (a harness that shortens a model's query to N UTF-16 units can halve an emoji):
`JSON.stringify` spells the lone half `\\ud83d`. The MCP SDK's parser refuses it (it cannot become UTF-8).
Over stdio the SDK then drops the line without an answer, and the client waits until its own timeout; over
HTTP it answers 400 "Parse error". The MCP server hands the SDK the same message with each lone half
replaced by U+FFFD, as every other surface does with a lone surrogate (plugin.pipeline.sanitize), so the
call is answered. Nothing else is changed: JSON the SDK parses, or that no parser reads, is left as it is.
"""

from __future__ import annotations

import json
import re

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE = re.compile("[\ud800-\udfff]")  # what is left of a surrogate once json.loads has joined the pairs


def repaired(text: str) -> str | None:
    """`text` (one JSON-RPC message) with every lone surrogate escape read as U+FFFD, re-serialised on one
    line; None when it holds none (or is not JSON at all)."""
    import pydantic_core

    if not _SURROGATE_ESCAPE.search(text):
        return None
    try:
        pydantic_core.from_json(text)
        return None  # whole pairs, or an escaped backslash before `u`: the SDK reads it as it is
    except ValueError:
        pass
    try:
        return json.dumps(_replaced(json.loads(text)), ensure_ascii=False)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than any message (the SDK refuses both)
        return None


def _replaced(value):
    if isinstance(value, str):
        return _LONE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replaced(item) for item in value]
    if isinstance(value, dict):
        return {_replaced(key): _replaced(item) for key, item in value.items()}
    return value
