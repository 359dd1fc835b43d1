"""The installed version, from the package metadata (pyproject.toml is the one source)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("metasearch")
except PackageNotFoundError:  # running from a checkout that was never installed
    VERSION = "0+unknown"
