"""The browser HTTP client (`transport = "browser"`, the default, for scraped engines and page reads):
libcurl built to present Chrome's TLS and HTTP/2 (curl_cffi).

Why curl_cffi: its impersonation targets reproduce Chrome's ClientHello (cipher suites, extension set and
its shuffling, X25519MLKEM768 key share, ALPS, certificate compression, GREASE ECH) and HTTP/2 SETTINGS,
WINDOW_UPDATE and pseudo-header order byte for byte (tests/test_fingerprint.py compares them with
Chromium's), it runs on asyncio (libcurl's multi interface driven by the event loop: no thread per
request), and it exposes libcurl's own options: RESOLVE and CONNECT_TO pin a connection to the address
the page reader checked, WRITEFUNCTION lets the size cap stop a transfer at once, certificate checks stay
on. (primp, the alternative, is a Rust client with its own fingerprints but no way to pin an address.)
It is imported at the first request, never at start-up.

The transfer itself: headers exactly as the transport orders them (the profile's; no defaults of curl's
own), libcurl's decoding off (plugin.infra.exchange.Body decodes, so a truncated stream is caught and a
bomb is capped), no redirects followed, no cookie engine, no proxy but the one chosen for the request.
One libcurl multi handle per event loop holds the connection pool: connections (HTTP/2 multiplexed) are
reused per upstream. A cancelled request is removed from the multi handle at once: no transfer outlives
the search that asked for it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import tempfile
from urllib.parse import urlsplit, urlunsplit

from plugin.infra import memo
from plugin.infra.egress import SOCKS_SCHEMES
from plugin.infra.exchange import Body, Incoming, Outgoing, TransportError, check_head, codings_of
from plugin.infra.lifecycle import LoopBound, PerLoop
from plugin.infra.secrets import mask_url
from plugin.settings import Settings


class _Multi:
    """The libcurl multi handle of one event loop (its connection pool) and what closes it with the loop.
    curl_cffi's AsyncCurl wakes every 100 ms while it is open (a timer that keeps libcurl on track), idle
    or not: ~0.35 % of a core and ten wake-ups a second in a long-lived MCP or serve process. So the pool
    is closed once it has had no request for `pool_idle_s`, and the next request opens a fresh one."""

    def __init__(self) -> None:
        self.handle = None
        self.closer: LoopBound | None = None
        self.active = 0  # requests out through the handle
        self.idle: asyncio.TimerHandle | None = None  # the close planned for when it has stayed idle
        self.closing: set[asyncio.Task] = set()

    @property
    def closed(self) -> bool:
        return self.handle is None or self.handle._curlm is None


class BrowserClient:
    def __init__(self, settings: Settings):
        self.settings = settings
        self._multis: PerLoop[_Multi] = PerLoop(_Multi)
        self._cacert: str | None = None

    def _multi(self):
        from curl_cffi.aio import AsyncCurl
        from curl_cffi.const import CurlMOpt

        multi = self._multis.get()
        if multi.handle is None:
            multi.handle = AsyncCurl(cacert=self.cacert())
            # Keep as many idle connections as may be out at once, so every upstream's stays open for reuse.
            multi.handle.setopt(CurlMOpt.MAXCONNECTS, self.settings.pool_limit)
            multi.closer = LoopBound(multi.handle.close)
        return multi.handle

    def cacert(self) -> str:
        """The CA file libcurl checks certificates with: the default roots, plus `ca_bundle`'s when set
        (libcurl takes one file, so the two are written into one, once per process and bundle)."""
        if self._cacert is None:
            from curl_cffi.curl import DEFAULT_CACERT

            bundle = self.settings.ca_bundle
            if bundle is None:
                self._cacert = DEFAULT_CACERT
            else:
                self._cacert = _combined_bundle(DEFAULT_CACERT, str(bundle))
        return self._cacert

    @property
    def pool(self) -> _Multi | None:
        """The running loop's connection pool, if one was opened."""
        multi = self._multis.current()
        return multi if multi is not None and multi.handle is not None else None

    async def close(self) -> None:
        multi = self._multis.current()
        self._multis.forget()
        if multi is not None:
            if multi.idle is not None:
                multi.idle.cancel()
            if multi.closer is not None:
                await multi.closer.close()
            if multi.closing:
                await asyncio.gather(*multi.closing, return_exceptions=True)

    def _busy(self, multi: _Multi) -> None:
        if multi.idle is not None:
            multi.idle.cancel()
            multi.idle = None
        multi.active += 1

    def _done(self, multi: _Multi) -> None:
        multi.active -= 1
        if multi.active == 0 and multi.handle is not None:
            multi.idle = asyncio.get_running_loop().call_later(self.settings.pool_idle_s, self._close_idle, multi)

    def _close_idle(self, multi: _Multi) -> None:
        """The pool has had no request for `pool_idle_s`: closed (detached first, so a request that comes
        while it closes opens a fresh one)."""
        multi.idle = None
        if multi.active or multi.closer is None:
            return
        closer, multi.handle, multi.closer = multi.closer, None, None
        task = asyncio.get_running_loop().create_task(closer.close())
        multi.closing.add(task)
        task.add_done_callback(multi.closing.discard)

    async def send(self, outgoing: Outgoing) -> Incoming:
        from curl_cffi.curl import Curl, CurlError

        url, headers, pins = await self._pinned(outgoing)
        if urlsplit(url).scheme == "http" and not any(k.lower() == "connection" for k, _ in headers):
            headers.insert(0, ("Connection", "keep-alive"))  # Chrome's HTTP/1.1 (HTTP/2 has no such header)
        if outgoing.proxy and outgoing.resolve_proxy is not None:
            pins["proxy"] = await self._proxy_pin(outgoing.proxy, outgoing.resolve_proxy)
        curl = Curl(cacert=self.cacert())
        head = _Head(outgoing)
        connect_to = _Slist()
        pool = self._multis.get()
        self._busy(pool)
        try:
            self._configure(curl, outgoing, url, headers, pins, head, connect_to)
            multi = self._multi()
            future = multi.add_handle(curl)
            try:
                await future
            except asyncio.CancelledError:
                multi.remove_handle(curl)  # the transfer stops now, not when libcurl next looks
                raise
            except CurlError as exc:
                if head.failure is not None:
                    raise head.failure from None
                raise self._failure(exc, curl, outgoing) from None
            if head.failure is not None:
                raise head.failure
            if outgoing.proxy and head.status == 407:  # the proxy's answer to a forwarded request
                raise TransportError("error", f"proxy {mask_url(outgoing.proxy)} refused the request: HTTP 407 "
                                              "Proxy Authentication Required")
            if head.body is None:  # no body callback ever came: an empty answer
                head.finish_headers()
            return Incoming(status=head.status, url=outgoing.url, headers=head.headers, body=head.body.finish(),
                            protocol=head.protocol, set_cookies=[v for k, v in head.headers if k.lower() == "set-cookie"])
        finally:
            curl.close()
            connect_to.free()  # after the handle that pointed at it
            self._done(pool)

    def _configure(self, curl, outgoing: Outgoing, url: str, headers: list[tuple[str, str]],
                   pins: dict, head: "_Head", connect_to: "_Slist") -> None:
        from curl_cffi.const import CurlHttpVersion, CurlOpt

        if outgoing.profile and curl.impersonate(outgoing.profile, default_headers=False) != 0:
            raise TransportError("error", f"the browser profile {outgoing.profile!r} is not known to curl_cffi")
        curl.setopt(CurlOpt.URL, url.encode())
        # HTTP/2 where TLS offers it (ALPN), HTTP/1.1 in clear text, as Chrome: never an h2c Upgrade.
        curl.setopt(CurlOpt.HTTP_VERSION, CurlHttpVersion.V2TLS)
        curl.setopt(CurlOpt.HTTPHEADER, [_header_line(name, value) for name, value in headers])
        curl.setopt(CurlOpt.HTTP_CONTENT_DECODING, 0)  # Body decodes (and caps) what the headers accept
        curl.setopt(CurlOpt.FOLLOWLOCATION, 0)
        curl.setopt(CurlOpt.NOSIGNAL, 1)
        curl.setopt(CurlOpt.PROTOCOLS_STR, b"http,https")
        # A backstop only: the transport holds the exchange to its clock and cancels it.
        curl.setopt(CurlOpt.TIMEOUT_MS, int(max(outgoing.timeout_s, 0.001) * 1000) + 1000)
        if outgoing.method == "POST":
            curl.setopt(CurlOpt.POST, 1)
        elif outgoing.method != "GET":
            curl.setopt(CurlOpt.CUSTOMREQUEST, outgoing.method.encode())
        if outgoing.body is not None:
            curl.setopt(CurlOpt.POSTFIELDS, outgoing.body)
            curl.setopt(CurlOpt.POSTFIELDSIZE, len(outgoing.body))
        proxy = outgoing.proxy
        curl.setopt(CurlOpt.PROXY, (proxy or "").encode())  # "": none, not libcurl's reading of the environment
        curl.setopt(CurlOpt.NOPROXY, b"")
        if proxy:
            curl.setopt(CurlOpt.SUPPRESS_CONNECT_HEADERS, 1)  # the tunnel's own answer is not the page's
            if urlsplit(url).scheme == "https" and not _socks(proxy):
                curl.setopt(CurlOpt.HTTPPROXYTUNNEL, 1)
        resolved = [pins[key].encode() for key in ("resolve", "proxy") if pins.get(key)]
        if resolved:
            curl.setopt(CurlOpt.RESOLVE, resolved)
        if "connect_to" in pins:  # curl_cffi's setopt takes no list for this option: the slist is ours
            connect_to.set(curl, CurlOpt.CONNECT_TO, pins["connect_to"])
        curl.setopt(CurlOpt.HEADERFUNCTION, head.header_line)
        curl.setopt(CurlOpt.WRITEFUNCTION, head.body_chunk)

    async def _pinned(self, outgoing: Outgoing) -> tuple[str, list[tuple[str, str]], dict]:
        """(the URL to ask, the headers, libcurl's pins): with a guarded lookup, the connection goes to the
        addresses it returned and nowhere else: RESOLVE when connecting directly, CONNECT_TO through a tunnel
        or a SOCKS proxy (the proxy is asked for the address, not the name); an http:// read through an HTTP
        proxy asks for the address in the request line, the name kept in Host."""
        url, headers = outgoing.url, list(outgoing.headers)
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if outgoing.resolve is None or not host or _literal(host):
            return url, headers, {}
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = await outgoing.resolve(host, port)
        if not addresses:
            raise TransportError("error", f"connection failed: {host} has no address", reason="unreachable")
        proxy = outgoing.proxy
        if not proxy:
            return url, headers, {"resolve": f"{host}:{port}:{','.join(_bracketed(a) for a in addresses)}"}
        if parts.scheme == "https" or _socks(proxy):
            return url, headers, {"connect_to": f"{host}:{port}:{_bracketed(addresses[0])}:{port}"}
        netloc = _bracketed(addresses[0]) + (f":{parts.port}" if parts.port else "")
        return (urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")),
                [("Host", parts.netloc.rpartition("@")[2]), *headers], {})

    async def _proxy_pin(self, proxy: str, resolve) -> str:
        """A RESOLVE entry for the proxy's own name, looked up by the page reader's proxy resolver (the
        operator's choice of proxy is not held to the page rules), so that libcurl does no lookup of its own."""
        parts = urlsplit(proxy)
        host = (parts.hostname or "").lower()
        if not host or _literal(host):
            return ""
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme.lower(), 1080)
        addresses = await resolve(host, port)
        return f"{host}:{port}:{','.join(_bracketed(a) for a in addresses)}" if addresses else ""

    def _failure(self, exc, curl, outgoing: Outgoing) -> TransportError:
        from curl_cffi.const import CurlECode, CurlInfo

        code = getattr(exc, "code", 0)
        message = str(exc).split("curl: ", 1)[-1].split(". See https://curl.se", 1)[0]
        proxy = outgoing.proxy
        if proxy:
            shown = mask_url(proxy)
            connect_code = int(curl.getinfo(CurlInfo.HTTP_CONNECTCODE) or 0)
            if connect_code >= 300:
                reason = {407: "Proxy Authentication Required"}.get(connect_code, "")
                return TransportError("error", f"proxy {shown} refused the request: HTTP {connect_code} {reason}".rstrip())
            if code in (CurlECode.COULDNT_CONNECT, CurlECode.COULDNT_RESOLVE_PROXY) or (
                    code == CurlECode.PROXY and "connect" in message.lower() and "proxy" in message.lower()
                    and not _target_side(message)):
                return TransportError("error", f"proxy {shown} unreachable: {message}", reason="unreachable",
                                      proxy=shown)
            if code == CurlECode.PROXY:
                return TransportError("error", f"proxy {shown} failed: {message}")
        if code == CurlECode.OPERATION_TIMEDOUT:
            return TransportError("timeout", f"no complete answer: {message}")
        if code in (CurlECode.COULDNT_RESOLVE_HOST, CurlECode.COULDNT_CONNECT):
            return TransportError("error", f"connection failed: {message}", reason="unreachable",
                                  cause=OSError(message))
        if code == CurlECode.PEER_FAILED_VERIFICATION:
            return TransportError("error", f"TLS failed: certificate verify failed (CERTIFICATE_VERIFY_FAILED): {message}")
        if code in (CurlECode.SSL_CONNECT_ERROR, CurlECode.SSL_CERTPROBLEM, CurlECode.SSL_CIPHER,
                    CurlECode.SSL_CACERT_BADFILE, CurlECode.USE_SSL_FAILED):
            return TransportError("error", f"TLS failed: {message}")
        if code in (CurlECode.PARTIAL_FILE, CurlECode.RECV_ERROR, CurlECode.GOT_NOTHING, CurlECode.HTTP2,
                    CurlECode.HTTP2_STREAM, CurlECode.BAD_CONTENT_ENCODING):
            return TransportError("error", f"body could not be read: {message}")
        return TransportError("error", f"curl error {int(code)}: {message}")


