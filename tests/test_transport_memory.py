"""Decompression is bounded by the size cap in memory, not only in outcome (issue 14's surviving mutant:
inflating a whole bomb chunk before checking the cap took 149 MB for one 64 KB chunk)."""

from __future__ import annotations

import tracemalloc
import zlib

import pytest

from engines.base import Request
from plugin.infra.admission import EngineClock
from plugin.infra.transport import Transport, TransportError
from plugin.settings import Settings
from standins import page

# Every guarantee on both paths: the browser client (curl_cffi) and the plain one (aiohttp).
pytestmark = pytest.mark.usefixtures("both_transports")


def gzip_bomb(inflated: int) -> bytes:
    """A gzip body of about inflated/1000 bytes that inflates to `inflated` bytes of zeros."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    parts = [packer.compress(block) for _ in range(inflated >> 20)]
    return b"".join(parts) + packer.flush()


async def test_a_gzip_bomb_is_refused_within_the_cap_of_memory(standins):
    bomb = gzip_bomb(64 << 20)
    assert len(bomb) < 65536  # one network chunk of it
    engine = await standins(page(bomb, headers={"Content-Encoding": "gzip"}))
    cap = 1_000_000
    transport = Transport(Settings(endpoints={"bing": engine.url}, max_response_bytes=cap))
    try:
        tracemalloc.start()
        try:
            await transport.fetch(Request("GET", "https://www.bing.com/search"), "bing", EngineClock(10, 10))
            raise AssertionError("the bomb was accepted")
        except TransportError as exc:
            assert exc.kind == "error" and f"{cap}-byte cap" in exc.detail
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await transport.close()
    assert peak < 8 * cap, f"peak {peak / 1e6:.1f} MB while inflating against a {cap / 1e6:.0f} MB cap"
