"""A page's `published` date comes from evidence only (issue 29 item 3): meta tags, <time>, JSON-LD, a
date in the URL, a byline. A year or a date somewhere in the body ("founded in 2005", "© 2023", a
changelog's "2019-01-02: fixed") is not the page's publication date: then `published` is null."""

from __future__ import annotations

import datetime as dt

import pytest

from plugin.reading.extract import extract_html

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
