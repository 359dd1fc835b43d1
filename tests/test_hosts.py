"""One way to take a host from a URL and one rule for a host label (engines.hosts), shared by the
engines, the domain filters, dedup and the page reader (issue 23: there were two label patterns and
three host helpers, which disagreed on case, trailing dots, ports and international names)."""

from __future__ import annotations

import pytest

from engines.hosts import HOST_LABEL, display_host, host_of
from engines.jsonapi import host_name
from plugin.errors import FetchError
from plugin.pipeline.canonical import host_of as canonical_host_of
from plugin.pipeline.domains import ascii_domain
from plugin.reading.addresses import check_url


@pytest.mark.parametrize("url, host", [
    ("https://WWW.Example.org./a?b", "www.example.org"),
    ("https://user:pw@Host.com:8080/p", "host.com"),
    ("//duckduckgo.com/l/?uddg=x", "duckduckgo.com"),
    ("http://bücher.de/", "xn--bcher-kva.de"),
    ("http://[::1]:8080/", "::1"),
    ("/relative", ""), ("javascript:alert(1)", ""), ("http://[::1", ""), ("", ""),
])
def test_a_host_is_lower_case_ascii_without_port_brackets_or_trailing_dot(url, host):
    assert host_of(url) == host and canonical_host_of(url) == host


@pytest.mark.parametrize("label, ok", [("a", True), ("my_site", True), ("xn--bcher-kva", True), ("a-b", True),
                                       ("-a", False), ("a-", False), ("a b", False), ("", False), ("a" * 64, False)])
def test_one_label_rule_for_domain_lists_and_page_urls(label, ok):
    assert bool(HOST_LABEL.fullmatch(label)) == ok
    assert (ascii_domain(f"{label}.example.org") is not None) == ok
    try:
        check_url(f"https://{label}.example.org/", allow_private=True)
        accepted = True
    except FetchError as exc:
        assert exc.code == "invalid_url"
        accepted = False
    assert accepted == ok


def test_a_publisher_named_by_its_host_reads_as_a_person_writes_it():
    assert host_name("https://www.Bücher.de:443/news/1") == "bücher.de"
    assert host_name("news.example.org") == "news.example.org"  # a bare host name (Brave's meta_url)
    assert display_host("xn--strae-oqa.de") == "straße.de" and display_host("xn--") == "xn--"
