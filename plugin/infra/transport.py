"""The one place that does network I/O.

`Transport.fetch` is the one network path of engines and page reads: wait for admission (per-upstream
politeness, queue time kept apart: plugin/infra/admission.py), then spend the engine's own time on the
exchange, hop by hop (our own redirect following: every hop counted, cookied and, for page reads,
checked), through the proxy chosen for it (plugin.infra.egress), with the body read against a size cap
and decoded with its real charset.

Two HTTP clients sit behind it, one interface (plugin.infra.exchange: Outgoing in, Incoming out):
- browser (plugin.infra.http_browser, curl_cffi): a scraped engine's or a page read's request goes out
  with the TLS and HTTP/2 fingerprint of the browser its headers name (engines.browser: the engine's facts
  name its profile), so that an engine sees one Chrome, not a Python client wearing a Chrome User-Agent;
- plain (plugin.infra.http_plain, aiohttp): keyed JSON APIs (an API client is what they expect, and they
  authenticate by key, not by looking like a browser), and every request when the `transport` setting is
  `plain`.

Cookies: no client keeps a jar. An engine gets exactly the cookies it asks for (its request's `Cookie`
header) and those its own exchange was set (the `cookies` jar the runner passes to each fetch of the
exchange, redirect hops included), never another search's or another caller's.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
import socket
import time
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from engines.base import Headers, Request, Response
from plugin.infra.admission import OVERLOADED, Admission, EngineClock, Overloaded
from plugin.infra.charset import decode_body
from plugin.infra.egress import choose_proxy, identity_headers, place_header
from plugin.infra.exchange import Incoming, Outgoing, TransportError, textual
from plugin.infra.logs import get_logger
from plugin.infra.secrets import MIN_SECRET_CHARS, mask_url, redact, url_secrets
from plugin.settings import Settings

log = get_logger("metasearch.transport")

__all__ = ["Transport", "TransportError", "with_endpoint", "ENGINE_PROFILE"]

REDIRECTS = frozenset({301, 302, 303, 307, 308})
ENGINE_PROFILE = "engine"  # Transport.fetch(profile=...): the engine's own (its facts), the default


def with_endpoint(url: str, endpoint: str | None) -> str:
    """`url` with its scheme, host and port replaced by those of `endpoint`."""
    if not endpoint:
        return url
    target = urlsplit(url)
    override = urlsplit(endpoint)
    return urlunsplit((override.scheme, override.netloc, target.path, target.query, target.fragment))


def _cookie_header(exchange: dict[str, str], explicit: str | None) -> str | None:
    """The exchange's cookies, then the request's own `Cookie` header, which wins on a name both set."""
    merged = dict(exchange)
    for part in (explicit or "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name:
            merged[name] = value
    return "; ".join(f"{name}={value}" for name, value in merged.items()) or None


def _take_cookies(jar: dict[str, str], set_cookies: list[str]) -> None:
    """Cookies set by one response (its Set-Cookie headers), into the exchange's jar; one already expired (a
    Max-Age of 0 or less, else an Expires date past: how a server deletes a cookie) removes it."""
    from http.cookies import CookieError, SimpleCookie

    for header in set_cookies:
        parsed: SimpleCookie = SimpleCookie()
        try:
            parsed.load(header)
        except CookieError:
            continue
        for name, morsel in parsed.items():
            if _expired(morsel["max-age"], morsel["expires"]):
                jar.pop(name, None)
            else:
                jar[name] = morsel.value


def _expired(max_age: str, expires: str) -> bool:
    """Whether a Set-Cookie's lifetime has already ended (RFC 6265 5.3: Max-Age wins over Expires)."""
    max_age = max_age.strip()
    if max_age:
        try:
            return int(max_age) <= 0
        except ValueError:  # not a number: the attribute is ignored
            pass
    if expires.strip():
        import email.utils

        try:
            when = email.utils.parsedate_to_datetime(expires.strip())
        except (TypeError, ValueError, IndexError):
            return False
        return when.timestamp() <= time.time()
    return False


def _origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, the default port spelt out: what a redirect may change or keep."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


