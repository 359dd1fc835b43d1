"""The transport's edges (issue 23 survivors): the size cap is a maximum, not a limit one byte short of
it, with or without a declared length and compressed or not; and an engine's own `Cookie` header wins
over a cookie the server set earlier in the same exchange."""

from __future__ import annotations

import gzip

import pytest
from aiohttp import web

from engines.base import Request
from plugin.infra.admission import EngineClock
from plugin.infra.transport import Transport, TransportError
from plugin.settings import Settings

# Every guarantee on both paths: the browser client (curl_cffi) and the plain one (aiohttp).
pytestmark = pytest.mark.usefixtures("both_transports")

CAP = 10_000  # the smallest cap the settings allow


def sized(total: int, *, declared: bool, compressed: bool):
    """A behaviour answering `total` bytes of text (gzip-compressed on the wire when asked), with a
    Content-Length or streamed in chunks without one."""
    body = (b"<p>" + b"x" * total)[:total]
    wire = gzip.compress(body) if compressed else body

    async def handler(request, standin):
        headers = {"Content-Type": "text/html; charset=utf-8", **({"Content-Encoding": "gzip"} if compressed else {})}
        if declared:
            return web.Response(body=wire, headers=headers)
        response = web.StreamResponse(headers=headers)
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(wire), 1024):
            await response.write(wire[start:start + 1024])
        await response.write_eof()
        return response

    return handler


async def fetch(url: str, **kwargs):
    transport = Transport(Settings(endpoints={"bing": url}, max_response_bytes=CAP))
    try:
        return await transport.fetch(Request("GET", "https://www.bing.com/search"), "bing", EngineClock(10, 10),
                                     **kwargs)
    finally:
        await transport.close()


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
@pytest.mark.parametrize("compressed", [False, True], ids=["identity", "gzip"])
async def test_a_body_of_exactly_the_cap_is_read_and_one_byte_more_is_refused(standins, declared, compressed):
    exact = await standins(sized(CAP, declared=declared, compressed=compressed))
    response = await fetch(exact.url)
    assert len(response.body) == CAP
    over = await standins(sized(CAP + 1, declared=declared, compressed=compressed))
    with pytest.raises(TransportError) as refused:
        await fetch(over.url)
    assert refused.value.reason == "too_large" and f"{CAP}-byte cap" in refused.value.detail


async def test_an_engines_own_cookie_header_wins_over_a_cookie_set_earlier_in_the_exchange(standins):
    async def handler(request, standin):
        response = web.Response(text="<p>ok</p>", content_type="text/html")
        if request.path == "/home":
            response.set_cookie("token", "from-server")
            response.set_cookie("session", "kept")
        return response

    site = await standins(handler)
    transport = Transport(Settings(endpoints={"bing": site.url}))
    jar: dict[str, str] = {}
    try:
        clock = EngineClock(10, 10)
        await transport.fetch(Request("GET", "https://www.bing.com/home"), "bing", clock, cookies=jar)
        follow_up = Request("GET", "https://www.bing.com/search", headers={"Cookie": "token=the-engines; own=1"})
        await transport.fetch(follow_up, "bing", clock, cookies=jar)
    finally:
        await transport.close()
    sent = dict(part.split("=", 1) for part in site.requests[1].headers["Cookie"].split("; "))
    assert sent == {"token": "the-engines", "session": "kept", "own": "1"}
