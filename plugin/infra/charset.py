"""Decoding a response body to text with the charset it really uses.

Order: byte-order mark; then UTF-8 when the body is valid UTF-8 (a body that
decodes strictly as UTF-8 and has non-ASCII bytes is UTF-8 whatever a wrong
header claims); then the Content-Type charset; then a <meta> charset; then
GB18030 (a lossless superset of GBK/GB2312); finally UTF-8 with replacement.
"""

from __future__ import annotations

import codecs
import re

_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)
_HEADER = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_\-:.]+)", re.I)
_ALIASES = {"gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "cp936": "gb18030", "gb_2312-80": "gb18030"}


def _normalise(name: str | None) -> str | None:
    if not name:
        return None
    name = name.strip().lower()
    name = _ALIASES.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def header_charset(content_type: str | None) -> str | None:
    if not content_type:
        return None
    m = _HEADER.search(content_type)
    return m.group(1) if m else None


def _try(body: bytes, encoding: str) -> str | None:
    try:
        return body.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def decode_body(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """(text, encoding used)."""
    if body.startswith(codecs.BOM_UTF8):
        return body[3:].decode("utf-8", "replace"), "utf-8"
    if body.startswith(codecs.BOM_UTF16_LE) or body.startswith(codecs.BOM_UTF16_BE):
        return body.decode("utf-16", "replace"), "utf-16"
    if not body.isascii():
        text = _try(body, "utf-8")
        if text is not None:
            return text, "utf-8"
    declared = _normalise(header_charset(content_type))
    m = _META.search(body[:4096])
    meta = _normalise(m.group(1).decode("ascii", "ignore")) if m else None
    for candidate in (declared, meta, "utf-8", "gb18030"):
        if candidate:
            text = _try(body, candidate)
            if text is not None:
                return text, candidate
    fallback = declared or meta or "utf-8"
    return body.decode(fallback, "replace"), fallback