class _Head:
    """What libcurl's callbacks hand over for one transfer: the last response's status line and headers
    (a 1xx answer or a proxy's CONNECT answer is replaced by the one after it), then the body, collected
    against the cap; `failure` keeps why a callback stopped the transfer."""

    def __init__(self, outgoing: Outgoing):
        self.outgoing = outgoing
        self.status = 0
        self.protocol = ""
        self.headers: list[tuple[str, str]] = []
        self.body: Body | None = None
        self.failure: TransportError | None = None

    def header_line(self, line: bytes) -> int:
        from curl_cffi.curl import CURL_WRITEFUNC_ERROR

        text = line.decode("latin-1").rstrip("\r\n")
        if text.startswith("HTTP/"):
            version, _, rest = text.partition(" ")
            self.protocol, self.status, self.headers, self.body = version, int(rest[:3] or 0), [], None
        elif not text:
            if self.status >= 200:
                try:
                    self.finish_headers()
                except TransportError as exc:
                    self.failure = exc
                    return CURL_WRITEFUNC_ERROR
        elif ":" in text and not text[0].isspace():
            name, _, value = text.partition(":")
            self.headers.append((name.strip(), value.strip()))
        elif self.headers:  # an obsolete folded continuation line
            name, value = self.headers[-1]
            self.headers[-1] = (name, f"{value} {text.strip()}")
        return len(line)

    def finish_headers(self) -> None:
        if 300 <= self.status < 400 and any(k.lower() == "location" for k, _ in self.headers):
            self.body = Body("", self.outgoing.cap)  # a redirect's body is not read as the page
        else:
            check_head(self.status, self.headers, self.outgoing.cap, self.outgoing.any_content_type)
            self.body = Body(codings_of(self.headers), self.outgoing.cap)

    def body_chunk(self, chunk: bytes) -> int:
        from curl_cffi.curl import CURL_WRITEFUNC_ERROR

        try:
            if self.body is None:
                self.finish_headers()
            self.body.feed(chunk)
        except TransportError as exc:
            self.failure = exc
            return CURL_WRITEFUNC_ERROR
        return len(chunk)


