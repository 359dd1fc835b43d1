"""The transport's guarantees on both of its paths (issue 26, item 3): the browser client (curl_cffi) and the
plain one (aiohttp) alike cap bodies, refuse gzip/br/zstd bombs and truncated streams, cut a stalled body,
leave no transfer running when cancelled, decode charsets, follow redirects hop by hop with the exchange's
cookies, reuse one connection per upstream, and report honest statuses. Loopback stand-ins only."""

from __future__ import annotations

import asyncio
import gzip
import tracemalloc
import zlib

import pytest
from aiohttp import web

from engines.base import Request
from engines.browser import CHROME
from plugin.infra.admission import EngineClock
from plugin.infra.transport import Transport, TransportError
from plugin.settings import Settings
from standins import bing_page, drip, hang, page

pytestmark = pytest.mark.usefixtures("both_transports")

TEXT = b"<html><body><p>" + b"plain words for a plain page " * 400 + b"</p></body></html>"


def compress(encoding: str, body: bytes) -> bytes:
    if encoding == "gzip":
        return gzip.compress(body)
    if encoding == "br":
        import brotli

        return brotli.compress(body, quality=5)  # the default, 11, takes seconds over a 64 MB bomb
    try:
        from compression import zstd
    except ImportError:
        from backports import zstd
    return zstd.compress(body)


def transport_for(url: str, **overrides) -> Transport:
    return Transport(Settings(endpoints={"bing": url}, **overrides))


async def get(transport: Transport, path: str = "/search", clock: EngineClock | None = None, **kwargs):
    url = "https://www.bing.com" + path
    return await transport.fetch(Request("GET", url, headers=CHROME.navigate(url)), "bing",
                                 clock or EngineClock(10, 10), **kwargs)


async def fetch_once(url: str, **overrides):
    transport = transport_for(url, **overrides)
    try:
        return await get(transport)
    finally:
        await transport.close()


@pytest.mark.parametrize("encoding", ["gzip", "br", "zstd"])
async def test_every_encoding_a_browser_accepts_is_decoded(standins, encoding):
    engine = await standins(page(compress(encoding, TEXT), headers={"Content-Encoding": encoding}))
    response = await fetch_once(engine.url)
    assert response.body == TEXT and "plain words" in response.text
    sent = engine.requests[0].headers.get("Accept-Encoding", "")
    assert "gzip" in sent


