"""Parametrising tests over ../shared/serp-corpus pages, with a clear skip when the corpus is absent
(an empty parameter set would only say "got empty parameter set")."""

from __future__ import annotations

import pytest

from conftest import CORPUS, corpus_files

ABSENT = f"real-page corpus not found at {CORPUS} (../shared is absent); real-page conformance needs it"


def corpus_cases(engine_dir: str, pattern: str = "*.html") -> list:
    """The corpus file names of one engine, or one skipped case that says why there are none."""
    files = corpus_files(engine_dir, pattern)
    if files or CORPUS.is_dir():
        return files
    return [pytest.param(f"{engine_dir}/(absent)", marks=pytest.mark.skip(reason=ABSENT))]
