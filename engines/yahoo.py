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

from engines.base import (
    Engine,
    EngineFacts,
    Parsed,
    Request,
    Response,
    SearchOptions,
    http_failure,
    not_understood,
    query_with_site,
    rows_from,
)
from engines.browser import browser_headers
from engines.dates import leading_date
from engines.markup import ancestor, attr, first, inside, page_text, parse_html, text_of
from engines.redirects import unwrap

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


class Yahoo(Engine):
    facts = EngineFacts(
        name="yahoo",
        tier="fallback",
        weight=0.8,
        region="global",
        index="bing",
        native_site=True,
        native_time=True,
        native_time_ranges=("day", "week", "month"),  # Yahoo has no past-year filter
        description="Yahoo web search (country subdomains by region), serves Bing's index",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_site(query, options.site)
        params: list[tuple[str, str]] = [("p", text), ("ei", "UTF-8"), ("b", "1"),
                                         ("pz", str(min(max(options.count, 1), 50)))]
        lang = options.region.split("-")[0].lower() if options.region else None
        if lang:
            params.append(("vl", f"lang_{lang}"))
        if options.time_range in _TIME:
            params.append(("fr2", "time"))
            params.append(("btf", _TIME[options.time_range]))
        safe = _SAFE.get(options.safesearch, "i")
        params.append(("vm", safe))
        headers = browser_headers(options.region)
        # Yahoo keeps search preferences in the sB cookie; vm there is what sticks.
        preferences = {"v": "1", "vm": safe, "fl": "1", "pn": "10", "rw": "new", "userset": "1"}
        if lang:
            preferences["vl"] = f"lang_{lang}"
        headers["Cookie"] = "sB=" + urlencode(preferences)
        return Request("GET", f"https://{host_for(options.region)}/search", params=tuple(params), headers=headers)

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        try:
            host = (urlsplit(response.url or "").hostname or "").lower()
        except ValueError:
            host = ""
        if host in _CONSENT_HOSTS:
            return Parsed("blocked", detail="consent page")
        if response.status == 999:
            # Yahoo's "999 Unable to process request at this time": a temporary bot block.
            return Parsed("ratelimited", detail="HTTP 999 (Yahoo request throttled)")
        failure = http_failure(response)
        if failure:
            return failure
        text = response.text or ""
        tree = parse_html(text)
        base = response.url if (response.url or "").startswith("http") else f"https://{DEFAULT_HOST}/search"
        items = []
        for block in tree.css("div.algo-sr, div.algo"):
            classes = attr(block, "class")
            if "algo-sr" not in classes.split() and block.css_first(".compTitle") is None:
                continue
            if _AD_CONTAINER.search(classes) or inside(block, _AD_CONTAINER):
                continue
            heading = block.css_first("h3")
            link = None
            if heading is not None:
                link = heading.css_first("a[href]") or ancestor(heading, "a")
            if link is None:
                link = first(block, ".compTitle a[href]", "a[href]")
            if link is None:
                continue
            url = unwrap(attr(link, "href"), base)
            if not url.startswith(("http://", "https://")) or _is_ad_url(url):
                continue
            snippet = _clean(text_of(first(block, ".compText p", ".compText")))
            items.append((_clean(_title(heading, link)), url, snippet, leading_date(snippet, options.now)))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)
        if tree.css_first("form.consent-form") is not None or any(marker in text for marker in _CONSENT_MARKERS):
            return Parsed("blocked", detail="consent page")
        visible = page_text(tree, 8000)
        if any(marker in visible for marker in _NO_RESULTS_MARKERS):
            return Parsed("empty", detail="no results")
        return not_understood("no div.algo-sr blocks and no no-results message")


ENGINE = Yahoo()
