"""Domain lists (`allowed_domains`, `blocked_domains`): checking them and matching hosts against them.

Domains are compared in their ASCII (punycode) form under IDNA 2008 with UTS #46 mapping, the form yarl
uses, so `bücher.de`, `BÜCHER.de` and `xn--bcher-kva.de` are one domain. A domain matches itself and
every subdomain: `python.org` covers `docs.python.org`, never `notpython.org`.
"""

from __future__ import annotations

import re
from typing import Iterable

import idna

from engines.hosts import HOST_LABEL
from engines.redirects import unwrap
from plugin.errors import INVALID_PARAMETER, SearchError
from plugin.pipeline.canonical import desktop_host, host_of

MAX_DOMAINS = 100  # per list; more is a mistake (or an attempt to make every row cost a long scan)
_TLD = re.compile(r"^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$")


def ascii_domain(raw: str) -> str | None:
    """The lower-case ASCII form of a domain name, or None when `raw` is not one.

    Accepts a Unicode or punycode name, with or without a trailing dot; refuses IP addresses, single
    labels (`localhost`), empty labels and code points IDNA 2008 does not allow.
    """
    name = raw.strip().rstrip(".")
    if not name or len(name) > 253 + 20:
        return None
    try:
        encoded = idna.encode(name, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        # Underscores are not valid IDNA but do occur in real host names (my_site.blogspot.com).
        encoded = name.lower() if name.isascii() and "_" in name else ""
    labels = encoded.split(".")
    if len(labels) < 2 or len(encoded) > 253:
        return None
    if not all(HOST_LABEL.fullmatch(label) for label in labels) or not _TLD.match(labels[-1]):
        return None
    return encoded


def check_domain(name: str, raw: object) -> str:
    """One caller-given domain in ASCII form; a scheme, a leading `*.` or `.` and a trailing `/` are
    tolerated, anything else that is not a bare domain is `invalid_parameter`."""
    text = raw.strip() if isinstance(raw, str) else ""
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text, flags=re.I).rstrip("/")
    text = re.sub(r"^\*?\.", "", text)
    domain = ascii_domain(text) if text and not re.search(r"[/\s:@?#]", text) else None
    if domain is None:
        raise SearchError(INVALID_PARAMETER,
                          f"{name} must hold domains such as python.org or bücher.de, got {str(raw)[:60]!r}",
                          parameter=name)
    return domain


def check_domains(name: str, raw: object) -> tuple[str, ...]:
    """A domain list from a list, tuple or comma-separated string; normalised, de-duplicated, in order."""
    if raw is None or raw == "" or raw == [] or raw == ():
        return ()
    if isinstance(raw, str):
        items: Iterable[object] = raw.split(",")
    elif isinstance(raw, (list, tuple, set, frozenset)):
        items = [part for value in raw
                 for part in (value.split(",") if isinstance(value, str) else [value])]
    else:
        raise SearchError(INVALID_PARAMETER, f"{name} must be a list of domains", parameter=name)
    domains = [check_domain(name, item) for item in items if not (isinstance(item, str) and not item.strip())]
    if len(domains) > MAX_DOMAINS:
        raise SearchError(INVALID_PARAMETER, f"{name} holds {len(domains)} domains; at most {MAX_DOMAINS}",
                          parameter=name)
    return tuple(dict.fromkeys(domains))


def row_host(url: str) -> str:
    """The ASCII host a row's URL points at (redirect wrappers unwrapped), '' when it has none."""
    return host_of(unwrap(url.strip()))


def within(host: str, domains: Iterable[str]) -> bool:
    """Whether `host` is one of `domains` or a subdomain of one."""
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def passes(url: str, allowed: tuple[str, ...], blocked: tuple[str, ...]) -> bool:
    """Whether a row's URL is inside the allow list (when there is one) and outside the block list.

    A mobile host is shown under its desktop twin (canonical.desktop_host), the same pages: either host
    names the row, so `site:en.wikipedia.org` keeps its mobile rows, `site:en.m.wikipedia.org` keeps them
    too (shown at the desktop address), and a blocked site never shows through its mobile host."""
    if not allowed and not blocked:
        return True
    host = row_host(url)
    hosts = {host, desktop_host(host)}
    if allowed and not any(within(name, allowed) for name in hosts):
        return False
    return not (blocked and any(within(name, blocked) for name in hosts))
