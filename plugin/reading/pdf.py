"""A PDF's text, page by page, with pypdf (pure Python, imported on first use)."""

from __future__ import annotations

import datetime as dt
import io
import re
from dataclasses import dataclass, field

from plugin.errors import NOT_EXTRACTABLE, FetchError
from plugin.reading.published import _plausible

_BLANKS = re.compile(r"\n{3,}")


@dataclass
class PdfText:
    title: str | None
    published: dt.date | None
    content: str
    pages: int
    warnings: list[str] = field(default_factory=list)


def pdf_text(body: bytes, *, max_pages: int) -> PdfText:
    """The text of the first `max_pages` pages, each under a `--- page N ---` line. A PDF that cannot be
    opened, or whose pages hold no text (a scan without a text layer), is not_extractable."""
    import logging

    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # it warns about every small defect it repairs
    try:
        reader = PdfReader(io.BytesIO(body), strict=False)
        if reader.is_encrypted:
            reader.decrypt("")  # many PDFs are "encrypted" with an empty user password
        total = len(reader.pages)
    except Exception as exc:  # noqa: BLE001 - pypdf fails on malformed files in ways it does not name
        # (PyPdfError, ValueError, KeyError, but also AttributeError, RecursionError ...): all the same here
        raise FetchError(NOT_EXTRACTABLE, f"the PDF could not be opened: {type(exc).__name__}: {str(exc)[:120]}") \
            from None
    parts: list[str] = []
    warnings: list[str] = []
    failed = 0
    for number in range(min(total, max_pages)):
        try:
            text = reader.pages[number].extract_text() or ""
        except Exception:  # one damaged page does not lose the others  # noqa: BLE001
            failed += 1
            continue
        text = _BLANKS.sub("\n\n", text.replace("\r\n", "\n").replace("\r", "\n")).strip()
        if text:
            parts.append(f"--- page {number + 1} ---\n{text}")
    if total > max_pages:
        warnings.append(f"the PDF has {total} pages; the text of the first {max_pages} is read "
                        f"(fetch_pdf_max_pages)")
    if failed:
        warnings.append(f"{failed} page(s) could not be read")
    if not parts:
        raise FetchError(NOT_EXTRACTABLE, "the PDF holds no text (a scan without a text layer?)")
    title, published = _metadata(reader)
    return PdfText(title=title, published=published, content="\n\n".join(parts), pages=total, warnings=warnings)


def _metadata(reader) -> tuple[str | None, dt.date | None]:
    try:
        info = reader.metadata
    except Exception:  # noqa: BLE001 - metadata is a nicety; a broken info dictionary loses nothing else
        return None, None
    if info is None:
        return None, None
    title = None
    try:
        raw = info.title
        title = " ".join(str(raw).split()) or None if raw else None
    except Exception:  # noqa: BLE001
        title = None
    published = None
    try:
        created = info.creation_date
        published = created.date() if created else None
        if published is not None and not _plausible(published):  # an unset clock (1970), a date to come
            published = None
    except Exception:  # noqa: BLE001 - malformed dates are common
        published = None
    return title, published
