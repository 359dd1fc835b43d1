"""Proxies and identity, seen from the other side: a loopback HTTP proxy (CONNECT tunnels and plain
forwarding) and a loopback SOCKS5 proxy, both written here with asyncio, record what passed through them."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import ssl
import struct
import sys
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import StandIn, bing_page, page

# Every guarantee on both paths: the browser client (curl_cffi) and the plain one (aiohttp).
pytestmark = pytest.mark.usefixtures("both_transports")

ROWS = [("Python asyncio docs", "https://docs.python.org/3/library/asyncio.html", "python asyncio event loop"),
        ("Asyncio tutorial", "https://realpython.com/async-io-python/", "python asyncio tutorial")]
PASSWORD = "s3cret-proxy-pass"


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch):
    """The machine's own proxy variables must not decide these tests."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def relay(client_reader, client_writer, host: str, port: int, first: bytes = b"") -> None:
    upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
    if first:
        upstream_writer.write(first)
    await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))


@dataclass
class HttpProxy:
    """CONNECT host:port opens a tunnel; GET http://host:port/path is forwarded. Every request is recorded
    as (method, target, headers); with `credentials`, a request without them gets 407."""

    credentials: tuple[str, str] | None = None
    seen: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    server: asyncio.AbstractServer | None = None
    port: int = 0
    ssl_context: ssl.SSLContext | None = None  # set: an https:// proxy (TLS between client and proxy)
    refuse_tunnels: bool = False  # set: CONNECT is answered 403 (plain requests are still forwarded)

    async def start(self) -> "HttpProxy":
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0, ssl=self.ssl_context)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    def url(self, user: str | None = None, password: str | None = None, scheme: str = "http") -> str:
        auth = f"{user}:{password}@" if user else ""
        return f"{scheme}://{auth}127.0.0.1:{self.port}"

    async def stop(self) -> None:
        if self.server:
            self.server.close()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        self.seen.append((method, target, headers))
        if self.credentials:
            expected = "Basic " + base64.b64encode(":".join(self.credentials).encode()).decode()
            if headers.get("proxy-authorization") != expected:
                writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n"
                             b"Content-Length: 0\r\nConnection: close\r\n\r\n")
                await writer.drain()
                writer.close()
                return
        if method == "CONNECT" and self.refuse_tunnels:
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        if method == "CONNECT":
            host, port = target.rsplit(":", 1)
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            await relay(reader, writer, host, int(port))
            return
        # Plain forwarding: absolute URI in, origin form out, hop-by-hop proxy headers dropped.
        rest = target.split("://", 1)[1]
        hostport, _, path = rest.partition("/")
        host, _, port = hostport.partition(":")
        kept = [line for line in lines[1:] if line and not line.lower().startswith(("proxy-", "connection:"))]
        forwarded = "\r\n".join([f"{method} /{path} {version}", *kept, "Connection: close", "", ""]).encode("latin-1")
        await relay(reader, writer, host, int(port or 80), forwarded)


