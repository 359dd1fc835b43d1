"""Hosts: the one way a host is taken from a URL, and the one rule for a label of a host name.

Used by the engines (is this link the engine's own?) and by the plugin (domain filters, dedup, the page
reader's URL check) alike, so a host means the same everywhere: lower-case ASCII (IDNA 2008 for
international names, as yarl encodes them: straße.de stays xn--strae-oqa.de, never strasse.de), IPv6
without brackets, no trailing dot.
"""

from __future__ import annotations

import re

from yarl import URL

# A label of a host name: letters, digits, "_" (not in the standards, but real hosts have them:
# my_site.blogspot.com) and "-" anywhere but first or last; 1 to 63 characters.
HOST_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)", re.I)


def host_of(url: str) -> str:
    """The host of `url` (see the module docstring); "" when it has none or is not a URL at all."""
    if not url or not isinstance(url, str):
        return ""
    try:
        return parsed_host(URL(url))
    except (ValueError, TypeError, UnicodeError):
        return ""


def parsed_host(parsed: URL) -> str:
    """The host of a URL yarl has already parsed, by the same rule."""
    return (parsed.raw_host or "").lower().rstrip(".")


def display_host(host: str) -> str:
    """A host as a person reads it: international labels decoded (xn--bcher-kva.de -> bücher.de)."""
    if "xn--" not in host:
        return host
    try:
        import idna

        return idna.decode(host)
    except (UnicodeError, ValueError, ImportError):  # idna.IDNAError is a UnicodeError
        return host
