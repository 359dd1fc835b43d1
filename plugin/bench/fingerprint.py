"""What a client shows a server before it is served: a loopback TLS listener that records the TLS
ClientHello, then the HTTP/2 preface, SETTINGS, WINDOW_UPDATE and first request (or the HTTP/1.1
request), answers a small page, and computes the JA4 string of what it saw.

Engines that fingerprint clients (DuckDuckGo, Google) compare exactly these with the browser a User-Agent
claims to be; `scripts/fingerprint.py` prints ours beside Chromium's, and tests/test_fingerprint.py holds
our engine requests and page reads to a reference recorded from Chromium (bench/fingerprints/).

The listener runs on its own thread with blocking sockets, so that a client on the test's event loop, a
subprocess (the CLI) and a browser can all be captured alike. The ClientHello is read with MSG_PEEK before
the TLS handshake, which then consumes the same bytes.
"""

from __future__ import annotations

import hashlib
import socket
import ssl
import struct
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

# TLS extension and HTTP/2 numbers by name, for reports.
EXTENSION_NAMES = {
    0: "server_name", 5: "status_request", 10: "supported_groups", 11: "ec_point_formats",
    13: "signature_algorithms", 16: "alpn", 18: "signed_certificate_timestamp", 21: "padding",
    23: "extended_master_secret", 27: "compress_certificate", 35: "session_ticket", 41: "pre_shared_key",
    43: "supported_versions", 45: "psk_key_exchange_modes", 51: "key_share", 17513: "application_settings(old)",
    17613: "application_settings", 65037: "encrypted_client_hello", 65281: "renegotiation_info",
}
GROUP_NAMES = {29: "x25519", 23: "P-256", 24: "P-384", 25: "P-521", 30: "x448", 4588: "X25519MLKEM768",
               25497: "X25519Kyber768Draft00", 256: "ffdhe2048", 257: "ffdhe3072", 258: "ffdhe4096",
               259: "ffdhe6144", 260: "ffdhe8192"}
H2_SETTING_NAMES = {1: "HEADER_TABLE_SIZE", 2: "ENABLE_PUSH", 3: "MAX_CONCURRENT_STREAMS", 4: "INITIAL_WINDOW_SIZE",
                    5: "MAX_FRAME_SIZE", 6: "MAX_HEADER_LIST_SIZE", 8: "ENABLE_CONNECT_PROTOCOL",
                    9: "NO_RFC7540_PRIORITIES"}
# Extensions whose presence varies between connections of one browser: padding (sized to the hello) and
# pre_shared_key (only when a session is resumed).
VARYING_EXTENSIONS = frozenset({21, 41})
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def is_grease(value: int) -> bool:
    """RFC 8701 GREASE values (0x0a0a, 0x1a1a, … 0xfafa), which a browser sends at random."""
    return (value & 0x0F0F) == 0x0A0A and (value >> 8) == (value & 0xFF)


@dataclass
class ClientHello:
    ciphers: list[int] = field(default_factory=list)  # in order, GREASE included
    extensions: list[int] = field(default_factory=list)  # in order, GREASE included
    groups: list[int] = field(default_factory=list)
    key_shares: list[int] = field(default_factory=list)
    signature_algorithms: list[int] = field(default_factory=list)
    alpn: list[str] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    sni: str | None = None
    legacy_version: int = 0

    def ja4(self) -> str:
        """The JA4 string (FoxIO's spec): protocol, version, SNI, counts and ALPN; then hashes of the sorted
        ciphers and of the sorted extensions (without SNI and ALPN) with the signature algorithms."""
        versions = [v for v in self.versions if not is_grease(v)] or [self.legacy_version]
        version = {0x0304: "13", 0x0303: "12", 0x0302: "11", 0x0301: "10"}.get(max(versions), "00")
        ciphers = [c for c in self.ciphers if not is_grease(c)]
        extensions = [e for e in self.extensions if not is_grease(e)]
        first_alpn = self.alpn[0] if self.alpn else ""
        alpn = (first_alpn[0] + first_alpn[-1]) if first_alpn else "00"
        head = (f"t{version}{'d' if 0 in extensions else 'i'}{min(len(ciphers), 99):02d}"
                f"{min(len(extensions), 99):02d}{alpn}")
        cipher_hash = _hash12(",".join(f"{c:04x}" for c in sorted(ciphers)))
        hashed_extensions = ",".join(f"{e:04x}" for e in sorted(e for e in extensions if e not in (0, 16)))
        signatures = ",".join(f"{s:04x}" for s in self.signature_algorithms)
        extension_hash = _hash12(hashed_extensions + (f"_{signatures}" if signatures else ""))
        return f"{head}_{cipher_hash}_{extension_hash}"

    def comparable(self) -> dict[str, Any]:
        """What must equal the browser's: GREASE left out, extensions as a set (browsers shuffle their
        order) without the two whose presence varies."""
        plain = lambda values: [v for v in values if not is_grease(v)]  # noqa: E731
        return {
            "cipher_suites": plain(self.ciphers),
            "extensions": sorted(set(plain(self.extensions)) - VARYING_EXTENSIONS),
            "groups": plain(self.groups),
            "key_shares": plain(self.key_shares),
            "signature_algorithms": list(self.signature_algorithms),
            "alpn": list(self.alpn),
            "versions": plain(self.versions),
        }


