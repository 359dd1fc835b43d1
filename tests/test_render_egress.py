"""A rendered page's only way out (plugin.reading.render_egress), spoken to as Chromium speaks to it:
CONNECT for https and WebSockets, absolute-form requests for plain http. No browser needed. Every
refused address is a loopback address outside the allowed 127.0.0.1/32, watched by an `Outsider`."""

from __future__ import annotations

import asyncio

import pytest

from pages import Outsider, StandInDNS, routes
from plugin.reading.addresses import GuardedResolver, PrivateAllowance, check_url
from plugin.reading.render_egress import ReadEgress
from standins import page

ALLOWED = PrivateAllowance.of("127.0.0.1/32")


def egress(dns: StandInDNS | None = None, via=None, proxy_tls=None, **caps) -> ReadEgress:
    guard = GuardedResolver(dns, allow_private=ALLOWED)
    return ReadEgress(guard, lambda url: check_url(url, allow_private=ALLOWED),
                      max_bytes=caps.get("max_bytes", 1_000_000), max_connections=caps.get("max_connections", 50),
                      via=via, proxy_tls=proxy_tls)


async def get_via(proxy: ReadEgress, host: str, port: int,
                  path: str = "/x") -> tuple[bytes, asyncio.StreamReader, asyncio.StreamWriter]:
    """A plain-http GET through the egress, absolute-form as Chromium sends it: the answer's head, and the
    connection."""
    return await exchange(proxy, f"GET http://{host}:{port}{path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())


async def exchange(proxy: ReadEgress, raw: bytes) -> tuple[bytes, asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    writer.write(raw)
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    return head, reader, writer


async def test_connect_outside_the_allowed_block_is_refused_before_any_connection():
    async with Outsider() as outsider:
        proxy = await egress().start()
        try:
            proxy.expect("127.0.0.2", outsider.port)
            head, _, writer = await exchange(proxy, f"CONNECT 127.0.0.2:{outsider.port} HTTP/1.1\r\n\r\n".encode())
            writer.close()
            assert head.startswith(b"HTTP/1.1 403")
            assert proxy.refused and "127.0.0.2" in proxy.refused[0] and "METASEARCH_ALLOW_PRIVATE_HOSTS" in proxy.refused[0]
        finally:
            await proxy.close()
    assert outsider.connections == 0 and proxy.connections == 0


async def test_a_name_is_resolved_once_checked_and_connected_by_the_checked_address(standins):
    site = await standins(routes({"/x": page("hello")}))
    port = int(site.url.rsplit(":", 1)[1])
    async with Outsider() as outsider:
        dns = StandInDNS({"inside.example": ["127.0.0.1"], "sneaky.example": ["127.0.0.1", "127.0.0.2"]})
        proxy = await egress(dns).start()
        try:
            for host in ("inside.example", "sneaky.example"):
                proxy.expect(host, port)
            ok, reader, writer = await get_via(proxy, "inside.example", port)
            assert ok.startswith(b"HTTP/1.1 200") and (await reader.readexactly(5)) == b"hello"
            writer.close()
            # One address of the name is outside the block: the name is refused, whichever comes first.
            refused, _, writer = await exchange(proxy, f"CONNECT sneaky.example:{port} HTTP/1.1\r\n\r\n".encode())
            writer.close()
            assert refused.startswith(b"HTTP/1.1 403") and "127.0.0.2" in proxy.refused[-1]
        finally:
            await proxy.close()
    assert proxy.connected == [("inside.example", "127.0.0.1", port)]
    assert dns.asked == ["inside.example", "sneaky.example"] and outsider.connections == 0


async def test_what_the_page_did_not_ask_for_is_refused_without_a_warning(standins):
    site = await standins(routes({"/x": page("hello")}))
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await egress().start()
    try:
        head, _, writer = await exchange(proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        writer.close()
    finally:
        await proxy.close()
    assert head.startswith(b"HTTP/1.1 403") and proxy.refused == [] and proxy.unasked == [f"127.0.0.1:{port}"]
    assert site.requests == []


async def test_plain_http_is_relayed_with_its_framing_and_the_connection_kept(standins):
    async def chunked(request, standin):
        from aiohttp import web

        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        for piece in (b"one ", b"two ", b"three"):
            await response.write(piece)
        await response.write_eof()
        return response

    async def echo(request, standin):
        from aiohttp import web

        return web.Response(text="got " + (await request.text()))

    site = await standins(routes({"/chunked": chunked, "/echo": echo}))
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await egress().start()
    try:
        proxy.expect("127.0.0.1", port)
        head, reader, writer = await exchange(proxy, f"GET http://127.0.0.1:{port}/chunked HTTP/1.1\r\nHost: "
                                                     f"127.0.0.1:{port}\r\nProxy-Connection: keep-alive\r\n\r\n".encode())
        assert head.startswith(b"HTTP/1.1 200") and b"chunked" in head.lower()
        body = await asyncio.wait_for(reader.readuntil(b"0\r\n\r\n"), 10)
        assert b"one " in body and b"three" in body
        # The same client connection carries the next request (Chromium keeps its proxy connections).
        writer.write(f"POST http://127.0.0.1:{port}/echo HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 5"
                     f"\r\nContent-Type: text/plain\r\n\r\nhello".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        assert head.startswith(b"HTTP/1.1 200") and await reader.readexactly(length) == b"got hello"
        writer.close()
    finally:
        await proxy.close()
    assert [seen.path for seen in site.requests] == ["/chunked", "/echo"]
    assert all("proxy-connection" not in {k.lower() for k in seen.headers} for seen in site.requests)


async def test_the_bytes_a_page_pulls_in_are_capped(standins):
    site = await standins(routes({"/big": page("x" * 200_000)}))
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await egress(max_bytes=50_000).start()
    try:
        proxy.expect("127.0.0.1", port)
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        writer.write(f"GET http://127.0.0.1:{port}/big HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        await writer.drain()
        received = await asyncio.wait_for(reader.read(-1), 10)  # cut off: the end comes early
        writer.close()
    finally:
        await proxy.close()
    assert len(received) < 200_000 and proxy.over_cap is not None and "50000 bytes" in proxy.over_cap


@pytest.mark.parametrize("request_line", [b"GET ftp://127.0.0.1/x HTTP/1.1", b"GET file:///etc/passwd HTTP/1.1"])
async def test_only_http_goes_out(request_line):
    proxy = await egress().start()
    try:
        head, _, writer = await exchange(proxy, request_line + b"\r\n\r\n")
        writer.close()
    finally:
        await proxy.close()
    assert head.startswith(b"HTTP/1.1 403") and proxy.connections == 0


async def test_a_connection_announced_a_moment_late_is_let_through(standins):
    """A WebSocket is announced by an event that may arrive just after its CONNECT: it is waited for."""
    site = await standins(routes({"/x": page("hello")}))
    port = int(site.url.rsplit(":", 1)[1])
    proxy = await egress().start()
    try:
        asyncio.get_running_loop().call_later(0.1, proxy.expect, "127.0.0.1", port)
        head, _, writer = await exchange(proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        writer.close()
    finally:
        await proxy.close()
    assert head.startswith(b"HTTP/1.1 200") and proxy.unasked == []


# ----- framing: what is relayed is exactly what was sent, however it arrives -----
from hypothesis import given, settings as hypothesis_settings, strategies as st  # noqa: E402

from plugin.reading.render_egress import _relay_body  # noqa: E402


class _Sink:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        pass


def _feed(data: bytes, cuts: list[int], after: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    for start, end in zip(points, points[1:]):
        reader.feed_data(data[start:end])
    reader.feed_data(after)
    reader.feed_eof()
    return reader


@hypothesis_settings(deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=300), max_size=6), st.lists(st.integers(0, 3000), max_size=8),
       st.binary(max_size=40))
def test_a_chunked_body_is_relayed_whole_and_ends_where_its_framing_does(chunks, cuts, after):
    encoded = b"".join(b"%x\r\n" % len(c) + c + b"\r\n" for c in chunks) + b"0\r\n\r\n"
    counted: list[int] = []

    async def relay() -> tuple[bool, bytes, bytes]:
        reader, sink = _feed(encoded, cuts, after), _Sink()
        ended = await _relay_body([("Transfer-Encoding", "chunked")], reader, sink, counted.append)
        return ended, bytes(sink.data), await reader.read()

    ended, relayed, rest = asyncio.run(relay())
    assert ended and relayed == encoded and rest == after  # the next message is left for the next read
    assert sum(counted) <= len(encoded)


@hypothesis_settings(deadline=None)
@given(st.binary(max_size=2000), st.lists(st.integers(0, 2000), max_size=8), st.binary(max_size=40))
def test_a_body_with_a_length_is_relayed_to_its_length(body, cuts, after):
    async def relay() -> tuple[bool, bytes, bytes]:
        reader, sink = _feed(body, cuts, after), _Sink()
        ended = await _relay_body([("Content-Length", str(len(body)))], reader, sink, lambda size: None)
        return ended, bytes(sink.data), await reader.read()

    assert asyncio.run(relay()) == (True, body, after)


# ----- behind the operator's proxy -----
async def test_behind_an_http_proxy_every_request_is_a_tunnel_to_the_checked_address(standins):
    """A name is resolved and checked here, and the proxy is asked for the checked address (never the name,
    so nothing is looked up again behind the guard), with the proxy URL's credentials; an address outside
    the allowed block is refused before the proxy hears of it."""
    from test_proxies import HttpProxy

    site = await standins(routes({"/x": page("hello")}))
    port = int(site.url.rsplit(":", 1)[1])
    operator = await HttpProxy(credentials=("agent", "s3cret")).start()
    asked_for: list[str] = []

    def via(url: str) -> str:
        asked_for.append(url)
        return operator.url("agent", "s3cret")

    async with Outsider() as outsider:
        dns = StandInDNS({"inside.example": ["127.0.0.1"]})
        proxy = await egress(dns, via=via).start()
        try:
            for host, at in (("inside.example", port), ("127.0.0.2", outsider.port)):
                proxy.expect(host, at)
            ok, reader, writer = await get_via(proxy, "inside.example", port)
            assert ok.startswith(b"HTTP/1.1 200") and (await reader.readexactly(5)) == b"hello"
            writer.close()
            tunnel, reader, writer = await exchange(proxy, f"CONNECT inside.example:{port} HTTP/1.1\r\n\r\n".encode())
            assert tunnel.startswith(b"HTTP/1.1 200")
            writer.write(f"GET /x HTTP/1.1\r\nHost: inside.example:{port}\r\nConnection: close\r\n\r\n".encode())
            assert (await asyncio.wait_for(reader.read(), 10)).endswith(b"hello")
            writer.close()
            refused, _, writer = await exchange(proxy, f"CONNECT 127.0.0.2:{outsider.port} HTTP/1.1\r\n\r\n".encode())
            writer.close()
            assert refused.startswith(b"HTTP/1.1 403")
        finally:
            await proxy.close()
            await operator.stop()
        assert outsider.connections == 0
    assert [(method, target) for method, target, _ in operator.seen] == [("CONNECT", f"127.0.0.1:{port}")] * 2
    assert all(headers["proxy-authorization"].startswith("Basic ") for _, _, headers in operator.seen)
    assert asked_for == [f"http://inside.example:{port}/", f"https://inside.example:{port}/"]
    assert dns.asked == ["inside.example", "inside.example"] and proxy.proxy_failures == []


async def test_behind_a_socks5_proxy_the_checked_address_is_asked_for(standins):
    from test_proxies import Socks5Proxy

    site = await standins(routes({"/x": page("hello")}))
    port = int(site.url.rsplit(":", 1)[1])
    operator = await Socks5Proxy(credentials=("agent", "s3cret")).start()
    dns = StandInDNS({"inside.example": ["127.0.0.1"]})
    proxy = await egress(dns, via=lambda url: operator.url("agent", "s3cret", scheme="socks5h")).start()
    try:
        proxy.expect("inside.example", port)
        ok, reader, writer = await get_via(proxy, "inside.example", port)
        assert ok.startswith(b"HTTP/1.1 200") and (await reader.readexactly(5)) == b"hello"
        writer.close()
    finally:
        await proxy.close()
        await operator.stop()
    assert operator.seen == [("agent", "ipv4", "127.0.0.1", port)]


async def test_a_proxy_that_will_not_carry_a_request_is_said_without_its_password(standins):
    from test_proxies import HttpProxy

    site = await standins(routes({"/x": page("hello")}))
    port = int(site.url.rsplit(":", 1)[1])
    operator = await HttpProxy(credentials=("agent", "s3cret")).start()
    proxy = await egress(via=lambda url: operator.url("agent", "wrong-password")).start()
    try:
        proxy.expect("127.0.0.1", port)
        answer, _, writer = await exchange(proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        writer.close()
    finally:
        await proxy.close()
        await operator.stop()
    assert answer.startswith(b"HTTP/1.1 502")
    assert len(proxy.proxy_failures) == 1 and "407" in proxy.proxy_failures[0]
    assert "wrong-password" not in proxy.proxy_failures[0] and "agent" not in proxy.proxy_failures[0]


async def test_an_https_proxy_is_reached_over_tls_checked_against_the_bundle(standins, tmp_path):
    """TLS to an https:// proxy, its certificate checked (the CA given, as METASEARCH_CA_BUNDLE gives it);
    a proxy whose certificate is not trusted carries nothing, and says so."""
    import ssl

    from test_proxies import HttpProxy, throwaway_ca

    server, ca_file = throwaway_ca(tmp_path)
    trusted = ssl.create_default_context(cafile=str(ca_file))
    site = await standins(routes({"/x": page("hello")}))
    port = int(site.url.rsplit(":", 1)[1])
    operator = await HttpProxy(credentials=("agent", "s3cret"), ssl_context=server).start()
    secure = operator.url("agent", "s3cret", scheme="https")
    try:
        for context, works in ((trusted, True), (None, False)):
            proxy = await egress(via=lambda url: secure, proxy_tls=context).start()
            try:
                proxy.expect("127.0.0.1", port)
                head, _, writer = await get_via(proxy, "127.0.0.1", port)
                writer.close()
            finally:
                await proxy.close()
            if works:
                assert head.startswith(b"HTTP/1.1 200") and proxy.proxy_failures == []
            else:
                assert head.startswith(b"HTTP/1.1 502")
                assert "CERTIFICATE_VERIFY_FAILED" in proxy.proxy_failures[0] and "s3cret" not in proxy.proxy_failures[0]
    finally:
        await operator.stop()
    assert [(method, target) for method, target, _ in operator.seen] == [("CONNECT", f"127.0.0.1:{port}")]


@pytest.mark.parametrize("status_line", [b"garbage", b"HTTP/1.1", b"HTTP/1.1 abc Bad", b""])
async def test_an_upstream_answer_without_a_status_is_a_bad_gateway_not_a_crash(status_line):
    """A plain-http server whose answer has no readable status line: the page is answered 502 (as any
    upstream failure is), and nothing escapes the egress as an unhandled exception."""
    async def broken(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(status_line + b"\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(broken, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    unhandled: list[dict] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: unhandled.append(context))
    proxy = await egress().start()
    try:
        proxy.expect("127.0.0.1", port)
        head, _, writer = await get_via(proxy, "127.0.0.1", port)
        writer.close()
        assert head.startswith(b"HTTP/1.1 502"), head
    finally:
        await proxy.close()
        loop.set_exception_handler(previous)
        server.close()
        await server.wait_closed()
    assert unhandled == []
