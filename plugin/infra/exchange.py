"""What the transport hands an HTTP client and gets back, whichever client it is (plugin.infra.transport:
aiohttp for the plain path, curl_cffi for the browser path), and the body collector both use.

A client sends one request (no redirect following: the transport follows hops itself, so both paths
see, count and cookie every hop alike) and returns its answer with the body decompressed by `Body`:
gzip, deflate, br and zstd, each decoded in bounded steps so that a compression bomb is refused at the
size cap instead of filling memory, and a stream that ends before its compressed end is reported as
truncated instead of passed off as the page.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Awaitable, Callable


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


# A name's addresses, checked (the page reader's guarded resolver); raises when the name may not be reached.
Resolve = Callable[[str, int], Awaitable[list[str]]]


@dataclass
class Outgoing:
    """One request as it goes on the wire: headers in the order they are sent, the body as bytes."""

    method: str
    url: str  # query string included
    headers: list[tuple[str, str]]
    body: bytes | None
    cap: int  # the most body bytes taken, after decompression
    any_content_type: bool = False  # else a body that is not text is refused before it is read
    proxy: str | None = None
    profile: str | None = None  # the browser presented (engines.browser.PROFILES); None: a plain client
    resolve: Resolve | None = None  # the guarded lookup whose answer the connection is pinned to
    resolve_proxy: Resolve | None = None  # the lookup of the proxy's own name (page reads: not guarded)
    timeout_s: float = 0.0  # the exchange's own time left (the transport also holds it to it)


@dataclass
class Incoming:
    status: int
    url: str
    headers: list[tuple[str, str]]  # as received, repeated names kept (Set-Cookie)
    body: bytes
    protocol: str = ""  # "HTTP/2", "HTTP/1.1": what was spoken, for logs and tests
    set_cookies: list[str] = field(default_factory=list)


TEXTUAL = ("text/", "application/json", "application/xhtml", "application/xml", "application/javascript",
           "application/x-javascript", "application/problem+json")


def textual(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return not kind or kind.startswith(TEXTUAL) or kind.endswith("+json") or kind.endswith("+xml")


def check_head(status: int, headers: list[tuple[str, str]], cap: int, any_content_type: bool) -> None:
    """Refuse an answer before its body is read: a declared size over the cap, or (for engines) a body that
    is not text. Redirects and other bodiless answers pass whatever they declare."""
    values = {name.lower(): value for name, value in headers}
    declared = values.get("content-length", "").strip()
    if declared.isdigit() and int(declared) > cap:
        raise TransportError("error", f"response of {declared} bytes exceeds the {cap}-byte cap", reason="too_large")
    content_type = values.get("content-type", "")
    if not any_content_type and 200 <= status < 300 and not textual(content_type):
        raise TransportError("error", f"unexpected content type {content_type.split(';')[0][:60]}")


class _Zlib:
    def __init__(self, raw_fallback: bool = False) -> None:
        self._inflate = zlib.decompressobj(47)  # 32 + 15: gzip or zlib header, detected
        # `deflate` is also sent as a raw stream, without the zlib header (older servers): browsers read it, so
        # the first bytes are kept until they have passed as a header, to be read again as raw deflate if not.
        self._head: bytes | None = b"" if raw_fallback else None

    def feed(self, chunk: bytes, room: int) -> bytes:
        if self._head is None:
            return self._inflate.decompress(chunk, room)
        self._head += chunk
        try:
            out = self._inflate.decompress(chunk, room)
        except zlib.error:
            head, self._head = self._head, None
            self._inflate = zlib.decompressobj(-15)
            return self._inflate.decompress(head, room)
        if len(self._head) >= 2:  # a zlib header's two bytes were accepted
            self._head = None
        return out

    @property
    def finished(self) -> bool:
        return self._inflate.eof


class _Brotli:
    def __init__(self) -> None:
        import brotli

        self._decompressor = brotli.Decompressor()
        self._error = brotli.error

    def feed(self, chunk: bytes, room: int) -> bytes:
        try:
            return self._decompressor.process(chunk, output_buffer_limit=room)
        except self._error as exc:
            raise ValueError(str(exc) or "invalid brotli stream") from None

    @property
    def finished(self) -> bool:
        return self._decompressor.is_finished()


class _Zstd:
    def __init__(self) -> None:
        try:
            from compression import zstd  # Python 3.14+
        except ImportError:
            from backports import zstd
        self._decompressor = zstd.ZstdDecompressor()
        self._error = zstd.ZstdError

    def feed(self, chunk: bytes, room: int) -> bytes:
        if self._decompressor.eof:  # one frame, as browsers read it; anything after it is ignored
            return b""
        try:
            return self._decompressor.decompress(chunk, room)
        except self._error as exc:
            raise ValueError(str(exc)) from None

    @property
    def finished(self) -> bool:
        return self._decompressor.eof


_DECODERS = {"gzip": _Zlib, "x-gzip": _Zlib, "deflate": lambda: _Zlib(raw_fallback=True), "br": _Brotli, "zstd": _Zstd}
DECODED = "gzip, deflate, br, zstd"  # what Body decodes: the Accept-Encoding a browser sends


MAX_CODINGS = 5  # codings one body may stack (curl's limit): more is no server's honest answer, only work for us
# An inner layer of a stacked body is compressed data: no bigger than what it decodes to, beyond a little framing.
_LAYER_SLACK = 1 / 64


def codings_of(headers: list[tuple[str, str]]) -> str:
    """The body's Content-Encoding as one list: every such header line, in order (RFC 9110 5.3)."""
    return ", ".join(v for k, v in headers if k.lower() == "content-encoding")