class _Slist:
    """A libcurl string list we own (for CONNECT_TO), freed once the handle using it is gone."""

    def __init__(self) -> None:
        self._list = None

    def set(self, curl, option, *entries: str) -> None:
        from curl_cffi._wrapper import ffi, lib

        self._list = self._list or ffi.NULL
        for entry in entries:
            self._list = lib.curl_slist_append(self._list, entry.encode())
        if lib._curl_easy_setopt(curl._curl, option, self._list) != 0:
            raise TransportError("error", "libcurl refused the connection's address pin")

    def free(self) -> None:
        if self._list is not None:
            from curl_cffi._wrapper import lib

            lib.curl_slist_free_all(self._list)
            self._list = None


def _header_line(name: str, value: str) -> bytes:
    # "Name;" sends a header with an empty value (libcurl drops "Name:" lines).
    return (f"{name}: {value}" if value else f"{name};").encode("latin-1", "replace")


def _socks(proxy: str) -> bool:
    return urlsplit(proxy).scheme.lower() in SOCKS_SCHEMES


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


def _bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def _target_side(message: str) -> bool:
    """A SOCKS proxy that answered but could not reach the target (not our way out being down)."""
    lowered = message.lower()
    return any(word in lowered for word in ("refused by", "host unreachable", "connection refused", "ttl expired",
                                            "not allowed", "general", "network unreachable"))


# (default, extra, their contents' digest) -> the file made; forgetting it only makes the next file anew.
_COMBINED: dict[tuple[str, str, bytes], str] = memo.register({})


def _combined_bundle(default: str, extra: str) -> str:
    """One file with the default roots and the extra ones, made once per process and pair of contents."""
    import hashlib

    with open(default, "rb") as roots, open(extra, "rb") as added:
        data = roots.read() + b"\n" + added.read() + b"\n"
    key = (default, extra, hashlib.sha256(data).digest())
    if key in _COMBINED and os.path.exists(_COMBINED[key]):
        return _COMBINED[key]
    handle, path = tempfile.mkstemp(prefix="metasearch-ca-", suffix=".pem")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    import atexit

    atexit.register(_remove, path)
    _COMBINED[key] = path
    return path


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
