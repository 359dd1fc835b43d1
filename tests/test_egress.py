"""Which proxy the environment names (issue 23 survivors): curl's rules, read by name on each request.
Lower-case names win, and one set even to "" decides (no proxy for that scheme); under CGI (a
`REQUEST_METHOD` in the environment) HTTP_PROXY may be a request header in disguise (httpoxy,
CVE-2016-1000110) and is ignored for http, never the lower-case name nor the other schemes."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugin.infra.egress import choose_proxy, environment_proxies

NAMES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)


def from_env(url: str) -> str | None:
    return choose_proxy(url, "bing", None, {}, from_env=True)


def test_upper_case_names_apply_with_a_scheme_added_when_missing(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "proxy.corp:3128")
    monkeypatch.setenv("HTTPS_PROXY", "http://secure.corp:3128")
    monkeypatch.setenv("ALL_PROXY", "socks5://all.corp:1080")
    assert environment_proxies() == {"http": "http://proxy.corp:3128", "https": "http://secure.corp:3128",
                                     "all": "socks5://all.corp:1080"}
    assert from_env("http://example.org/") == "http://proxy.corp:3128"


def test_httpoxy_http_proxy_is_ignored_under_cgi_for_http_only(monkeypatch):
    monkeypatch.setenv("REQUEST_METHOD", "GET")
    monkeypatch.setenv("HTTP_PROXY", "http://attacker.example:8080")  # what a `Proxy:` request header becomes
    monkeypatch.setenv("HTTPS_PROXY", "http://secure.corp:3128")
    assert environment_proxies() == {"https": "http://secure.corp:3128"}
    assert from_env("http://example.org/") is None
    monkeypatch.setenv("http_proxy", "http://proxy.corp:3128")  # the lower-case name is the operator's own
    assert from_env("http://example.org/") == "http://proxy.corp:3128"


def test_a_lower_case_name_wins_and_decides_even_when_empty(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://upper.corp:3128")
    monkeypatch.setenv("http_proxy", "http://lower.corp:3128")
    assert from_env("http://example.org/") == "http://lower.corp:3128"
    monkeypatch.setenv("http_proxy", "")  # set, empty: no proxy for http, whatever HTTP_PROXY says
    monkeypatch.setenv("HTTPS_PROXY", "http://secure.corp:3128")
    monkeypatch.setenv("https_proxy", "  ")
    assert environment_proxies() == {}
    assert from_env("http://example.org/") is None and from_env("https://example.org/") is None
    monkeypatch.setenv("ALL_PROXY", "socks5://all.corp:1080")  # then ALL_PROXY, as curl does
    assert from_env("http://example.org/") == "socks5://all.corp:1080"


def test_a_proxy_url_is_checked_and_its_credentials_never_shown():
    from plugin.infra.egress import check_proxy_url

    assert check_proxy_url("proxy.corp:3128") == "http://proxy.corp:3128"
    assert check_proxy_url("http://proxy.corp:3128/") == "http://proxy.corp:3128/"
    for bad, why in [("http://agent:s3cret@proxy.corp:99999", "proxy 'http://****@proxy.corp:99999' has an invalid port"),
                     ("http://proxy.corp:3128/path", "proxy 'http://proxy.corp:3128/path' must not have a path or query"),
                     ("http://proxy.corp:3128?x=1", "proxy 'http://proxy.corp:3128?x=1' must not have a path or query"),
                     ("ftp://proxy.corp:21", "a proxy must be a URL such as http://host:3128 or socks5://host:1080, "
                                             "got 'ftp://proxy.corp:21'")]:
        with pytest.raises(ValueError) as refused:
            check_proxy_url(bad)
        assert str(refused.value) == why
        assert "s3cret" not in str(refused.value)


def test_a_socks_proxy_without_the_socks_extra_is_refused_naming_the_extra(monkeypatch):
    from plugin.infra import egress

    monkeypatch.setattr(egress, "socks_available", lambda: False)
    with pytest.raises(ValueError, match=r"^socks5 proxies need the socks extra: pip install 'metasearch\[socks\]'$"):
        egress.check_proxy_url("SOCKS5://127.0.0.1:1080")
    assert egress.check_proxy_url("http://proxy.corp:3128") == "http://proxy.corp:3128"  # HTTP needs nothing


def test_identity_headers_replace_the_engines_own_whatever_their_case_keeping_the_usual_spelling():
    from plugin.infra.egress import identity_headers

    merged = identity_headers({"user-agent": "engine UA", "Accept": "text/html"}, "ours/1.0",
                              {"accept": "*/*", "X-Team": "search"})
    assert merged == [("User-Agent", "ours/1.0"), ("accept", "*/*"), ("X-Team", "search")]
    assert identity_headers({"User-Agent": "engine UA"}, None, {}) == [("User-Agent", "engine UA")]


def test_identity_headers_keep_the_browser_profiles_order():
    # A replaced header keeps its place; an added one goes before `priority`, where Chrome ends its headers.
    from plugin.infra.egress import identity_headers, place_header

    profile = {"sec-ch-ua": "x", "User-Agent": "Chrome", "Accept": "text/html", "Accept-Language": "en",
               "Priority": "u=0, i"}
    merged = identity_headers(profile, "ours/1.0", {"X-Team": "search", "accept": "*/*"})
    assert [name for name, _ in merged] == ["sec-ch-ua", "User-Agent", "accept", "Accept-Language", "X-Team", "Priority"]
    assert dict(merged)["User-Agent"] == "ours/1.0"
    assert place_header([("A", "1"), ("Cookie", "a=1"), ("b", "2"), ("cookie", "dup")], "Cookie", "c=3") == [
        ("A", "1"), ("Cookie", "c=3"), ("b", "2")]
    assert place_header([("A", "1"), ("Cookie", "a=1")], "Cookie", "") == [("A", "1")]
    assert place_header([("A", "1")], "Cookie", "c=3") == [("A", "1"), ("Cookie", "c=3")]


# NO_PROXY entries for addresses, as curl reads them: an address or a network in CIDR form matches an address
# target (never a name's suffix: "0.0.1" is no entry for 127.0.0.1); names still match by domain. Only loopback
# addresses appear here (nothing is sent anywhere: these are choices).
@pytest.mark.parametrize(("listed", "url", "direct"), [
    ("127.0.0.0/8", "http://127.0.0.1:8080/", True),
    ("127.0.0.0/8", "http://127.0.0.2/", True),
    ("127.0.0.1/32", "http://127.0.0.1/", True),
    ("127.0.0.1/32", "http://127.0.0.2/", False),
    ("example.com, 127.0.0.0/24 ,::1", "https://127.0.0.9/", True),
    ("127.0.0.0/8", "http://[::1]/", False),
    ("::1/128", "http://[::1]:8080/", True),
    ("[::1]", "http://[::1]/", True),
    ("[::]/0", "http://[::1]/", True),
    ("127.0.0.1", "http://127.0.0.1/", True),
    ("0.0.1", "http://127.0.0.1/", False),
    ("127.0.0.0/33", "http://127.0.0.1/", False),
    ("*", "http://127.0.0.2/", True),
    (".example.com", "http://www.example.com/", True),
    ("example.com", "http://example.org/", False),
])
def test_no_proxy_matches_addresses_by_network_as_curl_does(monkeypatch, listed, url, direct):
    monkeypatch.setenv("NO_PROXY", listed)
    monkeypatch.setenv("ALL_PROXY", "http://proxy.corp:3128")
    assert choose_proxy(url, "bing", "http://set.corp:3128", {}, from_env=True) == (None if direct else
                                                                                    "http://set.corp:3128")


def test_a_lower_case_no_proxy_decides_even_when_empty(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.0/8")
    monkeypatch.setenv("no_proxy", "")
    assert choose_proxy("http://127.0.0.1/", "bing", "http://set.corp:3128", {}, from_env=True) is not None


@given(host=st.integers(0, (1 << 24) - 1), base=st.integers(0, (1 << 24) - 1), prefix=st.integers(8, 32),
       case=st.sampled_from(["NO_PROXY", "no_proxy"]))
def test_an_address_is_direct_exactly_when_a_listed_network_holds_it(host, base, prefix, case):
    address = ipaddress.ip_address((127 << 24) | host)
    network = ipaddress.ip_network(f"{ipaddress.ip_address((127 << 24) | base)}/{prefix}", strict=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(case, f"example.com,{network}")
        chosen = choose_proxy(f"http://{address}:8080/", "bing", "http://set.corp:3128", {}, from_env=False)
    assert (chosen is None) == (address in network)