@pytest.mark.parametrize("wbits", [15, -15], ids=["zlib", "raw"])
async def test_deflate_is_decoded_with_or_without_its_zlib_header(standins, wbits):
    """`Content-Encoding: deflate` as RFC 9110 has it (zlib) and as older servers send it (raw deflate, which
    browsers read too); a truncated raw stream is still refused."""
    packer = zlib.compressobj(wbits=wbits)
    whole = packer.compress(TEXT) + packer.flush()
    engine = await standins(page(whole, headers={"Content-Encoding": "deflate"}))
    response = await fetch_once(engine.url)
    assert response.body == TEXT and "plain words" in response.text
    engine.behaviour = page(whole[: len(whole) // 2], headers={"Content-Encoding": "deflate"})
    with pytest.raises(TransportError) as caught:
        await fetch_once(engine.url)
    assert "truncated" in caught.value.detail


async def refused_within_memory(url: str, cap: int) -> tuple[TransportError, int]:
    """The refusal of a read of `url` under a `cap`-byte cap, and the peak memory traced while reading it."""
    transport = transport_for(url, max_response_bytes=cap)
    tracemalloc.start()
    try:
        with pytest.raises(TransportError) as refused:
            await get(transport)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await transport.close()
    return refused.value, peak


@pytest.mark.parametrize("encoding", ["gzip", "br", "zstd"])
async def test_a_bomb_in_any_encoding_stops_at_the_cap_in_memory(standins, encoding):
    bomb = compress(encoding, bytes(64 << 20))
    assert len(bomb) < 100_000
    engine = await standins(page(bomb, headers={"Content-Encoding": encoding}))
    cap = 1_000_000
    refused, peak = await refused_within_memory(engine.url, cap)
    assert refused.reason == "too_large" and f"{cap}-byte cap" in refused.detail
    assert peak < 8 * cap, f"peak {peak / 1e6:.1f} MB inflating {encoding} against a {cap / 1e6:.0f} MB cap"


def stacked(codings: list[str], body: bytes) -> bytes:
    """`body` with each coding applied in the order listed (Content-Encoding: gzip, br is br(gzip(body)))."""
    for coding in codings:
        body = compress(coding, body)
    return body


@pytest.mark.parametrize(("codings", "lines"), [
    (["gzip", "br"], 1), (["br", "gzip"], 1), (["zstd", "gzip"], 1), (["gzip", "gzip"], 1),
    (["gzip", "br"], 2), (["gzip", "zstd", "br"], 3),
])
async def test_several_codings_are_decoded_in_reverse_order_of_listing(standins, codings, lines):
    """RFC 9110 8.4: the codings are listed in the order they were applied, in one header or over several lines."""
    from multidict import CIMultiDict

    if lines == 1:
        said = [("Content-Encoding", ", ".join(codings))]
    else:
        said = [("Content-Encoding", c) for c in codings]
    engine = await standins(page(stacked(codings, TEXT), headers=CIMultiDict(said)))
    response = await fetch_once(engine.url)
    assert response.body == TEXT and "plain words" in response.text


@pytest.mark.parametrize("codings", [["gzip", "gzip"], ["gzip", "br"], ["zstd", "gzip"]])
async def test_a_bomb_through_two_codings_stops_at_the_cap_in_memory(standins, codings):
    bomb = stacked(codings, bytes(64 << 20))
    assert len(bomb) < 100_000
    engine = await standins(page(bomb, headers={"Content-Encoding": ", ".join(codings)}))
    cap = 1_000_000
    refused, peak = await refused_within_memory(engine.url, cap)
    assert refused.reason == "too_large" and f"{cap}-byte cap" in refused.detail
    assert peak < 8 * cap, f"peak {peak / 1e6:.1f} MB inflating {codings} against a {cap / 1e6:.0f} MB cap"


async def test_a_bomb_in_the_middle_layer_stops_at_the_cap_in_memory(standins):
    """A small page whose inner gzip stream is followed by 64 MB of zeros (which gzip's reader would keep
    as trailing data): the inner layer itself is bounded, not only the page."""
    inner = gzip.compress(TEXT) + bytes(64 << 20)
    bomb = gzip.compress(inner)
    engine = await standins(page(bomb, headers={"Content-Encoding": "gzip, gzip"}))
    cap = 1_000_000
    refused, peak = await refused_within_memory(engine.url, cap)
    assert refused.reason == "too_large"
    assert peak < 8 * cap, f"peak {peak / 1e6:.1f} MB against a {cap / 1e6:.0f} MB cap"


async def test_an_unknown_or_too_deep_stack_of_codings_is_refused(standins):
    engine = await standins(page(gzip.compress(TEXT), headers={"Content-Encoding": "gzip, compress"}))
    with pytest.raises(TransportError) as caught:
        await fetch_once(engine.url)
    assert "unsupported content encoding 'compress'" in caught.value.detail
    engine.behaviour = page(stacked(["gzip"] * 6, TEXT), headers={"Content-Encoding": ", ".join(["gzip"] * 6)})
    with pytest.raises(TransportError) as caught:
        await fetch_once(engine.url)
    assert "6 codings stacked" in caught.value.detail


@pytest.mark.parametrize("encoding", ["gzip", "br", "zstd"])
async def test_a_truncated_compressed_body_is_an_error_not_a_shorter_page(standins, encoding):
    whole = compress(encoding, TEXT)
    engine = await standins(page(whole[: len(whole) // 2], headers={"Content-Encoding": encoding}))
    with pytest.raises(TransportError) as caught:
        await fetch_once(engine.url)
    assert caught.value.kind == "error" and "truncated" in caught.value.detail


async def test_a_corrupt_compressed_body_is_an_error(standins):
    whole = compress("br", TEXT)
    engine = await standins(page(whole[:10] + b"\xff" * 40 + whole[50:], headers={"Content-Encoding": "br"}))
    with pytest.raises(TransportError) as caught:
        await fetch_once(engine.url)
    assert "could not be decompressed" in caught.value.detail


async def test_a_stalled_body_is_cut_by_the_engines_deadline(standins):
    engine = await standins(drip(b"<p>" + b"x" * 200, interval=0.5))
    transport = transport_for(engine.url)
    try:
        with pytest.raises(TransportError) as caught:
            await asyncio.wait_for(get(transport, clock=EngineClock(0.6, 10)), 30)
    finally:
        await transport.close()
    assert caught.value.kind == "timeout"


async def test_a_cancelled_request_leaves_no_transfer_running():
    # A server that takes the request, never answers, and notes when its client hangs up.
    asked, gone = asyncio.Event(), asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        asked.set()
        await reader.read()  # until the client closes the connection
        gone.set()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    transport = transport_for(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")
    try:
        task = asyncio.create_task(get(transport))
        await asyncio.wait_for(asked.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The server sees its client go at once: the transfer was stopped, not left to run in the background.
        await asyncio.wait_for(gone.wait(), 10)
    finally:
        await transport.close()
        server.close()


@pytest.mark.parametrize("charset, text", [("shift_jis", "東京の天気は晴れです"), ("gbk", "北京今天天气很好"),
                                           ("windows-1251", "Привет, мир")])
async def test_a_body_is_decoded_with_its_declared_charset(standins, charset, text):
    body = f"<html><body><p>{text}</p></body></html>".encode(charset)
    engine = await standins(page(body, content_type=f"text/html; charset={charset}"))
    response = await fetch_once(engine.url)
    assert text in response.text


async def test_redirects_are_followed_hop_by_hop_with_the_exchanges_cookies(standins):
    async def handler(request, standin):
        if request.path == "/search":
            response = web.Response(status=302, headers={"Location": "/hop"})
            response.set_cookie("first", "1")
            return response
        if request.path == "/hop":
            response = web.Response(status=307, headers={"Location": "/final?x=1"})
            response.set_cookie("second", "2")
            return response
        return web.Response(text="<p>arrived</p>", content_type="text/html")

    engine = await standins(handler)
    transport = transport_for(engine.url)
    jar: dict[str, str] = {}
    try:
        response = await get(transport, cookies=jar)
    finally:
        await transport.close()
    assert [seen.path for seen in engine.requests] == ["/search", "/hop", "/final"]
    assert response.status == 200 and response.url.endswith("/final?x=1") and "arrived" in response.text
    # A cookie set by a hop goes with the hops after it, and stays in the exchange's jar.
    assert engine.requests[1].headers.get("Cookie") == "first=1"
    assert engine.requests[2].headers.get("Cookie") == "first=1; second=2"
    assert jar == {"first": "1", "second": "2"}


async def test_a_cookie_a_hop_expires_goes_with_no_later_hop(standins):
    """A server deletes a cookie by setting it expired: an Expires date past, or a Max-Age of 0 or below (only
    0 and -1 were taken before; an Expires date in the past was not, and the deleted cookie went along)."""
    async def handler(request, standin):
        if request.path == "/search":
            response = web.Response(status=302, headers={"Location": "/hop"})
            for name in ("session", "consent", "stale", "kept"):
                response.set_cookie(name, "1")
            return response
        if request.path == "/hop":
            response = web.Response(status=302, headers={"Location": "/final"})
            response.headers.add("Set-Cookie", "session=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/")
            response.headers.add("Set-Cookie", "consent=gone; Max-Age=-5; Path=/")
            response.headers.add("Set-Cookie", "stale=x; Max-Age=0; Expires=Wed, 01 Jan 2098 00:00:00 GMT")
            response.headers.add("Set-Cookie", "kept=2; Expires=Wed, 01 Jan 2098 00:00:00 GMT; Path=/")
            return response
        return web.Response(text="<p>arrived</p>", content_type="text/html")

    engine = await standins(handler)
    transport = transport_for(engine.url)
    jar: dict[str, str] = {}
    try:
        await get(transport, cookies=jar)
    finally:
        await transport.close()
    assert engine.requests[2].headers.get("Cookie") == "kept=2"
    assert jar == {"kept": "2"}


async def test_a_form_answered_with_303_is_fetched_with_get(standins):
    async def handler(request, standin):
        if request.method == "POST":
            return web.Response(status=303, headers={"Location": "/results"})
        return web.Response(text="<p>results</p>", content_type="text/html")

    engine = await standins(handler)
    transport = transport_for(engine.url)
    try:
        response = await transport.fetch(Request("POST", "https://www.bing.com/search", form=(("q", "x"),)), "bing",
                                         EngineClock(10, 10))
    finally:
        await transport.close()
    assert [(seen.method, seen.path) for seen in engine.requests] == [("POST", "/search"), ("GET", "/results")]
    assert engine.requests[1].body == b"" and "Content-Type" not in engine.requests[1].headers
    assert "results" in response.text


async def test_more_redirects_than_allowed_is_an_error(standins):
    async def loop(request, standin):
        return web.Response(status=302, headers={"Location": f"/r{len(standin.requests)}"})

    engine = await standins(loop)
    with pytest.raises(TransportError) as caught:
        await fetch_once(engine.url, max_redirects=3)
    assert "more than 3 redirects" in caught.value.detail and len(engine.requests) == 4


async def test_a_page_read_follows_no_redirect_itself(standins):
    engine = await standins(page("", status=302, headers={"Location": "/elsewhere"}))
    transport = transport_for(engine.url)
    try:
        response = await get(transport, follow_redirects=False)
    finally:
        await transport.close()
    assert response.status == 302 and response.headers["Location"] == "/elsewhere" and len(engine.requests) == 1


async def test_one_connection_per_upstream_is_reused(standins):
    ports: list[int] = []

    async def handler(request, standin):
        ports.append(request.transport.get_extra_info("peername")[1])
        return web.Response(text=bing_page([("t", "https://a.example/", "s")]), content_type="text/html")

    engine = await standins(handler)
    transport = transport_for(engine.url)
    try:
        for _ in range(3):
            await get(transport)
    finally:
        await transport.close()
    assert len(ports) == 3 and len(set(ports)) == 1  # one client port: one connection


async def test_an_idle_browser_pool_is_closed_and_the_next_request_opens_a_fresh_one(standins, both_transports):
    """The browser client's pool (curl_cffi wakes every 100 ms while it is open) closes after `pool_idle_s`
    without a request; requests that keep coming keep it, and a request after the close opens a new one."""
    if both_transports != "browser":
        pytest.skip("the plain client's pool is aiohttp's, which has no timer to stop")
    ports: list[int] = []

    async def handler(request, standin):
        ports.append(request.transport.get_extra_info("peername")[1])
        return web.Response(text=bing_page([("t", "https://a.example/", "s")]), content_type="text/html")

    engine = await standins(handler)
    transport = transport_for(engine.url, pool_idle_s=0.5)
    try:
        for _ in range(4):  # a request every 0.2 s: never idle for 0.5 s
            await get(transport)
            kept = transport.pool.handle
            await asyncio.sleep(0.2)
        assert transport.pool is not None and transport.pool.handle is kept and len(set(ports)) == 1
        await asyncio.sleep(0.6)
        assert transport.pool is None or transport.pool.handle is None  # closed: nothing wakes any more
        await get(transport)
        assert transport.pool.handle is not None and transport.pool.handle is not kept
    finally:
        await transport.close()
    assert len(ports) == 5 and len(set(ports)) == 2  # the first connection, then a fresh one


@pytest.mark.parametrize("behaviour, status", [
    (page("slow down", status=429, headers={"Retry-After": "120"}), "ratelimited"),
    (page("<html><body>Please solve this CAPTCHA to continue</body></html>", status=403), "blocked"),
    (page("down", status=503), "error"),
    (hang(60), "timeout"),
])
async def test_statuses_stay_honest(standins, behaviour, status):
    from plugin.pipeline.searcher import Searcher

    engine = await standins(behaviour)
    searcher = Searcher(Settings(endpoints={"bing": engine.url}, engines=["bing"], timeout_ms=800, deadline_ms=3000))
    try:
        response = await searcher.search("honest statuses")
    finally:
        await searcher.close()
    assert response.engines[0].status == status, response.engines[0]