def _hash12(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12] if text else "000000000000"


def _u16_list(data: bytes, offset: int, length_bytes: int = 2) -> list[int]:
    size = int.from_bytes(data[offset:offset + length_bytes], "big")
    start = offset + length_bytes
    return [int.from_bytes(data[i:i + 2], "big") for i in range(start, start + size - 1, 2)]


def parse_client_hello(handshake: bytes) -> ClientHello:
    """A ClientHello from its handshake message (type 1, 3-byte length, body)."""
    if len(handshake) < 4 or handshake[0] != 1:
        raise ValueError("not a ClientHello")
    body = handshake[4:4 + int.from_bytes(handshake[1:4], "big")]
    hello = ClientHello(legacy_version=int.from_bytes(body[0:2], "big"))
    at = 2 + 32  # version, random
    at += 1 + body[at]  # session id
    hello.ciphers = _u16_list(body, at)
    at += 2 + int.from_bytes(body[at:at + 2], "big")
    at += 1 + body[at]  # compression methods
    if at + 2 > len(body):
        return hello
    end = at + 2 + int.from_bytes(body[at:at + 2], "big")
    at += 2
    while at + 4 <= end:
        kind, size = struct.unpack("!HH", body[at:at + 4])
        data = body[at + 4:at + 4 + size]
        at += 4 + size
        hello.extensions.append(kind)
        if kind == 0 and len(data) > 5:  # server_name: list length, type, name length, name
            hello.sni = data[5:5 + int.from_bytes(data[3:5], "big")].decode("ascii", "replace")
        elif kind == 10:
            hello.groups = _u16_list(data, 0)
        elif kind == 13:
            hello.signature_algorithms = _u16_list(data, 0)
        elif kind == 16:
            names, i = [], 2
            while i < len(data):
                names.append(data[i + 1:i + 1 + data[i]].decode("ascii", "replace"))
                i += 1 + data[i]
            hello.alpn = names
        elif kind == 43:
            hello.versions = [int.from_bytes(data[i:i + 2], "big") for i in range(1, 1 + data[0], 2)]
        elif kind == 51:
            i = 2
            while i + 4 <= len(data):
                group, share = struct.unpack("!HH", data[i:i + 4])
                hello.key_shares.append(group)
                i += 4 + share
    return hello


@dataclass
class Capture:
    """One connection as the listener saw it."""

    hello: ClientHello
    protocol: str = ""  # "h2" or "http/1.1"
    h2_settings: list[tuple[int, int]] = field(default_factory=list)
    h2_window_update: int | None = None
    h2_priority_frames: int = 0
    pseudo_headers: list[str] = field(default_factory=list)
    headers: list[tuple[str, str]] = field(default_factory=list)  # in the order sent, names lower-case
    method: str = ""
    path: str = ""
    body: bytes = b""
    connection_request: int = 0  # 0 for a connection's first request, 1 for its second…

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key == name.lower()), None)

    def comparable(self) -> dict[str, Any]:
        return {**self.hello.comparable(), "protocol": self.protocol, "h2_settings": [list(p) for p in self.h2_settings],
                "h2_window_update": self.h2_window_update, "pseudo_header_order": list(self.pseudo_headers)}

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["body"] = self.body.decode("utf-8", "replace")
        data["ja4"] = self.hello.ja4()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Capture":
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["hello"] = ClientHello(**data["hello"])
        fields["h2_settings"] = [tuple(pair) for pair in data.get("h2_settings", [])]
        fields["headers"] = [tuple(pair) for pair in data.get("headers", [])]
        fields["body"] = str(data.get("body", "")).encode()
        return cls(**fields)


def differences(ours: Capture, reference: Capture) -> dict[str, tuple[Any, Any]]:
    """Field -> (ours, the reference's) for every compared field that differs."""
    mine, theirs = ours.comparable(), reference.comparable()
    return {key: (mine[key], theirs[key]) for key in theirs if mine.get(key) != theirs[key]}


