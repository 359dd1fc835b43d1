"""METASEARCH_ALLOW_PRIVATE_HOSTS as a list of address blocks and host names (issue 26, item 4): a read
reaches what the list names and nothing else private, and a refusal names the list. Every refused
address here is a loopback address outside the allowed 127.0.0.1/32 (127.0.0.2 and up), watched by a
listener that must see no connection."""

from __future__ import annotations

import pytest

from pages import Outsider, ROBOTS_OPEN, StandInDNS, article_html, redirect, routes
from plugin.errors import FetchError, SearchError
from plugin.reading.addresses import PrivateAllowance, check_url
from plugin.reading.reader import Reader
from plugin.settings import Settings
from standins import page

ALLOWED = "127.0.0.1/32"


def settings(allow, **overrides) -> Settings:
    return Settings(allow_private_hosts=allow, state_backend="memory", fetch_host_interval_ms=0,
                    fetch_timeout_ms=5000, **overrides)


async def refusal(reader: Reader, url: str) -> FetchError:
    with pytest.raises(FetchError) as caught:
        await reader.fetch(url)
    return caught.value


@pytest.mark.parametrize("written, entries", [
    ("127.0.0.1/32,10.1.2.0/24,searx.internal", ["127.0.0.1/32", "10.1.2.0/24", "searx.internal"]),
    (" 127.0.0.1 , Searx.Internal. ", ["127.0.0.1/32", "searx.internal"]),  # a bare address is a block of one
    ("10.1.2.3/24", ["10.1.2.0/24"]),
    ("fd00::/8,[::1]", ["fd00::/8", "::1/128"]),
])
def test_the_variable_takes_blocks_and_names(monkeypatch, written, entries):
    monkeypatch.setenv("METASEARCH_ALLOW_PRIVATE_HOSTS", written)
    assert Settings().allow_private_hosts == entries
    assert Settings().private_allowance().entries == entries


@pytest.mark.parametrize("written, everything", [("1", True), ("true", True), ("0", False), ("", False), ("off", False)])
def test_zero_and_one_keep_their_meaning(monkeypatch, written, everything):
    monkeypatch.setenv("METASEARCH_ALLOW_PRIVATE_HOSTS", written)
    assert Settings().allow_private_hosts is everything
    assert Settings().private_allowance().everything is everything


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "not a host", "http://searx.internal", "-bad-.example"])
def test_a_bad_entry_is_named(monkeypatch, bad):
    monkeypatch.setenv("METASEARCH_ALLOW_PRIVATE_HOSTS", f"127.0.0.1/32,{bad}")
    with pytest.raises(SearchError) as caught:
        Settings()
    assert caught.value.code == "invalid_parameter"
    assert "METASEARCH_ALLOW_PRIVATE_HOSTS" in caught.value.message and repr(bad.strip()) in caught.value.message


def test_the_allowance_rules():
    allowance = PrivateAllowance.of("127.0.0.1/32,10.1.2.0/24,searx.internal")
    assert allowance.permits_address("127.0.0.1") and allowance.permits_address("10.1.2.255")
    assert allowance.permits_address("::ffff:127.0.0.1")  # the same address, mapped into IPv6
    for address in ("127.0.0.2", "10.1.3.0", "::1", "192.168.1.1", "nonsense"):
        assert not allowance.permits_address(address), address
    assert allowance.permits_name("searx.internal") and allowance.permits_name("SEARX.internal.")
    assert not allowance.permits_name("other.internal") and not allowance.permits_name("x.searx.internal")
    assert not PrivateAllowance.of(False) and PrivateAllowance.of(True).permits_address("10.9.9.9")
    assert PrivateAllowance.of(True).permits_name("anything.example")


def test_check_url_judges_literals_and_localhost_by_the_list():
    allowance = PrivateAllowance.of(ALLOWED)
    assert check_url("http://127.0.0.1:8080/", allow_private=allowance).host == "127.0.0.1"
    for url in ("http://127.0.0.2/", "http://[::1]/", "http://2130706434/"):  # 2130706434 is 127.0.0.2
        with pytest.raises(FetchError) as caught:
            check_url(url, allow_private=allowance)
        assert caught.value.code == "private_address"
        assert "METASEARCH_ALLOW_PRIVATE_HOSTS=127.0.0.1/32" in caught.value.message
    with pytest.raises(FetchError):  # no block allowed: localhost is refused by name, before any lookup
        check_url("http://localhost/", allow_private=PrivateAllowance.of("searx.internal"))
    assert check_url("http://localhost/", allow_private=PrivateAllowance.of("localhost")).host == "localhost"


async def test_a_read_reaches_the_allowed_block_and_nothing_else(standins):
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    async with Outsider() as outsider:
        reader = Reader(settings(ALLOWED))
        try:
            assert (await reader.fetch(site.url + "/post")).status == 200
            error = await refusal(reader, outsider.url + "/")
        finally:
            await reader.close()
    assert error.code == "private_address" and "127.0.0.2" in error.message
    assert "METASEARCH_ALLOW_PRIVATE_HOSTS=127.0.0.1/32" in error.message  # the refusal names the list
    assert outsider.connections == 0


async def test_a_redirect_out_of_the_allowed_block_is_refused_before_connecting(standins):
    async with Outsider() as outsider:
        site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/away": redirect(outsider.url + "/admin"),
                                      "/away-by-name": redirect(f"http://intranet.example:{outsider.port}/")}))
        dns = StandInDNS({"intranet.example": ["127.0.0.2"]})
        reader = Reader(settings(ALLOWED), resolver=dns)
        try:
            for start in ("/away", "/away-by-name"):
                error = await refusal(reader, site.url + start)
                assert error.code == "private_address" and "127.0.0.2" in error.message, start
                assert "redirected" in error.message or "intranet.example" in error.message
        finally:
            await reader.close()
    assert outsider.connections == 0


async def test_a_listed_name_may_resolve_to_a_private_address_and_no_other_name_may(standins):
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    port = site.url.rsplit(":", 1)[1]
    async with Outsider() as outsider:
        dns = StandInDNS({"searx.internal": ["127.0.0.1"], "other.internal": ["127.0.0.1"],
                          "sneaky.internal": ["127.0.0.2"]})
        reader = Reader(settings("searx.internal"), resolver=dns)  # a name, no block
        try:
            assert (await reader.fetch(f"http://searx.internal:{port}/post")).status == 200
            refused = await refusal(reader, f"http://other.internal:{port}/post")
            assert refused.code == "private_address" and "other.internal" in refused.message
            assert "METASEARCH_ALLOW_PRIVATE_HOSTS=searx.internal" in refused.message
            sneaky = await refusal(reader, f"http://sneaky.internal:{outsider.port}/")
            assert sneaky.code == "private_address"
        finally:
            await reader.close()
    assert outsider.connections == 0
