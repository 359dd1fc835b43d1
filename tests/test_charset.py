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


def test_utf16_corpus_page_decodes():
    body = corpus_path("duckduckgo-lite", "tinker__latest-ai-news__UTF16LE.html").read_bytes()
    text, encoding = decode_body(body, "text/html; charset=utf-8")
    assert encoding == "utf-16" and "result-link" in text