class FingerprintListener:
    """A TLS listener on 127.0.0.1 with the certificate it is given, recording every request it is sent
    (`captures`, in arrival order; `connection_request` tells a connection's first from the reused). Answers each request with `body` (200, text/html)."""

    def __init__(self, cert_file: str, key_file: str, *, body: bytes = b"<html><body><p>captured</p></body></html>",
                 host: str = "127.0.0.1"):
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert_file, key_file)
        self.context.set_alpn_protocols(["h2", "http/1.1"])
        self.body = body
        self.captures: list[Capture] = []
        self.errors: list[str] = []
        self._socket = socket.create_server((host, 0))
        self._socket.settimeout(0.2)
        self.port = self._socket.getsockname()[1]
        self.url = f"https://{host}:{self.port}"
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="fingerprint-listener", daemon=True)

    def __enter__(self) -> "FingerprintListener":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._socket.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._socket.accept()
            except (socket.timeout, OSError):
                continue
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            hello = parse_client_hello(_peek_handshake(conn))
            with self.context.wrap_socket(conn, server_side=True) as tls:
                capture = Capture(hello=hello, protocol=tls.selected_alpn_protocol() or "http/1.1")
                if capture.protocol == "h2":
                    self._h2(tls, capture)
                else:
                    self._http1(tls, capture)
        except (OSError, ValueError, ssl.SSLError) as exc:
            with self._lock:
                self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            conn.close()

    def _record(self, capture: Capture) -> None:
        with self._lock:
            self.captures.append(capture)

    # ----- HTTP/1.1 -----
    def _http1(self, tls: ssl.SSLSocket, capture: Capture) -> None:
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            chunk = tls.recv(65536)
            if not chunk:
                return
            buffer += chunk
        head, _, rest = buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        capture.method, capture.path = lines[0].split(" ")[:2]
        capture.headers = [(name.strip().lower(), value.strip()) for name, _, value in
                           (line.partition(":") for line in lines[1:])]
        length = int(capture.header("content-length") or 0)
        while len(rest) < length:
            chunk = tls.recv(65536)
            if not chunk:
                break
            rest += chunk
        capture.body = rest[:length]
        self._record(capture)
        tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n"
                    + f"Content-Length: {len(self.body)}\r\n\r\n".encode() + self.body)

    # ----- HTTP/2 -----
    def _h2(self, tls: ssl.SSLSocket, capture: Capture) -> None:
        import hpack

        reader = _Frames(tls)
        if reader.exactly(len(H2_PREFACE)) != H2_PREFACE:
            raise ValueError("no HTTP/2 preface")
        decoder, encoder = hpack.Decoder(), hpack.Encoder()
        tls.sendall(_frame(4, 0, 0, b""))  # our SETTINGS (none)
        block, stream, requests = b"", 0, 0
        while True:
            kind, flags, stream_id, payload = reader.frame()
            if kind == 4 and not flags & 1:  # SETTINGS from the client
                if not capture.h2_settings:
                    capture.h2_settings = [struct.unpack("!HI", payload[i:i + 6]) for i in range(0, len(payload), 6)]
                tls.sendall(_frame(4, 1, 0, b""))
            elif kind == 8 and stream_id == 0 and capture.h2_window_update is None:
                capture.h2_window_update = struct.unpack("!I", payload[:4])[0] & 0x7FFFFFFF
            elif kind == 2:
                capture.h2_priority_frames += 1
            elif kind in (1, 9):  # HEADERS, CONTINUATION
                if kind == 1:
                    stream, block, ended = stream_id, b"", bool(flags & 1)
                    if flags & 8:  # PADDED
                        payload = payload[1:len(payload) - payload[0]]
                    if flags & 0x20:  # PRIORITY
                        payload = payload[5:]
                block += payload
                if flags & 4:  # END_HEADERS
                    headers = [(str(k), str(v)) for k, v in decoder.decode(block)]
                    body = b""
                    while not ended:  # a request body: DATA frames up to END_STREAM
                        kind, flags, stream_id, payload = reader.frame()
                        if kind == 0 and stream_id == stream:
                            body += payload[1:len(payload) - payload[0]] if flags & 8 else payload
                            ended = bool(flags & 1)
                        elif kind == 4 and not flags & 1:
                            tls.sendall(_frame(4, 1, 0, b""))
                    pseudo = dict(h for h in headers if h[0].startswith(":"))
                    # One capture per request; those after the first share the connection's hello and frames.
                    self._record(replace(capture, pseudo_headers=[k for k, _ in headers if k.startswith(":")],
                                         headers=[(k.lower(), v) for k, v in headers if not k.startswith(":")],
                                         method=pseudo.get(":method", ""), path=pseudo.get(":path", ""),
                                         body=body, connection_request=requests))
                    requests += 1
                    response = encoder.encode([(":status", "200"), ("content-type", "text/html; charset=utf-8"),
                                               ("content-length", str(len(self.body)))])
                    tls.sendall(_frame(1, 4, stream, response) + _frame(0, 1, stream, self.body))
            elif kind == 7:  # GOAWAY
                return


