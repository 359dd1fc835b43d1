"""Redirect wrappers that engines put around result links, and how to unwrap them.

Engines call `unwrap` on their own links; the plugin's canonicaliser calls it
again on every row, so a wrapper that slipped through (or arrived via another
engine, e.g. SearXNG relaying Bing) is still unwrapped.
"""

from __future__ import annotations

import base64
import binascii
from urllib.parse import parse_qs, unquote, urljoin, urlsplit


def _bing_target(query: dict[str, list[str]]) -> str | None:
    # /ck/a?...&u=a1<base64url of the target>
    for value in query.get("u", []):
        if value.startswith("a1"):
            payload = value[2:]
            payload += "=" * (-len(payload) % 4)
            try:
                return base64.urlsafe_b64decode(payload).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                return None
    return None


def _yahoo_target(path: str) -> str | None:
    # /_ylt=...;_ylu=.../RV=2/RE=.../RO=10/RU=<percent-encoded target>/RK=2/RS=...
    marker = "/RU="
    start = path.find(marker)
    if start < 0:
        return None
    rest = path[start + len(marker):]
    end = rest.find("/RK=")
    if end < 0:
        end = rest.find("/RS=")
    return unquote(rest if end < 0 else rest[:end])


def unwrap(href: str, base: str | None = None) -> str:
    """The target of a known redirect wrapper, else `href` made absolute against `base`."""
    href = (href or "").strip()
    if not href:
        return ""
    if href.startswith("//"):
        href = "https:" + href
    elif base and not href.startswith(("http://", "https://")):
        href = urljoin(base, href)
    try:
        parts = urlsplit(href)
    except ValueError:
        return href
    host = (parts.hostname or "").lower()
    path = parts.path
    target: str | None = None
    if host.endswith("duckduckgo.com") and path in ("/l/", "/l"):
        target = (parse_qs(parts.query).get("uddg") or [None])[0]
    elif host.endswith("bing.com") and path.startswith("/ck/a"):
        target = _bing_target(parse_qs(parts.query))
    elif host.endswith("search.yahoo.com") and "/RU=" in path:
        target = _yahoo_target(path)
    elif host.startswith(("www.google.", "google.")) and path == "/url":
        query = parse_qs(parts.query)
        target = (query.get("q") or query.get("url") or [None])[0]
    if target and target.startswith(("http://", "https://")):
        return unwrap(target)
    return href
