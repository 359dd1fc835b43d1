"""Nodes are compared by identity, not by their HTML (issue 29 item 25): selectolax's `==` serialises
both subtrees (0.7 ms against <body>), and two different nodes with the same markup compare equal."""

from __future__ import annotations

import pytest

import engines.baidu
import engines.brave
import engines.markup
from conftest import response_from_bytes
from corpus_cases import corpus_cases
from engines import ENGINES
from engines.base import SearchOptions
from engines.markup import ancestor, parse_html, same_node


def test_same_node_is_identity_whatever_the_wrapper():
    tree = parse_html("<html><body><div id=a><p>x</p></div><div id=b><p>x</p></div></body></html>")
    first, again = tree.css_first("#a"), tree.css_first("#a")  # two wrappers of one node
    assert first is not again and same_node(first, again)
    twin_one, twin_two = tree.css("p")  # the same markup, two nodes
    assert twin_one == twin_two and not same_node(twin_one, twin_two)
    assert not same_node(first, None) and not same_node(None, None)


def test_ancestor_stops_at_the_stop_node_not_at_a_twin():
    # The inner <li> has the same markup as... itself only; the outer block's twin elsewhere must not stop
    # the walk early: ancestor() looks for the <a> around the title inside the block it was given.
    tree = parse_html('<html><body><ul><li><a href="/x"><span><b>t</b></span></a></li></ul>'
                      '<ul><li><a href="/x"><span><b>t</b></span></a></li></ul></body></html>')
    second_block = tree.css("li")[1]
    title = second_block.css_first("b")
    found = ancestor(title, "a", stop=tree.css("li")[1])
    assert found is not None and same_node(found, second_block.css_first("a"))
    # A twin of the stop node (same markup, another node) does not stop the walk.
    assert ancestor(title, "ul", stop=tree.css("li")[0]) is not None


def _rows(name: str, path) -> list:
    parsed = ENGINES[name].parse(response_from_bytes(path.read_bytes(), url=f"https://{name}.example/s"), "q",
                                 SearchOptions())
    return [parsed.status, parsed.detail, [(r.title, r.url, r.snippet, r.date) for r in parsed.rows]]


@pytest.mark.parametrize(("name", "file"), [("brave", f) for f in corpus_cases("brave")]
                         + [("baidu", f) for f in corpus_cases("baidu")])
def test_recorded_pages_parse_as_they_did_with_html_comparison(name, file, monkeypatch):
    from conftest import corpus_path

    path = corpus_path(name, file)
    by_identity = _rows(name, path)
    by_html = lambda a, b: a is not None and b is not None and a == b  # noqa: E731 - the old comparison
    for module in (engines.markup, engines.brave, engines.baidu):
        monkeypatch.setattr(module, "same_node", by_html, raising=False)
    assert _rows(name, path) == by_identity
    assert by_identity[0] == "ok" and by_identity[2]
