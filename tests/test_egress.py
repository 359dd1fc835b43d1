"""Which proxy the environment names (issue 23 survivors): curl's rules, read by name on each request.
Lower-case names win, and one set even to "" decides (no proxy for that scheme); under CGI (a
`REQUEST_METHOD` in the environment) HTTP_PROXY may be a request header in disguise (httpoxy,
CVE-2016-1000110) and is ignored for http, never the lower-case name nor the other schemes."""

from __future__ import annotations

import pytest

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
