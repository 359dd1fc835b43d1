"""The one place that does network I/O.

One aiohttp session (connection pool) is reused across searches. It keeps no cookies: an engine gets
exactly the cookies it asks for (its request's `Cookie` header), and cookies a server sets during one
exchange reach that exchange's follow-up requests only (the `cookies` jar the runner passes to each
fetch of the exchange), never another search or another caller of a shared service.
Every exchange first waits for admission (plugin/infra/admission.py: per-upstream politeness, queue
time kept apart), then runs under the engine's own clock (headers and body alike); the body is read
in chunks against a size cap, and decoded with its real charset.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from engines.base import Headers, Request, Response
from plugin.infra.admission import OVERLOADED, Admission, EngineClock, Overloaded
from plugin.infra.charset import decode_body
from plugin.infra.lifecycle import LoopBound, PerLoop
from plugin.infra.egress import SOCKS_SCHEMES, choose_proxy, identity_headers
from plugin.infra.logs import get_logger
from plugin.infra.secrets import mask_url, redact, url_secrets
from plugin.settings import Settings

log = get_logger("metasearch.transport")

_TEXTUAL = ("text/", "application/json", "application/xhtml", "application/xml", "application/javascript",
            "application/x-javascript", "application/problem+json")


class TransportError(Exception):
    """An exchange that produced no usable response. `kind` is a status: timeout, error, or skipped
    (not admitted: `overloaded`). `reason` says more where a caller needs to tell failures apart
    ("unreachable": DNS or connection failure, which may be our own network's fault, not the engine's;
    "too_large": over the size cap). `proxy` (masked) is set when what could not be connected to was
    our proxy (HTTP or SOCKS): our way out is down, never the engine's fault. `cause` is the OS error of
    a failed connection (a page read's resolver refusing a private address, for one)."""

    def __init__(self, kind: str, detail: str, *, reason: str = "", cause: BaseException | None = None,
                 proxy: str | None = None):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.reason = reason
        self.cause = cause
        self.proxy = proxy



def with_endpoint(url: str, endpoint: str | None) -> str:
    """`url` with its scheme, host and port replaced by those of `endpoint`."""
    if not endpoint:
        return url
    target = urlsplit(url)
    override = urlsplit(endpoint)
    return urlunsplit((override.scheme, override.netloc, target.path, target.query, target.fragment))


class _Body:
    """Collects a body against the size cap, decompressing it ourselves so that a truncated or
    corrupt stream is reported as such and the cap applies to the decompressed size."""

    def __init__(self, encoding: str, cap: int):
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._inflate = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            self._inflate = zlib.decompressobj(47)  # 32 + 15: gzip or zlib header, detected
        else:
            raise TransportError("error", f"unsupported content encoding {encoding[:30]!r}")
        self.cap = cap
        self.size = 0
        self.received = 0
        self.chunks: list[bytes] = []

    def feed(self, chunk: bytes) -> None:
        self.received += len(chunk)
        if self._inflate is not None:
            try:
                chunk = self._inflate.decompress(chunk, self.cap + 1 - self.size)
            except zlib.error as exc:
                raise TransportError("error", f"body could not be decompressed: {exc}") from None
        self.size += len(chunk)
        if self.size > self.cap:
            raise TransportError("error", f"response exceeds the {self.cap}-byte cap", reason="too_large")
        self.chunks.append(chunk)

    def finish(self) -> bytes:
        if self._inflate is not None and self.received and not self._inflate.eof:
            raise TransportError("error", "body could not be decompressed: the stream ended early (truncated)")
        return b"".join(self.chunks)


def _textual(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return not kind or kind.startswith(_TEXTUAL) or kind.endswith("+json") or kind.endswith("+xml")


def _cookie_header(exchange: dict[str, str], explicit: str | None) -> str | None:
    """The exchange's cookies, then the request's own `Cookie` header, which wins on a name both set."""
    merged = dict(exchange)
    for part in (explicit or "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name:
            merged[name] = value
    return "; ".join(f"{name}={value}" for name, value in merged.items()) or None


def _take_cookies(jar: dict[str, str], responses) -> None:
    """Cookies set by every response of one fetch (redirect hops included), into the exchange's jar."""
    for resp in responses:
        for name, morsel in resp.cookies.items():
            if morsel["max-age"] in ("0", "-1"):
                jar.pop(name, None)
            else:
                jar[name] = morsel.value


class _Sessions:
    """The HTTP sessions of one event loop: the pool, one per SOCKS proxy (SOCKS works at the connector),
    and what closes them when that loop ends."""

    def __init__(self) -> None:
        self.pool: aiohttp.ClientSession | None = None
        self.proxied: aiohttp.ClientSession | None = None  # HTTP proxies of page reads (see Transport)
        self.socks: dict[str, aiohttp.ClientSession] = {}
        self.closers: list[LoopBound] = []


class Transport:
    def __init__(self, settings: Settings, *, resolver: aiohttp.abc.AbstractResolver | None = None,
                 proxy_resolver: aiohttp.abc.AbstractResolver | None = None):
        """`resolver`: the DNS lookup of direct connections (page reads pass plugin.reading's guarded
        resolver; engines use the system's). `proxy_resolver`: with `resolver`, the lookup of the HTTP
        proxy's own name, which then gets a session of its own: the proxy is the operator's choice, so
        its name is not held to the rules of the pages read through it (page reads check the page's
        name themselves before handing a request to a proxy)."""
        self.settings = settings
        self._resolver = resolver
        self._proxy_resolver = proxy_resolver
        self._sessions: PerLoop[_Sessions] = PerLoop(_Sessions)
        self.admission = Admission(settings)

    def _ssl(self):
        if self.settings.ca_file is None:
            return True
        import ssl

        context = ssl.create_default_context()
        context.load_verify_locations(cafile=str(self.settings.ca_file))
        return context

    def _new_session(self, sessions: _Sessions, connector: aiohttp.BaseConnector) -> aiohttp.ClientSession:
        session = aiohttp.ClientSession(
            connector=connector,
            # No shared jar: cookies travel per exchange (see the module docstring).
            cookie_jar=aiohttp.DummyCookieJar(),
            # Deadlines are set per exchange; no session-wide default may cut them short.
            timeout=aiohttp.ClientTimeout(total=None),
            # Bodies are decompressed by _Body, which can tell a truncated stream from a whole one.
            auto_decompress=False,
            # Proxies are chosen per request in plugin.infra.egress (NO_PROXY, SOCKS, per engine).
            trust_env=False,
        )
        # A session made by asyncio.run(search(...)) is closed by that asyncio.run.
        sessions.closers.append(LoopBound(session.close))
        return session

    def _connector(self, resolver: aiohttp.abc.AbstractResolver | None) -> aiohttp.TCPConnector:
        # Admission keeps requests out within pool_limit and upstream_concurrency, so the pool never
        # makes an admitted request wait (that wait would count against the engine's deadline).
        return aiohttp.TCPConnector(limit=self.settings.pool_limit, limit_per_host=0, ttl_dns_cache=300,
                                    ssl=self._ssl(), **({"resolver": resolver} if resolver is not None else {}))

    def _get_session(self, proxy: str | None = None) -> aiohttp.ClientSession:
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
            scheme = urlsplit(proxy).scheme.lower()
            # socks5h: names resolved by the proxy; socks5 as curl does it: resolved here.
            connector = ProxyConnector.from_url(proxy.replace("socks5h://", "socks5://", 1), rdns=scheme == "socks5h",
                                                limit=self.settings.pool_limit,
                                                limit_per_host=0, ssl=self._ssl())
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

    async def fetch(self, request: Request, engine: str, clock: EngineClock,
                    cookies: dict[str, str] | None = None, *, follow_redirects: bool = True,
                    any_content_type: bool = False) -> Response:
        """Perform one exchange: wait for admission (queue time), then spend the engine's own time.
        `cookies` is the jar of the engine exchange this request belongs to: sent with it, and updated
        with what it sets. Page reads (plugin.reading) pass follow_redirects=False, to check every hop
        themselves, and any_content_type=True, to take PDFs; a body that is not text is then not decoded
        (`text` is "")."""
        url = with_endpoint(request.url, self.settings.endpoints.get(engine))
        try:
            async with self.admission.admit(self.settings.upstream(engine), engine, clock):
                return await self._exchange(request, engine, url, clock, cookies, follow_redirects,
                                            any_content_type)
        except Overloaded:
            raise TransportError("skipped", OVERLOADED) from None

    async def _exchange(self, request: Request, engine: str, url: str, clock: EngineClock,
                        cookies: dict[str, str] | None = None, follow_redirects: bool = True,
                        any_content_type: bool = False) -> Response:
        remaining = clock.remaining()
        if remaining <= 0:
            raise TransportError("timeout", "deadline passed before the request was sent")
        started = time.perf_counter()
        settings = self.settings
        proxy = choose_proxy(url, engine, settings.proxy, settings.proxies, settings.proxy_from_env)
        session = self._get_session(proxy)
        # Credentials of the proxy are redacted from every detail, like API keys.
        secrets = (*request.secrets, *url_secrets(proxy))
        sent_headers = identity_headers(request.headers, settings.user_agent, settings.extra_headers)
        if cookies:
            explicit = next((k for k in sent_headers if k.lower() == "cookie"), None)
            sent_headers[explicit or "Cookie"] = _cookie_header(cookies, sent_headers.get(explicit) if explicit else None)
        kwargs: dict = {
            "params": list(request.params) or None,
            "headers": sent_headers,
            "allow_redirects": follow_redirects,
            "max_redirects": self.settings.max_redirects,
        }
        if proxy is not None and urlsplit(proxy).scheme.lower() not in SOCKS_SCHEMES:
            kwargs["proxy"] = proxy  # an HTTP(S) proxy goes per request; a SOCKS one is its session's connector
        if request.form is not None:
            kwargs["data"] = list(request.form)
        elif request.json is not None:
            kwargs["json"] = request.json
        cap = self.settings.max_response_bytes
        try:
            async with clock.out():
                async with session.request(request.method, url, **kwargs) as resp:
                    if proxy is not None and resp.status == 407:  # the proxy's answer, not the engine's
                        raise TransportError("error", f"proxy {mask_url(proxy)} refused the request: HTTP 407 "
                                                      "Proxy Authentication Required")
                    declared = resp.content_length
                    if declared is not None and declared > cap:
                        raise TransportError("error", f"response of {declared} bytes exceeds the {cap}-byte cap",
                                             reason="too_large")
                    content_type = resp.headers.get("Content-Type", "")
                    if not any_content_type and not _textual(content_type):
                        raise TransportError("error", f"unexpected content type {content_type.split(';')[0][:60]}")
                    collected = _Body(resp.headers.get("Content-Encoding", ""), cap)
                    async for chunk in resp.content.iter_chunked(65536):
                        collected.feed(chunk)
                    body = collected.finish()
                    status = resp.status
                    final_url = str(resp.url)
                    if cookies is not None:
                        _take_cookies(cookies, (*resp.history, resp))
                    headers = Headers({k: v for k, v in resp.headers.items()})
        except TransportError:
            raise
        except (asyncio.TimeoutError, TimeoutError):
            raise TransportError("timeout", f"no complete answer within {remaining * 1000:.0f} ms") from None
        except aiohttp.TooManyRedirects:
            raise TransportError("error", f"more than {self.settings.max_redirects} redirects (redirect loop?)") from None
        except aiohttp.ClientPayloadError as exc:
            raise TransportError("error", redact(f"body could not be read or decompressed: {exc}",
                                                 secrets)[:200]) from None
        except aiohttp.ClientProxyConnectionError as exc:  # our way out is down: not the engine's fault
            raise TransportError("error", redact(f"proxy {mask_url(proxy or '')} unreachable: {exc.os_error or exc}",
                                                 secrets)[:200], reason="unreachable",
                                 proxy=mask_url(proxy or "")) from None
        except aiohttp.ClientHttpProxyError as exc:
            raise TransportError("error", redact(f"proxy {mask_url(proxy or '')} refused the request: HTTP "
                                                 f"{exc.status} {exc.message}", secrets)[:200]) from None
        except aiohttp.ClientSSLError as exc:  # something answered: not a connection failure
            raise TransportError("error", redact(f"TLS failed: {exc}", secrets)[:200]) from None
        except aiohttp.ClientConnectorError as exc:
            raise TransportError("error", redact(f"connection failed: {exc.os_error or exc}", secrets)[:200],
                                 reason="unreachable", cause=exc.os_error) from None
        except aiohttp.ClientError as exc:
            raise TransportError("error", redact(f"{type(exc).__name__}: {exc}", secrets)[:200]) from None
        except (UnicodeError, ValueError) as exc:
            raise TransportError("error", redact(f"invalid request or response: {exc}", secrets)[:200]) from None
        except Exception as exc:
            if proxy is None or type(exc).__module__.split(".")[0] not in ("python_socks", "aiohttp_socks"):
                raise
            if type(exc).__name__ == "ProxyConnectionError":  # the SOCKS proxy itself could not be connected to
                raise TransportError("error", redact(f"proxy {mask_url(proxy)} unreachable: {exc}", secrets)[:200],
                                     reason="unreachable", proxy=mask_url(proxy)) from None
            # Other SOCKS failures (bad credentials, a target the proxy cannot reach) are the SOCKS library's own.
            raise TransportError("error", redact(f"proxy {mask_url(proxy)} failed: {type(exc).__name__}: {exc}",
                                                 secrets)[:200]) from None
        if _textual(headers.get("content-type", "")):
            text, encoding = decode_body(body, headers.get("content-type"))
        else:  # only page reads get here (any_content_type): a PDF is not text
            text, encoding = "", "binary"
        log.debug("%s %s%s -> %s (%d bytes, %s, %.0f ms%s)", request.method, urlsplit(url).netloc,
                  urlsplit(url).path, status, len(body), encoding, (time.perf_counter() - started) * 1000,
                  f", via {mask_url(proxy)}" if proxy else "")
        return Response(status=status, url=final_url, headers=headers, body=body, text=text)