@dataclass
class Socks5Proxy:
    """RFC 1928 CONNECT with no auth or RFC 1929 user/password; records (user, address type, host, port)."""

    credentials: tuple[str, str] | None = None
    seen: list[tuple[str | None, str, str, int]] = field(default_factory=list)
    first_bytes: list[bytes] = field(default_factory=list)  # the client's first chunk through each tunnel
    server: asyncio.AbstractServer | None = None
    port: int = 0

    async def start(self) -> "Socks5Proxy":
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    def url(self, user: str | None = None, password: str | None = None, scheme: str = "socks5") -> str:
        auth = f"{user}:{password}@" if user else ""
        return f"{scheme}://{auth}127.0.0.1:{self.port}"

    async def stop(self) -> None:
        if self.server:
            self.server.close()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            version, count = await reader.readexactly(2)
            methods = await reader.readexactly(count)
            assert version == 5
            user = None
            if self.credentials:
                if 2 not in methods:
                    writer.write(b"\x05\xff")
                    writer.close()
                    return
                writer.write(b"\x05\x02")
                _, ulen = await reader.readexactly(2)
                user = (await reader.readexactly(ulen)).decode()
                (plen,) = await reader.readexactly(1)
                password = (await reader.readexactly(plen)).decode()
                ok = (user, password) == self.credentials
                writer.write(b"\x01\x00" if ok else b"\x01\x01")
                if not ok:
                    writer.close()
                    return
            else:
                writer.write(b"\x05\x00")
            _, command, _, atyp = await reader.readexactly(4)
            if atyp == 1:
                host = ".".join(str(b) for b in await reader.readexactly(4))
                kind = "ipv4"
            elif atyp == 3:
                (length,) = await reader.readexactly(1)
                host = (await reader.readexactly(length)).decode()
                kind = "domain"
            else:
                host = (await reader.readexactly(16)).hex()
                kind = "ipv6"
            (port,) = struct.unpack("!H", await reader.readexactly(2))
            self.seen.append((user, kind, host, port))
            writer.write(b"\x05\x00\x00\x01" + bytes(4) + b"\x00\x00")
            await writer.drain()
            first = await reader.read(65536)  # HTTP and TLS alike: the client speaks first
            self.first_bytes.append(first)
            await relay(reader, writer, "127.0.0.1" if host == "localhost" else host, port, first)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


@pytest.fixture
async def proxies():
    started: list = []

    async def make(kind, **kwargs):
        proxy = await kind(**kwargs).start()
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        await proxy.stop()


async def search(settings: Settings, query: str = "python asyncio"):
    async with Searcher(settings) as searcher:
        return await searcher.search(query)


def bing_settings(url: str, **kwargs) -> Settings:
    return Settings(endpoints={"bing": url}, engines=["bing"], **kwargs)


# ----- HTTP proxy -----
async def test_plain_http_goes_through_the_http_proxy_with_its_credentials(standins, proxies):
    bing = await standins(page(bing_page(ROWS)))
    proxy = await proxies(HttpProxy, credentials=("agent", PASSWORD))
    response = await search(bing_settings(bing.url, proxy=proxy.url("agent", PASSWORD)))
    assert response.engines[0].status == "ok" and len(response.results) == 2
    [(method, target, headers)] = proxy.seen
    assert method == "GET" and target.startswith(f"{bing.url}/search?")  # absolute URI: forwarded
    assert headers["proxy-authorization"] == "Basic " + base64.b64encode(f"agent:{PASSWORD}".encode()).decode()
    assert len(bing.requests) == 1 and "proxy-authorization" not in {k.lower() for k in bing.requests[0].headers}


class TlsStandIn(StandIn):
    ssl_context: ssl.SSLContext | None = None

    async def start(self) -> "TlsStandIn":
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0, ssl_context=self.ssl_context)
        await site.start()
        self.url = f"https://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
        return self


