"""Pages for the page-reading tests: an article with boilerplate, a real (hand-built) PDF, loopback routing
and a stand-in DNS, all served by the loopback stand-ins on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
from typing import Mapping

from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from standins import Behaviour, StandIn, page

ROBOTS_OPEN = page("User-agent: *\nDisallow:\n", content_type="text/plain")


def reading_settings(**overrides):
    """Settings for reads of the loopback stand-ins: 127.0.0.1/32 allowed (no other private address), an
    in-memory store, no pause between reads of one host, a 5 s page deadline; `overrides` on top."""
    from plugin.settings import Settings

    return Settings(**{"allow_private_hosts": "127.0.0.1/32", "state_backend": "memory", "fetch_host_interval_ms": 0,
                       "fetch_timeout_ms": 5000, **overrides})

ARTICLE_PARAGRAPHS = [
    "Rust's asynchronous model is built on futures that do nothing until they are polled by an executor. "
    "This article walks through how the pieces fit together, from the Future trait to the runtime.",
    "A future is a value that may not be ready yet. Calling an async function returns one immediately; "
    "the body runs only when an executor polls the future and the future registers a waker.",
    "Executors differ in how they schedule tasks. A work-stealing scheduler moves tasks between threads "
    "when one of them runs dry, which keeps every core busy under uneven load.",
    "Cancellation is cooperative: dropping a future stops it at its next await point. Code that holds a "
    "lock across an await must be written with that in mind, or the lock outlives its purpose.",
]


def article_html(extra_body: str = "", title: str = "How async Rust works") -> str:
    paragraphs = "".join(f"<p>{text}</p>" for text in ARTICLE_PARAGRAPHS)
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title} | Example Blog</title>
<meta property="article:published_time" content="2024-03-05T09:00:00Z"></head><body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/archive">Archive</a></li>
<li><a href="/subscribe">Subscribe to our newsletter</a></li></ul></nav></header>
<main><article><h1>{title}</h1>{paragraphs}
<h2>Choosing a runtime</h2>
<ul><li>Tokio, the most widely used runtime</li><li>async-std, close to the standard library</li></ul>
<pre><code>#[tokio::main]
async fn main() {{
    let body = fetch_page().await;
}}</code></pre>
<table><tr><th>Runtime</th><th>Scheduler</th></tr><tr><td>tokio</td><td>work-stealing</td></tr>
<tr><td>smol</td><td>single queue</td></tr></table>
{extra_body}
</article></main>
<aside><h3>Popular posts</h3><ul><li><a href="/p/1">Ten tips for faster builds</a></li>
<li><a href="/p/2">Why we moved to Kubernetes</a></li></ul></aside>
<footer><p>Copyright 2024 Example Corp. All rights reserved. Privacy policy. Cookie settings.</p></footer>
</body></html>"""


def pdf_bytes(pages: list[list[str]], title: str | None = None) -> bytes:
    """A real PDF: one Helvetica text line per string, one page per list, an Info dictionary."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    count = len(pages)
    page_ids = [4 + 2 * i for i in range(count)]
    info_id = 4 + 2 * count
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] /Count {count} >>".encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    }
    for i, lines in enumerate(pages):
        ops = "BT /F1 12 Tf 14 TL 72 720 Td " + " ".join(f"({escape(line)}) Tj T*" for line in lines) + " ET"
        stream = ops.encode("latin-1")
        objects[page_ids[i]] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << "
                                f"/F1 3 0 R >> >> /Contents {page_ids[i] + 1} 0 R >>").encode()
        objects[page_ids[i] + 1] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    info = "<< /CreationDate (D:20240305120000Z)" + (f" /Title ({escape(title)})" if title else "") + " >>"
    objects[info_id] = info.encode("latin-1")
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offsets[n]:010d} 00000 n \n".encode() for n in range(1, size))
    out += f"trailer\n<< /Size {size} /Root 1 0 R /Info {info_id} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def routes(table: Mapping[str, Behaviour]) -> Behaviour:
    """Each path its own behaviour; anything else 404."""

    async def handler(request: web.Request, standin: StandIn) -> web.StreamResponse:
        behaviour = table.get(request.path)
        if behaviour is None:
            return web.Response(status=404, text="not found")
        return await behaviour(request, standin)

    return handler


def redirect(location: str, status: int = 302) -> Behaviour:
    async def handler(request: web.Request, standin: StandIn) -> web.StreamResponse:
        return web.Response(status=status, headers={"Location": location})

    return handler


def paths(standin: StandIn) -> list[str]:
    return [seen.path for seen in standin.requests]


class StandInDNS(AbstractResolver):
    """DNS for made-up names: each name answers the addresses given, nothing is looked up for real."""

    def __init__(self, table: Mapping[str, list[str]]):
        self.table = table
        self.asked: list[str] = []

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        self.asked.append(host)
        if host not in self.table:
            raise OSError(f"stand-in DNS has no {host}")
        return [{"hostname": host, "host": address, "port": port,
                 "family": socket.AF_INET6 if ":" in address else socket.AF_INET, "proto": 0,
                 "flags": socket.AI_NUMERICHOST} for address in self.table[host]]

    async def close(self) -> None:
        return None


def loopback_is_public(address: str) -> bool:
    """Address classification for tests in which the loopback stand-in (127.0.0.1 only) plays a public
    site; every other address is classified by the real rules."""
    from plugin.reading.addresses import public_address

    return address == "127.0.0.1" or public_address(address)


class Outsider:
    """A TCP listener on a loopback address outside the allowed set (127.0.0.2 by default), standing for
    every address a read must never reach: it counts the connections it is offered and closes them.
    Tests of a refusal assert `connections == 0`; were the guard broken, nothing would still leave this
    machine."""

    def __init__(self, host: str = "127.0.0.2", port: int = 0):
        self.host = host
        self.connections = 0
        self.port = port
        self._server: asyncio.base_events.Server | None = None

    async def __aenter__(self) -> "Outsider":
        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            writer.close()

        self._server = await asyncio.start_server(accepted, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"
