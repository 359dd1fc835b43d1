"""Loopback stand-ins for search engines: real aiohttp servers on 127.0.0.1.

A `StandIn` answers every request with whatever its current `behaviour`
returns (a page, a status, a hang, a slow drip), and records what it was asked,
so tests can check concurrency, deadlines, cooldowns and request counts.
"""

from __future__ import annotations

import asyncio
import html
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable
from urllib.parse import parse_qs

from aiohttp import web


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    form: dict[str, list[str]]
    body: bytes
    headers: dict[str, str]
    arrived: float


Behaviour = Callable[[web.Request, "StandIn"], Awaitable[web.StreamResponse]]


@dataclass
class StandIn:
    behaviour: Behaviour
    requests: list[Seen] = field(default_factory=list)
    runner: web.AppRunner | None = None
    url: str = ""
    finished: list[float] = field(default_factory=list)

    async def start(self) -> "StandIn":
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        form = parse_qs(body.decode("utf-8", "replace")) if request.content_type.endswith("urlencoded") else {}
        self.requests.append(Seen(request.method, request.path, parse_qs(request.query_string), form, body,
                                  dict(request.headers), time.monotonic()))
        try:
            return await self.behaviour(request, self)
        finally:
            self.finished.append(time.monotonic())

    async def asked(self, seconds: float = 30.0) -> bool:
        """Whether a request has come, waiting up to `seconds` for the first (a test waiting until the
        request it set off is out before it acts)."""
        for _ in range(round(seconds / 0.01)):
            if self.requests:
                break
            await asyncio.sleep(0.01)
        return bool(self.requests)

    def queries(self, name: str = "q") -> list[str]:
        """The query text of every request, from the URL or the form."""
        found = []
        for seen in self.requests:
            values = seen.query.get(name) or seen.form.get(name) or [""]
            found.append(values[0])
        return found


# ----- behaviours -----
def page(body: str | bytes, status: int = 200, delay: float = 0.0, content_type: str = "text/html; charset=utf-8",
         headers: dict[str, str] | None = None) -> Behaviour:
    data = body.encode("utf-8") if isinstance(body, str) else body

    async def handler(request: web.Request, standin: StandIn) -> web.StreamResponse:
        if delay:
            await asyncio.sleep(delay)
        response = web.Response(body=data, status=status, headers=headers or {})
        response.headers["Content-Type"] = content_type
        return response

    return handler


def hang(seconds: float = 60.0) -> Behaviour:
    async def handler(request: web.Request, standin: StandIn) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return web.Response(text="too late")

    return handler


def drip(body: bytes, interval: float = 1.0, chunk: int = 1) -> Behaviour:
    """Send the headers, then the body a few bytes at a time."""

    async def handler(request: web.Request, standin: StandIn) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": "text/html; charset=utf-8"})
        await response.prepare(request)
        for i in range(0, len(body), chunk):
            await response.write(body[i:i + chunk])
            await asyncio.sleep(interval)
        await response.write_eof()
        return response

    return handler


def sequence(*behaviours: Behaviour) -> Behaviour:
    """The n-th request gets the n-th behaviour (the last one repeats)."""

    async def handler(request: web.Request, standin: StandIn) -> web.StreamResponse:
        index = min(len(standin.requests) - 1, len(behaviours) - 1)
        return await behaviours[index](request, standin)

    return handler


# ----- engine-shaped pages -----
def bing_page(rows: list[tuple[str, str, str]]) -> str:
    items = "".join(
        f'<li class="b_algo"><h2><a href="{html.escape(url)}">{html.escape(title)}</a></h2>'
        f'<div class="b_caption"><p>{html.escape(snippet)}</p></div></li>'
        for title, url, snippet in rows
    )
    return f'<html><body><ol id="b_results">{items}</ol></body></html>'


def bing_no_results(query: str) -> str:
    return (f'<html><body><ol id="b_results"><li class="b_no"><h1>There are no results for '
            f'<strong>{html.escape(query)}</strong></h1></li></ol></body></html>')


def ddg_page(rows: list[tuple[str, str, str]]) -> str:
    items = "".join(
        '<div class="result results_links results_links_deep web-result"><div class="links_main result__body">'
        f'<h2 class="result__title"><a rel="nofollow" class="result__a" href="{html.escape(url)}">'
        f'{html.escape(title)}</a></h2><a class="result__snippet" href="{html.escape(url)}">{html.escape(snippet)}</a>'
        '</div></div>'
        for title, url, snippet in rows
    )
    return f'<html><body><div id="links" class="results">{items}</div></body></html>'


def ddg_wrapped(url: str) -> str:
    from urllib.parse import quote

    return f"//duckduckgo.com/l/?uddg={quote(url, safe='')}&rut=abc123"


def huge(total_bytes: int, chunk: bytes = b"<p>" + b"x" * 65533) -> Behaviour:
    """A body of `total_bytes`, streamed from one reused chunk (the server allocates nothing per chunk)."""

    async def handler(request: web.Request, standin: StandIn) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": "text/html; charset=utf-8"})
        await response.prepare(request)
        sent = 0
        try:
            while sent < total_bytes:
                await response.write(chunk)
                sent += len(chunk)
            await response.write_eof()
        except (ConnectionError, RuntimeError):
            pass  # the client hung up at its size cap, as it should
        return response

    return handler


def truncated_gzip(body: bytes) -> Behaviour:
    import gzip

    compressed = gzip.compress(body)
    cut = compressed[: len(compressed) // 2]

    async def handler(request: web.Request, standin: StandIn) -> web.StreamResponse:
        return web.Response(body=cut, headers={"Content-Type": "text/html; charset=utf-8",
                                               "Content-Encoding": "gzip"})

    return handler


def redirect_loop() -> Behaviour:
    async def handler(request: web.Request, standin: StandIn) -> web.StreamResponse:
        raise web.HTTPFound(location=str(request.rel_url))

    return handler