class _Frames:
    def __init__(self, tls: ssl.SSLSocket):
        self.tls = tls
        self.buffer = b""

    def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = self.tls.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def frame(self) -> tuple[int, int, int, bytes]:
        head = self.exactly(9)
        length = int.from_bytes(head[:3], "big")
        return head[3], head[4], int.from_bytes(head[5:9], "big") & 0x7FFFFFFF, self.exactly(length)


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def _peek_handshake(conn: socket.socket) -> bytes:
    """The first handshake message (the ClientHello), peeked across as many TLS records as it spans."""
    wanted = 5
    while True:
        data = conn.recv(wanted, socket.MSG_PEEK)
        if len(data) < wanted:
            if not data:
                raise ConnectionError("closed before a ClientHello")
            time.sleep(0.005)  # the rest of the hello is on its way
            continue
        records, at = b"", 0
        while at + 5 <= len(data):
            if data[at] != 22:
                raise ValueError("not a TLS handshake")
            size = int.from_bytes(data[at + 3:at + 5], "big")
            if at + 5 + size > len(data):
                wanted = at + 5 + size
                break
            records += data[at + 5:at + 5 + size]
            at += 5 + size
            if len(records) >= 4 and len(records) >= 4 + int.from_bytes(records[1:4], "big"):
                return records
        else:
            wanted = at + 5


def load_reference(path: Path) -> tuple[dict[str, Any], Capture, Capture]:
    """(the reference's facts: browser, version, date, how; its navigation; its form POST) from the JSON file
    scripts/fingerprint.py --record-reference writes."""
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    facts = {k: v for k, v in data.items() if k not in ("navigate", "form_post")}
    return facts, Capture.from_json(data["navigate"]), Capture.from_json(data["form_post"])


# Headers Chrome sends only for a request a person's gesture started (a click, a typed address); the
# reference's form is submitted by a script, so it lacks them where ours, standing for a person, has them.
GESTURE_HEADERS = frozenset({"sec-fetch-user"})


def header_order(capture: Capture) -> list[str]:
    """The names of the headers in the order sent, gesture-only ones aside."""
    return [name for name, _ in capture.headers if name not in GESTURE_HEADERS]


# ----- Chromium, as the reference -----
# A page that Chromium opens (a navigation), whose form it then submits (a form POST, as a person searching
# DuckDuckGo's HTML page does): both requests are captured.
FORM_PAGE = (b'<html><head><title>A loopback listener</title></head><body><article><h1>A loopback listener</h1>'
             + b'<p>This page stands in for a search engine and for a page a model reads. The listener that serves '
               b'it records the TLS handshake, the HTTP/2 frames and the headers of every client that asks for it, '
               b'so that what our engine requests and page reads show can be set beside what Chromium shows.</p>' * 2
             + b'</article><form method="post" action="/html/"><input name="q" value="fingerprint">'
               b'<input name="b" value=""></form>'
               b'<script>if (location.pathname == "/") document.forms[0].submit();</script></body></html>')


def find_chromium() -> str | None:
    """The installed Chromium, found as page rendering finds it (METASEARCH_CHROMIUM, else the PATH)."""
    import os

    from plugin.reading.chromium import find_chromium as found

    return found(os.environ.get("METASEARCH_CHROMIUM"))[0]


def chromium_version(binary: str) -> str:
    import subprocess

    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    return next((word for word in out.split() if word[:1].isdigit()), out.strip())


def capture_chromium(binary: str, url: str, timeout_s: float = 60) -> None:
    """Let headless Chromium open `url` (a listener serving FORM_PAGE) and submit its form, with a fresh
    profile and every background service off; its whole process group is gone when this returns."""
    import os
    import signal
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="metasearch-chromium-") as profile:
        command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   "--disable-extensions", f"--user-data-dir={profile}",
                   # The listener's certificate is a throw-away one; this changes nothing Chromium sends.
                   "--ignore-certificate-errors", "--virtual-time-budget=5000", "--dump-dom", url]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            pass
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()


def pick(captures: list[Capture], method: str, path: str) -> Capture | None:
    return next((c for c in captures if c.method == method and c.path.split("?")[0] == path), None)
