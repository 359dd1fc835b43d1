"""Canonical URLs: one page, one identity, whichever engine or wrapper it came through.

`canonical_url` is the clean display URL (wrapper unwrapped, tracking
parameters, default port and fragment dropped, host lower-cased, a known mobile
host replaced by its desktop twin): faithful to the page. `identity` additionally folds scheme, `www.`, a trailing slash,
percent-encoding and parameter order, for de-duplication only.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from yarl import URL

from engines.hosts import host_of as url_host, parsed_host
from engines.redirects import unwrap
from plugin.infra import memo
from plugin.pipeline.suffixes import registrable

_TRACKING_EXACT = frozenset({
    "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid", "twclid", "ttclid",
    "igshid", "mc_cid", "mc_eid", "_hsenc", "_hsmi", "hsctatracking", "mkt_tok", "spm", "spm_id_from",
    "scm", "from_spmid", "share_source", "share_medium", "share_plat", "share_session_id", "share_from",
    "vd_source", "ref_src", "ref_url", "_ga", "_gl", "oly_anon_id", "oly_enc_id", "rb_clickid", "s_cid",
    "wt.mc_id", "cmpid", "ncid", "sr_share", "si", "trk", "trkcampaign", "rut", "fclid", "ocid",
})
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hmsr", "hmpl", "hmcu", "hmkw", "hmci")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Characters left unescaped when normalising a path segment for identity ("/" is the segment separator:
# an escaped one, %2F, is part of a segment's name and stays escaped).
_SEGMENT_SAFE = ":@!$&'()*+,;=-._~"
# In a query string, what an escape may not be folded into: it would change where a parameter or its
# value ends (& = ; +) or what the string means (% # ? and space).
_QUERY_DELIMITERS = frozenset("&=;+%#? ")
_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
# Printable ASCII a query may carry as is (RFC 3986): everything else is escaped when folding.
_QUERY_AS_IS = "".join(chr(c) for c in range(0x21, 0x7f) if chr(c) not in '"<>\\^`{|}')
# What no URL may carry as is (RFC 3986): controls, space and the delimiters around URLs in text; and the
# Unicode spaces and C1 controls (NBSP, NEL...), invisible to a reader and stripped from the ends of a URL
# read again (a row's "…/page\xa0#top" became "…/page\xa0", then "…/page": another identity, so page 2
# showed the row again).
_INVALID_IN_URL = re.compile(r'[\x00-\x20"<>\\^`{|}\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+')


# Mobile hosts that serve the same page at the same path as a desktop host: a row is shown, and counted,
# under the desktop one (en.m.wikipedia.org/wiki/X and en.wikipedia.org/wiki/X were two rows). Only sites
# known to map paths 1:1; never a blanket "strip m.": m.example.com can be another site altogether.
# The Wikimedia family: <site>.m.<project>.org is <site>.<project>.org (en.m.wikipedia.org,
# fr.m.wiktionary.org, commons.m.wikimedia.org); the single-site projects' m. host is their www. one.
_WIKIMEDIA_MOBILE = re.compile(
    r"(?P<site>[a-z0-9-]+)\.m\.(?P<project>wikipedia|wiktionary|wikibooks|wikinews|wikiquote|wikisource|"
    r"wikiversity|wikivoyage|wikimedia)\.org")
_MOBILE_HOSTS = {
    "m.wikidata.org": "www.wikidata.org",
    "m.mediawiki.org": "www.mediawiki.org",
    "m.wikifunctions.org": "www.wikifunctions.org",
    "mobile.twitter.com": "twitter.com",
    "m.twitter.com": "twitter.com",
    "mobile.x.com": "x.com",
    "m.youtube.com": "www.youtube.com",
    "m.facebook.com": "www.facebook.com",
    "m.imdb.com": "www.imdb.com",
    "m.wikihow.com": "www.wikihow.com",
    "m.bilibili.com": "www.bilibili.com",  # /video/BV… on both
    "m.vk.com": "vk.com",
}


def desktop_host(host: str) -> str:
    """The desktop host serving the same pages as the mobile `host` (lower-case ASCII), else `host`."""
    if ".m." not in host and not host.startswith(("m.", "mobile.")):
        return host
    wikimedia = _WIKIMEDIA_MOBILE.fullmatch(host)
    if wikimedia:
        return f"{wikimedia['site']}.{wikimedia['project']}.org"
    return _MOBILE_HOSTS.get(host, host)


def is_tracking_param(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TRACKING_EXACT or lowered.startswith(_TRACKING_PREFIXES)


# The same row URL is canonicalised by the gate's filters, the soft deadline's row count and fusion:
# remembered, since these functions are pure.
_CACHED = 4096


def parse_url(url: str) -> URL | None:
    """`url` parsed by yarl, or None when it is not a URL at all (bad port, broken IPv6 literal...)."""
    try:
        return URL(url)
    except (ValueError, TypeError, UnicodeError):
        return None


def host_of(url: str) -> str:
    """The host of `url` by the one rule (engines.hosts.host_of), remembered for the URLs seen lately."""
    if not url or not isinstance(url, str):
        return ""
    return _host_of(url)


@memo.register
@functools.lru_cache(maxsize=_CACHED)
def _host_of(url: str) -> str:
    return url_host(url)


def _escape_invalid(part: str) -> str:
    """Characters that may not appear in a URL at all percent-encoded; everything else as given."""
    return _INVALID_IN_URL.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), part)


def canonical_url(url: str) -> str | None:
    """A clean absolute http(s) URL, or None when `url` is not one (javascript:, data:, relative...).

    yarl checks the URL and encodes the host; the path and query stay as the engine gave them (a
    readable `/wiki/Tình_yêu` is not turned into percent-escapes), with tracking parameters removed.
    """
    if not url or not isinstance(url, str):
        return None
    return _canonical_url(url)


@memo.register
@functools.lru_cache(maxsize=_CACHED)
def _canonical_url(url: str) -> str | None:
    url = unwrap(url.strip())
    parsed = parse_url(url)
    if parsed is None or parsed.scheme.lower() not in _DEFAULT_PORTS:
        return None
    scheme = parsed.scheme.lower()
    host = desktop_host(parsed_host(parsed))
    # A host is a name with a dot, localhost, or an IPv6 literal (yarl gives it unbracketed, with colons).
    if not host or any(ch in host for ch in " <>\"'\\") or "." not in host and ":" not in host \
            and host != "localhost":
        return None
    try:
        port = parsed.explicit_port
        raw = urlsplit(url)  # the path and query exactly as given
    except ValueError:
        return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    # Filter the raw segments rather than re-encoding them, so the URL stays faithful.
    kept = [seg for seg in raw.query.split("&") if seg and not is_tracking_param(unquote(seg.split("=", 1)[0]))]
    query = _escape_invalid("&".join(kept))
    path = _escape_invalid(raw.path or "/")
    return urlunsplit((scheme, netloc, path, query, ""))


def identity(url: str) -> str | None:
    """The de-duplication key of a URL; None when the URL is not usable."""
    if not url or not isinstance(url, str):
        return None
    return _identity(url)


@memo.register
@functools.lru_cache(maxsize=_CACHED)
def _identity(url: str) -> str | None:
    clean = canonical_url(url)
    if clean is None:
        return None
    parts = urlsplit(clean)
    host = parts.netloc
    if host.startswith("www."):
        host = host[4:]
    # Paths compare without case: engines spell one page /js/ and /Js/ (w3schools), and two rows of one
    # host whose paths differ only in case are one page in practice. The query keeps its case (video ids).
    path = "/".join(_fold_segment(segment) for segment in parts.path.split("/"))
    if path.endswith("/"):
        path = path.rstrip("/")
    for suffix in ("/index.html", "/index.htm", "/index.php"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    query = "&".join(sorted(_fold_escapes(seg) for seg in parts.query.split("&"))) if parts.query else ""
    return f"{host}{path}" + (f"?{query}" if query else "")


def _fold_segment(segment: str) -> str:
    """One spelling of a path segment: escapes decoded, lower case, escaped again. Bytes that are not UTF-8
    (a Latin-1 or windows-1251 path: caf%E9) keep their own escapes: decoded as U+FFFD, every such path
    of one length was one page (/caf%E9 and /caf%E8)."""
    return quote(unquote(segment, errors="surrogateescape").lower(), safe=_SEGMENT_SAFE, errors="surrogateescape")


def _fold_escapes(segment: str) -> str:
    """One spelling of a query parameter however it was escaped: `q=caf%C3%A9` and `q=café` alike.
    Escapes are decoded (UTF-8) except those of delimiters, then everything outside printable ASCII is
    escaped again, upper-case; a run of escapes that is not UTF-8 keeps its bytes."""
    def decode(run: re.Match[str]) -> str:
        try:
            text = bytes.fromhex(run.group().replace("%", "")).decode("utf-8")
        except UnicodeDecodeError:
            return run.group().upper()
        return "".join(quote(ch, safe="") if ch in _QUERY_DELIMITERS else ch for ch in text)

    folded = _ESCAPES.sub(decode, segment)
    return quote(folded, safe=_QUERY_AS_IS)


def registrable_domain(url_or_host: str) -> str:
    """python.org for https://docs.python.org/3/; the host itself when it has no public suffix."""
    host = host_of(url_or_host) if "/" in url_or_host else url_or_host.lower()
    return _registrable(host) if host else ""


@memo.register
@functools.lru_cache(maxsize=_CACHED)
def _registrable(host: str) -> str:
    # The public suffix list as tldextract's bundled snapshot has it, never the network (suffixes.py).
    return registrable(host) or host
