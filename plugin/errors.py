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
