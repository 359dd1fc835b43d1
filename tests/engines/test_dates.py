"""engines.dates: the date stamp an engine prints before a snippet, and only that."""

from __future__ import annotations

from datetime import date, datetime

from engines.dates import leading_date

NOW = datetime(2026, 11, 29, 12, 0, 0)


def test_a_stamp_before_the_separator_is_the_date():
    assert leading_date("Jul 28, 2026 · MCP is an open-source standard", NOW) == date(2026, 7, 28)
    assert leading_date("September 30, 2025 — text", NOW) == date(2025, 9, 30)
    assert leading_date("2024 年 11 月 25 日 — 文章", NOW) == date(2024, 11, 25)
    assert leading_date("6 days ago · text", NOW) == date(2026, 11, 23)


def test_a_sentence_that_contains_a_date_is_not_a_stamp():
    # Bing China, freesearchmcp__model-context-protocol.html, first row: no stamp is shown.
    assert leading_date("MCP 起源于 2024 年 11 月 25 日 Anthropic 发布的文章： Introducing the Model", NOW) is None
