"""Logging that cannot leak an API key: every record passes through a redacting filter."""

from __future__ import annotations

import logging
import os

from plugin.infra.secrets import MIN_SECRET_CHARS, redact
from plugin.settings import KEY_FIELDS


# Keys that reached the process another way (a key file, Settings built in code).
_REGISTERED: set[str] = set()


def register_secrets(values: list[str]) -> None:
    _REGISTERED.update(v for v in values if v and len(v) >= MIN_SECRET_CHARS)


class RedactSecrets(logging.Filter):
    """Replaces the values of API-key variables wherever they appear in a record."""

    def __init__(self, secrets: list[str] | None = None):
        super().__init__()
        self.secrets = secrets

    def values(self) -> list[str]:
        if self.secrets is not None:
            return self.secrets
        from_env = [os.environ[name] for name in KEY_FIELDS.values()
                    if len(os.environ.get(name, "")) >= MIN_SECRET_CHARS]
        return from_env + sorted(_REGISTERED)

    def filter(self, record: logging.LogRecord) -> bool:
        values = self.values()
        if not values:
            return True
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        redacted = redact(message, values)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, values)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_FILTER = RedactSecrets()


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (it may be replaced after configuration)."""

    @property  # type: ignore[override]
    def stream(self):
        import sys

        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def get_logger(name: str) -> logging.Logger:
    """A project logger whose records are redacted where they are made, whatever handlers the host app uses."""
    logger = logging.getLogger(name)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return logger


def configure(level: int = logging.WARNING) -> None:
    """Log to stderr at `level` through the redacting filter (idempotent)."""
    root = logging.getLogger("metasearch")
    root.setLevel(level)
    for handler in root.handlers:
        if getattr(handler, "_metasearch", False):
            handler.setLevel(level)
            return
    handler = _StderrHandler()
    handler._metasearch = True  # type: ignore[attr-defined]
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets())
    root.addHandler(handler)
    root.propagate = False
