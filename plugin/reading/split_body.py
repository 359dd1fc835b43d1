"""An article body split over several containers, joined again before extraction.

Some sites cut an article's body into several sibling containers of one tag and class, with an ad row or
a "most popular" rail between them (`<div class="article__body">…</div> <div class="ad">…</div>
<div class="article__body">…</div>`). trafilatura keeps the container it judges best and drops the
others: on two of the article corpus's pages (Wired) it kept 35 % and 45 % of the article. Here, after a
first extraction, the paragraphs of the page are grouped by their nearest classed container; when most of
what was extracted comes from containers of one tag and class, and other containers of that tag and class
hold paragraphs it left out, a copy of the page with those containers' children moved into the first one
is extracted instead (only when that keeps what the first extraction had and adds to it).

Pure: lxml trees in, a tree out; `plugin.reading.extract` decides which extraction to keep.
"""

from __future__ import annotations

import copy

# A paragraph long enough to identify (its first characters are matched with the extracted blocks').
_MIN_PARAGRAPH = 80
_PREFIX = 60
_CONTAINERS = frozenset({"div", "section", "article", "main"})
_BLOCKS = frozenset({"p", "head", "item", "cell", "quote"})  # an extracted tree's blocks (and the page's p)
# More containers of one kind than this are a list (comments, teasers), not one body cut by ads.
_MOST_PIECES = 50


def plain_text(element) -> str:
    """An element's text, its text nodes joined as they stand and whitespace squeezed (a word split by inline
    markup stays one word)."""
    return " ".join("".join(element.itertext()).split())


def _container(element):
    """The nearest ancestor of `element` that can hold a body and carries a class."""
    return next((parent for parent in element.iterancestors()
                 if isinstance(parent.tag, str) and parent.tag in _CONTAINERS and (parent.get("class") or "").strip()),
                None)


def _openings(body) -> tuple[set[str], int]:
    """The first characters of every block of an extracted tree (trafilatura's `p`, `head`, `item`, `cell`,
    `quote` or the page's own `p`), and the length of its text. Looked up by opening, not searched for in
    the text: a search per paragraph cost the page's paragraphs times its length (8,000 paragraphs: 1.2 s)."""
    openings = set()
    for element in body.iter():
        if isinstance(element.tag, str) and element.tag in _BLOCKS:
            words = plain_text(element)
            if words:
                openings.add(words[:_PREFIX])
    return openings, len(plain_text(body))


def merged_body_tree(tree, extracted):
    """A copy of `tree` with the containers of a split body joined into the first, or None when the page
    shows no split body that `extracted` (the first extraction's tree) left part of out."""
    if tree is None or extracted is None:
        return None
    openings, length = _openings(extracted)
    if not length:
        return None
    groups: dict[tuple[str, str], dict] = {}  # (tag, class) -> its containers in document order, chars kept/left
    for paragraph in tree.iter("p"):
        words = plain_text(paragraph)
        if len(words) < _MIN_PARAGRAPH:
            continue
        container = _container(paragraph)
        if container is None:
            continue
        key = (container.tag, " ".join(sorted(container.get("class").split())))
        group = groups.setdefault(key, {"containers": [], "index": {}, "kept": 0, "left": {}})
        index = group["index"].setdefault(id(container), len(group["containers"]))
        if index == len(group["containers"]):
            group["containers"].append(container)
        if words[:_PREFIX] in openings:
            group["kept"] += len(words)
        else:
            group["left"][index] = group["left"].get(index, 0) + len(words)
    for group in groups.values():
        containers = group["containers"]
        # most of the extracted text from this kind of container, and paragraphs of it left out
        if not 2 <= len(containers) <= _MOST_PIECES or group["kept"] < 0.5 * length or not group["left"]:
            continue
        if sum(group["left"].values()) < 2 * _MIN_PARAGRAPH:
            continue
        # (a container must not hold another of its kind: moving one into the other would nest them)
        if any(other is not one and _inside(other, one) for one in containers for other in containers):
            continue
        root = tree.getroottree()
        paths = [root.getpath(container) for container in containers]
        joined = copy.deepcopy(tree)
        found = [joined.getroottree().xpath(path) for path in paths]
        if any(len(hits) != 1 for hits in found):
            continue
        first, *rest = [hits[0] for hits in found]
        for container in rest:
            for child in list(container):
                first.append(child)
            container.getparent().remove(container)
        return joined
    return None


def _inside(element, ancestor) -> bool:
    return any(parent is ancestor for parent in element.iterancestors())
