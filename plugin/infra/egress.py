"""How requests leave this process: through which proxy, and under which identity (User-Agent, extra
headers).

Proxy choice, first match wins: the engine's own entry in `proxies` (a URL, or `direct`), the `proxy`
setting, then (with `proxy_from_env`) `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` by the target's
scheme. A host listed in `NO_PROXY` is always reached directly. aiohttp's own `trust_env` is not used:
it knows no SOCKS and no per-engine choice, so the decision is made here for every request.

Proxy URLs may carry credentials (`http://user:secret@proxy:3128`); they are shown masked everywhere
(`plugin.infra.secrets.mask_url`) and their values join the redaction list (`url_secrets`).
"""

from __future__ import annotations

import os
import urllib.request
from typing import Mapping
from urllib.parse import urlsplit

from plugin.infra.secrets import mask_url

PROXY_SCHEMES = ("http", "https", "socks5", "socks5h", "socks4")
SOCKS_SCHEMES = ("socks5", "socks5h", "socks4")
DIRECT = "direct"


def with_scheme(url: str) -> str:
    """`host:3128` is an HTTP proxy, as curl reads HTTPS_PROXY and friends."""
    url = url.strip()
    return url if "://" in url else f"http://{url}"


def check_proxy_url(url: str) -> str:
    """A proxy URL with a known scheme and a host, else ValueError (a settings error)."""
    url = with_scheme(url)
    parts = urlsplit(url)
    if parts.scheme.lower() not in PROXY_SCHEMES or not parts.hostname:
        raise ValueError(f"a proxy must be a URL such as http://host:3128 or socks5://host:1080, "
                         f"got {mask_url(url)!r}")
    try:
        parts.port
    except ValueError:
        raise ValueError(f"proxy {mask_url(url)!r} has an invalid port") from None
    if parts.path not in ("", "/") or parts.query:
        raise ValueError(f"proxy {mask_url(url)!r} must not have a path or query")
    if parts.scheme.lower() in SOCKS_SCHEMES and not socks_available():
        raise ValueError(f"{parts.scheme} proxies need the socks extra: pip install 'metasearch[socks]'")
    return url


def socks_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("aiohttp_socks") is not None


def environment_proxies() -> dict[str, str]:
    """HTTP(S)_PROXY / ALL_PROXY from the environment, by scheme (lower-case names win, as in curl).

    Read by name on every request (the environment may change), not by scanning every variable as
    urllib's getproxies_environment does; same rules, CGI's HTTP_PROXY guard included."""
    found = {}
    env = os.environ
    for scheme in ("http", "https", "all"):
        lower = env.get(f"{scheme}_proxy")
        if lower is not None:  # set, even empty: it decides
            if lower.strip():
                found[scheme] = with_scheme(lower)
            continue
        upper = env.get(f"{scheme.upper()}_PROXY")
        if upper and not (scheme == "http" and "REQUEST_METHOD" in env):  # httpoxy (CVE-2016-1000110)
            found[scheme] = with_scheme(upper)
    return found


def no_proxy_list() -> str:
    """NO_PROXY as curl reads it: the lower-case name wins when set."""
    listed = os.environ.get("no_proxy")
    return listed if listed is not None else os.environ.get("NO_PROXY", "")


def _address(host: str):
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip().strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _network(entry: str):
    import ipaddress

    entry = entry.strip()
    if entry.startswith("["):  # [::1] or [fe80::]/10
        inside, _, rest = entry[1:].partition("]")
        entry = inside + rest
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None


def bypassed(host: str) -> bool:
    """Whether NO_PROXY names this host (or a domain it is in, or `*`). An address is matched as curl matches
    one: by the entries that are addresses or networks in CIDR form (127.0.0.1, 10.0.0.0/8, ::1, fc00::/7),
    and `*`; names are matched by domain as urllib does."""
    listed = no_proxy_list()
    if not listed.strip():
        return False
    address = _address(host)
    if address is None:
        return bool(urllib.request.proxy_bypass_environment(host, {"no": listed}))
    for entry in listed.split(","):
        if entry.strip() == "*":
            return True
        network = _network(entry)
        if network is not None and network.version == address.version and address in network:
            return True
    return False


def choose_proxy(url: str, engine: str, proxy: str | None, per_engine: Mapping[str, str],
                 from_env: bool) -> str | None:
    """The proxy URL for one request of `engine` to `url`, or None to connect directly."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return None
    if host and bypassed(host):
        return None
    chosen = per_engine.get(engine) or proxy
    if chosen:
        return None if chosen.strip().lower() == DIRECT else chosen
    if from_env:
        found = environment_proxies()
        return found.get(parts.scheme.lower()) or found.get("all")
    return None


def tls_context(ca_bundle) -> "ssl.SSLContext | None":
    """The TLS context that checks certificates against the system's roots and `ca_bundle`'s besides (the
    `ca_bundle` setting, a TLS-inspecting proxy's root, say); None when no bundle is set (the default serves)."""
    if ca_bundle is None:
        return None
    import ssl

    context = ssl.create_default_context()
    context.load_verify_locations(cafile=str(ca_bundle))
    return context


def identity_headers(headers: Mapping[str, str], user_agent: str | None,
                     extra: Mapping[str, str]) -> list[tuple[str, str]]:
    """The engine's headers, in their order, with the configured User-Agent and extra headers laid over
    them: a header the engine sends is replaced where it stands (names compared case-insensitively, so
    `user-agent` replaces the engine's `User-Agent`), a new one goes where place_header puts it."""
    merged = list(headers.items())
    overrides = dict(extra)
    if user_agent:
        overrides["User-Agent"] = user_agent
    for name, value in overrides.items():
        merged = place_header(merged, name, value)
    return merged


# The header Chrome sends last; one the transport adds (Cookie, an operator's extra header) goes before it.
LAST_HEADER = "priority"


def place_header(headers: list[tuple[str, str]], name: str, value: str) -> list[tuple[str, str]]:
    """`headers` with `name` set to `value`: in the place of the first header of that name (any later ones
    dropped), else before the `priority` header that ends a browser profile's headers, else last. An empty
    value removes the header."""
    lowered = name.lower()
    kept = [(key, val) for key, val in headers if key.lower() != lowered]
    if not value:
        return kept
    at = next((i for i, (key, _) in enumerate(headers) if key.lower() == lowered), None)
    if at is None:
        at = next((i for i, (key, _) in enumerate(kept) if key.lower() == LAST_HEADER), len(kept))
    return [*kept[:at], (name, value), *kept[at:]]
