"""The browser every scraped engine presents (engines/browser.py) and what particular engines ask of it:
DuckDuckGo's and Startpage's searches are form POSTs whose headers are those Chromium sends for a form, in
Chromium's order (bench/fingerprints/chromium.json, recorded from Chromium by scripts/fingerprint.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engines import ENGINES
from engines.base import SearchOptions
from engines.browser import CHROME, PROFILES, fetch_site

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "bench" / "fingerprints" / "chromium.json"
SCRAPED = ["duckduckgo-html", "duckduckgo-lite", "bing", "bing-cn", "brave", "baidu", "yahoo", "startpage", "mojeek",
           "sogou", "so360"]
GESTURE = {"sec-fetch-user"}  # Chromium's recorded form was submitted by a script, ours stand for a person


def recorded(kind: str) -> list[str]:
    from plugin.bench.fingerprint import header_order, load_reference

    _, navigate, form_post = load_reference(REFERENCE)
    return header_order(form_post if kind == "form" else navigate)


def names(headers: dict[str, str]) -> list[str]:
    return [name.lower() for name in headers if name.lower() not in GESTURE]


@pytest.mark.parametrize("engine", ["duckduckgo-html", "duckduckgo-lite"])
def test_duckduckgo_searches_are_a_form_posted_the_way_chrome_posts_one(engine):
    request = ENGINES[engine].build("rust async", SearchOptions(region="de-DE"))
    host = "html.duckduckgo.com" if engine == "duckduckgo-html" else "lite.duckduckgo.com"
    assert request.method == "POST" and request.form
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["origin"] == f"https://{host}" and headers["referer"] == f"https://{host}/"
    assert headers["content-type"] == "application/x-www-form-urlencoded"
    assert headers["sec-fetch-site"] == "same-origin" and headers["sec-fetch-mode"] == "navigate"
    assert headers["cache-control"] == "max-age=0" and headers["accept-language"] == "de-DE,de;q=0.9,en;q=0.6"
    # Chromium's order, less content-length (the transport puts it first, where Chromium does).
    assert names(request.headers) == [name for name in recorded("form") if name != "content-length"]


def test_startpage_opens_its_home_page_then_posts_its_form_from_it():
    from engines.startpage import HOME_URL, search_request

    home = ENGINES["startpage"].build("rust async", SearchOptions())
    assert home.method == "GET" and home.headers["Sec-Fetch-Site"] == "none" and "Referer" not in home.headers
    request = search_request("rust async", SearchOptions(), "token")
    assert request.method == "POST" and request.headers["Referer"] == HOME_URL
    assert request.headers["Origin"] == "https://www.startpage.com"
    assert names(request.headers) == [name for name in recorded("form") if name != "content-length"]


@pytest.mark.parametrize("engine", [name for name in SCRAPED if name not in ("duckduckgo-html", "duckduckgo-lite")])
def test_every_scraped_engine_names_the_one_chrome_profile_and_speaks_as_it(engine):
    found = ENGINES[engine]
    assert found.facts.profile == CHROME.name and CHROME.name in PROFILES
    request = found.build("rust async", SearchOptions())
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["user-agent"] == CHROME.user_agent and headers["sec-ch-ua"] == CHROME.client_hints
    assert headers["accept-encoding"] == "gzip, deflate, br, zstd"
    if request.method == "GET":
        order = [name for name in names(request.headers) if name != "cookie"]
        # A GET is a navigation: Chromium's order, a referer (when the engine sends one) after the fetch metadata.
        assert [name for name in order if name != "referer"] == recorded("navigate")
        if "referer" in order:
            assert order.index("referer") == order.index("sec-fetch-dest") + 1


def test_keyed_apis_present_no_browser():
    for name in ("exa", "tavily", "brave-api", "serper", "searxng", "firecrawl", "wikipedia"):
        assert ENGINES[name].facts.profile is None, name


def test_one_version_everywhere():
    assert re.search(r"Chrome/(\d+)\.0\.0\.0", CHROME.user_agent).group(1) == str(CHROME.major)
    assert f'"Google Chrome";v="{CHROME.major}"' in CHROME.client_hints
    assert CHROME.name == f"chrome{CHROME.major}"


@pytest.mark.parametrize("url, referer, site", [
    ("https://html.duckduckgo.com/html/", None, "none"),
    ("https://html.duckduckgo.com/html/", "https://html.duckduckgo.com/", "same-origin"),
    ("https://www.baidu.com/s", "https://news.baidu.com/", "same-site"),
    ("https://www.baidu.com/s", "https://www.bing.com/", "cross-site"),
])
def test_fetch_site_follows_where_the_navigation_came_from(url, referer, site):
    assert fetch_site(url, referer) == site
