"""plugin.pipeline.suffixes finds the registrable domain exactly as tldextract does, over every rule."""

from __future__ import annotations

import sys

import pytest
import tldextract

from plugin.pipeline.canonical import registrable_domain
from plugin.pipeline.suffixes import snapshot_path, split_host


@pytest.fixture(scope="module")
def reference():
    # As the project builds it: the bundled snapshot only, never the network.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def hosts_from_the_list() -> list[str]:
    text = snapshot_path().read_text(encoding="utf-8")
    hosts = []
    for line in text.splitlines():
        rule = line.strip()
        if not rule or rule.startswith("//"):
            continue
        if rule.startswith("!"):
            bare = rule[1:]
            hosts += [bare, f"www.{bare}", f"a.b.{bare}"]
        elif rule.startswith("*."):
            bare = rule[2:]
            hosts += [bare, f"any.{bare}", f"example.any.{bare}", f"a.example.any.{bare}"]
        else:
            hosts += [rule, f"example.{rule}", f"a.example.{rule}"]
    return hosts


ODD = ["localhost", "example", "example.invalid", "a.b.c.unknownsuffix", "1.2.3.4", "256.1.1.1", "10.0.0.1.nip.io",
       "[::1]", "::1", "docs.python.org:8443", "python.org.", "user@python.org", "Docs.Python.ORG",
       "xn--fiqs8s", "example.xn--fiqs8s", "www.example.xn--55qx5d.cn", "食狮.中国", "example。co。uk", "", ".",
       "..co.uk", "example..com", "a.github.io", "s3.amazonaws.com", "bucket.s3.amazonaws.com", "www.ck", "x.y.ck",
       "city.kawasaki.jp", "a.city.kawasaki.jp", "b.kawasaki.jp", "a.b.kawasaki.jp"]


def test_every_rule_of_the_list_gives_tldextracts_answer(reference):
    hosts = hosts_from_the_list() + ODD
    assert len(hosts) > 20000
    wrong = []
    for host in hosts:
        expected = reference(host)
        if split_host(host) != (expected.domain, expected.suffix):
            wrong.append((host, split_host(host), (expected.domain, expected.suffix)))
    assert wrong == []


def test_registrable_domain_as_before(reference):
    for host in ["docs.python.org", "www.bbc.co.uk", "example.com", "192.168.0.1", "localhost", "foo.github.io",
                 "news.gov.cn", "xn--fiqs8s"]:
        extracted = reference(host)
        expected = f"{extracted.domain}.{extracted.suffix}" if extracted.domain and extracted.suffix else host
        assert registrable_domain(host) == expected
    assert registrable_domain("https://docs.python.org/3/") == "python.org"


def test_a_search_process_imports_neither_tldextract_nor_requests():
    import subprocess

    code = ("import sys; from plugin.pipeline.canonical import registrable_domain; "
            "assert registrable_domain('docs.python.org') == 'python.org'; "
            "print(sorted(m for m in ('tldextract', 'requests', 'filelock') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
