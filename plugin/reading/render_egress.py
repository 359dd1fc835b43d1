"""A rendered page's only way out: an HTTP proxy in this process that resolves, checks and connects.

Chromium is told to send everything through a proxy on 127.0.0.1 (`--proxy-bypass-list=<-loopback>`
so that loopback addresses go through it too, and a host-resolver rule that fails every name, so the
browser never resolves or connects by itself). Each rendered read gets its own listener (`ReadEgress`),
named as its browser context's proxy, so what the page asks for is counted, capped and cut off with the
read. Every request the page makes arrives here, whatever made it (the document and its redirects,
frames, scripts, XHR/fetch, images, WebSockets, service workers): `CONNECT host:port` for https and
WebSockets, an absolute `http://` URL for plain http. For each, the same rules as a plain read
(plugin.reading.addresses): `check_url` judges the URL (address literals, `localhost`), the guarded
resolver resolves the name once and checks every address it returns, and the connection is made to
an address that was checked; nothing else is ever connected to. A refusal answers 403 and is noted
for the read's warnings.

Only what the page asked for goes out: the renderer sees each request the page makes before it leaves
(DevTools request interception) and tells the egress its host and port (`expect`); a connection to
anything else is the browser's own business (a preconnect to its default search engine, an account
check) and is refused without a word, so a render sends nothing the page did not ask for.

Behind the operator's proxy (the `proxy` setting, or HTTPS_PROXY / HTTP_PROXY / ALL_PROXY with
`proxy_from_env`, NO_PROXY hosts direct: the same choice as a plain read's, `plugin.infra.egress`), each
upstream connection is a tunnel through it to the checked address (`connect_through`: HTTP CONNECT, over
TLS for an https:// proxy, or SOCKS5 / SOCKS4), so a rendered page leaves by the same way as a plain read
and still reaches no address the guard did not pass; the proxy's own name is the operator's choice and is
resolved as the plain read resolves it.

`DenyAll` is the browser-wide proxy: anything outside a read's context (background requests of the
browser itself) is refused.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import socket
import ssl
import struct
from typing import Callable
from urllib.parse import unquote, urlsplit

from plugin.errors import FetchError
from plugin.reading.addresses import GuardedResolver, PrivateAddressRefused, Target

MAX_HEAD = 64 * 1024  # a request or response head longer than this is refused
CHUNK = 64 * 1024
CONNECT_TIMEOUT_S = 10.0
ASKED_GRACE_S = 0.3
_HOP_HEADERS = frozenset({"proxy-connection", "proxy-authorization", "connection", "keep-alive"})


class Refused(Exception):
    """A request the guard does not let out; the message says why (for the read's warnings)."""


class Unasked(Refused):
    """A connection the page did not ask for: the browser's own (refused, not worth a warning)."""


class ReadEgress:
    """The proxy of one rendered read: listening on 127.0.0.1 while the read lasts."""

    def __init__(self, guard: GuardedResolver, check: Callable[[str], Target], *, max_bytes: int,
                 max_connections: int, via: Callable[[str], str | None] | None = None,
                 proxy_tls: ssl.SSLContext | None = None):
        """`check`: the read's URL check (check_url with the read's allowance); `guard`: its resolver.
        `max_bytes`: bytes the page may pull in, all its requests together; `max_connections`: upstream
        connections it may open. `via`: the proxy URL a request to this URL goes through, or None for a
        direct connection; `proxy_tls`: the TLS context for an https:// proxy (the system's roots by default)."""
        self.guard = guard
        self.check = check
        self.via = via
        self.proxy_tls = proxy_tls
        self.max_bytes = max_bytes
        self.max_connections = max_connections
        self.refused: list[str] = []  # "host:port: why", in the order met
        self.connections = 0  # upstream connections opened (each to a checked address)
        self.connected: list[tuple[str, str, int]] = []  # (host asked, address connected, port)
        self.bytes_in = 0
        self.over_cap: str | None = None
        self.expected: set[tuple[str, int]] = set()  # (host, port) the page has asked for
        self.unasked: list[str] = []  # connections the page did not ask for (the browser's own), refused
        self.proxy_failures: list[str] = []  # "host:port: why" the operator's proxy would not carry
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task] = set()
        self.port = 0

    def started(self) -> None:
        """The read begins (a spare page's egress waited unused until now): nothing before counts."""
        self.refused.clear()
        self.unasked.clear()
        self.proxy_failures.clear()

    def expect(self, host: str, port: int) -> None:
        """The page asked for something at host:port (seen by the renderer before it leaves)."""
        self.expected.add((host.strip("[]").lower().rstrip("."), port))

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> "ReadEgress":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        """Stop listening and cut every connection of the read, both sides."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            try:
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
            except (asyncio.TimeoutError, TimeoutError):
                pass

    def _track(self, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)

    def _untrack(self, writer: asyncio.StreamWriter) -> None:
        self._writers.discard(writer)
        writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self._track(writer)
        try:
            while True:
                head = await _read_head(reader)
                if head is None:
                    return
                method, target, headers = _parse_request(head)
                if method == "CONNECT":
                    await self._tunnel(target, reader, writer)
                    return
                if not await self._forward(method, target, headers, reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, OSError):
            return
        except asyncio.CancelledError:  # the read is over (close): its connections end here, quietly
            return
        finally:
            self._untrack(writer)
            if task is not None:
                self._tasks.discard(task)

    # ----- the guard -----
    async def open(self, host: str, port: int, scheme: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to `host:port` for `scheme`, made to an address the guard passed; Refused otherwise."""
        shown = f"{host}:{port}"
        if not await self._asked_for(host.strip("[]").lower().rstrip("."), port):
            if len(self.unasked) < 50:
                self.unasked.append(shown)
            raise Unasked(f"{shown}: not asked for by the page")
        if self.over_cap is not None:
            raise Refused(f"{shown}: {self.over_cap}")
        if self.connections >= self.max_connections:
            self.over_cap = f"the page opened {self.max_connections} connections, the most one render may"
            raise Refused(f"{shown}: {self.over_cap}")
        literal = host if ":" not in host else f"[{host}]"
        try:
            checked = self.check(f"{scheme}://{literal}:{port}/")
        except FetchError as exc:
            raise Refused(f"{shown}: {exc.message}") from None
        try:
            addresses = [ipaddress.ip_address(checked.host).compressed]  # a literal: check_url judged it
        except ValueError:
            try:
                found = await asyncio.wait_for(self.guard.resolve(checked.host, port, family=socket.AF_UNSPEC),
                                               CONNECT_TIMEOUT_S)
            except PrivateAddressRefused as exc:
                raise Refused(f"{shown}: {exc}") from None
            except (OSError, asyncio.TimeoutError, TimeoutError) as exc:
                raise Refused(f"{shown}: {host} could not be resolved ({exc or 'timeout'})") from None
            addresses = list(dict.fromkeys(entry["host"] for entry in found))
        proxy = self.via(f"{scheme}://{literal}:{port}/") if self.via is not None else None
        problem: Exception | None = None
        for address in addresses:
            if not self.guard.permits(checked.host, address):  # resolve() checked them all; kept for literals
                raise Refused(f"{shown}: {address} is not an address a read may reach")
            try:
                self.connections += 1
                if proxy is None:
                    connecting = asyncio.open_connection(address, port, limit=MAX_HEAD)
                else:
                    connecting = connect_through(proxy, address, port, self.proxy_tls)
                opened = await asyncio.wait_for(connecting, CONNECT_TIMEOUT_S)
            except (OSError, asyncio.TimeoutError, TimeoutError, asyncio.IncompleteReadError) as exc:
                problem = exc
                if proxy is not None and len(self.proxy_failures) < 20:
                    why = str(exc) if isinstance(exc, ProxyRefused) else (
                        f"through the proxy: {type(exc).__name__} {exc}".rstrip())
                    self.proxy_failures.append(f"{shown}: {why}")
                continue
            self.connected.append((checked.host, address, port))
            self._track(opened[1])
            return opened
        raise ConnectionError(f"{shown}: {problem}")

    async def _asked_for(self, host: str, port: int) -> bool:
        """Whether the page asked for host:port. A WebSocket is announced by an event that may come a
        moment after its connection: a connection not yet expected waits ASKED_GRACE_S for it."""
        waited = 0.0
        while (host, port) not in self.expected:
            if waited >= ASKED_GRACE_S:
                return False
            await asyncio.sleep(0.02)
            waited += 0.02
        return True

    def _refuse(self, why: str) -> None:
        if len(self.refused) < 100 and why not in self.refused:
            self.refused.append(why)

    def _count(self, size: int) -> None:
        self.bytes_in += size
        if self.bytes_in > self.max_bytes and self.over_cap is None:
            self.over_cap = f"the page pulled in more than {self.max_bytes} bytes, the most one render may"
        if self.over_cap is not None and self.bytes_in > self.max_bytes:
            raise ConnectionError(self.over_cap)

    # ----- CONNECT (https, WebSockets) -----
    async def _tunnel(self, authority: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            host, port = _split_authority(authority, 443)
            upstream_reader, upstream_writer = await self.open(host, port, "https")
        except Refused as exc:
            if not isinstance(exc, Unasked):
                self._refuse(str(exc))
            await _answer(writer, 403, str(exc))
            return
        except (ConnectionError, ValueError) as exc:
            await _answer(writer, 502, str(exc))
            return
        try:
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await writer.drain()
            await _both_ways(reader, writer, upstream_reader, upstream_writer, self._count)
        finally:
            self._untrack(upstream_writer)

    # ----- absolute-form http:// requests -----
    async def _forward(self, method: str, url: str, headers: list[tuple[str, str]], reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> bool:
        """One plain-http request through a fresh upstream connection; True when the client connection may
        carry another request."""
        parts = urlsplit(url)
        if parts.scheme.lower() != "http" or not parts.hostname:
            why = f"{url[:100]}: only http:// and https:// are reachable from a rendered page"
            self._refuse(why)
            await _answer(writer, 403, why)
            return False
        host, port = parts.hostname, parts.port or 80
        try:
            upstream_reader, upstream_writer = await self.open(host, port, "http")
        except Refused as exc:
            if not isinstance(exc, Unasked):
                self._refuse(str(exc))
            await _discard_body(headers, reader)
            await _answer(writer, 403, str(exc), keep_alive=True)
            return True
        except ConnectionError as exc:
            await _answer(writer, 502, str(exc))
            return False
        try:
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            lines = [f"{method} {path} HTTP/1.1"]
            lines += [f"{name}: {value}" for name, value in headers if name.lower() not in _HOP_HEADERS]
            lines.append("Connection: close")  # one request per upstream connection: framing stays simple
            upstream_writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            await _relay_body(headers, reader, upstream_writer, lambda size: None)
            await upstream_writer.drain()
            try:
                return await self._relay_response(method, upstream_reader, writer, reader, upstream_writer)
            except UnreadableStatus as exc:  # nothing of the answer has gone to the page yet
                await _answer(writer, 502, f"{host}:{port}: {exc}")
                return False
        finally:
            self._untrack(upstream_writer)

    async def _relay_response(self, method: str, upstream: asyncio.StreamReader, writer: asyncio.StreamWriter,
                              client: asyncio.StreamReader, upstream_writer: asyncio.StreamWriter) -> bool:
        """The upstream's answer to the client. The upstream connection serves one request; the client's
        stays open when the answer is framed (a length, chunks, or no body), so Chromium may reuse it."""
        while True:
            head = await _read_head(upstream)
            if head is None:
                return False
            self._count(len(head))
            status = _status_of(head)
            if 100 <= status < 200 and status != 101:
                writer.write(head)
                continue  # 100 Continue and the like: the real answer follows
            break
        headers = _header_list(head)
        if status == 101:  # an upgrade over plain http: bytes both ways from here on
            writer.write(head)
            await _both_ways(client, writer, upstream, upstream_writer, self._count)
            return False
        fields = {name.lower() for name, _ in headers}
        bodiless = method == "HEAD" or status in (204, 304)
        framed = bodiless or "content-length" in fields or any(
            name.lower() == "transfer-encoding" and "chunked" in value.lower() for name, value in headers)
        lines = [head.split(b"\r\n", 1)[0].decode("latin-1")]
        lines += [f"{name}: {value}" for name, value in headers if name.lower() not in _HOP_HEADERS]
        lines.append("Connection: keep-alive" if framed else "Connection: close")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        if bodiless:
            await writer.drain()
            return True
        ended = await _relay_body(headers, upstream, writer, self._count, until_eof=True)
        await writer.drain()
        return framed and ended


class ProxyRefused(ConnectionError):
    """The operator's proxy would not open the tunnel (its answer says why; credentials never shown)."""


async def connect_through(proxy: str, address: str, port: int, tls: ssl.SSLContext | None = None
                          ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A stream to `address:port` (an address the guard passed) tunnelled through `proxy`: HTTP CONNECT
    (TLS to the proxy for https://, Basic credentials from the URL), SOCKS5 (RFC 1928, user and password by
    RFC 1929; socks5h alike, since the address is already resolved and checked) or SOCKS4. The proxy is
    asked for the address itself, never a name, so nothing is looked up again behind the guard."""
    parts = urlsplit(proxy)
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else ""
    where = f"{scheme}://{host}:{parts.port}" if parts.port else f"{scheme}://{host}"  # never the credentials
    if scheme in ("http", "https"):
        reader, writer = await asyncio.open_connection(
            host, parts.port or (443 if scheme == "https" else 80), limit=MAX_HEAD,
            ssl=(tls or ssl.create_default_context()) if scheme == "https" else None,
            server_hostname=host if scheme == "https" else None)
        try:
            authority = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
            lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
            if user is not None:
                token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
                lines.append(f"Proxy-Authorization: Basic {token}")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            head = await _read_head(reader)
            status_line = head.split(b"\r\n", 1)[0].decode("latin-1") if head else ""
            parts_of_status = status_line.split(" ", 2)
            if len(parts_of_status) < 2 or not parts_of_status[1].isdigit() or not 200 <= int(parts_of_status[1]) < 300:
                raise ProxyRefused(f"the proxy {where} answered {status_line or 'nothing'!r} to CONNECT")
            return reader, writer
        except BaseException:
            writer.transport.abort()
            raise
    if scheme in ("socks5", "socks5h", "socks4"):
        reader, writer = await asyncio.open_connection(host, parts.port or 1080, limit=MAX_HEAD)
        try:
            if scheme == "socks4":
                await _socks4(reader, writer, address, port, user or "", where)
            else:
                await _socks5(reader, writer, address, port, user, password, where)
            return reader, writer
        except BaseException:
            writer.transport.abort()
            raise
    raise ProxyRefused(f"the proxy {where} is of a kind a rendered page cannot go through")


async def _socks5(reader, writer, address: str, port: int, user: str | None, password: str, where: str) -> None:
    methods = b"\x00\x02" if user is not None else b"\x00"
    writer.write(bytes([5, len(methods)]) + methods)
    await writer.drain()
    version, method = await reader.readexactly(2)
    if version != 5 or method not in methods:
        raise ProxyRefused(f"the proxy {where} accepts none of our ways to log in")
    if method == 2:
        name, secret = (user or "").encode(), password.encode()
        writer.write(bytes([1, len(name)]) + name + bytes([len(secret)]) + secret)
        await writer.drain()
        if (await reader.readexactly(2))[1] != 0:
            raise ProxyRefused(f"the proxy {where} refused our credentials")
    ip = ipaddress.ip_address(address)
    kind = 1 if ip.version == 4 else 4
    writer.write(bytes([5, 1, 0, kind]) + ip.packed + struct.pack("!H", port))
    await writer.drain()
    _, reply, _, bound = await reader.readexactly(4)
    if reply != 0:
        raise ProxyRefused(f"the proxy {where} would not connect (SOCKS5 reply {reply})")
    length = {1: 4, 4: 16}.get(bound)
    if length is None:  # a name: its length comes first
        length = (await reader.readexactly(1))[0]
    await reader.readexactly(length + 2)  # the address the proxy bound, and its port


async def _socks4(reader, writer, address: str, port: int, user: str, where: str) -> None:
    ip = ipaddress.ip_address(address)
    if ip.version != 4:
        raise ProxyRefused(f"the proxy {where} speaks SOCKS4, which cannot reach the IPv6 address {address}")
    writer.write(bytes([4, 1]) + struct.pack("!H", port) + ip.packed + user.encode() + b"\x00")
    await writer.drain()
    _, reply = (await reader.readexactly(8))[:2]
    if reply != 0x5A:
        raise ProxyRefused(f"the proxy {where} would not connect (SOCKS4 reply {reply})")


class DenyAll:
    """The browser-wide proxy: refuses every request (nothing outside a read's context may go out)."""

    def __init__(self) -> None:
        self._server: asyncio.base_events.Server | None = None
        self.port = 0
        self.refused = 0

    async def start(self) -> "DenyAll":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if await _read_head(reader) is not None:
                self.refused += 1
                await _answer(writer, 403, "nothing outside a rendered read goes out")
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, OSError):
            pass
        finally:
            writer.transport.abort()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            try:
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
            except (asyncio.TimeoutError, TimeoutError):
                pass


# ----- HTTP/1.1 framing, as little as a forwarding proxy needs -----
async def _read_head(reader: asyncio.StreamReader) -> bytes | None:
    """A request or response head up to and including its blank line; None at a clean end of stream."""
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise


def _parse_request(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x request line: {line[:100]!r}")
    return parts[0].upper(), parts[1], _header_list(head)


class UnreadableStatus(ValueError):
    """An upstream answer whose first line is not `HTTP/1.x <three digits> ...`."""


def _status_of(head: bytes) -> int:
    """The status of a response head; UnreadableStatus when its first line has none."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not (len(parts[1]) == 3 and parts[1].isascii()
                                                                   and parts[1].isdigit()):
        raise UnreadableStatus(f"the server's answer has no status line ({line[:60]!r})")
    return int(parts[1])


def _header_list(head: bytes) -> list[tuple[str, str]]:
    found = []
    for raw in head.split(b"\r\n")[1:]:
        if not raw:
            continue
        name, _, value = raw.decode("latin-1").partition(":")
        found.append((name.strip(), value.strip()))
    return found


def _split_authority(authority: str, default_port: int) -> tuple[str, int]:
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "")
    if not host:
        raise ValueError(f"no host in {authority[:100]!r}")
    return host.lower(), int(port) if port else default_port


async def _answer(writer: asyncio.StreamWriter, status: int, why: str, keep_alive: bool = False) -> None:
    body = why.encode("utf-8", "replace")[:2000]
    reason = {403: "Forbidden", 502: "Bad Gateway"}.get(status, "Error")
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
                 f"{len(body)}\r\nConnection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n".encode() + body)
    try:
        await writer.drain()
    except ConnectionError:
        pass


async def _relay_body(headers: list[tuple[str, str]], source: asyncio.StreamReader, sink: asyncio.StreamWriter,
                      count: Callable[[int], None], until_eof: bool = False) -> bool:
    """Copy one message body as its headers frame it; True when it ended by its framing (the connection
    may carry another message), False when it ran to the end of the stream."""
    fields = {name.lower(): value for name, value in headers}
    if "chunked" in fields.get("transfer-encoding", "").lower():
        while True:
            line = await source.readuntil(b"\r\n")
            count(len(line))
            sink.write(line)
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while True:  # trailers, then the blank line
                    trailer = await source.readuntil(b"\r\n")
                    sink.write(trailer)
                    if trailer == b"\r\n":
                        return True
            await _copy_exactly(source, sink, size + 2, count)
    length = fields.get("content-length")
    if length is not None:
        await _copy_exactly(source, sink, int(length), count)
        return True
    if not until_eof:
        return True  # a request without a body
    while True:
        data = await source.read(CHUNK)
        if not data:
            return False
        count(len(data))
        sink.write(data)
        await sink.drain()


async def _discard_body(headers: list[tuple[str, str]], reader: asyncio.StreamReader) -> None:
    class _Nowhere:
        def write(self, data: bytes) -> None:
            pass

        async def drain(self) -> None:
            pass

    await _relay_body(headers, reader, _Nowhere(), lambda size: None)  # type: ignore[arg-type]


async def _copy_exactly(source: asyncio.StreamReader, sink: asyncio.StreamWriter, size: int,
                        count: Callable[[int], None]) -> None:
    left = size
    while left > 0:
        data = await source.read(min(CHUNK, left))
        if not data:
            raise asyncio.IncompleteReadError(b"", left)
        count(len(data))
        left -= len(data)
        sink.write(data)
        await sink.drain()


async def _both_ways(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter,
                     upstream_reader: asyncio.StreamReader, upstream_writer: asyncio.StreamWriter,
                     count: Callable[[int], None]) -> None:
    async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter, counted: bool) -> None:
        try:
            while True:
                data = await source.read(CHUNK)
                if not data:
                    break
                if counted:
                    count(len(data))
                sink.write(data)
                await sink.drain()
        finally:
            if sink.can_write_eof():
                try:
                    sink.write_eof()
                except OSError:
                    pass

    tasks = [asyncio.ensure_future(pump(client_reader, upstream_writer, False)),
             asyncio.ensure_future(pump(upstream_reader, client_writer, True))]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        # One side ended cleanly: let the other finish (a half-closed tunnel), errors end both.
        if any(task.exception() for task in done if not task.cancelled()):
            return
        if pending:
            await asyncio.wait(pending)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
