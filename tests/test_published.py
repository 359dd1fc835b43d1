"""A page's `published` date comes from evidence only (issue 29 item 3): meta tags, <time>, JSON-LD, a
date in the URL, a byline. A year or a date somewhere in the body ("founded in 2005", "© 2023", a
changelog's "2019-01-02: fixed") is not the page's publication date: then `published` is null."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugin.reading.extract import extract_html
from plugin.reading.published import _in_url, absolute_date

BODY = "".join(f"<p>Acme makes widgets for everyone, and this is paragraph {n} about how it makes them.</p>"
               for n in range(8))


def page(head: str = "", before: str = "", after: str = "", footer: str = "") -> str:
    return (f"<html><head><title>About Acme</title>{head}</head><body><article><h1>About Acme</h1>{before}{BODY}"
            f"{after}</article>{footer}</body></html>")


def published(html: str, url: str = "https://acme.example/about") -> dt.date | None:
    return extract_html(html, url=url).published


@pytest.mark.parametrize("html", [
    page(before="<p>Acme was founded in 2005 by two engineers.</p>"),
    page(after="<p>In March 2010 it moved to a bigger workshop, and in 2015 it opened a shop.</p>"),
    page(footer="<footer>© 2023 Acme Ltd. All rights reserved.</footer>"),
    page(after="<h2>Changelog</h2><ul><li>2019-01-02: fixed the widget hinge</li><li>2018-11-30: first widget"
               "</li></ul>"),
    page(after="<p>The meeting of 2021-06-07 decided on a new logo.</p>"),
    page(head='<script>var built = "2020-02-02";</script>'),
])
def test_a_date_in_the_body_is_not_a_publication_date(html):
    assert published(html) is None


@pytest.mark.parametrize(("html", "url", "expected"), [
    (page(head='<meta property="article:published_time" content="2021-03-04T10:00:00Z">'), None, "2021-03-04"),
    (page(head='<meta name="date" content="2017-09-10">'), None, "2017-09-10"),
    (page(before='<time datetime="2020-05-06T08:00:00Z">6 May</time>'), None, "2020-05-06"),
    (page(head='<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle", '
               '"datePublished": "2019-07-08T09:00:00Z"}</script>'), None, "2019-07-08"),
    (page(), "https://acme.example/2018/04/05/about", "2018-04-05"),
    (page(before='<div class="byline">By Jane Doe, March 3, 2021</div>'), None, "2021-03-03"),
    (page(before="<p>Published on March 3, 2021 by Jane Doe</p>"), None, "2021-03-03"),
    (page(before="<p>Posted 2022-02-03 by Jane</p>"), None, "2022-02-03"),
    (page(before='<p class="post-meta">2022-02-04 · 5 min read</p>'), None, "2022-02-04"),
    (page(before="<p>发布时间：2024年3月1日</p>"), None, "2024-03-01"),
    (page(before='<span class="about">publiziert am 25. September 2018</span>'), None, "2018-09-25"),
    (page(before="<p>Publié le 3 mars 2021</p>"), None, "2021-03-03"),
    (page(before="<p>Publicado el 3 de marzo de 2021</p>"), None, "2021-03-03"),
    # Evidence wins over a year in the body.
    (page(head='<meta property="article:published_time" content="2021-03-04">',
          before="<p>Acme was founded in 2005.</p>"), None, "2021-03-04"),
])
def test_real_date_evidence_is_read(html, url, expected):
    assert published(html, url or "https://acme.example/about") == dt.date.fromisoformat(expected)


def test_a_relative_or_yearless_byline_is_no_date():
    assert published(page(before="<p>Posted 3 days ago by Jane</p>")) is None
    assert published(page(before="<p>发布于 3月1日</p>")) is None


# A date in the URL vouches for htmldate's date only where the URL writes it as a date, with no digit on either side
# (an item id 920210304 holds no 2021-03-04).
MEETING = page(after="<p>The meeting of 2021-03-04 decided on a new logo.</p>")


@pytest.mark.parametrize(("url", "expected"), [
    ("https://acme.example/item/920210304", None),
    ("https://acme.example/item/202103041", None),
    ("https://acme.example/item/12021-03-04", None),
    ("https://acme.example/item/2021-03/04", None),
    ("https://acme.example/item/20210304", "2021-03-04"),
    ("https://acme.example/2021/03/04/logo", "2021-03-04"),
    ("https://acme.example/news/2021-3-4-logo", "2021-03-04"),
])
def test_a_url_date_needs_a_boundary(url, expected):
    assert published(MEETING, url) == (dt.date.fromisoformat(expected) if expected else None)


days = st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2025, 12, 31))


@given(day=days, before=st.sampled_from("0123456789"), after=st.sampled_from("0123456789"))
def test_digits_around_a_date_in_a_url_are_no_date(day, before, after):
    compact = f"{day.year}{day.month:02d}{day.day:02d}"
    assert not _in_url(f"https://acme.example/item/{before}{compact}", day)
    assert not _in_url(f"https://acme.example/item/{compact}{after}", day)
    assert _in_url(f"https://acme.example/item/{compact}", day)
    assert _in_url(f"https://acme.example/{day.year}/{day.month}/{day.day}/item", day)


# A numeric byline date is read when the numbers settle which is the day (13/04/2021: 13 is no month) or the page's
# language does (04/05/2021 is the 4th of May on an en-GB or German page, April 5 on an en-US one); otherwise it is
# no date rather than a guess. The meeting's date below is htmldate's unvouched pick, so the byline decides.
LATER = "<p>The meeting of 2021-06-07 decided on a new logo.</p>"


def with_language(html: str, language: str) -> str:
    return html.replace("<html>", f'<html lang="{language}">', 1)


@pytest.mark.parametrize(("html", "expected"), [
    (page(before="<p>Published 13/04/2021 by Jane Doe</p>", after=LATER), "2021-04-13"),
    (page(before="<p>Veröffentlicht am 13.04.2021</p>", after=LATER), "2021-04-13"),
    (page(before="<p>Posted 04/13/2021 by Jane Doe</p>", after=LATER), "2021-04-13"),
    (page(before="<p>Updated 13-04-2021</p>", after=LATER), "2021-04-13"),
    (page(before="<p>Published 04/04/2021 by Jane Doe</p>", after=LATER), "2021-04-04"),
    (page(before="<p>Published 04/05/2021 by Jane Doe</p>"), None),
    (page(before="<p>Published 04/05/2021 by Jane Doe</p>", after=LATER), None),
    (with_language(page(before="<p>Published 04/05/2021 by Jane Doe</p>"), "en"), None),
    (with_language(page(before="<p>Published 04/05/2021 by Jane Doe</p>"), "en-US"), "2021-04-05"),
    (with_language(page(before="<p>Published 04/05/2021 by Jane Doe</p>", after=LATER), "en-US"), "2021-04-05"),
    (with_language(page(before="<p>Published 04/05/2021 by Jane Doe</p>"), "en-GB"), "2021-05-04"),
    (with_language(page(before="<p>Veröffentlicht am 04.05.2021</p>", after=LATER), "de-DE"), "2021-05-04"),
    (page(head='<meta property="og:locale" content="en_US">', before="<p>Published 04/05/2021</p>"), "2021-04-05"),
    (with_language(page(before="<p>Published 04/05/2021 by Jane Doe</p>"), "en-Latn-US"), "2021-04-05"),
    (with_language(page(before="<p>Published 04/05/2021 by Jane Doe</p>"), "en-CA"), None),
])
def test_a_numeric_byline_date_is_read_when_it_can_be_told(html, expected):
    assert published(html) == (dt.date.fromisoformat(expected) if expected else None)


DAY_FIRST = {None: None, "en": None, "en-US": False, "en-GB": True, "de": True, "fr-FR": True, "zh-CN": None,
             "ja": None}


@given(day=days, separator=st.sampled_from("/.-"), language=st.sampled_from(sorted(DAY_FIRST, key=str)))
def test_a_numeric_date_is_read_as_itself_or_not_at_all(day, separator, language):
    day_first = f"Published {day.day:02d}{separator}{day.month:02d}{separator}{day.year}"
    month_first = f"Published {day.month}{separator}{day.day}{separator}{day.year}"
    settled_by_numbers = day.day > 12 or day.day == day.month
    order = DAY_FIRST[language]
    for line, written_day_first in ((day_first, True), (month_first, False)):
        found = absolute_date(line, language)
        if settled_by_numbers or order == written_day_first:
            assert found == day
        elif order is None:
            assert found is None  # neither the numbers nor the language settle it: no guess
        else:
            assert found == dt.date(day.year, day.day, day.month)  # read the language's way
