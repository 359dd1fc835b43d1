"""Text hygiene in one place: the caller's query on its way to the engines, titles and snippets on
their way to a model.

Both replace invalid surrogates, turn control characters and line breaks into spaces, and delete
invisible format characters (soft hyphens, zero-width spaces, bidi controls, BOMs) without a trace, so
`Java\u00adScript` stays `JavaScript`. Joiners (ZWJ, ZWNJ) are kept: they shape Persian and Indic
words and emoji. The two uses differ by intent only, and the difference is written down in their
policies below.

Chat-template and role tokens (`<|im_start|>`, `<|im_end|>`, `<|system|>`, `[INST]`, `<<SYS>>`,
`<start_of_turn>`, DeepSeek's `<｜User｜>` …) are made inert in everything cleaned here for a model (titles,
snippets, page text, passages, warnings, engines' details): a naive local chat template could take one
for its own and let a page open a system turn. Their brackets become look-alikes of the same length
(`‹|im_end|›`, `［INST］`), so offsets into a page's text stay where they were.

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


# <|x|> (ChatML, Llama 3, Phi, GPT), <｜x｜> (DeepSeek's full-width bars), Mistral's and Llama 2's
# [INST]-style markers, Llama 2's <<SYS>>, Gemma's turns. Case-sensitive, as the tokens are: `[inst]ance` is text.
_TEMPLATE_TOKEN = re.compile(
    r"<([|\uff5c])([^<>|\uff5c\n]{1,40})\1>"
    r"|\[(/?(?:INST|SYS|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS|TOOL_CONTENT|THINK))\]"
    r"|<<(/?SYS)>>"
    r"|<(/?(?:start_of_turn|end_of_turn|start_of_image|end_of_image))>")


def _inert(match: re.Match) -> str:
    bar, inside, marker, sys_tag, turn = match.groups()
    if bar:
        return f"\u2039{bar}{inside}{bar}\u203a"
    if marker:
        return f"\uff3b{marker}\uff3d"
    if sys_tag:
        return f"\u2039\u2039{sys_tag}\u203a\u203a"
    return f"\u2039{turn}\u203a"


def neutralise_template_tokens(text: str) -> str:
    """`text` with every chat-template or role token made inert, its length unchanged."""
    if "<" not in text and "[" not in text:
        return text
    return _TEMPLATE_TOKEN.sub(_inert, text)


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
    text = neutralise_template_tokens(normalise(text, MODEL_TEXT))
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def clean_title(text: str) -> str:
    return clean_text(text, TITLE_MAX)


def clean_snippet(text: str) -> str:
    return clean_text(text, SNIPPET_MAX)


# ----- whole documents (page text from plugin.fetch and search read=N) -----
# A page's text keeps its lines (Markdown needs them) and its length (it is sliced, not cut); otherwise
# MODEL_TEXT applies: control and private-use characters become spaces, format characters (soft hyphens,
# zero-width spaces, bidi controls, Unicode tag characters that smuggle hidden text) are deleted, joiners
# stay, lone surrogates become U+FFFD. The classes are spelled out: a per-character category test costs
# tens of milliseconds on a long page. (tests/test_fetch.py checks them against unicodedata.)
_DOC_SPACED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\U000f0000-\U0010ffff]")
_DOC_SURROGATE = re.compile("[\ud800-\udfff]")
_DOC_DROPPED = re.compile("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
                          "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
                          "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
                          "\U000e0020-\U000e007f]")


def clean_document(text: str) -> str:
    """A document's text for a model: MODEL_TEXT's character policy, line breaks kept (CR LF, CR, U+2028
    and U+2029 become LF), template tokens inert. Framing is the renderer's business (`plugin.surfaces.render`)."""
    if not text:
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\u2029", "\n")
    text = _DOC_DROPPED.sub("", _DOC_SPACED.sub(" ", text))
    if _DOC_SURROGATE.search(text):
        text = _DOC_SURROGATE.sub("\ufffd", text)
    return neutralise_template_tokens(text.strip("\n"))
