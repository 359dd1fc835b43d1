"""Yahoo web search (search.yahoo.com and its country subdomains), Bing's index.

Result blocks are `div.algo-sr` (`dd algo algo-sr ...`). Two markups are seen:

- 2021: `div.compTitle > h3.title > a[href=r.search.yahoo.com/.../RU=<url>/RK=...]`,
  the displayed URL in a sibling `div` below the heading;
- 2026: `div.compTitle > a[href] > (div breadcrumb "Site www.site.com › path", h3.title > span)`,
  i.e. the link wraps both the breadcrumb and the heading, so the title is the
  h3's text, not the link's.

Some Yahoo variants put the breadcrumb span inside the h3 itself
(`<h3><a aria-label="Title"><span>www.site.com › path</span>Title</a></h3>`);
the link's aria-label, or the h3 text with that leading span removed, is the
title a person sees.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode, urlsplit

from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, query_with_domains
from engines.browser import CHROME
from engines.dates import leading_date
from engines.markup import ancestor, attr, first, text_of
from engines.regions import by_country
from engines.scraped import ScrapedEngine

DEFAULT_HOST = "search.yahoo.com"

# Yahoo's own time filter has day/week/month only (the UI offers no "past year").
_TIME = {"day": "d", "week": "w", "month": "m"}
# vm: r = strict, i = moderate, p = off.
_SAFE = {"off": "p", "moderate": "i", "strict": "r"}

# Country subdomains (country part of the region tag). Japan is Yahoo! JAPAN, a
# different engine, so it stays on the default host.
_HOSTS = {
    "GB": "uk.search.yahoo.com", "UK": "uk.search.yahoo.com", "IE": "ie.search.yahoo.com",
    "CA": "ca.search.yahoo.com", "AU": "au.search.yahoo.com", "NZ": "nz.search.yahoo.com",
    "IN": "in.search.yahoo.com", "SG": "sg.search.yahoo.com", "PH": "ph.search.yahoo.com",
    "MY": "malaysia.search.yahoo.com", "ID": "id.search.yahoo.com", "VN": "vn.search.yahoo.com",
    "TH": "th.search.yahoo.com", "ZA": "za.search.yahoo.com",
    "DE": "de.search.yahoo.com", "AT": "at.search.yahoo.com", "CH": "ch.search.yahoo.com",
    "FR": "fr.search.yahoo.com", "BE": "be.search.yahoo.com", "NL": "nl.search.yahoo.com",
    "IT": "it.search.yahoo.com", "ES": "espanol.search.yahoo.com", "SE": "se.search.yahoo.com",
    "NO": "no.search.yahoo.com", "DK": "dk.search.yahoo.com", "FI": "fi.search.yahoo.com",
    "PL": "pl.search.yahoo.com", "RO": "ro.search.yahoo.com", "GR": "gr.search.yahoo.com",
    "TR": "tr.search.yahoo.com", "BR": "br.search.yahoo.com", "MX": "mx.search.yahoo.com",
    "AR": "ar.search.yahoo.com", "CL": "cl.search.yahoo.com", "CO": "co.search.yahoo.com",
    "PE": "pe.search.yahoo.com", "VE": "ve.search.yahoo.com",
    "TW": "tw.search.yahoo.com", "HK": "hk.search.yahoo.com",
    "US": DEFAULT_HOST,
}

_CONSENT_HOSTS = ("guce.yahoo.com", "consent.yahoo.com", "guce.oath.com")
_CONSENT_MARKERS = ("ybar-property-guce", "sec:general_consent")
_NO_RESULTS_MARKERS = ("We did not find results for", "did not match any documents", "No results found for")
_AD_CONTAINER = re.compile(r"(?:^|\s)(?:ads|searchCenterTopAds|searchCenterBottomAds|searchRightTopAds|"
                           r"searchRightBottomAds|sponsored)(?:\s|$)")
# Yahoo sometimes double-escapes titles ("&amp;#039;data Analyst&amp;#039;"): what
# reaches the text is a literal entity. Decode only unambiguous entities.
_RESIDUAL_ENTITY = re.compile(r"&(#\d{1,6}|#x[0-9a-fA-F]{1,6}|amp|quot|apos|lt|gt|nbsp);")
_ENTITIES = {"amp": "&", "quot": '"', "apos": "'", "lt": "<", "gt": ">", "nbsp": " "}
_CRUMB = re.compile(r"›|^(?:https?://)?(?:[\w-]+\.)+[a-z]{2,}(?:[\s/›]|$)", re.I)


def _decode_entity(match: re.Match) -> str:
    name = match.group(1)
    if name.startswith("#"):
        try:
            code = int(name[2:], 16) if name[1:2] in ("x", "X") else int(name[1:])
            return chr(code)
        except (ValueError, OverflowError):
            return match.group(0)
    return _ENTITIES.get(name, match.group(0))


def _clean(text: str) -> str:
    return _RESIDUAL_ENTITY.sub(_decode_entity, text).strip() if "&" in text else text


def host_for(region: str | None) -> str:
    if region and "-" in region:
        return _HOSTS.get(region.rsplit("-", 1)[1].upper(), DEFAULT_HOST)
    return DEFAULT_HOST


def _is_ad_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return True
    host = (parts.hostname or "").lower()
    path = parts.path.lower()
    if host.endswith("bing.com") and path.startswith(("/aclick", "/aclk")):
        return True
    return host.endswith("yahoo.com") and ("/cbclk" in path or path.startswith("/aclick"))


def _title(heading, link) -> str:
    """The title as shown: the h3 text without a leading displayed-URL breadcrumb."""
    if heading is None:
        return text_of(link)
    inner = heading.css_first("a")
    label = attr(inner, "aria-label")
    if label:
        return re.sub(r"\s+", " ", label).strip()
    text = text_of(heading)
    for span in heading.css("span"):
        crumb = text_of(span)
        if crumb and crumb != text and text.startswith(crumb) and _CRUMB.search(crumb):
            return text[len(crumb):].strip()
    return text


class Yahoo(ScrapedEngine):
    facts = EngineFacts(
        name="yahoo",
        profile=CHROME.name,
        tier="fallback",
        weight=1.0,
        region="global",
        index="bing",
        native_site=True,
        native_time=True,
        native_time_ranges=("day", "week", "month"),  # Yahoo has no past-year filter
        safesearch_levels=("off", "moderate", "strict"),
        # A region is served by the country site of its country (its language only sets vl).
        regions=by_country([c for c in _HOSTS if c != "UK"], code=lambda country: _HOSTS[country]),
        default_region="search.yahoo.com (US)",
        native_domains=True,
        paging=True,
        description="Yahoo web search (country subdomains by region), serves Bing's index",
    )
    url = f"https://{DEFAULT_HOST}/search"
    per_page = 7
    # 2021 and 2026 result blocks are div.algo-sr; a div.algo counts when it has a compTitle.
    results = "div.algo-sr, div.algo"
    title = ("h3",)
    link = (".compTitle a[href]", "a[href]")
    snippet = (".compText p", ".compText")
    ad_class = _AD_CONTAINER
    ad_around = _AD_CONTAINER
    blocked_urls = tuple(f"://{host}/" for host in _CONSENT_HOSTS)
    blocked_css = "form.consent-form"
    blocked_markup = _CONSENT_MARKERS
    blocked_detail = "consent page"
    no_results_text = _NO_RESULTS_MARKERS

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_domains(query, options)
        # b: the 1-based first row; Yahoo shows 7 rows a page whatever pz asks (ddgs and SearXNG step by 7).
        first_row = (options.page - 1) * self.per_page + 1
        params: list[tuple[str, str]] = [("p", text), ("ei", "UTF-8"), ("b", str(first_row)),
                                         ("pz", str(min(max(options.count, 1), 50)))]
        lang = options.region.split("-")[0].lower() if options.region else None
        if lang:
            params.append(("vl", f"lang_{lang}"))
        if options.time_range in _TIME:
            params.append(("fr2", "time"))
            params.append(("btf", _TIME[options.time_range]))
        safe = _SAFE.get(options.safesearch, "i")
        params.append(("vm", safe))
        url = f"https://{host_for(options.region)}/search"
        headers = CHROME.navigate(url, options.region)
        # Yahoo keeps search preferences in the sB cookie; vm there is what sticks.
        preferences = {"v": "1", "vm": safe, "fl": "1", "pn": "10", "rw": "new", "userset": "1"}
        if lang:
            preferences["vl"] = f"lang_{lang}"
        headers["Cookie"] = "sB=" + urlencode(preferences)
        return Request("GET", url, params=tuple(params), headers=headers)

    def classify_status(self, response: Response) -> Parsed | None:
        if response.status == 999:
            # Yahoo's "999 Unable to process request at this time": a temporary bot block.
            return Parsed("ratelimited", detail="HTTP 999 (Yahoo request throttled)")
        return super().classify_status(response)

    def blocks(self, tree) -> list:
        return [block for block in tree.css(self.results)
                if "algo-sr" in attr(block, "class").split() or block.css_first(".compTitle") is not None]

    def link_of(self, block, title_node):
        if title_node is not None:
            link = title_node.css_first("a[href]") or ancestor(title_node, "a")
            if link is not None:
                return link
        return first(block, *self.link)

    def is_result_url(self, url: str) -> bool:
        return super().is_result_url(url) and not _is_ad_url(url)

    def title_of(self, title_node, link) -> str:
        return _clean(_title(title_node, link))

    def snippet_and_date(self, block, options: SearchOptions):
        snippet = _clean(text_of(first(block, *self.snippet)))
        return snippet, leading_date(snippet, options.now)


ENGINE = Yahoo()
