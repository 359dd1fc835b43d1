from __future__ import annotations

import pytest

from conftest import corpus_path
from plugin.infra.charset import decode_body


@pytest.mark.parametrize(("body", "content_type", "text", "encoding"), [
    ("你好，世界".encode("gbk"), "text/html; charset=gbk", "你好，世界", "gb18030"),
    ("你好，世界".encode("gb18030"), "text/html", "你好，世界", "gb18030"),
    ('<meta charset="gb2312">东数西算'.encode("gbk"), None, '<meta charset="gb2312">东数西算', "gb18030"),
    ("东数西算 café".encode("utf-8"), "text/html; charset=iso-8859-1", "东数西算 café", "utf-8"),
    ("café".encode("latin-1"), "text/html; charset=iso-8859-1", "café", "iso8859-1"),
    ("\ufeffhello".encode("utf-8"), None, "hello", "utf-8"),
    ("hello 你好".encode("utf-16"), "text/html; charset=utf-8", "hello 你好", "utf-16"),
    (b"plain ascii", "text/html; charset=bogus-charset", "plain ascii", "utf-8"),
])
def test_decode_body(body, content_type, text, encoding):
    assert decode_body(body, content_type) == (text, encoding)


RUSSIAN = ("Привет, мир! Это страница на русском языке в старой кодировке Windows, и её заголовок объявляет "
           "кодировку, которой не существует.")


@pytest.mark.parametrize("content_type, body", [
    ("text/html; charset=bogus-charset", RUSSIAN.encode("cp1251")),
    ("text/html; charset=x-user-defined-nonsense", RUSSIAN.encode("cp1251")),
    ("text/html", b'<meta charset="no-such-charset">' + RUSSIAN.encode("cp1251")),
    ("text/html; charset=bogus", b'<meta charset="also-bogus">' + RUSSIAN.encode("koi8-r")),
])
def test_a_bogus_charset_label_falls_back_to_detection(content_type, body):
    text, encoding = decode_body(body, content_type)
    assert RUSSIAN in text and "\ufffd" not in text
    assert encoding in ("cp1251", "koi8-r")


def test_an_unlabelled_body_that_is_not_utf8_is_detected_rather_than_replaced():
    # No label at all, not UTF-8, not GB18030 either (a lone high byte before a space): detected.
    body = RUSSIAN.encode("cp1251")
    with pytest.raises(UnicodeDecodeError):
        body.decode("gb18030")
    text, encoding = decode_body(body, "text/html")
    assert text == RUSSIAN and encoding == "cp1251"


def test_utf16_corpus_page_decodes():
    body = corpus_path("duckduckgo-lite", "tinker__latest-ai-news__UTF16LE.html").read_bytes()
    text, encoding = decode_body(body, "text/html; charset=utf-8")
    assert encoding == "utf-16" and "result-link" in text


# Every codec name Python knows, as a page could label itself with it: the bytes-to-bytes ones (base64, zlib,
# rot13), `undefined` (refuses every byte), idna and punycode (a bare UnicodeError) included.
def _codec_names() -> list[str]:
    import codecs
    import encodings
    import pkgutil

    names = []
    for module in pkgutil.iter_modules(encodings.__path__):
        try:
            codecs.lookup(module.name)
        except LookupError:  # aliases, and codecs of another platform (mbcs)
            continue
        names.append(module.name)
    return sorted(names)


@pytest.mark.parametrize("label", ["undefined", "punycode", "idna", "base64", "hex", "zlib", "rot13", "uu"])
@pytest.mark.parametrize("where", ["header", "meta"])
def test_a_label_that_is_no_charset_is_a_bogus_label_not_a_crash(label, where):
    body = "Hello \\ wörld, <b>ok</b> \u00e9t\u00e9".encode("cp1252") + b" \x81\xff"
    if where == "meta":
        body, content_type = f'<meta charset="{label}">'.encode() + body, "text/html"
    else:
        content_type = f"text/html; charset={label}"
    text, encoding = decode_body(body, content_type)
    assert "Hello \\ w" in text and encoding != label


# Bodies (found by Hypothesis) that neither UTF-8, GB18030 nor detection read, so that the label's own codec was
# the last resort: `bytes.decode(label, "replace")` raised LookupError (hex, uu) or UnicodeError (punycode).
@pytest.mark.parametrize("body, content_type", [
    (b"w\xdb'\xb7.i", "text/html; charset=hex"),
    (b"\x14\xa1v%\xf6", "text/html; charset=uu"),
    (b'<meta charset="punycode">\xd4a\xaa\x13*', "text/html"),
    (b'<meta charset="zlib">\xb5\x0f\xf5', "text/html"),
])
def test_a_body_nothing_reads_under_a_codec_that_is_no_charset_is_replaced_not_raised(body, content_type):
    text, _ = decode_body(body, content_type)
    assert isinstance(text, str) and text


from hypothesis import given, strategies as st  # noqa: E402


@given(body=st.binary(max_size=80), label=st.sampled_from(_codec_names()), in_meta=st.booleans())
def test_any_body_under_any_codec_label_decodes_to_text(body, label, in_meta):
    if in_meta:
        body, content_type = f'<meta charset="{label}">'.encode() + body, "text/html"
    else:
        content_type = f"text/html; charset={label}"
    text, encoding = decode_body(body, content_type)
    assert isinstance(text, str) and isinstance(encoding, str)


ASCII_PAGE = (b'<html><head><meta charset="utf-16"><title>Plain English page</title></head>'
              b"<body><p>Hello world, in plain ASCII.</p></body></html>")


@pytest.mark.parametrize("pad", [b"", b" "])  # an even and an odd length: only the even one was misread
@pytest.mark.parametrize("content_type", ["text/html", "text/html; charset=utf-16", "text/html; charset=UTF-16LE",
                                          "application/json; charset=utf-32"])
def test_a_utf16_label_on_a_body_without_nul_bytes_is_not_believed(pad, content_type):
    """UTF-16 markup has a NUL byte in every ASCII character; a page without one that says utf-16 (browsers read
    <meta charset=utf-16> as UTF-8) decoded to CJK nonsense when its length was even."""
    text, encoding = decode_body(ASCII_PAGE + pad, content_type)
    assert text == (ASCII_PAGE + pad).decode("ascii") and encoding == "utf-8"


def test_a_real_utf16_body_without_a_bom_still_decodes_by_its_label():
    body = "<p>hello 你好, wörld</p>".encode("utf-16-le")
    assert decode_body(body, "text/html; charset=utf-16le") == ("<p>hello 你好, wörld</p>", "utf-16-le")
