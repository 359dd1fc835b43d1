"""The address checked is the address connected (issue 26, item 4), on the browser transport, whose client
resolves names itself unless told not to: a page read resolves the name once through the guard and pins the
connection to what it checked (libcurl's RESOLVE), through an HTTP proxy's CONNECT or a SOCKS proxy to that
address (CONNECT_TO), and through a forwarding HTTP proxy by asking for the address with the name in Host;
the plain transport's page reads through a proxy the same (the proxy tests run on both clients).
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
                        fetch_timeout_ms=5000, fetch_cache_ttl_s=0, proxy_from_env=False,
                        **{"transport": "browser", **overrides})
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


@pytest.mark.parametrize("transport", ["browser", "plain"])  # each client pins page reads alike
async def test_an_http_proxy_is_asked_for_the_checked_address_not_the_name(standins, transport):
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await HttpProxy().start()
    try:
        async with guarded(FixedDNS({"news.example": "127.0.0.1"}), proxy=proxy.url(), transport=transport) as reader:
            answer = await reader.fetch(f"http://news.example:{port}/post")
    finally:
        await proxy.stop()
    assert answer.status == 200 and answer.url == f"http://news.example:{port}/post"
    # Forwarded: the request line names the address the guard checked; the site still gets its name in Host.
    assert [(method, target) for method, target, _ in proxy.seen] == [
        ("GET", f"http://127.0.0.1:{port}/robots.txt"), ("GET", f"http://127.0.0.1:{port}/post")]
    assert {headers["host"] for _, _, headers in proxy.seen} == {f"news.example:{port}"}
    assert [seen.headers.get("Host") for seen in site.requests] == [f"news.example:{port}"] * 2


@pytest.mark.parametrize("transport", ["browser", "plain"])  # each client pins page reads alike
async def test_an_https_read_through_a_proxy_tunnels_to_the_checked_address(tmp_path, transport):
    context, bundle = throwaway_ca(tmp_path, "news.example")  # the certificate names the site, not its address
    site = TlsStandIn(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    site.ssl_context = context
    await site.start()
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await HttpProxy().start()
    try:
        async with guarded(FixedDNS({"news.example": "127.0.0.1"}), proxy=proxy.url(), ca_bundle=bundle,
                           transport=transport) as reader:
            answer = await reader.fetch(f"https://news.example:{port}/post")
    finally:
        await proxy.stop()
        await site.stop()
    assert answer.status == 200
    # CONNECT to the address; TLS inside the tunnel is still checked against the name (SNI news.example).
    assert {(method, target) for method, target, _ in proxy.seen} == {("CONNECT", f"127.0.0.1:{port}")}


@pytest.mark.parametrize("transport", ["browser", "plain"])  # each client pins page reads alike
@pytest.mark.parametrize("scheme", ["socks5", "socks5h"])
async def test_a_socks_proxy_is_asked_for_the_checked_address(standins, scheme, transport):
    if transport == "plain":
        pytest.importorskip("aiohttp_socks")
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await Socks5Proxy().start()
    try:
        async with guarded(FixedDNS({"news.example": "127.0.0.1"}), proxy=proxy.url(scheme=scheme),
                           transport=transport) as reader:
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


# ----- the plain transport (transport=plain) pins page reads through a proxy the same way -----
class AskedProxy:
    """A proxy that only notes what it is asked for (an HTTP request line or CONNECT, a SOCKS5 address) and turns
    the request down: it connects nowhere and resolves nothing, whatever it is asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.server = None
        self.port = 0

    async def start(self) -> "AskedProxy":
        import asyncio

        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self.server.close()

    async def handle(self, reader, writer) -> None:
        try:
            first = await reader.readexactly(1)
            if first == b"\x05":  # SOCKS5: no authentication, then CONNECT
                methods = (await reader.readexactly(1))[0]
                await reader.readexactly(methods)
                writer.write(b"\x05\x00")
                _, _, _, kind = await reader.readexactly(4)
                if kind == 3:
                    host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
                elif kind == 1:
                    host = socket.inet_ntoa(await reader.readexactly(4))
                else:
                    host = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
                await reader.readexactly(2)
                self.asked.append(host)
                writer.write(b"\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00")  # connection refused
            else:
                line = (first + await reader.readline()).decode("latin-1").split()
                self.asked.append(line[1] if len(line) > 1 else "")
                writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
        except (OSError, EOFError, Exception):  # noqa: BLE001 - a stand-in: whatever the client does, close
            pass
        finally:
            writer.close()


@pytest.mark.parametrize("scheme", ["http", "socks5", "socks5h"])
@pytest.mark.parametrize("target", ["http://localhost:8080/post", "https://localhost:8443/post"])
async def test_on_the_plain_transport_a_proxy_is_asked_for_the_checked_address_not_the_name(scheme, target):
    """Under transport=plain a page read through an HTTP or socks5h proxy named the host to the proxy, which
    looked it up again (the window a rebinding name needs), and socks5 looked it up again here, outside the
    guard (these cases catch the first two; the socks5 one pins the address asked). Now the proxy is asked for
    the address the guard checked, as on the browser transport."""
    proxy = await AskedProxy().start()
    dns = FixedDNS({"localhost": "127.0.0.1"})
    settings = Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0,
                        fetch_timeout_ms=3000, fetch_cache_ttl_s=0, fetch_robots=False, transport="plain",
                        proxy_from_env=False, proxy=f"{scheme}://127.0.0.1:{proxy.port}")
    try:
        async with Reader(settings, resolver=dns) as reader:
            with pytest.raises(FetchError):  # the proxy turns every request down
                await reader.fetch(target)
    finally:
        await proxy.stop()
    port = target.rsplit(":", 1)[1].split("/")[0]
    assert proxy.asked and set(proxy.asked) <= {f"http://127.0.0.1:{port}/post", f"127.0.0.1:{port}", "127.0.0.1"}, \
        proxy.asked
    assert set(dns.asked) == {"localhost"}
