"""Page text an engine sent with its rows (Exa's `text`, Firecrawl's `markdown`), made like a page we read.

Both APIs send the page as Markdown of the whole page: image embeds, every link with its target, runs of
blank lines. Our own reads keep neither images nor link targets (a model reads the words; the targets
cost context and carry nothing it can use without a fetch), so the sent text gets the same treatment:
images go, links keep their words, empty brackets and blank runs go. Code blocks are left as they are.
Then it is cleaned like every document (`clean_document`: no control or invisible characters).
"""

from __future__ import annotations

import re

from plugin.pipeline.sanitize import clean_document

# A code fence as CommonMark (and plugin.reading.sentences) has it: up to three spaces, then three or more
# backticks or tildes; it is closed by a fence of the same character at least as long.
_FENCE = re.compile(r"^ {0,3}(```+|~~~+)", re.M)
# ![alt](target "title") and a bare ![alt]; a link around an image ([![alt](img)](target)) loses both.
_IMAGE = re.compile(r"!\[[^\]\n]*\](?:\([^)\n]*\))?")
# [words](target "title") -> words; Firecrawl escapes line breaks inside link text as "\\\n".
_LINK = re.compile(r"\[((?:[^\[\]\n]|\\\n)*)\]\([^)\n]*\)")
_EMPTY_BRACKETS = re.compile(r"\[\s*\](?:\([^)\n]*\))?")
_LINE_BREAK_ESCAPE = re.compile(r"\\+\n")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_BLANK_RUN = re.compile(r"\n{3,}")


def _tidy_prose(text: str) -> str:
    text = _IMAGE.sub("", text)
    previous = None
    while previous != text:  # links inside links: innermost first
        previous = text
        text = _LINK.sub(lambda m: _LINE_BREAK_ESCAPE.sub(" ", m.group(1)), text)
    text = _EMPTY_BRACKETS.sub("", text)
    return _BLANK_RUN.sub("\n\n", _TRAILING_SPACE.sub("\n", text))


def tidy_sent_text(text: str) -> str:
    """`text` (Markdown an engine sent) without images and link targets, outside code blocks, and
    cleaned for a model."""
    parts: list[str] = []
    position = 0
    inside = False
    fence = ""
    for found in _FENCE.finditer(text):
        marker = found.group(1)
        if not inside:
            line_end = text.find("\n", found.end())
            if marker[0] == "`" and "`" in text[found.end():None if line_end < 0 else line_end]:
                continue  # a backtick fence's info string holds no backtick: a one-line code span, not a fence
            parts.append(_tidy_prose(text[position:found.start()]))
            position, inside, fence = found.start(), True, marker
        elif marker[0] == fence[0] and len(marker) >= len(fence):
            end = text.find("\n", found.end())
            end = len(text) if end < 0 else end + 1
            parts.append(text[position:end])
            position, inside = end, False
    rest = text[position:]
    parts.append(rest if inside else _tidy_prose(rest))
    return clean_document("".join(parts).strip())
