"""`metasearch serve`: GET /search and /fetch take exactly their documented parameters; every refusal is JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from plugin.surfaces.service import build_app, search_parameters
from standins import bing_page, hang, page
from processes import ended_cleanly, reaped
from stored import stored_entries

ROOT = Path(__file__).resolve().parents[1]
ROWS = [("Python docs", "https://docs.python.org/3/", "python documentation")]


async def test_search_refuses_parameters_it_does_not_take(standins):
    engine = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"])
    async with TestClient(TestServer(build_app(settings, Searcher(settings)))) as client:
        response = await client.get("/search", params={"q": "python documentation", "lmit": "3"})
        assert response.status == 400
        error = (await response.json())["error"]
        assert error["code"] == "invalid_parameter" and "lmit (did you mean limit?)" in error["message"]
        assert len(engine.requests) == 0
        response = await client.get("/search?q=python+documentation&engines=bing&engines=bing&limit=3&no_cache=1")
        assert response.status == 200, await response.text()
        assert (await response.json())["results"][0]["url"] == "https://docs.python.org/3/"


def test_every_search_parameter_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("#### GET /search parameters"):]
    section = section[:section.index("\n#")]
    documented = set(re.findall(r"^\| `([a-z_]+)`", section, flags=re.M))
    assert documented == set(search_parameters()), documented ^ set(search_parameters())
    assert json.dumps(sorted(documented))  # the table is not empty


async def test_both_endpoints_refuse_unknown_repeated_and_ambiguous_parameters(standins):
    """/fetch used to ignore what it did not know (`max_char=100` read 20,000 characters, `ignore_robots=1`
    was dropped) and /search used the first of `q=x&q=y` (issue 21, item 11): each is invalid_parameter
    now, before any engine or page is asked."""
    engine = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"], cache_ttl_s=300)
    url = "http://example.org/post"
    refused = [
        ("/fetch", [("url", url), ("max_char", "100")], "max_char (did you mean max_chars?)"),
        ("/fetch", [("url", url), ("ignore_robots", "1")], "ignore_robots"),
        ("/fetch", [("url", url), ("url", "http://example.org/other")], "url more than once"),
        ("/search", [("q", "x"), ("q", "y")], "q more than once"),
        ("/search", [("q", "A"), ("query", "B")], "both q and query"),
        ("/search", [("q", "x"), ("limit", "3"), ("limit", "5")], "limit more than once"),
        ("/search", [("q", "x"), ("no_cache", "maybe")], "no_cache must be one of"),
    ]
    async with TestClient(TestServer(build_app(settings, Searcher(settings)))) as client:
        for path, params, said in refused:
            response = await client.get(path, params=params)
            error = (await response.json())["error"]
            assert response.status == 400 and error["code"] == "invalid_parameter", (path, params, error)
            assert said in error["message"], (said, error["message"])
        assert len(engine.requests) == 0
        for flag, cached in (("true", False), ("0", True), ("no", True), ("YES", False)):
            response = await client.get("/search", params={"q": "python documentation", "no_cache": flag})
            assert response.status == 200 and (await response.json())["cached"] is cached, flag


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_serve_says_where_it_listens_and_refuses_in_json(workers):
    """`serve` prints `listening on http://HOST:PORT` (the port the system chose for --port 0), and its
    404, 405 and 414 answers carry the JSON error body like every other error (issue 21, item 16)."""
    import asyncio
    import os
    import sys

    import aiohttp

    env = {**os.environ, "PYTHONPATH": str(ROOT), "METASEARCH_ENGINES": '["bing"]'}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", "serve", "--port", "0", "--workers", workers, cwd=ROOT,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        found = re.fullmatch(r"listening on http://127\.0\.0\.1:(\d+)\n", line)
        assert found and int(found.group(1)) > 0, line
        base = f"http://127.0.0.1:{found.group(1)}"
        async with aiohttp.ClientSession() as client:
            asked = [("GET", "/nope", 404, "not_found"), ("POST", "/search?q=x", 405, "method_not_allowed"),
                     ("GET", "/search?q=" + "a" * 20000, 414, "uri_too_long")]
            for method, path, status, code in asked:
                async with client.request(method, base + path) as response:
                    assert response.status == status and response.content_type == "application/json"
                    error = (await response.json())["error"]
                    assert error["code"] == code and error["message"], error
                    if status == 405:
                        assert "GET" in response.headers["Allow"]
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 20)


async def test_health_shows_a_redis_that_is_down():
    """/health read the store's warnings without touching it, so a Redis down since start-up (or since
    the last search) looked healthy (issue 21, item 17): it probes the store with one read now."""
    import socket

    pytest.importorskip("redis")
    with socket.socket() as probe:  # a port nothing listens on: Redis refuses at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = Settings(redis_url=f"redis://:secret-pass@127.0.0.1:{port}/0")
    async with TestClient(TestServer(build_app(settings, Searcher(settings)))) as client:
        health = await (await client.get("/health")).json()
    assert health["status"] == "ok" and health["state"].startswith("redis")
    assert any("redis unavailable" in warning for warning in health["warnings"]), health
    assert "secret-pass" not in json.dumps(health)


async def test_sigterm_ends_serve_within_its_shutdown_wait_while_a_read_hangs_and_the_store_is_whole(standins):
    """SIGTERM waited ~20 s for a /fetch of a page that never answered (aiohttp's own 60 s shutdown
    timeout), past a container's 10 s stop grace, after which it is killed and the store's queued
    writes with it. `shutdown_wait_ms` bounds the wait: the read is cancelled, the store closed with its
    writes committed, the exit status 0."""
    import asyncio
    import json
    import os
    import signal
    import sys

    import aiohttp

    assert Settings().shutdown_wait_ms < 10000  # the default keeps within a container's stop grace

    failing = await standins(page("unavailable", status=503))  # a search benches it: a write to the store
    hung = await standins(hang(120))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "METASEARCH_ENGINES": '["bing"]',
           "METASEARCH_ENDPOINTS": json.dumps({"bing": failing.url}), "METASEARCH_STATE_BACKEND": "sqlite",
           "METASEARCH_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32", "METASEARCH_FETCH_TIMEOUT_MS": "120000",
           "METASEARCH_SHUTDOWN_WAIT_MS": "1000"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", "serve", "--port", "0", cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    async with reaped(proc):
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        base = re.fullmatch(r"listening on (http://127\.0\.0\.1:\d+)\n", line).group(1)
        async with aiohttp.ClientSession() as client:
            async with client.get(base + "/search", params={"q": "rust async runtime"}) as answer:
                assert answer.status == 200
                assert {e["name"]: e["status"] for e in (await answer.json())["engines"]} == {"bing": "error"}
            reading = asyncio.ensure_future(client.get(base + "/fetch", params={"url": hung.url + "/page"}))
            assert await hung.asked() and not reading.done()  # the read is out, waiting for a page that never comes
            proc.send_signal(signal.SIGTERM)
            # Generous: the read alone would hold it 120 s, aiohttp's own shutdown timeout 60 s.
            code = await asyncio.wait_for(proc.wait(), 40)
            await asyncio.gather(reading, return_exceptions=True)
    errors = await ended_cleanly(proc, code)
    # The store is whole: the database checks clean, and the cooldown written during the search is there.
    entry = (await stored_entries({"bing": failing.url}, "bing"))["bing"]
    assert entry is not None and entry.status == "error"


async def trickle_until_closed(port: int, path: str, seconds: float = 60.0) -> tuple[bool, bytes]:
    """Send a request's head a byte every 0.2 s for up to `seconds`: (whether the server closed the
    connection before the client was done, what it sent)."""
    import asyncio

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())
    try:
        for _ in range(int(seconds / 0.2)):
            writer.write(b"X")
            await writer.drain()
            try:
                data = await asyncio.wait_for(reader.read(1000), 0.2)
            except asyncio.TimeoutError:
                continue
            return True, data  # b"" once closed
        return False, b""
    except ConnectionError:
        return True, b""
    finally:
        writer.close()


async def test_a_client_sending_its_headers_a_byte_at_a_time_is_cut_off_after_header_timeout_ms():
    """aiohttp has no timeout for a request's head; its keep-alive timer bounds it (75 s by default):
    header_timeout_ms sets it (20 s by default). A client trickling its headers is disconnected well
    before it is done; a request sent at once is still answered."""
    import asyncio
    import os
    import sys

    import aiohttp

    assert Settings().header_timeout_ms <= 30000
    env = {**os.environ, "PYTHONPATH": str(ROOT), "METASEARCH_ENGINES": '["bing"]', "METASEARCH_HEADER_TIMEOUT_MS": "1000"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", "serve", "--port", "0", cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        port = int(re.fullmatch(r"listening on http://127\.0\.0\.1:(\d+)\n", line).group(1))
        closed, sent = await trickle_until_closed(port, "/health")
        assert closed and sent == b""  # closed, nothing answered to the head that never ended
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://127.0.0.1:{port}/health") as answer:
                assert answer.status == 200
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 20)
