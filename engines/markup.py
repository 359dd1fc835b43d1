"""Reading engine HTML: one parser backend and whitespace-faithful text."""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

_SPACE = re.compile(r"\s+")


def parse_html(text: str) -> LexborHTMLParser:
    return LexborHTMLParser(text)


def text_of(node: LexborNode | None) -> str:
    """Visible text of a node with whitespace collapsed.

    Text nodes are joined without a separator, so `Foo <b>bar</b>` keeps its
    own spacing and `<b>Onimai</b>: x` does not gain a stray space.
    """
    if node is None:
        return ""
    return _SPACE.sub(" ", node.text(deep=True, separator="", strip=False)).strip()


def first(node: LexborNode, *selectors: str) -> LexborNode | None:
    """The first match of the first selector that matches anything."""
    for selector in selectors:
        found = node.css_first(selector)
        if found is not None:
            return found
    return None


def attr(node: LexborNode | None, name: str) -> str:
    if node is None:
        return ""
    return (node.attributes.get(name) or "").strip()


def same_node(a: LexborNode | None, b: LexborNode | None) -> bool:
    """Whether `a` and `b` are one node of the tree. selectolax hands out a new wrapper per access, so `is`
    fails; its `==` compares serialised HTML (both subtrees serialised, 0.7 ms against <body>, and two
    nodes with the same markup compare equal): compare the address of the underlying node instead."""
    return a is not None and b is not None and a.mem_id == b.mem_id


def ancestor(node: LexborNode, tag: str, stop: LexborNode | None = None) -> LexborNode | None:
    """The nearest enclosing element named `tag`, not looking past `stop` or the body."""
    parent = node.parent
    while parent is not None and not same_node(parent, stop) and parent.tag not in ("body", "html"):
        if parent.tag == tag:
            return parent
        parent = parent.parent
    return None


def inside(node: LexborNode, pattern: "re.Pattern[str]") -> bool:
    """Whether any enclosing element's id or class matches `pattern` (ad containers and the like)."""
    parent = node.parent
    while parent is not None and parent.tag not in ("body", "html"):
        if pattern.search(attr(parent, "id")) or pattern.search(attr(parent, "class")):
            return True
        parent = parent.parent
    return False


def page_text(tree: LexborHTMLParser, limit: int = 20000) -> str:
    """Visible text of the body (scripts and styles excluded), for block-page checks."""
    body = tree.body
    if body is None:
        return ""
    parts = []
    for node in body.traverse(include_text=True):
        if node.tag == "-text":
            parent = node.parent
            if parent is not None and parent.tag in ("script", "style", "noscript", "template"):
                continue
            parts.append(node.text_content or "")
            if sum(len(p) for p in parts) > limit:
                break
    return _SPACE.sub(" ", " ".join(parts)).strip()
