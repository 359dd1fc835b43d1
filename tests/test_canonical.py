from __future__ import annotations

import base64

import pytest

from plugin.pipeline.canonical import canonical_url, identity, registrable_domain


@pytest.mark.parametrize(("raw", "clean"), [
    ("https://WWW.Example.COM:443/a/b/?utm_source=x&b=2&gclid=1&a=1#frag", "https://www.example.com/a/b/?b=2&a=1"),
    ("http://example.com:80/x?fbclid=abc", "http://example.com/x"),
    ("http://example.com:8080/x?msclkid=1&spm=a.b.c&q=a+b", "http://example.com:8080/x?q=a+b"),
    ("//duckduckgo.com/l/?uddg=https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FOnimai&rut=97", "https://en.wikipedia.org/wiki/Onimai"),
    ("https://r.search.yahoo.com/_ylt=A;_ylu=B/RV=2/RE=1/RO=10/RU=https%3a%2f%2fpython.org%2f/RK=2/RS=x-",
     "https://python.org/"),
    ("https://example.com", "https://example.com/"),
])
def test_canonical_url(raw, clean):
    assert canonical_url(raw) == clean


def test_bing_wrapper():
    target = "https://docs.python.org/3/library/asyncio.html"
    wrapped = "https://www.bing.com/ck/a?!&&p=x&u=a1" + base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
    assert canonical_url(wrapped) == target


@pytest.mark.parametrize("bad", ["javascript:alert(1)", "data:text/html,hi", "/relative/path", "mailto:a@b.c", "",
                                 "ftp://example.com/x", "http://", "https://exa mple.com/"])
def test_non_http_urls_are_dropped(bad):
    assert canonical_url(bad) is None and identity(bad) is None


def test_identity_folds_www_slash_scheme_encoding_and_order():
    same = [
        "https://www.python.org/downloads/",
        "http://python.org/downloads",
        "https://python.org/downloads/?utm_campaign=x",
        "https://python.org/downloads/index.html",
    ]
    assert len({identity(u) for u in same}) == 1
    assert identity("https://vi.wikipedia.org/wiki/Tình_yêu") == identity("https://vi.wikipedia.org/wiki/T%C3%ACnh_y%C3%AAu")
    assert identity("https://x.org/p?a=1&b=2") == identity("https://x.org/p?b=2&a=1")
    assert identity("https://x.org/a") != identity("https://x.org/b")


def test_registrable_domain_offline():
    assert registrable_domain("https://docs.python.org/3/") == "python.org"
    assert registrable_domain("https://news.bbc.co.uk/x") == "bbc.co.uk"
    assert registrable_domain("https://foo.github.io/") == "github.io"  # public suffixes only, no private list
    assert registrable_domain("http://127.0.0.1:8000/") == "127.0.0.1"


def test_idempotent():
    for raw in ["https://WWW.Example.com:443/a/?utm_medium=1&x=2#f", "http://a.b.c.d.co.uk/%7Euser/"]:
        once = canonical_url(raw)
        assert canonical_url(once) == once