def _with_params(url: str, params: tuple[tuple[str, str], ...]) -> str:
    if not params:
        return url
    parts = urlsplit(url)
    query = "&".join(filter(None, (parts.query, urlencode(list(params)))))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def _encoded_body(request: Request, headers: list[tuple[str, str]]) -> tuple[bytes | None, list[tuple[str, str]]]:
    """The request's body as bytes, with the Content-Type it implies when the request names none."""
    if request.form is not None:
        body, kind = urlencode(list(request.form)).encode(), "application/x-www-form-urlencoded"
    elif request.json is not None:
        body, kind = jsonlib.dumps(request.json).encode(), "application/json"
    else:
        return None, headers
    if not any(name.lower() == "content-type" for name, _ in headers):
        headers = place_header(headers, "Content-Type", kind)
    return body, headers


class Transport:
    def __init__(self, settings: Settings, *, resolver=None, proxy_resolver=None):
        """`resolver`: the DNS lookup of direct connections (page reads pass their guarded resolver, whose
        answer the connection is pinned to; engines use the system's). `proxy_resolver`: with `resolver`,
        the lookup of an HTTP proxy's own name on the plain path (the operator's choice, not held to the
        page rules)."""
        self.settings = settings
        self._resolver = resolver
        self._proxy_resolver = proxy_resolver
        self._plain = None  # made at the first plain request: aiohttp (~0.25 s to import) is imported then
        self._browser = None  # made at the first browser request: curl_cffi is imported then, not at start-up
        self.admission = Admission(settings)

    @property
    def plain(self):
        if self._plain is None:
            from plugin.infra.http_plain import PlainClient

            self._plain = PlainClient(self.settings, resolver=self._resolver, proxy_resolver=self._proxy_resolver)
        return self._plain

    @property
    def browser(self):
        if self._browser is None:
            from plugin.infra.http_browser import BrowserClient

            self._browser = BrowserClient(self.settings)
        return self._browser

    def profile(self, engine: str, asked: str | None = ENGINE_PROFILE) -> str | None:
        """The browser profile this engine's requests present, or None for the plain client: the engine's
        facts (or `asked`), unless the `transport` setting is `plain`."""
        if self.settings.transport == "plain":
            return None
        if asked != ENGINE_PROFILE:
            return asked
        from engines import ENGINES

        found = ENGINES.get(engine)
        return found.facts.profile if found is not None else None

    @property
    def pool(self):
        """The running loop's connection pool of the client in use (for tests of its lifetime), or None."""
        if self.settings.transport == "plain" or self._browser is None:
            return self.plain.pool
        return self._browser.pool

    async def close(self) -> None:
        if self._plain is not None:
            await self._plain.close()
        if self._browser is not None:
            await self._browser.close()

    async def fetch(self, request: Request, engine: str, clock: EngineClock,
                    cookies: dict[str, str] | None = None, *, follow_redirects: bool = True,
                    any_content_type: bool = False, profile: str | None = ENGINE_PROFILE) -> Response:
        """Perform one exchange: wait for admission (queue time), then spend the engine's own time.
        `cookies` is the jar of the engine exchange this request belongs to: sent with it, and updated
        with what it sets. Page reads (plugin.reading) pass follow_redirects=False, to check every hop
        themselves, any_content_type=True, to take PDFs (a body that is not text is then not decoded:
        `text` is ""), and their browser `profile`."""
        url = with_endpoint(_with_params(request.url, request.params), self.settings.endpoints.get(engine))
        try:
            async with self.admission.admit(self.settings.upstream(engine), engine, clock):
                return await self._exchange(request, engine, url, clock, cookies, follow_redirects,
                                            any_content_type, self.profile(engine, profile))
        except Overloaded:
            raise TransportError("skipped", OVERLOADED) from None

    async def _exchange(self, request: Request, engine: str, url: str, clock: EngineClock,
                        cookies: dict[str, str] | None, follow_redirects: bool, any_content_type: bool,
                        profile: str | None) -> Response:
        remaining = clock.remaining()
        if remaining <= 0:
            raise TransportError("timeout", "deadline passed before the request was sent")
        started = time.perf_counter()
        settings = self.settings
        client = self.browser if profile else self.plain
        jar = cookies if cookies is not None else {}
        headers = identity_headers(request.headers, settings.user_agent, settings.extra_headers)
        body, headers = _encoded_body(request, headers)
        method = request.method
        secrets: tuple[str, ...] = tuple(request.secrets)
        proxy = None
        try:
            async with clock.out():
                for hop in range(settings.max_redirects + 2):
                    proxy = choose_proxy(url, engine, settings.proxy, settings.proxies, settings.proxy_from_env)
                    # Credentials of the proxy are redacted from every detail, like API keys.
                    secrets = (*request.secrets, *url_secrets(proxy))
                    incoming = await client.send(self._outgoing(method, url, headers, body, jar, proxy, profile,
                                                                any_content_type, clock))
                    _take_cookies(jar, incoming.set_cookies)
                    location = next((v for k, v in incoming.headers if k.lower() == "location"), "").strip()
                    if not (follow_redirects and incoming.status in REDIRECTS and location):
                        break
                    if hop == settings.max_redirects:
                        raise TransportError("error", f"more than {settings.max_redirects} redirects (redirect loop?)")
                    url, previous = urljoin(url, location), url
                    if _origin(url) != _origin(previous):
                        # A key is sent to the host it was given for, never along a redirect to another one (as
                        # browsers drop Authorization on a cross-origin redirect).
                        headers = [(k, v) for k, v in headers if k.lower() != "authorization" and
                                   not any(len(key) >= MIN_SECRET_CHARS and key in v for key in request.secrets)]
                    if incoming.status == 303 or (incoming.status in (301, 302) and method == "POST"):
                        # As browsers do: the form's answer is fetched with GET, without the form.
                        method, body = "GET", None
                        headers = [(k, v) for k, v in headers if k.lower() not in ("content-type", "origin")]
        except TransportError as exc:
            raise TransportError(exc.kind, redact(exc.detail, secrets)[:200], reason=exc.reason, cause=exc.cause,
                                 proxy=exc.proxy) from None
        except (asyncio.TimeoutError, TimeoutError):
            raise TransportError("timeout", f"no complete answer within {remaining * 1000:.0f} ms") from None
        except (UnicodeError, ValueError) as exc:
            raise TransportError("error", redact(f"invalid request or response: {exc}", secrets)[:200]) from None
        except OSError as exc:  # the guarded lookup refused the name, or could not resolve it
            raise TransportError("error", redact(f"connection failed: {exc}", secrets)[:200], reason="unreachable",
                                 cause=exc) from None
        response_headers = Headers(incoming.headers)
        if textual(response_headers.get("content-type", "")):
            text, encoding = decode_body(incoming.body, response_headers.get("content-type"))
        else:  # only page reads get here (any_content_type): a PDF is not text
            text, encoding = "", "binary"
        shown = urlsplit(mask_url(url))  # an instance URL may carry credentials (https://user:pass@searx.example)
        log.debug("%s %s%s -> %s (%d bytes, %s, %s, %.0f ms%s)", method, shown.netloc, shown.path,
                  incoming.status, len(incoming.body), encoding, incoming.protocol or "?",
                  (time.perf_counter() - started) * 1000, f", via {mask_url(proxy)}" if proxy else "")
        return Response(status=incoming.status, url=url, headers=response_headers, body=incoming.body, text=text)

    def _outgoing(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes | None,
                  jar: dict[str, str], proxy: str | None, profile: str | None, any_content_type: bool,
                  clock: EngineClock) -> Outgoing:
        if jar:
            explicit = next((value for name, value in headers if name.lower() == "cookie"), None)
            headers = place_header(headers, "Cookie", _cookie_header(jar, explicit) or "")
        if profile and body is not None:  # Chrome sends a body's length first
            headers = [("content-length", str(len(body))),
                       *[(k, v) for k, v in headers if k.lower() != "content-length"]]
        return Outgoing(method=method, url=url, headers=headers, body=body, cap=self.settings.max_response_bytes,
                        any_content_type=any_content_type, proxy=proxy, profile=profile,
                        resolve=self._pin if self._resolver is not None else None,
                        resolve_proxy=self._pin_proxy if proxy and self._proxy_resolver is not None else None,
                        timeout_s=clock.remaining())

    async def _pin(self, host: str, port: int) -> list[str]:
        """The addresses a guarded lookup allows for `host` (raises when it refuses): what the browser
        client pins its connection to."""
        return await _addresses(self._resolver, host, port)

    async def _pin_proxy(self, host: str, port: int) -> list[str]:
        return await _addresses(self._proxy_resolver, host, port)


async def _addresses(resolver, host: str, port: int) -> list[str]:
    found: list[dict[str, Any]] = await resolver.resolve(host, port, socket.AF_UNSPEC)
    return list(dict.fromkeys(entry["host"] for entry in found))
