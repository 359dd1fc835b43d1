"""The address checked is the address connected (issue 26, item 4), on the browser transport, whose client
resolves names itself unless told not to: a page read resolves the name once through the guard and pins the
connection to what it checked (libcurl's RESOLVE), through an HTTP proxy's CONNECT or a SOCKS proxy to that
address (CONNECT_TO), and through a forwarding HTTP proxy by asking for the address with the name in Host.
No second lookup, so no rebinding window. Every refused address is a loopback one outside the allowed set."""

from __future__ import annotations

import socket

import pytest

from pages import Outsider, ROBOTS_OPEN, article_html, loopback_is_public, routes
from plugin.errors import FetchError
from plugin.reading.reader import Reader
from plugin.settings import Settings
from standins import page
from test_proxies import HttpProxy, Socks5Proxy, TlsStandIn, throwaway_ca


class RebindingDNS:
    """Answers 127.0.0.1 (a public site in these tests) the first time a name is asked, 127.0.0.2 after:
    a name that passes the check and then points somewhere else."""

    def __init__(self):
        self.asked: list[str] = []

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET):
        self.asked.append(host)
        address = "127.0.0.1" if len(self.asked) == 1 else "127.0.0.2"
        return [{"hostname": host, "host": address, "port": port, "family": socket.AF_INET, "proto": 0,
                 "flags": socket.AI_NUMERICHOST}]

    async def close(self) -> None:
        return None


class FixedDNS(RebindingDNS):
    def __init__(self, table: dict[str, str]):
        super().__init__()
        self.table = table

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET):
        self.asked.append(host)
        return [{"hostname": host, "host": self.table[host], "port": port, "family": socket.AF_INET, "proto": 0,
                 "flags": socket.AI_NUMERICHOST}]


def guarded(resolver, **overrides) -> Reader:
    settings = Settings(allow_private_hosts=False, state_backend="memory", fetch_host_interval_ms=0,
                        fetch_timeout_ms=5000, fetch_cache_ttl_s=0, transport="browser", proxy_from_env=False,
                        **overrides)
    return Reader(settings, resolver=resolver, public=loopback_is_public)


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


async def test_a_name_that_rebinds_after_the_check_never_reaches_the_new_address(standins):
    site = await standins(routes({"/post": page(article_html())}))
    port = int(site.url.rsplit(":", 1)[1])
    dns = RebindingDNS()
    async with Outsider(port=port) as outsider:  # where the name points once it has been checked
        async with guarded(dns, fetch_robots=False) as reader:
            first = await reader.fetch(f"http://rebind.example:{port}/post")
            assert first.status == 200 and dns.asked == ["rebind.example"]  # one lookup: libcurl did none
            with pytest.raises(FetchError) as caught:
                await reader.fetch(f"http://rebind.example:{port}/post?again")
    assert caught.value.code == "private_address" and "127.0.0.2" in caught.value.message
    assert outsider.connections == 0 and len(site.requests) == 1


async def test_an_http_proxy_is_asked_for_the_checked_address_not_the_name(standins):
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await HttpProxy().start()
    try:
        async with guarded(FixedDNS({"news.example": "127.0.0.1"}), proxy=proxy.url()) as reader:
            answer = await reader.fetch(f"http://news.example:{port}/post")
    finally:
        await proxy.stop()
    assert answer.status == 200
    # Forwarded: the request line names the address the guard checked; the site still gets its name in Host.
    assert [(method, target) for method, target, _ in proxy.seen] == [
        ("GET", f"http://127.0.0.1:{port}/robots.txt"), ("GET", f"http://127.0.0.1:{port}/post")]
    assert {headers["host"] for _, _, headers in proxy.seen} == {f"news.example:{port}"}
    assert [seen.headers.get("Host") for seen in site.requests] == [f"news.example:{port}"] * 2


async def test_an_https_read_through_a_proxy_tunnels_to_the_checked_address(tmp_path):
    context, bundle = throwaway_ca(tmp_path, "news.example")  # the certificate names the site, not its address
    site = TlsStandIn(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    site.ssl_context = context
    await site.start()
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await HttpProxy().start()
    try:
        async with guarded(FixedDNS({"news.example": "127.0.0.1"}), proxy=proxy.url(), ca_bundle=bundle) as reader:
            answer = await reader.fetch(f"https://news.example:{port}/post")
    finally:
        await proxy.stop()
        await site.stop()
    assert answer.status == 200
    # CONNECT to the address; TLS inside the tunnel is still checked against the name (SNI news.example).
    assert {(method, target) for method, target, _ in proxy.seen} == {("CONNECT", f"127.0.0.1:{port}")}


@pytest.mark.parametrize("scheme", ["socks5", "socks5h"])
async def test_a_socks_proxy_is_asked_for_the_checked_address(standins, scheme):
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await Socks5Proxy().start()
    try:
        async with guarded(FixedDNS({"news.example": "127.0.0.1"}), proxy=proxy.url(scheme=scheme)) as reader:
            answer = await reader.fetch(f"http://news.example:{port}/post")
    finally:
        await proxy.stop()
    assert answer.status == 200
    # Even socks5h, whose proxy would resolve names: a guarded read hands it the address it checked.
    assert {(kind, host, asked_port) for _, kind, host, asked_port in proxy.seen} == {("ipv4", "127.0.0.1", port)}


async def test_a_refused_name_reaches_no_proxy(standins):
    proxy = await HttpProxy().start()
    try:
        async with Outsider() as outsider:
            dns = FixedDNS({"intranet.example": "127.0.0.2"})
            async with guarded(dns, proxy=proxy.url(), fetch_robots=False) as reader:
                with pytest.raises(FetchError) as caught:
                    await reader.fetch(f"http://intranet.example:{outsider.port}/wiki")
    finally:
        await proxy.stop()
    assert caught.value.code == "private_address" and proxy.seen == [] and outsider.connections == 0
