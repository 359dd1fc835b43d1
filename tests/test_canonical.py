from __future__ import annotations

import base64
from urllib.parse import urlsplit

import pytest
from hypothesis import given, strategies as st

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


def test_identity_folds_the_case_of_the_path_not_of_the_query():
    """Engines spell one page /js/ and /Js/ (w3schools, real Bing and Brave rows for "javascript
    tutorial"); a query string keeps its case, where ids live (YouTube's v=)."""
    assert identity("https://www.w3schools.com/js/") == identity("https://www.w3schools.com/Js/")
    assert identity("https://x.org/Docs/Index.HTML") == identity("https://x.org/docs")
    assert identity("https://www.youtube.com/watch?v=YQHsXMglC9A") != identity(
        "https://www.youtube.com/watch?v=yqhsxmglc9a")


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


def test_international_hosts_follow_idna_2008():
    # IDNA 2003 (Python's "idna" codec) maps ß to ss: a different domain, owned by someone else.
    assert canonical_url("https://straße.de/x") == "https://xn--strae-oqa.de/x"
    assert canonical_url("https://Straße.DE:443/x?utm_source=a") == "https://xn--strae-oqa.de/x"
    assert identity("https://straße.de/x") != identity("https://strasse.de/x")
    assert registrable_domain("https://www.straße.de/") == "xn--strae-oqa.de"
    assert canonical_url("https://中文.com/路径?q=中") == "https://xn--fiq228c.com/路径?q=中"  # path stays readable


def test_characters_no_url_may_carry_are_escaped_and_the_rest_kept():
    assert canonical_url("https://a.com/p a<b>?q=1 2&x=\"y\"") == "https://a.com/p%20a%3Cb%3E?q=1%202&x=%22y%22"
    assert canonical_url("https://vi.wikipedia.org/wiki/Tình_yêu") == "https://vi.wikipedia.org/wiki/Tình_yêu"
    for bad in ("http://127.0.0.1:99999/", "http://[::1", "https://a.com:port/"):
        assert canonical_url(bad) is None


def test_host_of_is_the_one_host_helper():
    from plugin.pipeline.canonical import host_of

    assert host_of("https://Docs.Python.org./3/") == "docs.python.org"
    assert host_of("https://straße.de/") == "xn--strae-oqa.de"
    assert host_of("http://[::1]:8080/") == "::1"
    for nothing in ("", "not a url", "http://[::1", "mailto:x@y.z", None):
        assert host_of(nothing) == ""  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [None, "", 42, ["https://a.com/"], {"href": "https://a.com/"}, b"https://a.com/"])
def test_a_url_field_that_is_not_a_string_gives_nothing_not_an_exception(value):
    # A JSON engine may put a list or an object where the URL belongs: no URL, no host, no crash.
    assert canonical_url(value) is None and identity(value) is None
    from plugin.pipeline.canonical import host_of

    assert host_of(value) == ""


def test_no_host_no_registrable_domain():
    assert registrable_domain("") == "" and registrable_domain("https:///path/only") == ""


def test_a_run_of_characters_no_url_may_carry_is_escaped_character_by_character():
    assert canonical_url('https://a.com/p<>q?x="  y"') == "https://a.com/p%3C%3Eq?x=%22%20%20y%22"


def test_ipv6_literal_hosts_are_kept_in_brackets():
    # They were dropped (canonical_url None): the check for a dotted name did not know IPv6 literals.
    assert canonical_url("http://[2001:DB8::1]/a?utm_source=x") == "http://[2001:db8::1]/a"
    assert canonical_url("https://[::1]:8443/x") == "https://[::1]:8443/x"
    assert canonical_url("https://[::1]:443/x") == "https://[::1]/x"
    assert identity("http://[2001:db8::1]/a") == identity("https://[2001:db8::1]/a")
    assert canonical_url("http://intranet/a") is None  # a bare single-label name still is not a host


def test_identity_folds_percent_encoding_in_the_query_string():
    """Issue 23 bug 4: `?q=caf%C3%A9` and `?q=café` are one page (and lower-case escapes too); escapes of
    the query's own delimiters stay apart from the delimiters (`a%26b` is one value, `a&b` two parameters)."""
    same = ["https://x.org/s?q=caf%C3%A9", "https://x.org/s?q=café", "https://x.org/s?q=caf%c3%a9"]
    assert len({identity(u) for u in same}) == 1
    assert identity("https://x.org/s?q=%41") == identity("https://x.org/s?q=A")
    assert identity("https://x.org/s?q=a%20b") == identity("https://x.org/s?q=a b")
    for apart in (("a%26b", "a&b"), ("a%3Db", "a=b"), ("a%2Bb", "a+b"), ("a%23b", "a")):
        assert identity(f"https://x.org/s?q={apart[0]}") != identity(f"https://x.org/s?q={apart[1]}"), apart
    # Bytes that are not UTF-8 keep their escapes, in one letter case.
    assert identity("https://x.org/s?q=%ff") == identity("https://x.org/s?q=%FF") == "x.org/s?q=%FF"


def test_path_bytes_that_are_not_utf8_keep_their_identity():
    """A path in Latin-1 or windows-1251 escapes (`/caf%E9`, `/%EF%F0%E8%E2%E5%F2.html`) was decoded with
    U+FFFD for each byte, so every such path of one length was one page: /caf%E9 and /caf%E8 merged, and
    the second row of an old Russian site vanished as a duplicate of the first."""
    assert identity("https://x.org/caf%E9") != identity("https://x.org/caf%E8")
    assert identity("http://x.ru/%EF%F0%E8%E2%E5%F2.html") != identity("http://x.ru/%EC%E8%F0%E0%F1%EE.html")
    assert identity("https://x.org/caf%e9") == identity("https://x.org/caf%E9")  # one spelling of one byte
    assert identity("https://x.org/caf%C3%A9") == identity("https://x.org/café")  # UTF-8 still decoded


