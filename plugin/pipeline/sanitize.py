"""Text hygiene in one place: the caller's query on its way to the engines, titles and snippets on
their way to a model.

Both replace invalid surrogates, turn control characters and line breaks into spaces, and delete
invisible format characters (soft hyphens, zero-width spaces, bidi controls, BOMs) without a trace, so
`Java\u00adScript` stays `JavaScript`. Joiners (ZWJ, ZWNJ) are kept: they shape Persian and Indic
words and emoji. The two uses differ by intent only, and the difference is written down in their
policies below.

Markup is not handled here. Engines hand over text: an HTML parser removes the tags and decodes the
entities of a page in one pass, so `Vec&lt;T&gt;` on a page arrives as `Vec<T>`, and that, like
`#include <stdio.h>` or `a < b && c > d`, is content a coding agent needs. Stripping tag-like text
or decoding entities again at this point would delete or alter it. The framing that marks rows as
untrusted, and what could close or forge it, belongs to the renderer (`plugin.surfaces.render`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

TITLE_MAX = 300
SNIPPET_MAX = 600

_SPACE = re.compile(r"\s+")
JOINERS = frozenset("\u200c\u200d")  # zero-width non-joiner and joiner


@dataclass(frozen=True)
class TextPolicy:
    """What happens to characters that are not plain visible text, by Unicode general category."""

    spaced: frozenset[str]  # categories that separate words: each becomes a space
    dropped: frozenset[str]  # categories invisible inside a word: deleted
    kept: frozenset[str] = JOINERS  # characters kept whatever their category


# The query goes to the engines as the user typed it: private-use characters are theirs to send.
QUERY_TEXT = TextPolicy(spaced=frozenset({"Cc", "Zl", "Zp"}), dropped=frozenset({"Cf"}))
# Text for a model: private-use glyphs (icon fonts) mean nothing to it and separate words on the page.
MODEL_TEXT = TextPolicy(spaced=frozenset({"Cc", "Zl", "Zp", "Co"}), dropped=frozenset({"Cf"}))


def normalise(text: str, policy: TextPolicy) -> str:
    """`text` on one line under `policy`: whitespace collapsed, invalid surrogates replaced (U+FFFD)."""
    if not text.isprintable():  # only then is there anything to look at character by character
        out = []
        for ch in text:
            if ch in policy.kept:
                out.append(ch)
                continue
            category = unicodedata.category(ch)
            if category == "Cs":  # a lone surrogate cannot be encoded and breaks every consumer
                out.append("\ufffd")
            elif category in policy.spaced:
                out.append(" ")
            elif category not in policy.dropped:
                out.append(ch)
        text = "".join(out)
    return _SPACE.sub(" ", text).strip()


def clean_text(text: str, limit: int) -> str:
    """Model-facing text: normalised under MODEL_TEXT and cut to `limit` characters with an ellipsis."""
    if not text:
        return ""
    text = normalise(text, MODEL_TEXT)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def clean_title(text: str) -> str:
    return clean_text(text, TITLE_MAX)


def clean_snippet(text: str) -> str:
    return clean_text(text, SNIPPET_MAX)
