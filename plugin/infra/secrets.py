"""Keeping secrets out of sight: API keys, proxy and Redis credentials, secret-looking headers.

One rule for every place that shows text (logs, engine details, responses, recordings, `config`): a
known secret value is replaced wherever it appears, and a URL's credentials are masked before it is
shown at all.
"""

from __future__ import annotations

import re
from typing import Iterable
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"
# Shorter values are not redacted: replacing every "ab" or "x" in a text would garble it and reveal the
# secret by the gaps anyway. API keys and proxy passwords are far longer.
MIN_SECRET_CHARS = 4
# A bare proxy password is matched on its own only from this length; in URLs the user-info covers it.
MIN_BARE_PASSWORD_CHARS = 6
_SECRET_PARAM = re.compile(r"pass|secret|token|key|auth", re.I)


def redact(text: str, secrets: Iterable[str], marker: str = REDACTED) -> str:
    """`text` with every secret value (of at least MIN_SECRET_CHARS characters) replaced by `marker`."""
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_CHARS:
            text = text.replace(secret, marker)
    return text


def mask_url(url: str) -> str:
    """The URL with its user name and password replaced by **** and secret-looking query values
    (`?password=`, `?token=`) masked; the rest as given."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "[unparseable URL]"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "****@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query and _SECRET_PARAM.search(query):
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "****" if _SECRET_PARAM.search(k) else v) for k, v in pairs], safe="*")
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str | None) -> list[str]:
    """What of a URL must never be shown: its user-info as written, and the password (decoded too)."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    if "@" not in parts.netloc:
        return []
    found = [parts.netloc.rsplit("@", 1)[0]]
    if parts.password:
        found += [p for p in {parts.password, unquote(parts.password)} if len(p) >= MIN_BARE_PASSWORD_CHARS]
    return found
