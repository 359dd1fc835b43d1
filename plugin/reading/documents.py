"""From a page's bytes to its text, by content type.

HTML/XHTML: main text (plugin.reading.extract); PDF: text per page (plugin.reading.pdf); text/plain
and Markdown: as sent; JSON: pretty-printed. Anything else is unsupported_content. A body starting
with the PDF magic is a PDF whatever its type; a missing or generic (application/octet-stream) type is
sniffed: an HTML start (after a byte-order mark, if any), else text when its head holds no binary byte. Text is decoded with the project's one charset decoder, and every document leaves
here cleaned for a model (`clean_document`: no control or invisible characters, nothing that passes
for our framing).
"""

from __future__ import annotations

import codecs
import datetime as dt
import json
import re
from dataclasses import asdict, dataclass, field

from engines.base import Response
from plugin.errors import NOT_EXTRACTABLE, UNSUPPORTED_CONTENT, FetchError
from plugin.infra.charset import decode_body
from plugin.pipeline.sanitize import clean_document, clean_title
from plugin.settings import Settings

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
TEXT_TYPES = frozenset({"text/plain"})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream", "application/unknown"})
# An unlabelled body is HTML when it starts (after comments) with one of these tags: WHATWG MIME Sniffing's
# list (7.1), and the tags a page fragment or a generated page often starts with (<meta>, <link>); XHTML
# may come after an XML declaration.
_HTML_START = re.compile(rb"^\s*(<\?xml[^>]*>\s*)?(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body|script|iframe|h1|div|font|table|a|style"
                         rb"|title|b|br|p|meta|link)[\s>/]", re.I | re.S)
# Bytes no text holds (WHATWG MIME Sniffing's "binary data bytes"): a generic body without them is text.
_BINARY_BYTES = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_MD_TITLE = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.M)


@dataclass
class Document:
    """A page read whole: what is cached and sliced."""

    final_url: str
    status: int
    content_type: str
    title: str | None
    published: dt.date | None
    content: str
    warnings: list[str] = field(default_factory=list)
    # An app shell (plugin.reading.shells): what gave it away; and whether this text is the browser's.
    shell_signs: list[str] = field(default_factory=list)
    rendered: bool = False

    @property
    def may_require_js(self) -> bool:
        return bool(self.shell_signs)

    def to_json(self) -> str:
        data = asdict(self)
        data["published"] = self.published.isoformat() if self.published else None
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str) -> "Document":
        data = json.loads(raw)
        if "shell_signs" not in data:  # cached before shells were told apart: read the page again
            raise KeyError("shell_signs")
        data["published"] = dt.date.fromisoformat(data["published"]) if data.get("published") else None
        return cls(**data)


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def kind_of(media: str, body: bytes) -> str | None:
    """html, pdf, text, markdown, json, or None for a type we do not read. A body that starts as a PDF is
    one whatever its type says (a script that sends a file as text/html, a download type such as
    application/force-download); a generic one is sniffed: HTML by its first tag, else text when no byte
    in its head is binary."""
    if body[:1024].lstrip().startswith(b"%PDF-"):
        return "pdf"
    if media in HTML_TYPES:
        return "html"
    if media in PDF_TYPES:
        return "pdf"
    if media in MARKDOWN_TYPES:
        return "markdown"
    if media in TEXT_TYPES:
        return "text"
    if media == "application/json" or (media.startswith("application/") and media.endswith("+json")):
        return "json"
    if media in GENERIC_TYPES:
        head = _sniffed_head(body)
        if _HTML_START.match(head):
            return "html"
        utf16 = body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))  # its bytes say nothing here
        if head.strip() and not utf16 and not _BINARY_BYTES.search(head):
            return "text"
    return None


def _sniffed_head(body: bytes) -> bytes:
    """The body's first bytes as ASCII-compatible bytes to look for an HTML start in: after a UTF-8
    byte-order mark, and UTF-16 (with its mark) transcoded, as pages saved by Windows editors come."""
    head = body[:4096]
    if head.startswith(codecs.BOM_UTF8):
        return head[len(codecs.BOM_UTF8):]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return head.decode("utf-16", "ignore").encode("utf-8", "ignore")
    return head


def build_document(response: Response, *, markdown: bool, settings: Settings, detect_shell: bool = True) -> Document:
    """The page's text (Markdown or plain) with its title and date. CPU-bound: callers run it in a thread.
    An HTML page is also looked at for the signs of an app shell (`detect_shell`; a rendered DOM is not)."""
    media = media_type(response.headers.get("content-type"))
    kind = kind_of(media, response.body)
    if kind is None:
        shown = media or "no content type"
        raise FetchError(UNSUPPORTED_CONTENT, f"{shown} cannot be read as text (HTML, PDF, plain text, Markdown "
                                              f"and JSON can)", content_type=media or None)
    title: str | None = None
    published: dt.date | None = None
    warnings: list[str] = []
    signs: list[str] = []
    if kind == "pdf":
        from plugin.reading.pdf import pdf_text

        read = pdf_text(response.body, max_pages=settings.fetch_pdf_max_pages)
        title, published, content, warnings = read.title, read.published, read.content, read.warnings
        media = media if media in PDF_TYPES else "application/pdf"
    else:
        text = response.text or decode_body(response.body, response.headers.get("content-type"))[0]
        if kind == "html":
            from plugin.reading.extract import extract_html

            extracted = extract_html(text, url=response.url, markdown=markdown,
                                     fallback_min_chars=settings.fetch_fallback_min_chars)
            title, published, content, warnings = (extracted.title, extracted.published, extracted.content,
                                                   extracted.warnings)
            if media not in HTML_TYPES:  # sniffed: said as what it was read as (later steps, the render, go by it)
                media = "text/html"
            if detect_shell:
                from plugin.reading.shells import shell_signs

                signs = shell_signs(text, len(extracted.content))
        elif kind == "json":
            try:
                content = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
            except ValueError:
                content = text
                warnings.append("the body is not valid JSON; it is shown as sent")
            except RecursionError:  # json's parser recurses per level: ~1,000 levels (2 KB of "[") exhaust it
                content = text
                warnings.append("the JSON is nested too deep to lay out; it is shown as sent")
        else:
            content = text
            if media in GENERIC_TYPES:  # sniffed: said as what it was read as
                media = "text/plain"
            if kind == "markdown":
                found = _MD_TITLE.search(text[:5000])
                title = found.group(1) if found else None
    content = clean_document(content)
    if not content.strip():
        if not signs:
            raise FetchError(NOT_EXTRACTABLE, "the page holds no readable text (empty, or built by scripts)")
        content = ""  # an app shell with no text of its own: said by its signs, and rendered where it can be
    return Document(final_url=response.url, status=response.status, content_type=media,
                    title=clean_title(title) if title else None, published=published, content=content,
                    warnings=warnings, shell_signs=signs)
