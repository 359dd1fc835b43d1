"""A page's main text: trafilatura for the extraction, our renderer for the Markdown.

trafilatura (with its jusText and readability fallbacks) is the best-scoring open extractor on the
public article-extraction benchmark; we call it with comments left out (reader comments are not the
page's main text) and tables kept, render its tree ourselves (`plugin.reading.markdown`), and fall
back to the page's visible text when extraction keeps almost nothing (documentation indexes, app
pages, link lists), so the reader always gets what a person would see rather than an empty answer.

trafilatura and lxml are imported here, on first use: `metasearch search` never pays for them.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from functools import lru_cache

from plugin.infra import memo

# Elements whose text a person never sees.
_HIDDEN_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "math", "head", "iframe", "object",
                          "embed", "canvas", "select", "datalist", "dialog"})
# Elements that start a new line of visible text.
_LINE_TAGS = frozenset({"p", "div", "section", "article", "header", "footer", "nav", "aside", "main", "h1", "h2",
                        "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody",
                        "tfoot", "tr", "pre", "blockquote", "form", "fieldset", "figure", "figcaption",
                        "address", "hr", "br", "caption", "details", "summary", "title", "body", "legend"})
_CELL_TAGS = frozenset({"td", "th"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u200b\ufeff]+")


@dataclass
class Extracted:
    title: str | None
    published: dt.date | None
    content: str
    # How the text was obtained: "main" (trafilatura), "visible" (the page's visible text, when
    # extraction kept almost nothing).
    method: str
    warnings: list[str] = field(default_factory=list)


def parse_html(html: str | bytes):
    """An lxml tree of the page (trafilatura's own loader: repairs, encodings declared inside strings),
    or None when the input is not HTML at all."""
    from trafilatura.utils import load_html

    try:
        tree = load_html(html)
    except Exception:  # lxml refuses some inputs outright; that is "not HTML" to us
        return None
    if tree is None:
        return _parsed_leniently(html)
    if _depth_reaches(tree, _LIBXML_DEPTH):  # libxml2 stopped there: the rest of the page was never parsed
        deeper = _parsed_deep(html)
        if deeper is not None:
            return deeper
    return tree


# libxml2 parses HTML to this depth unless told otherwise (XML_PARSE_HUGE), and silently drops the rest of
# the page: 400 paragraphs each in an unclosed <div> kept 253; old pages with unclosed <font> or <b> do it.
_LIBXML_DEPTH = 256
_LIBXML_HUGE_DEPTH = 2048  # and this deep when told (huge_tree)


def _depth_reaches(tree, depth: int) -> bool:
    """An element sits `depth` levels down (the root is level 1): an XPath of that many steps, ~0.2 ms
    a page where a walk in Python took ~1 ms."""
    try:
        return bool(_steps(depth)(tree.getroottree()))
    except Exception:  # an XPath engine's own limit: the answer is only a check's
        return False


@memo.register
@lru_cache(maxsize=4)
def _steps(depth: int):
    from lxml import etree

    return etree.XPath("/*" * depth)


def _parsed_deep(html: str | bytes):
    """The page parsed without libxml2's depth limit (trafilatura's parser settings otherwise)."""
    from lxml import html as lxml_html

    parser = lxml_html.HTMLParser(collect_ids=False, default_doctype=False, encoding="utf-8", remove_comments=True,
                                  remove_pis=True, huge_tree=True)
    try:
        return lxml_html.fromstring(html.encode("utf-8") if isinstance(html, str) else html, parser=parser)
    except Exception:
        return None


def _parsed_leniently(html: str | bytes):
    """trafilatura's loader takes a document without `<head>` whose first 50 characters do not say "html"
    for something else (a page opening with a long comment, a bare `<body>`, text served as HTML) and gives
    nothing: such a page could not be read at all (not_extractable). lxml reads it as a browser would."""
    from lxml import html as lxml_html

    if not (html.strip() if isinstance(html, (str, bytes)) else None):
        return None
    try:
        return lxml_html.document_fromstring(html)
    except ValueError:  # a str that declares its encoding: lxml wants bytes for that
        try:
            return lxml_html.document_fromstring(html.encode("utf-8")) if isinstance(html, str) else None
        except Exception:
            return None
    except Exception:
        return None


def visible_text(tree) -> str:
    """All the text a person would see on the page, one line per block: the whole-page baseline, and the
    fallback when main-text extraction keeps almost nothing."""
    if tree is None:
        return ""
    parts: list[str] = []
    stack: list[tuple[object, bool]] = [(tree, False)]
    while stack:
        element, closing = stack.pop()
        tag = element.tag.lower() if isinstance(element.tag, str) else ""  # type: ignore[attr-defined]
        if closing:
            if tag in _LINE_TAGS:
                parts.append("\n")
            elif tag in _CELL_TAGS:
                parts.append("\t")
            if element.tail:  # type: ignore[attr-defined]
                parts.append(element.tail)  # type: ignore[attr-defined]
            continue
        if not tag or tag in _HIDDEN_TAGS or _hidden(element):
            if element.tail:  # type: ignore[attr-defined]
                parts.append(element.tail)  # type: ignore[attr-defined]
            continue
        if tag in _LINE_TAGS:
            parts.append("\n")
        if element.text:  # type: ignore[attr-defined]
            parts.append(element.text)  # type: ignore[attr-defined]
        stack.append((element, True))
        stack.extend((child, False) for child in reversed(element))  # type: ignore[arg-type]
    lines = (_SPACES.sub(" ", line).strip() for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


# A card shown when the pointer rests on a name in running text (a photo, the name again, the person's latest
# headlines: The Hill's `span.rollover-people-block`): hidden by the page's CSS, so its class says what it is.
_HOVER_CLASS = re.compile(r"(?:^|[\s_-])(?:rollover|tooltip|popover|hover-?card)(?:$|[\s_-])", re.I)


def _drop_hover_cards(tree) -> None:
    """Removes hover cards from paragraphs: an element inside a `<p>` whose class names a hover widget and
    that holds an image or more than one link (the name it hangs on, a lone link, stays), its tail kept."""
    for element in reversed(tree.xpath("//p//*[@class]")):  # innermost first: a card inside the wrapper of its name
        if not _HOVER_CLASS.search(element.get("class") or ""):
            continue
        if element.find(".//img") is None and len(element.findall(".//a")) < 2:
            continue
        element.drop_tree()  # lxml.html's: the element and what it holds go, its tail stays in the text


def _hidden(element) -> bool:
    attrib = element.attrib
    if not attrib:
        return False
    if "hidden" in attrib or attrib.get("aria-hidden") == "true":
        return True
    style = attrib.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def _title_from_tree(tree) -> str | None:
    if tree is None:
        return None
    found = tree.find(".//title")
    if found is not None and found.text and found.text.strip():
        return " ".join(found.text.split())
    return None


def _adds_to(first: str, second: str) -> bool:
    """`second` holds nearly all of `first` (19 in 20 of its 60-character pieces, one every 200 characters)
    and a tenth more text: the joined body is kept."""
    if len(second) < 1.1 * len(first):
        return False
    pieces = [first[i:i + 60] for i in range(0, len(first) - 60, 200)]
    if not pieces:
        return first in second
    return sum(piece in second for piece in pieces) >= 0.95 * len(pieces)


def extract_html(html: str, *, url: str | None = None, markdown: bool = True,
                 fallback_min_chars: int = 200) -> Extracted:
    """The page's main text as Markdown (or plain text), its title and publication date."""
    from trafilatura import bare_extraction

    from plugin.reading.markdown import PRE_MARK, render
    from plugin.reading.published import date_params, publication_date
    from plugin.reading.split_body import merged_body_tree, plain_text

    tree = parse_html(html)
    if tree is None:
        return Extracted(title=None, published=None, content="", method="none")
    for pre in tree.iter("pre"):  # its lines are kept even where trafilatura makes it a quote (markdown.PRE_MARK)
        if pre.text and pre.text.strip():
            pre.text = PRE_MARK + pre.text
    _drop_hover_cards(tree)

    def extracted(page):
        try:
            return bare_extraction(page, url=url, include_comments=False, include_tables=True,
                                   include_formatting=True, with_metadata=True, date_extraction_params=date_params())
        except Exception:  # an extractor bug on one odd page: the visible text still serves the reader
            return None

    document = extracted(tree)
    body = getattr(document, "body", None)
    if body is not None:  # an article body split over several containers (plugin.reading.split_body)
        try:
            joined = merged_body_tree(tree, body)
        except Exception:  # a heuristic on any HTML: never the reason a page cannot be read
            joined = None
        again = extracted(joined) if joined is not None else None
        if getattr(again, "body", None) is not None and _adds_to(plain_text(body), plain_text(again.body)):
            body = again.body
    title = getattr(document, "title", None) or _title_from_tree(tree)
    seen: list[str] = []

    def page_text() -> str:  # worked out once, when a byline or the fallback needs it
        if not seen:
            seen.append(visible_text(tree))
        return seen[0]

    published = publication_date(getattr(document, "date", None), tree=tree, raw_html=html, url=url,
                                 visible_lines=lambda: page_text().split("\n"))
    try:
        main = render(body, markdown=markdown) if body is not None else ""
    except RecursionError:  # markup nested deeper than the writer recurses: the visible text below serves
        main = ""
    warnings = []
    if _depth_reaches(tree, _LIBXML_HUGE_DEPTH):
        warnings.append(f"the page nests its markup deeper than {_LIBXML_HUGE_DEPTH} elements, as far as it "
                        "is read: the text beyond that depth is missing")
    if len(main) >= fallback_min_chars:
        return Extracted(title=title, published=published, content=main, method="main", warnings=warnings)
    visible = page_text()
    if len(visible) > 2 * len(main):
        warning = ("main-text extraction kept almost nothing; this is the page's visible text, boilerplate "
                   "included")
        return Extracted(title=title, published=published, content=visible, method="visible",
                         warnings=[warning, *warnings])
    return Extracted(title=title, published=published, content=main, method="main", warnings=warnings)