class Body:
    """Collects a body against the size cap, decompressing it ourselves so that a truncated or corrupt
    stream is reported as such and the cap applies to the decompressed size (each step of a decoder is
    asked for no more than the room left, so a bomb never expands past cap + 1 bytes).

    `encoding`: the Content-Encoding list ("gzip, br": gzip applied first, so br is undone first, RFC 9110
    8.4). Every layer is bounded: the last by the cap, each inner one (compressed data itself) by the cap
    and a little framing, so a bomb through two layers, or one hidden in the middle layer, is cut alike."""

    def __init__(self, encoding: str, cap: int):
        codings = [c.strip().lower() for c in encoding.split(",")]
        codings = [c for c in codings if c not in ("", "identity")]
        unknown = next((c for c in codings if c not in _DECODERS), None)
        if unknown is not None:
            raise TransportError("error", f"unsupported content encoding {unknown[:30]!r}")
        if len(codings) > MAX_CODINGS:
            raise TransportError("error", f"unsupported content encoding: {len(codings)} codings stacked "
                                          f"(at most {MAX_CODINGS})")
        self._decoders = [_DECODERS[c]() for c in reversed(codings)]
        inner = cap + int(cap * _LAYER_SLACK) + 4096
        self._limits = [inner] * (len(self._decoders) - 1) + [cap]
        self._produced = [0] * len(self._decoders)
        self.cap = cap
        self.size = 0
        self.received = 0
        self.chunks: list[bytes] = []

    def feed(self, chunk: bytes) -> None:
        self.received += len(chunk)
        for layer, decoder in enumerate(self._decoders):
            if not chunk:
                break
            limit = self._limits[layer]
            try:
                chunk = decoder.feed(chunk, limit + 1 - self._produced[layer])
            except (zlib.error, ValueError) as exc:
                raise TransportError("error", f"body could not be decompressed: {exc}") from None
            self._produced[layer] += len(chunk)
            if self._produced[layer] > limit:
                raise TransportError("error", f"response exceeds the {self.cap}-byte cap", reason="too_large")
        self.size += len(chunk)
        if self.size > self.cap:
            raise TransportError("error", f"response exceeds the {self.cap}-byte cap", reason="too_large")
        self.chunks.append(chunk)

    def finish(self) -> bytes:
        if self.received and not all(decoder.finished for decoder in self._decoders):
            raise TransportError("error", "body could not be decompressed: the stream ended early (truncated)")
        return b"".join(self.chunks)