def throwaway_ca(folder, *names: str, pem: str = "ca.pem") -> tuple[ssl.SSLContext, object]:
    """A certificate authority made for one test (trustme; the test is skipped without it): a server TLS
    context holding its certificate for `names` (127.0.0.1 by default), and the CA's PEM file in `folder`."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*(names or ("127.0.0.1",))).configure_cert(context)
    path = folder / pem
    ca.cert_pem.write_to_path(str(path))
    return context, path


async def test_https_goes_through_a_connect_tunnel(proxies, tmp_path):
    server_context, ca_file = throwaway_ca(tmp_path)
    bing = TlsStandIn(page(bing_page(ROWS)))
    bing.ssl_context = server_context
    await bing.start()
    proxy = await proxies(HttpProxy)
    try:
        response = await search(bing_settings(bing.url, proxy=proxy.url(), ca_file=ca_file))
    finally:
        await bing.stop()
    assert response.engines[0].status == "ok" and len(response.results) == 2
    port = bing.url.rsplit(":", 1)[1]
    assert [(m, t) for m, t, _ in proxy.seen] == [("CONNECT", f"127.0.0.1:{port}")]  # a tunnel, not a read
    assert len(bing.requests) == 1


async def test_an_https_proxy_is_reached_over_tls(standins, proxies, tmp_path):
    # https:// proxy: the client talks TLS to the proxy itself (checked against ca_file), credentials inside
    # it; an https target is then a CONNECT tunnel inside that TLS (TLS in TLS).
    context, ca_file = throwaway_ca(tmp_path)
    bing = await standins(page(bing_page(ROWS)))
    secure_bing = TlsStandIn(page(bing_page(ROWS)))
    secure_bing.ssl_context = context
    await secure_bing.start()
    proxy = await proxies(HttpProxy, credentials=("agent", PASSWORD), ssl_context=context)
    assert proxy.url().startswith("http://")
    secure = proxy.url("agent", PASSWORD, scheme="https")
    try:
        response = await search(bing_settings(bing.url, proxy=secure, ca_file=ca_file))
        tunnelled = await search(bing_settings(secure_bing.url, proxy=secure, ca_file=ca_file))
        untrusted = await search(bing_settings(bing.url, proxy=secure, cooldown_timeout_s=0))
    finally:
        await secure_bing.stop()
    for answer in (response, tunnelled):
        assert answer.engines[0].status == "ok" and len(answer.results) == 2
    # The untrusted attempt never got past the handshake with the proxy.
    [(method, target, headers), (tunnel, endpoint, tunnel_headers)] = proxy.seen
    assert method == "GET" and target.startswith(f"{bing.url}/search?")
    assert (tunnel, endpoint) == ("CONNECT", secure_bing.url.removeprefix("https://"))
    expected = "Basic " + base64.b64encode(f"agent:{PASSWORD}".encode()).decode()
    assert headers["proxy-authorization"] == tunnel_headers["proxy-authorization"] == expected
    assert untrusted.engines[0].status == "error" and "CERTIFICATE_VERIFY_FAILED" in untrusted.engines[0].detail
    assert PASSWORD not in untrusted.engines[0].detail
    assert len(bing.requests) == 1 and len(secure_bing.requests) == 1


# ----- SOCKS5 proxy -----
async def test_socks5_proxy_carries_the_request_and_its_credentials(standins, proxies):
    pytest.importorskip("aiohttp_socks")
    bing = await standins(page(bing_page(ROWS)))
    proxy = await proxies(Socks5Proxy, credentials=("agent", PASSWORD))
    response = await search(bing_settings(bing.url, proxy=proxy.url("agent", PASSWORD)))
    assert response.engines[0].status == "ok" and len(response.results) == 2
    port = int(bing.url.rsplit(":", 1)[1])
    assert proxy.seen == [("agent", "ipv4", "127.0.0.1", port)]
    assert len(bing.requests) == 1


async def test_socks5h_leaves_name_resolution_to_the_proxy(standins, proxies):
    pytest.importorskip("aiohttp_socks")
    bing = await standins(page(bing_page(ROWS)))
    proxy = await proxies(Socks5Proxy)
    local = bing.url.replace("127.0.0.1", "localhost")
    response = await search(bing_settings(local, proxy=proxy.url(scheme="socks5h")))
    assert response.engines[0].status == "ok"
    assert proxy.seen == [(None, "domain", "localhost", int(bing.url.rsplit(":", 1)[1]))]


async def test_a_proxy_scheme_in_capitals_is_the_same_proxy(standins, proxies):
    """URL schemes are case-insensitive (RFC 3986): SOCKS5H://host:1080 is socks5h (aiohttp_socks refused it:
    'Invalid scheme component', every request of the plain path an error)."""
    pytest.importorskip("aiohttp_socks")
    bing = await standins(page(bing_page(ROWS)))
    proxy = await proxies(Socks5Proxy)
    local = bing.url.replace("127.0.0.1", "localhost")
    response = await search(bing_settings(local, proxy=proxy.url(scheme="SOCKS5H")))
    assert response.engines[0].status == "ok", response.engines[0].detail
    assert proxy.seen == [(None, "domain", "localhost", int(bing.url.rsplit(":", 1)[1]))]


async def test_https_goes_through_the_socks5_proxy_encrypted(proxies, tmp_path):
    # The proxy carries TLS end to end: it sees a handshake, never the request; the certificate is checked
    # for the name asked (the IP for socks5, the host name the proxy resolves for socks5h).
    pytest.importorskip("aiohttp_socks")
    server_context, ca_file = throwaway_ca(tmp_path, "127.0.0.1", "localhost")
    bing = TlsStandIn(page(bing_page(ROWS)))
    bing.ssl_context = server_context
    await bing.start()
    proxy = await proxies(Socks5Proxy, credentials=("agent", PASSWORD))
    by_name = bing.url.replace("127.0.0.1", "localhost")
    try:
        direct_ip = await search(bing_settings(bing.url, proxy=proxy.url("agent", PASSWORD), ca_file=ca_file))
        remote_dns = await search(bing_settings(by_name, proxy=proxy.url("agent", PASSWORD, scheme="socks5h"),
                                                ca_file=ca_file))
        untrusted = await search(bing_settings(bing.url, proxy=proxy.url("agent", PASSWORD), cooldown_timeout_s=0))
    finally:
        await bing.stop()
    for response in (direct_ip, remote_dns):
        assert response.engines[0].status == "ok" and len(response.results) == 2
    port = int(bing.url.rsplit(":", 1)[1])
    assert proxy.seen == [("agent", "ipv4", "127.0.0.1", port), ("agent", "domain", "localhost", port),
                          ("agent", "ipv4", "127.0.0.1", port)]
    assert [first[:1] for first in proxy.first_bytes] == [b"\x16"] * 3  # TLS handshake records...
    assert not any(b"/search" in first or b"python" in first for first in proxy.first_bytes)  # ...no request
    # Without the test CA the stand-in's certificate is refused: TLS is really checked through the tunnel.
    assert untrusted.engines[0].status == "error" and "CERTIFICATE_VERIFY_FAILED" in untrusted.engines[0].detail
    assert not untrusted.results
    assert len(bing.requests) == 2


async def test_per_engine_proxy_overrides_the_shared_one(standins, proxies):
    pytest.importorskip("aiohttp_socks")
    from standins import ddg_page

    bing = await standins(page(bing_page(ROWS)))
    ddg = await standins(page(ddg_page(ROWS)))
    lite = await standins(page(bing_page(ROWS)))  # never asked: fallback tier
    http = await proxies(HttpProxy)
    socks = await proxies(Socks5Proxy)
    settings = Settings(endpoints={"bing": bing.url, "duckduckgo-html": ddg.url, "bing-cn": lite.url},
                        engines=["bing", "duckduckgo-html", "bing-cn"], proxy=http.url(),
                        proxies={"bing": socks.url(), "bing-cn": "direct"})
    response = await search(settings)
    assert {e.name: e.status for e in response.engines} == {"bing": "ok", "duckduckgo-html": "ok", "bing-cn": "ok"}
    assert [port for *_, port in socks.seen] == [int(bing.url.rsplit(":", 1)[1])]
    assert [target.split("/")[2] for _, target, _ in http.seen] == [ddg.url.split("/")[2]]
    assert len(lite.requests) == 1  # direct


# ----- the environment -----
async def test_http_proxy_from_the_environment_and_no_proxy(standins, proxies, monkeypatch):
    bing = await standins(page(bing_page(ROWS)))
    proxy = await proxies(HttpProxy)
    monkeypatch.setenv("HTTP_PROXY", proxy.url())
    assert (await search(bing_settings(bing.url))).engines[0].status == "ok"
    assert len(proxy.seen) == 1
    monkeypatch.setenv("NO_PROXY", "example.com,127.0.0.1")
    assert (await search(bing_settings(bing.url))).engines[0].status == "ok"
    assert len(proxy.seen) == 1 and len(bing.requests) == 2  # the second went direct
    monkeypatch.delenv("NO_PROXY")
    assert (await search(bing_settings(bing.url, proxy_from_env=False))).engines[0].status == "ok"
    assert len(proxy.seen) == 1 and len(bing.requests) == 3
    # NO_PROXY covers a configured proxy too.
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    assert (await search(bing_settings(bing.url, proxy=proxy.url()))).engines[0].status == "ok"
    assert len(proxy.seen) == 1 and len(bing.requests) == 4
    # Networks in CIDR form, as curl reads them: the loopback block goes direct, another /32 does not cover it.
    monkeypatch.setenv("no_proxy", "example.com,127.0.0.0/8")
    assert (await search(bing_settings(bing.url, proxy=proxy.url()))).engines[0].status == "ok"
    assert len(proxy.seen) == 1 and len(bing.requests) == 5
    monkeypatch.setenv("no_proxy", "127.0.0.2/32")
    assert (await search(bing_settings(bing.url, proxy=proxy.url()))).engines[0].status == "ok"
    assert len(proxy.seen) == 2 and len(bing.requests) == 6


async def test_socks_proxy_from_all_proxy(standins, proxies, monkeypatch):
    pytest.importorskip("aiohttp_socks")
    bing = await standins(page(bing_page(ROWS)))
    proxy = await proxies(Socks5Proxy)
    monkeypatch.setenv("ALL_PROXY", proxy.url())
    assert (await search(bing_settings(bing.url))).engines[0].status == "ok"
    assert len(proxy.seen) == 1


# ----- a proxy that is down is our network, never the engines' fault -----
def dead_proxy(scheme: str) -> str:
    """A proxy URL on a loopback port nobody listens on (the proxy is down)."""
    import socket

    if scheme.startswith("socks"):
        pytest.importorskip("aiohttp_socks")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"{scheme}://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize("scheme", ["socks5", "http"])
async def test_a_dead_proxy_benches_no_engine_and_says_so(standins, scheme):
    """METASEARCH_PROXY=socks5://127.0.0.1:1 used to bench every engine, still benched once the proxy was
    removed; an HTTP proxy counted as "offline". Both now: `proxy unreachable` in warnings, nobody benched."""
    endpoints = {"bing": (await standins(page(bing_page(ROWS)))).url,
                 "bing-cn": (await standins(page(bing_page(ROWS)))).url}
    proxy = dead_proxy(scheme)
    async with Searcher(Settings(endpoints=endpoints, engines=list(endpoints), proxy=proxy)) as searcher:
        down = await searcher.search("python asyncio")
        benched = await searcher.cooldowns.store.all()
    assert down.warnings == [f"proxy unreachable: {proxy} could not be connected to (bing, bing-cn); no engine "
                             "was benched for it"]
    for report in down.engines:
        assert report.status == "error" and report.detail.startswith(f"proxy {proxy} unreachable: "), report.detail
        assert "cooling down" not in report.detail
    assert benched == {}
    async with Searcher(Settings(endpoints=endpoints, engines=list(endpoints))) as searcher:  # proxy removed
        again = await searcher.search("python asyncio")
    assert {e.status for e in again.engines} == {"ok"} and again.results


@pytest.mark.parametrize("scheme", ["socks5", "http"])
async def test_an_engine_behind_a_dead_proxy_is_not_benched_while_others_connect(standins, scheme):
    endpoints = {"bing": (await standins(page(bing_page(ROWS)))).url,
                 "bing-cn": (await standins(page(bing_page(ROWS)))).url}
    proxy = dead_proxy(scheme)
    settings = Settings(endpoints=endpoints, engines=list(endpoints), proxies={"bing-cn": proxy})
    async with Searcher(settings) as searcher:
        response = await searcher.search("python asyncio")
        benched = await searcher.cooldowns.store.all()
    reports = {e.name: e for e in response.engines}
    assert reports["bing"].status == "ok" and reports["bing-cn"].status == "error"
    assert "cooling down" not in reports["bing-cn"].detail and benched == {}
    assert response.warnings == [f"proxy unreachable: {proxy} could not be connected to (bing-cn); no engine was "
                                 "benched for it"]


# ----- credentials are never shown -----
async def test_proxy_credentials_never_reach_details_logs_or_responses(standins, proxies, caplog):
    bing = await standins(page(bing_page(ROWS)))
    refusing = await proxies(HttpProxy, credentials=("agent", "other-password"))
    caplog.set_level(logging.DEBUG, logger="metasearch")
    unreachable = f"http://agent:{PASSWORD}@127.0.0.1:9"
    for proxy_url in (unreachable, refusing.url("agent", PASSWORD)):
        response = await search(bing_settings(bing.url, proxy=proxy_url, cooldown_timeout_s=0))
        report = response.engines[0]
        assert report.status == "error" and "proxy http://****@127.0.0.1:" in report.detail, report.detail
        assert PASSWORD not in response.model_dump_json()
    assert "407" in report.detail
    socks = await proxies(Socks5Proxy, credentials=("agent", "other-password"))
    if pytest.importorskip("aiohttp_socks"):
        response = await search(bing_settings(bing.url, proxy=socks.url("agent", PASSWORD), cooldown_timeout_s=0))
        assert response.engines[0].status == "error" and "socks5://****@" in response.engines[0].detail
        assert PASSWORD not in response.model_dump_json()
    assert PASSWORD not in caplog.text and "agent:" not in caplog.text


async def run_cli(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, **env})
    out, err = await process.communicate()
    return process.returncode, out.decode(), err.decode()


async def test_config_masks_proxy_credentials_and_secret_headers():
    env = {"METASEARCH_PROXY": f"http://agent:{PASSWORD}@proxy.internal:3128",
           "METASEARCH_PROXIES": json.dumps({"bing": f"socks5://u:{PASSWORD}@socks.internal:1080"}),
           "HTTPS_PROXY": f"http://agent:{PASSWORD}@env-proxy.internal:8080",
           "METASEARCH_EXTRA_HEADERS": json.dumps({"X-Team": "search", "Authorization": "Bearer " + PASSWORD})}
    code, out, err = await run_cli("config", env=env)
    assert code == 0, err
    config = json.loads(out)
    assert PASSWORD not in out and "agent:" not in out, out
    assert config["proxy"] == "http://****@proxy.internal:3128"
    assert config["proxies"] == {"bing": "socks5://****@socks.internal:1080"}
    assert config["environment_proxies"]["https"] == "http://****@env-proxy.internal:8080"
    assert config["extra_headers"] == {"X-Team": "search", "Authorization": "set (masked)"}


@pytest.mark.parametrize("env", [{"METASEARCH_PROXY": f"ftp://agent:{PASSWORD}@proxy:21"},
                                 {"METASEARCH_PROXY": "http://"},
                                 {"METASEARCH_EXTRA_HEADERS": json.dumps({"X-Evil": "a\r\nHost: b"})}])
async def test_bad_proxy_or_header_settings_are_invalid_parameter(env):
    code, out, _ = await run_cli("search", "python", "--json", env=env)
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_parameter"
    assert PASSWORD not in out


# ----- identity -----
async def test_user_agent_and_extra_headers_replace_the_engines_defaults(standins, monkeypatch):
    bing = await standins(page(bing_page(ROWS)))
    assert (await search(bing_settings(bing.url))).engines[0].status == "ok"
    default_agent = bing.requests[0].headers["User-Agent"]
    assert "Mozilla" in default_agent  # the engine's own browser identity
    monkeypatch.setenv("METASEARCH_USER_AGENT", "research-bot/1.0 (+https://example.org/bot)")
    monkeypatch.setenv("METASEARCH_EXTRA_HEADERS", json.dumps({"accept-language": "de-DE", "X-Team": "search"}))
    assert (await search(bing_settings(bing.url))).engines[0].status == "ok"
    headers = bing.requests[1].headers
    assert headers["User-Agent"] == "research-bot/1.0 (+https://example.org/bot)"
    assert headers["Accept-Language"] == "de-DE" and headers["X-Team"] == "search"
    assert list(map(str.lower, headers)).count("accept-language") == 1  # replaced, not doubled


def test_every_engine_has_a_default_identity_of_its_kind():
    # Scraped engines look like the desktop browser their page is made for; APIs (and Wikimedia, whose
    # policy asks for it) get a descriptive metasearch/ User-Agent. user_agent replaces either.
    from engines import ENGINES
    from engines.base import SearchOptions
    from engines.browser import USER_AGENT

    options = SearchOptions(api_key="k", base_url="http://127.0.0.1:8888")
    for name, engine in ENGINES.items():
        agent = engine.build("q", options).headers.get("User-Agent", "")
        api = bool(engine.facts.key_env or engine.facts.url_env) or name == "wikipedia"
        assert agent.startswith("metasearch/") if api else agent == USER_AGENT, name


def test_settings_errors_and_repr_never_quote_proxy_credentials():
    from plugin.errors import SearchError

    with pytest.raises(SearchError) as caught:  # every settings error is a SearchError naming the field
        Settings(proxy=f"ftp://agent:{PASSWORD}@proxy:21")
    assert PASSWORD not in str(caught.value)
    settings = Settings(proxy=f"http://agent:{PASSWORD}@proxy:3128",
                        proxies={"bing": f"socks5://agent:{PASSWORD}@proxy:1080"})
    assert PASSWORD not in repr(settings) and PASSWORD not in str(settings)
    assert f"agent:{PASSWORD}" in settings.secret_values() and PASSWORD in settings.secret_values()


async def test_a_proxy_without_a_scheme_is_an_http_proxy_as_curl_reads_it(standins, proxies, monkeypatch):
    bing = await standins(page(bing_page(ROWS)))
    proxy = await proxies(HttpProxy)
    monkeypatch.setenv("http_proxy", f"127.0.0.1:{proxy.port}")
    assert (await search(bing_settings(bing.url))).engines[0].status == "ok"
    assert Settings(proxy=f"127.0.0.1:{proxy.port}").proxy == proxy.url()
    assert len(proxy.seen) == 1


def test_proxy_choice_order_and_scheme(monkeypatch):
    from plugin.infra.egress import choose_proxy

    monkeypatch.setenv("HTTPS_PROXY", "http://secure-proxy:3128")
    monkeypatch.setenv("http_proxy", "http://plain-proxy:3128")
    monkeypatch.setenv("ALL_PROXY", "socks5://all-proxy:1080")
    choose = lambda url, engine="bing", proxy=None, per_engine={}, env=True: choose_proxy(  # noqa: E731
        url, engine, proxy, per_engine, env)
    assert choose("https://www.bing.com/search") == "http://secure-proxy:3128"  # by the target's scheme
    assert choose("http://www.bing.com/search") == "http://plain-proxy:3128"
    monkeypatch.delenv("HTTPS_PROXY")
    assert choose("https://www.bing.com/search") == "socks5://all-proxy:1080"  # ALL_PROXY as the fallback
    assert choose("https://www.bing.com/search", env=False) is None
    assert choose("https://www.bing.com/search", proxy="http://set:1") == "http://set:1"  # the setting first
    per_engine = {"bing": "socks5://bing-only:1080", "baidu": "direct"}
    assert choose("https://www.bing.com/", proxy="http://set:1", per_engine=per_engine) == "socks5://bing-only:1080"
    assert choose("https://www.baidu.com/", "baidu", proxy="http://set:1", per_engine=per_engine) is None
    monkeypatch.setenv("NO_PROXY", ".bing.com")
    assert choose("https://www.bing.com/", proxy="http://set:1", per_engine=per_engine) is None  # NO_PROXY wins
    assert choose("https://www.baidu.com/s", "mojeek", proxy="http://set:1") == "http://set:1"


async def test_a_proxy_for_an_unknown_engine_is_unknown_engine():
    # Like every other per-engine setting: a typo in the engine name is named, with its likely meaning.
    env = {"METASEARCH_PROXIES": json.dumps({"bign": f"http://agent:{PASSWORD}@proxy:3128"})}
    code, out, _ = await run_cli("search", "python", "--json", env=env)
    error = json.loads(out)["error"]
    assert code == 2 and error["code"] == "unknown_engine"
    assert "bign" in error["message"] and "bing" in error["message"]
    assert PASSWORD not in out
