"""Decoding a response body to text with the charset it really uses.

Order: byte-order mark; then UTF-8 when the body is valid UTF-8 (a body that
decodes strictly as UTF-8 and has non-ASCII bytes is UTF-8 whatever a wrong
header claims); then the Content-Type charset; then a <meta> charset; then,
when a label was given but names no charset Python knows (or does not fit the
bytes), detection (charset_normalizer); then GB18030 (a lossless superset of
GBK/GB2312, the usual unlabelled non-UTF-8 page); then detection; finally
UTF-8 with replacement.
"""

from __future__ import annotations

import codecs
import re

_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)
_HEADER = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_\-:.]+)", re.I)
_ALIASES = {"gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "cp936": "gb18030", "gb_2312-80": "gb18030"}
# Python codecs that are no page's charset: `undefined` refuses every byte, idna and punycode decode host
# names (and raise a bare UnicodeError on anything else, even with "replace"). A page labelled with one of
# them, or with a bytes-to-bytes codec (base64, zlib, rot13, ...), is treated as carrying a bogus label.
_NOT_CHARSETS = frozenset({"undefined", "idna", "punycode"})


def _normalise(name: str | None) -> str | None:
    if not name:
        return None
    name = name.strip().lower()
    name = _ALIASES.get(name, name)
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return None
    return info.name


def header_charset(content_type: str | None) -> str | None:
    if not content_type:
        return None
    m = _HEADER.search(content_type)
    return m.group(1) if m else None


def _try(body: bytes, encoding: str) -> str | None:
    try:
        return body.decode(encoding)
    except (UnicodeError, LookupError):
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
    label = header_charset(content_type)
    declared = _wide_checked(_normalise(label), body)
    m = _META.search(body[:4096])
    meta = _wide_checked(_normalise(m.group(1).decode("ascii", "ignore")) if m else None, body)
    for candidate in (declared, meta, "utf-8"):
        if candidate:
            text = _try(body, candidate)
            if text is not None:
                return text, candidate
    # A label that names no charset, or a wrong one: the page's author meant something, and GB18030
    # (which decodes many single-byte pages into nonsense without an error) is not a good guess for it.
    labelled = bool(label or m)
    if labelled:
        found = _detect(body)
        if found is not None:
            return found
    text = _try(body, "gb18030")
    if text is not None:
        return text, "gb18030"
    if not labelled:
        found = _detect(body)
        if found is not None:
            return found
    fallback = declared or meta or "utf-8"
    return body.decode(fallback, "replace"), fallback


def _wide_checked(encoding: str | None, body: bytes) -> str | None:
    """`encoding`, unless it is UTF-16 or UTF-32 and the body has no NUL byte: markup in those encodings has one
    in every ASCII character, so such a label is wrong (an ASCII page saying <meta charset="utf-16">, which
    browsers read as UTF-8, decoded to CJK nonsense whenever its length was even)."""
    if encoding and encoding.startswith(("utf-16", "utf-32")) and b"\x00" not in body:
        return None
    return encoding


def _detect(body: bytes) -> tuple[str, str] | None:
    """(text, encoding) as charset_normalizer reads the bytes (imported here: most bodies never get this
    far), or None when it finds no charset that decodes them."""
    from charset_normalizer import from_bytes

    best = from_bytes(body).best()
    if best is None or best.encoding is None:
        return None
    encoding = _normalise(best.encoding) or best.encoding
    text = _try(body, encoding)
    return (text, encoding) if text is not None else None
