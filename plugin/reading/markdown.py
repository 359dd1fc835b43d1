"""Rendering trafilatura's extracted tree as Markdown or plain text.

trafilatura hands back the main content as a small XML vocabulary: `head` (rend h1-h6), `p`, `list`
(rend ul/ol) of `item`, `table` of `row` of `cell` (role head), `quote`, `code`, inline `hi` (rend
#b bold, #i italic, #t monospace, #u/#sub/#sup), `lb`, `ref`, `del`, `graphic`. Its own Markdown
writer escapes every character Markdown might read as syntax (`\\<`, `\\_`, `\\~`, ...) and keeps
underlines as `<u>` HTML; a model reads that as noise, and the escapes split words such as
`snake_case` apart. This renderer writes what a model reads well: headings, lists, fenced code,
GitHub tables and quotes in Markdown, the same blocks without markers as plain text, and no escaping.
"""

from __future__ import annotations

import re
from typing import Iterable

_SPACES = re.compile(r"[ \t\r\f\v\n\u00a0]+")
_LB = "\x00"  # a line break inside running text, protected from whitespace collapsing
# Put before the text of each <pre> before extraction (plugin.reading.extract): trafilatura hands a <pre>
# that does not look like code back as a quote, its line breaks as plain newlines, which running text
# collapses; a quote starting with this keeps its lines (a poem, a plain-text table, a terminal's output).
# Invisible, and deleted with the other format characters wherever else it ends up (clean_document).
PRE_MARK = "\u2063"
_INVISIBLE = re.compile(r"[\s\u200b\u200c\u200d\u2060\ufeff]+")
# A line of running text that Markdown would read as a fence or a heading.
_READS_AS_SYNTAX = re.compile(r" {0,3}(`{3,}|~{3,}|#{1,6}(\s|$))")
_BLOCK_TAGS = frozenset({"p", "head", "list", "table", "quote", "code", "div", "item", "row", "cell", "hr",
                         "section", "article", "body", "doc", "main"})


def _visible(text: str) -> bool:
    return bool(_INVISIBLE.sub("", text))


def _heading_level(element) -> int:
    rend = element.get("rend") or ""
    return int(rend[1]) if len(rend) == 2 and rend[0] == "h" and rend[1] in "123456" else 2


