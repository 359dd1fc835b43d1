"""The plain HTTP client (`transport = "plain"`, and keyed JSON APIs on any setting): aiohttp.

One connection pool per event loop, one more per SOCKS proxy (SOCKS works at the connector), and for page
reads through an HTTP proxy a pool whose resolver is the proxy's own (see Transport). No cookie jar (the
transport sends each exchange's cookies itself), no redirect following (the transport follows hops), no
decompression by aiohttp (plugin.infra.exchange.Body decodes, against the size cap).
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit, urlunsplit

import aiohttp
from yarl import URL

from plugin.infra.egress import SOCKS_SCHEMES, tls_context
from plugin.infra.exchange import Body, Incoming, Outgoing, TransportError, check_head, codings_of
from plugin.infra.lifecycle import LoopBound, PerLoop
from plugin.infra.secrets import mask_url
from plugin.settings import Settings


class _Sessions:
    """The HTTP sessions of one event loop, and what closes them when that loop ends."""

    def __init__(self) -> None:
        self.pool: aiohttp.ClientSession | None = None
        self.proxied: aiohttp.ClientSession | None = None  # HTTP proxies of page reads
        self.socks: dict[str, aiohttp.ClientSession] = {}
        self.closers: list[LoopBound] = []


class PlainClient:
    def __init__(self, settings: Settings, *, resolver: aiohttp.abc.AbstractResolver | None = None,
                 proxy_resolver: aiohttp.abc.AbstractResolver | None = None):
        """`resolver`: the DNS lookup of direct connections (page reads pass the guarded resolver; engines
        use the system's). `proxy_resolver`: with `resolver`, the lookup of an HTTP proxy's own name, which
        then gets a session of its own (the proxy is the operator's choice, not held to the page rules)."""
        self.settings = settings
        self._resolver = resolver
        self._proxy_resolver = proxy_resolver
        self._sessions: PerLoop[_Sessions] = PerLoop(_Sessions)

    def _ssl(self):
        return tls_context(self.settings.ca_bundle) or True  # True: aiohttp's default checks

    def _new_session(self, sessions: _Sessions, connector: aiohttp.BaseConnector) -> aiohttp.ClientSession:
        session = aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),  # cookies travel per exchange (plugin.infra.transport)
            timeout=aiohttp.ClientTimeout(total=None),  # deadlines are set per exchange
            auto_decompress=False,  # Body decodes, and can tell a truncated stream from a whole one
            trust_env=False,  # proxies are chosen per request in plugin.infra.egress
        )
        # A session made by asyncio.run(search(...)) is closed by that asyncio.run.
        sessions.closers.append(LoopBound(session.close))
        return session

    def _connector(self, resolver: aiohttp.abc.AbstractResolver | None) -> aiohttp.TCPConnector:
        # Admission keeps requests out within pool_limit and upstream_concurrency, so the pool never
        # makes an admitted request wait (that wait would count against the engine's deadline).
        return aiohttp.TCPConnector(limit=self.settings.pool_limit, limit_per_host=0, ttl_dns_cache=300,
                                    ssl=self._ssl(), **({"resolver": resolver} if resolver is not None else {}))

    def session(self, proxy: str | None = None) -> aiohttp.ClientSession:
        sessions = self._sessions.get()  # those of another loop close with it
        if sessions.pool is None or sessions.pool.closed:
            sessions.pool = self._new_session(sessions, self._connector(self._resolver))
            sessions.proxied = None
            sessions.socks = {}
        if proxy is None:
            return sessions.pool
        if urlsplit(proxy).scheme.lower() not in SOCKS_SCHEMES:
            if self._resolver is None or self._proxy_resolver is None:
                return sessions.pool
            if sessions.proxied is None or sessions.proxied.closed:
                sessions.proxied = self._new_session(sessions, self._connector(self._proxy_resolver))
            return sessions.proxied
        session = sessions.socks.get(proxy)
        if session is None or session.closed:
            try:
                from aiohttp_socks import ProxyConnector
            except ImportError:
                raise TransportError("error", f"proxy {mask_url(proxy)} needs the socks extra: "
                                              "pip install 'metasearch[socks]'") from None
            scheme, _, rest = proxy.partition("://")
            scheme = scheme.lower()  # SOCKS5H://: schemes are case-insensitive, aiohttp_socks knows only socks5
            # socks5h: names resolved by the proxy; socks5 as curl does it: resolved here.
            connector = ProxyConnector.from_url(f"{'socks5' if scheme == 'socks5h' else scheme}://{rest}",
                                                rdns=scheme == "socks5h",
                                                limit=self.settings.pool_limit, limit_per_host=0, ssl=self._ssl())
            session = self._new_session(sessions, connector)
            sessions.socks[proxy] = session
        return session

    @property
    def pool(self) -> aiohttp.ClientSession | None:
        """The running loop's pooled session, if one was opened."""
        sessions = self._sessions.current()
        return sessions.pool if sessions is not None else None

    async def close(self) -> None:
        sessions = self._sessions.current()
        self._sessions.forget()
        # Sessions of another loop are closed by that loop's end (or already were).
        if sessions is not None:
            for closer in sessions.closers:
                await closer.close()

    async def send(self, outgoing: Outgoing) -> Incoming:
        proxy = outgoing.proxy
        url, headers, server_hostname = outgoing.url, outgoing.headers, None
        if proxy is not None and outgoing.resolve is not None:
            url, headers, server_hostname = await _pinned(outgoing)
        session = self.session(proxy)
        kwargs: dict = {"headers": _header_multidict(headers), "allow_redirects": False}
        if server_hostname is not None:
            kwargs["server_hostname"] = server_hostname  # TLS is checked against the name, not the address
        if proxy is not None and urlsplit(proxy).scheme.lower() not in SOCKS_SCHEMES:
            kwargs["proxy"] = proxy  # an HTTP(S) proxy goes per request; a SOCKS one is its session's connector
        if outgoing.body is not None:
            kwargs["data"] = outgoing.body
        try:
            async with session.request(outgoing.method, URL(url, encoded=True), **kwargs) as resp:
                headers = [(str(k), v) for k, v in resp.headers.items()]
                if proxy is not None and resp.status == 407:  # the proxy's answer, not the engine's
                    raise TransportError("error", f"proxy {mask_url(proxy)} refused the request: HTTP 407 "
                                                  "Proxy Authentication Required")
                check_head(resp.status, headers, outgoing.cap, outgoing.any_content_type)
                collected = Body(codings_of(headers), outgoing.cap)
                async for chunk in resp.content.iter_chunked(65536):
                    collected.feed(chunk)
                return Incoming(status=resp.status, url=str(resp.url), headers=headers, body=collected.finish(),
                                protocol=f"HTTP/{resp.version.major}.{resp.version.minor}" if resp.version else "",
                                set_cookies=resp.headers.getall("Set-Cookie", []))
        except TransportError:
            raise
        except (asyncio.TimeoutError, TimeoutError):
            raise
        except aiohttp.ClientPayloadError as exc:
            raise TransportError("error", f"body could not be read or decompressed: {exc}") from None
        except aiohttp.ClientProxyConnectionError as exc:  # our way out is down: not the engine's fault
            raise TransportError("error", f"proxy {mask_url(proxy or '')} unreachable: {exc.os_error or exc}",
                                 reason="unreachable", proxy=mask_url(proxy or "")) from None
        except aiohttp.ClientHttpProxyError as exc:
            raise TransportError("error", f"proxy {mask_url(proxy or '')} refused the request: HTTP "
                                          f"{exc.status} {exc.message}") from None
        except aiohttp.ClientSSLError as exc:  # something answered: not a connection failure
            raise TransportError("error", f"TLS failed: {exc}") from None
        except aiohttp.ClientConnectorError as exc:
            raise TransportError("error", f"connection failed: {exc.os_error or exc}", reason="unreachable",
                                 cause=exc.os_error) from None
        except aiohttp.ClientError as exc:
            raise TransportError("error", f"{type(exc).__name__}: {exc}") from None
        except (UnicodeError, ValueError) as exc:
            raise TransportError("error", f"invalid request or response: {exc}") from None
        except Exception as exc:
            if proxy is None or type(exc).__module__.split(".")[0] not in ("python_socks", "aiohttp_socks"):
                raise
            if type(exc).__name__ == "ProxyConnectionError":  # the SOCKS proxy itself could not be connected to
                raise TransportError("error", f"proxy {mask_url(proxy)} unreachable: {exc}", reason="unreachable",
                                     proxy=mask_url(proxy)) from None
            # Other SOCKS failures (bad credentials, a target the proxy cannot reach) are the SOCKS library's own.
            raise TransportError("error", f"proxy {mask_url(proxy)} failed: {type(exc).__name__}: {exc}") from None


async def _pinned(outgoing: Outgoing) -> tuple[str, list[tuple[str, str]], str | None]:
    """(the URL to ask, the headers, the TLS server name) of a page read through a proxy: the proxy is asked for
    the address the guarded lookup checked, not the name (which it would resolve again: a rebinding window),
    the name kept in Host and, for https, in the TLS check, as the browser client pins it."""
    from plugin.infra.http_browser import _bracketed, _literal

    parts = urlsplit(outgoing.url)
    host = (parts.hostname or "").lower()
    if not host or _literal(host):
        return outgoing.url, outgoing.headers, None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    addresses = await outgoing.resolve(host, port)  # type: ignore[misc]  # raises when the guard refuses
    if not addresses:
        raise TransportError("error", f"connection failed: {host} has no address", reason="unreachable")
    netloc = _bracketed(addresses[0]) + (f":{parts.port}" if parts.port else "")
    headers = [("Host", parts.netloc.rpartition("@")[2]), *[(k, v) for k, v in outgoing.headers if k.lower() != "host"]]
    return (urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), headers,
            host if parts.scheme == "https" else None)


def _header_multidict(headers: list[tuple[str, str]]):
    from multidict import CIMultiDict

    return CIMultiDict(headers)
