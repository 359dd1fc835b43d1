"""The installed version, from the package metadata (pyproject.toml is the one source).

Read from the name of the installed `metasearch-<version>.dist-info` directory: `importlib.metadata`
would find the same one, but importing it (email, zipfile, csv, ...) costs more than the rest of
`metasearch --version`. It remains the fallback.
"""

from __future__ import annotations

import os
import sys


def _installed_version() -> str:
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("metasearch-") and name.endswith(".dist-info"):
                return name[len("metasearch-"):-len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("metasearch")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


VERSION = _installed_version()
