"""`metasearch mcp --http` checks Host, Origin and Sec-Fetch-Site as `serve` does, on whatever address it
listens (the SDK's own check is on only for loopback names), and `allowed_hosts` adds names to it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import aiohttp  # noqa: E402

from plugin.settings import Settings  # noqa: E402
from plugin.surfaces.mcp_server import build_server, http_app  # noqa: E402
from test_mcp import mcp_over_http  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "probe", "version": "0"}}}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def mcp_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("METASEARCH_")}
    return {**env, "PYTHONPATH": str(ROOT), "METASEARCH_STATE_DIR": os.environ["METASEARCH_STATE_DIR"], **extra}


async def asgi_post(app, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """One POST through the ASGI application itself (nothing listens: the app is built for 0.0.0.0)."""
    body = json.dumps(INITIALIZE).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765)}
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


async def test_every_interface_refuses_a_rebound_name_and_a_foreign_page():
    settings = Settings(state_backend="memory")
    app = http_app(build_server(settings), settings, "0.0.0.0")  # listening on every interface: no socket here
    for headers, status, code in (({"Host": "evil.example:8765"}, 421, "host_not_allowed"),
                                  ({"Host": "127.0.0.1:8765", "Origin": "http://evil.example"}, 403,
                                   "origin_not_allowed"),
                                  ({"Host": "127.0.0.1:8765", "Sec-Fetch-Site": "cross-site"}, 403,
                                   "origin_not_allowed")):
        answer, body = await asgi_post(app, "/mcp", {**HEADERS, **headers})
        assert answer == status, (headers, body)
        error = json.loads(body)["error"]
        assert error["code"] == code and "METASEARCH_ALLOWED_HOSTS" in error["message"]


async def test_allowed_hosts_reach_mcp_over_http():
    async with mcp_over_http(mcp_env(METASEARCH_ALLOWED_HOSTS="search.internal")) as url, \
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as client:
        # A reverse proxy's name in allowed_hosts is answered (the SDK's own check refused it, 421).
        async with client.post(url, json=INITIALIZE, headers={**HEADERS, "Host": "search.internal"}) as answer:
            assert answer.status == 200, await answer.text()
        async with client.post(url, json=INITIALIZE, headers={**HEADERS, "Host": "evil.example"}) as answer:
            assert answer.status == 421
            assert json.loads(await answer.text())["error"]["code"] == "host_not_allowed"


async def test_mcp_http_says_where_it_listens_with_port_0():
    from mcp import Client

    # mcp_over_http reads the `listening on http://127.0.0.1:PORT/mcp` line (PORT not 0) and connects to it
    async with mcp_over_http(mcp_env()) as url, Client(url, read_timeout_seconds=60) as client:
        assert "web_search" in {tool.name for tool in (await client.list_tools()).tools}