def test_an_escaped_slash_is_not_a_path_separator():
    """RFC 3986 6.2.2.2: %2F is a reserved character escaped, not "/": `/group%2Fproject` (GitLab's API,
    npm's scoped names) is another resource than `/group/project`."""
    assert identity("https://x.org/a%2Fb") != identity("https://x.org/a/b")
    assert identity("https://x.org/a%2fb") == identity("https://x.org/a%2Fb")
    assert identity("https://x.org/%7Euser") == identity("https://x.org/~user")  # unreserved: decoded


@given(st.lists(st.binary(min_size=1, max_size=6).map(lambda b: bytes(0x80 | (c & 0x3F) for c in b)),
                min_size=2, max_size=2, unique=True))
def test_distinct_undecodable_paths_are_distinct_pages(paths):
    # Bytes 0x80-0xBF alone are never UTF-8: each escape stands for itself, so no two paths may merge.
    first, second = ("https://x.org/" + "".join(f"%{c:02X}" for c in p) for p in paths)
    assert identity(first) != identity(second)


def test_a_unicode_space_before_a_fragment_does_not_end_the_canonical_url():
    """`…/page\xa0#top` became `…/page\xa0`, which read again (str.strip) is `…/page`: a page's canonical URL
    had another identity than its row, so the next page of the query showed the row again."""
    assert canonical_url("https://x.org/page\xa0#top") == "https://x.org/page%C2%A0"
    assert canonical_url("https://x.org/a\u3000b\x85") == "https://x.org/a%E3%80%80b"


@given(st.sampled_from(["https://a.b/", "http://www.a.b/x?", "https://a.b/p#"]),
       st.text(max_size=30) | st.text("aZ%#?&=/. \t\xa0\x85\u3000\u2028é中", max_size=12))
def test_canonical_url_is_a_fixed_point_with_the_rows_identity(prefix, rest):
    # Page memory keeps the identities of the canonical URLs shown; later pages compare rows' own URLs.
    once = canonical_url(prefix + rest)
    if once is not None:
        assert canonical_url(once) == once
        assert identity(once) == identity(prefix + rest)


@pytest.mark.parametrize(("mobile", "desktop"), [
    ("https://en.m.wikipedia.org/wiki/Alan_Turing", "https://en.wikipedia.org/wiki/Alan_Turing"),
    ("https://zh-yue.m.wikipedia.org/wiki/香港", "https://zh-yue.wikipedia.org/wiki/香港"),
    ("https://fr.m.wiktionary.org/wiki/chat#Nom", "https://fr.wiktionary.org/wiki/chat"),
    ("https://commons.m.wikimedia.org/wiki/File:X.jpg", "https://commons.wikimedia.org/wiki/File:X.jpg"),
    ("https://m.wikidata.org/wiki/Q42", "https://www.wikidata.org/wiki/Q42"),
    ("https://mobile.twitter.com/python/status/1", "https://twitter.com/python/status/1"),
    ("https://m.youtube.com/watch?v=YQHsXMglC9A&utm_source=x", "https://www.youtube.com/watch?v=YQHsXMglC9A"),
    ("https://m.facebook.com/groups/python/", "https://www.facebook.com/groups/python/"),
    ("https://m.imdb.com/title/tt0111161/", "https://www.imdb.com/title/tt0111161/"),
    ("https://m.wikihow.com/Learn-Python", "https://www.wikihow.com/Learn-Python"),
    ("https://m.bilibili.com/video/BV1GJ411x7h7", "https://www.bilibili.com/video/BV1GJ411x7h7"),
    ("https://m.vk.com/python", "https://vk.com/python"),
])
def test_a_mobile_host_serving_the_same_path_is_shown_and_counted_as_its_desktop_twin(mobile, desktop):
    assert canonical_url(mobile) == desktop
    assert identity(mobile) == identity(desktop)


@pytest.mark.parametrize("url", [
    "https://m.example.com/wiki/X",          # m. of an unknown site may be another site altogether
    "https://m.kuwo.cn/newh5app/play_detail/1",
    "https://m.wikipedia.org/wiki/X",        # the bare portal host: no language, not a twin
    "https://en.m.wikipedia.org.evil.com/wiki/X",
    "https://m.en.wikipedia.org/wiki/X",
    "https://en.m.notwikipedia.org/wiki/X",
])
def test_an_unrelated_mobile_host_keeps_its_own_identity(url):
    assert urlsplit(canonical_url(url)).netloc == urlsplit(url).netloc
    assert identity(url) != identity(url.replace("m.", "", 1))


@given(st.sampled_from(["en", "de", "zh-yue", "simple", "commons"]),
       st.sampled_from(["wikipedia", "wiktionary", "wikibooks", "wikisource", "wikivoyage", "wikimedia"]),
       st.text(alphabet="abcXYZ_()é%0", min_size=1, max_size=12))
def test_wikimedia_mobile_pages_merge_with_their_desktop_pages(site, project, title):
    mobile = f"https://{site}.m.{project}.org/wiki/{title}"
    desktop = f"https://{site}.{project}.org/wiki/{title}"
    assert identity(mobile) == identity(desktop)
    assert canonical_url(mobile) == canonical_url(desktop)
