"""Errors a caller can act on: a machine-readable code and a human reason."""

from __future__ import annotations

# The codes are a contract (CLI, Python API and MCP answer with the same ones).
QUERY_REQUIRED = "query_required"
QUERY_TOO_LONG = "query_too_long"
UNKNOWN_ENGINE = "unknown_engine"
INVALID_PARAMETER = "invalid_parameter"


class SearchError(ValueError):
    def __init__(self, code: str, message: str, **details: object):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, object]:
        error: dict[str, object] = {"code": self.code, "message": self.message}
        error.update(self.details)
        return {"error": error}


# ----- reading a page (plugin.fetch) -----
INVALID_URL = "invalid_url"
PRIVATE_ADDRESS = "private_address"
BLOCKED_BY_ROBOTS = "blocked_by_robots"
HTTP_ERROR = "http_error"
TIMEOUT = "timeout"
TOO_LARGE = "too_large"
UNSUPPORTED_CONTENT = "unsupported_content"
NOT_EXTRACTABLE = "not_extractable"
# Our load, not the page: the read waited its turn at the host until the caller's deadline passed.
OVERLOADED = "overloaded"

# Codes that mean the caller asked wrongly (CLI exit 2, HTTP 400); every other fetch code means the page
# could not be had (CLI exit 3, HTTP 403/502/503/504).
BAD_INPUT_CODES = frozenset({INVALID_URL, INVALID_PARAMETER})
_HTTP_STATUS = {INVALID_URL: 400, INVALID_PARAMETER: 400, PRIVATE_ADDRESS: 403, BLOCKED_BY_ROBOTS: 403,
                HTTP_ERROR: 502, TIMEOUT: 504, TOO_LARGE: 502, UNSUPPORTED_CONTENT: 502, NOT_EXTRACTABLE: 502,
                OVERLOADED: 503}


class FetchError(SearchError):
    """A page that could not be read, or a read asked for wrongly. `details` may carry `status` (the
    page's HTTP status, for http_error) and `url` (the hop that failed)."""

    @property
    def bad_input(self) -> bool:
        return self.code in BAD_INPUT_CODES

    @property
    def http_status(self) -> int:
        return _HTTP_STATUS.get(self.code, 502)
