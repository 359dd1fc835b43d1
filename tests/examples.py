"""How many examples a property test tries. A test names its count for an ordinary run; the Hypothesis
profile scales it (tests/conftest.py): `stable`, the default and CI's, tries half as many, the same ones on
every run; `explore` (the nightly-style run the README names) twenty times as many, fresh each time."""

from __future__ import annotations

from hypothesis import settings

ORDINARY = 100  # the counts tests name are for a profile of this many examples


def scaled(count: int) -> int:
    return max(10, round(count * settings.default.max_examples / ORDINARY))
