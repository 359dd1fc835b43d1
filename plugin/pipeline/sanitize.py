"""Text that reaches a model: no markup, no control characters, bounded length.

Titles and snippets are untrusted web content; they may carry HTML, terminal
escapes or prompt-injection text. Markup and control characters are removed
here; the framing that says "this is untrusted" belongs to the renderers.
"""

from __future__ import annotations

import html
import re
import unicodedata

TITLE_MAX = 300
SNIPPET_MAX = 600

_TAG = re.compile(r"<\s*/?\s*[A-Za-z!][^<>]*>")
_SPACE = re.compile(r"\s+")


def clean_text(text: str, limit: int) -> str:
    if not text:
        return ""
    text = html.unescape(_TAG.sub(" ", text))
    text = _TAG.sub(" ", text)  # markup that was entity-escaped in the source
    text = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp") else ch for ch in text)
    text = _SPACE.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def clean_title(text: str) -> str:
    return clean_text(text, TITLE_MAX)


def clean_snippet(text: str) -> str:
    return clean_text(text, SNIPPET_MAX)