class _Writer:
    def __init__(self, markdown: bool):
        self.markdown = markdown

    # ----- running text -----
    def inline(self, element, *, with_tail: bool = False) -> str:
        """The element's text and its children's, flattened onto one line (line breaks kept)."""
        parts: list[str] = [element.text or ""]
        for child in element:
            parts.append(self._inline_child(child))
            parts.append(child.tail or "")
        text = "".join(parts)
        if with_tail:
            text += element.tail or ""
        return text

    def _inline_child(self, child) -> str:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == "lb":
            return _LB
        if tag in ("graphic", "") or tag == "hr":
            return " "
        inner = self.inline(child)
        if tag == "code":  # code inside running text is inline code
            return _wrap(inner.replace(_LB, " "), "`") if self.markdown and inner.strip() else inner
        if tag in _BLOCK_TAGS:  # a block nested in running text (malformed input): keep it apart
            return f" {inner} "
        if not self.markdown or not inner.strip():
            return inner
        if tag == "hi":
            marker = {"#b": "**", "#i": "*", "#t": "`"}.get(child.get("rend") or "")
            return _wrap(inner, marker) if marker else inner
        if tag == "del":
            return _wrap(inner, "~~")
        return inner

    @staticmethod
    def tidy(text: str) -> str:
        text = _SPACES.sub(" ", text)
        lines = [line.strip() for line in text.split(_LB)]
        return "\n".join(line for line in lines if line) if len(lines) > 1 else lines[0]

    def prose(self, text: str) -> str:
        """Running text as a block: in Markdown, a line that would open a code fence or be a heading
        (a paragraph "``` opens a block", a scene break "~~~") gets a backslash before it, so it stays text
        for every Markdown reader and for our own sentence cutting (it had made the rest of a page code)."""
        if not self.markdown:
            return text
        return "\n".join("\\" + line if _READS_AS_SYNTAX.match(line) else line for line in text.split("\n"))

    # ----- blocks -----
    def blocks(self, element) -> list[str]:
        """Markdown (or text) blocks for the children of a container element."""
        out: list[str] = []
        loose: list[str] = [element.text or ""]  # running text directly inside the container

        def flush() -> None:
            text = self.tidy("".join(loose))
            if _visible(text):
                out.append(self.prose(text))
            loose.clear()

        for child in element:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag in _BLOCK_TAGS or tag == "graphic":
                flush()
                out.extend(self.block(child))
            else:
                loose.append(self._inline_child(child))
            loose.append(child.tail or "")
        flush()
        return out

    def block(self, element) -> list[str]:
        tag = element.tag
        if tag == "p":
            text = self.tidy(self.inline(element))
            return [self.prose(text)] if _visible(text) else []
        if tag == "head":
            text = self.tidy(self.inline(element)).replace("\n", " ")
            if not _visible(text):
                return []
            return [("#" * _heading_level(element) + " " + text) if self.markdown else text]
        if tag == "list":
            lines = self.list_lines(element, "")
            return ["\n".join(lines)] if lines else []
        if tag == "table":
            return self.table(element)
        if tag == "quote":
            if (element.text or "").startswith(PRE_MARK):  # a <pre>: its lines kept
                text = self.tidy(self.inline(element).replace(PRE_MARK, "", 1).replace("\n", _LB))
                if not _visible(text):
                    return []
                return ["\n".join("> " + line for line in text.split("\n")) if self.markdown else text]
            inner = self.blocks(element)
            if not self.markdown:
                return inner
            return ["\n".join("> " + line if line else ">" for line in "\n\n".join(inner).split("\n"))] if inner else []
        if tag == "code":
            return self.code(element)
        if tag == "hr" or tag == "graphic":
            return []
        return self.blocks(element)  # div, item or cell out of place, unknown containers

    def code(self, element) -> list[str]:
        text = _code_text(element).replace(_LB, "\n").replace(PRE_MARK, "").strip("\n")
        if not _visible(text):
            return []
        if not self.markdown:
            return [text]
        if "\n" not in text:  # a one-liner in a code box reads best as inline code on its own line
            return [_wrap(text, "`")]
        fence = "```"
        while fence in text:
            fence += "`"
        return [f"{fence}\n{text}\n{fence}"]

    def list_lines(self, element, indent: str) -> list[str]:
        """The list's lines, each item's marker after `indent`; what is nested in an item (a list, a code
        block) is indented by the item's marker's width (3 under "1. ", 4 under "10. "), as Markdown
        needs to keep it inside the item."""
        lines: list[str] = []
        number = 0
        ordered = element.get("rend") == "ol"
        for item in element:
            if not isinstance(item.tag, str):
                continue
            if item.tag != "item":  # stray content in a list: its own line
                text = self.tidy(self.inline(item))
                if _visible(text):
                    lines.append(indent + text.replace("\n", " "))
                continue
            number += 1
            marker = f"{number}. " if ordered and self.markdown else "- "
            inside = indent + " " * len(marker)
            own: list[str] = [item.text or ""]
            nested: list[str] = []
            for child in item:
                if isinstance(child.tag, str) and child.tag == "list":
                    nested.extend(self.list_lines(child, inside))
                    if child.tail and _visible(child.tail):
                        nested.append(inside + self.tidy(child.tail))
                elif isinstance(child.tag, str) and child.tag in ("code", "quote"):
                    # a code block, or a quote (a <pre> of lines), of several lines stays one, under the item
                    # (flattened, two commands ran together); a one-liner joins the item's text, as inline code
                    # or without its quote marker (a "> " mid-line is no quote, only a stray ">")
                    if child.tag == "code":
                        shown = (self.code(child) or [""])[0]  # once: its lines decide where it goes
                        alone = shown
                    else:
                        shown = "\n".join(self.block(child))
                        alone = shown[2:] if self.markdown and shown.startswith("> ") else shown
                    if "\n" in shown:
                        nested.extend(inside + line if line else line for line in shown.split("\n"))
                    else:
                        own.append(" " + alone)
                    own.append(" " + (child.tail or ""))  # the text after it, apart from the text before it
                elif isinstance(child.tag, str) and child.tag in _BLOCK_TAGS:
                    own.append(" " + " ".join(self.blocks_flat(child)) + " ")
                    own.append(child.tail or "")
                else:
                    own.append(self._inline_child(child))
                    own.append(child.tail or "")
            text = self.tidy("".join(own)).replace("\n", " ")
            if _visible(text):
                lines.append(indent + marker + text)
            lines.extend(nested)
        return lines

    def blocks_flat(self, element) -> Iterable[str]:
        return (block.replace("\n", " ") for block in self.block(element))

    def table(self, element) -> list[str]:
        rows: list[tuple[list[str], bool]] = []
        for row in element.iter("row"):
            cells = [c for c in row if isinstance(c.tag, str) and c.tag == "cell"]
            texts = [self.tidy(" ".join(self.blocks_flat(c)) if len(c) and any(
                isinstance(g.tag, str) and g.tag in _BLOCK_TAGS for g in c) else self.inline(c)).replace("\n", " ")
                for c in cells]
            if any(_visible(t) for t in texts):
                rows.append((texts, any(c.get("role") == "head" for c in cells)))
        if not rows:
            return []
        if not self.markdown:
            return ["\n".join(" | ".join(t for t in texts if t) for texts, _ in rows)]
        width = max(len(texts) for texts, _ in rows)
        lines = []
        for number, (texts, _) in enumerate(rows):
            padded = [t.replace("|", "\\|") for t in texts] + [""] * (width - len(texts))
            lines.append("| " + " | ".join(padded) + " |")
            if number == 0:  # GitHub tables need a header row: the first row serves
                lines.append("|" + " --- |" * width)
        return ["\n".join(lines)]


def _code_text(element) -> str:
    """The text of a code element as written: every descendant's text and tail in document order, a line
    break element (`lb`, from `<br>`) as a line break; the markup of emphasis inside code is dropped."""
    parts: list[str] = [element.text or ""]
    for child in element:
        parts.append(_LB if (isinstance(child.tag, str) and child.tag == "lb") else _code_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _wrap(text: str, marker: str) -> str:
    """`text` between markers, flanking whitespace outside them (so `**bold** word` stays valid)."""
    stripped = text.strip()
    if not stripped:
        return text
    if marker == "`":
        fence = "`"
        while fence in stripped:
            fence += "`"
        marker = fence
        if stripped[0] == "`" or stripped[-1] == "`":  # CommonMark: a space inside the fence, dropped when read
            stripped = f" {stripped} "
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return f"{lead}{marker}{stripped}{marker}{trail}"


def render(body, *, markdown: bool = True) -> str:
    """The extracted tree as Markdown (`markdown=True`) or plain text, blocks apart by a blank line."""
    if body is None:
        return ""
    writer = _Writer(markdown)
    return "\n\n".join(writer.blocks(body)).replace(_LB, "\n").strip()
