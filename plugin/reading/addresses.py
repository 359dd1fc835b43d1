"""Which addresses a page read may reach.

A model chooses the URLs it reads, and a page can redirect anywhere, so a read must not become a way
into the machine or the network it runs on (SSRF): only http and https, and never a host that is, or
resolves to, a loopback, private, link-local, shared, multicast or reserved address.

The check sits where the connection is made. `GuardedResolver` is the page session's DNS resolver:
aiohttp connects to exactly the addresses it returns, so a name cannot pass the check with a public
address and then connect to a private one (DNS rebinding), and every address a name resolves to is
checked, not just the first. Hosts written as IP addresses never reach a resolver; `check_url`
refuses private ones before any connection, for the first URL and for every redirect hop.

`allow_private_hosts` (METASEARCH_ALLOW_PRIVATE_HOSTS) is a `PrivateAllowance`: `1` turns the address
check off (self-hosters reading their own network); a comma-separated list of address blocks and host
names (`127.0.0.1/32,10.1.2.0/24,searx.internal`) lets reads reach those and nothing else private.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult

from engines.hosts import HOST_LABEL
from plugin.errors import INVALID_URL, PRIVATE_ADDRESS, FetchError

MAX_URL_CHARS = 4096
from plugin.reading.allowance import ALLOW_VARIABLE, NOTHING_ALLOWED, PrivateAllowance  # noqa: F401 (re-exported)



def private_address(message: str, url: str | None = None, allowance: PrivateAllowance = NOTHING_ALLOWED) -> FetchError:
    """FetchError private_address: `message`, then how to opt in (naming the allow-list when one is set)."""
    return FetchError(PRIVATE_ADDRESS, f"{message} ({allowance.opt_in()})", **({"url": url} if url else {}))


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str  # lower-case, IPv6 without brackets
    port: int

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return f"{self.scheme}://{host}" + ("" if self.port == default else f":{self.port}")


def public_address(address: str) -> bool:
    """True for an address on the public internet: not loopback, private, link-local, shared (CGNAT),
    multicast, unspecified or reserved, also when an IPv4 address hides inside IPv6 (mapped, 6to4)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # ::ffff:a.b.c.d is a.b.c.d
            return public_address(str(ip.ipv4_mapped))
        if ip in _NAT64:  # 64:ff9b::/96 carries an IPv4 address in its last 32 bits
            return public_address(str(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
        if ip.sixtofour is not None and not public_address(str(ip.sixtofour)):
            return False
    return ip.is_global and not ip.is_multicast and not ip.is_reserved


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def check_url(url: object, *, allow_private: "bool | PrivateAllowance",
              public: Callable[[str], bool] = public_address) -> Target:
    """The URL as a Target, or FetchError invalid_url / private_address. `allow_private`: what may be
    reached beyond public addresses (`PrivateAllowance`, or a bool for all or nothing). `public`
    classifies addresses (tests let a loopback stand-in play a public site)."""
    allowance = PrivateAllowance.of(allow_private)
    if not isinstance(url, str) or not url.strip():
        raise FetchError(INVALID_URL, "url is required: an http:// or https:// address" if url is None or isinstance(
            url, str) else f"url must be a string, an http:// or https:// address; got {type(url).__name__}")
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise FetchError(INVALID_URL, f"url is longer than {MAX_URL_CHARS} characters")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise FetchError(INVALID_URL, "url contains control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError as exc:
        raise FetchError(INVALID_URL, f"url is malformed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchError(INVALID_URL, f"only http and https URLs can be read, not {scheme}" if scheme else
                         "url has no scheme: give an http:// or https:// address")
    if not host:
        raise FetchError(INVALID_URL, "url has no host")
    host = host.rstrip(".").lower()
    if not host:
        raise FetchError(INVALID_URL, "url has no host")
    ascii_host = host
    if ":" not in host:  # a name (IPv6 literals were checked by urlsplit)
        try:
            ascii_host = host if host.isascii() else host.encode("idna").decode("ascii")
        except UnicodeError:
            ascii_host = ""
        if len(ascii_host) > 253 or not all(HOST_LABEL.fullmatch(label) for label in ascii_host.split(".")):
            raise FetchError(INVALID_URL, f"host {host[:80]!r} is not a valid domain name")
        # Judged as clients send it: IDNA maps full-width digits and letters and the ideographic full stop
        # to ASCII, so "１２７.０.０.１" is 127.0.0.1 and "ＬＯＣＡＬＨＯＳＴ" is localhost.
        ascii_host = ascii_host.rstrip(".").lower()
    target = Target(url=url, scheme=scheme, host=host, port=port or (443 if scheme == "https" else 80))
    if not allowance.everything:
        literal = _ip_literal(ascii_host)
        if literal is not None and not public(literal) and not allowance.permits_address(literal):
            raise private_address(f"{host} is not a public address; reading it is refused", allowance=allowance)
        # The machine itself, whatever DNS says; with address blocks allowed, the resolver judges its addresses.
        if (ascii_host == "localhost" or ascii_host.endswith(".localhost")) and not (
                allowance.permits_name(host) or allowance.networks):
            raise private_address(f"{host} is this machine; reading it is refused", allowance=allowance)
    return target


def _ip_literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    # Legacy IPv4 spellings (2130706433, 0x7f.1, 127.1) that a C resolver would accept.
    try:
        return socket.inet_ntoa(socket.inet_aton(host)) if all(c in "0123456789abcdefx." for c in host) else None
    except OSError:
        return None


class PrivateAddressRefused(OSError):
    """A name resolved to an address a page read may not reach. An OSError, so that aiohttp reports it
    as a DNS failure of the connection (`ClientConnectorDNSError.os_error`) instead of a crash."""

    def __init__(self, host: str, address: str):
        super().__init__(f"{host} resolves to {address}, which is not a public address; reading it is refused")
        self.host = host
        self.address = address


class GuardedResolver(AbstractResolver):
    """Resolves with `inner` (the system resolver by default) and refuses the name when any of its
    addresses is neither public nor allowed (`allow_private`, a PrivateAllowance or a bool), unless the
    name itself is on the allow-list."""

    def __init__(self, inner: AbstractResolver | None = None, *, allow_private: "bool | PrivateAllowance" = False,
                 public: Callable[[str], bool] = public_address):
        if inner is None:
            from aiohttp.resolver import ThreadedResolver

            inner = ThreadedResolver()
        self.inner = inner
        self.allowance = PrivateAllowance.of(allow_private)
        self.public = public

    def permits(self, host: str, address: str) -> bool:
        """Whether a connection for `host` may go to `address` (the one rule of every guarded connection)."""
        return self.public(address) or self.allowance.permits_address(address) or self.allowance.permits_name(host)

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        found = await self.inner.resolve(host, port, family)
        for entry in found:
            if not self.permits(host, entry["host"]):
                raise PrivateAddressRefused(host, entry["host"])
        return found

    async def close(self) -> None:
        await self.inner.close()
