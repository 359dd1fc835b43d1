"""Startpage (www.startpage.com), Google's index, in two steps.

Startpage refuses searches without the `sc` token its own search form carries,
so `build` fetches the home page and `parse` of that page answers with a
follow-up request: the real search, a form POST to /sp/search mirroring the
fields of Startpage's `form#search` (query, cat, t, sc, language, lui, qsr,
qadf, with_date, abd, abe). Parsing a results page gives rows.

Results are `div.result` blocks with css-hashed classes (`result css-o7i03b`);
only stable class tokens are used: `result`, `result-title` / `result-link`
(the title link, wrapping an h2), `description` (the snippet, which may start
with a date: "14 Oct 2023 ... text").
"""

from __future__ import annotations

import re

from engines.base import (
    EngineFacts,
    Parsed,
    Request,
    Response,
    SearchOptions,
    generic_wall,
    http_failure,
    not_understood,
    query_with_domains,
)
from engines.browser import CHROME
from engines.markup import attr, first, text_of
from engines.regions import table
from engines.scraped import ScrapedEngine, host_and_path

BASE = "https://www.startpage.com"
HOME_URL = BASE + "/"
SEARCH_URL = BASE + "/sp/search"

_TIME = {"day": "d", "week": "w", "month": "m", "year": "y"}
# qadf is Startpage's family filter: "heavy" (on), "none" (off); its form default is "moderate".
_SAFE = {"off": "none", "moderate": "moderate", "strict": "heavy"}

# Values of Startpage's `language` / `lui` settings (its settings form's option values).
_LANGUAGES = {
    "en": "english", "de": "deutsch", "fr": "francais", "es": "espanol", "it": "italiano",
    "nl": "nederlands", "pt": "portugues", "pl": "polski", "ru": "russian", "uk": "ukrainian",
    "sv": "svenska", "da": "dansk", "no": "norsk", "nb": "norsk", "fi": "suomi", "tr": "turkce",
    "cs": "czech", "hu": "hungarian", "ro": "romanian", "el": "greek", "bg": "bulgarian",
    "he": "hebrew", "ar": "arabic", "hi": "hindi", "th": "thai", "vi": "vietnamese",
    "id": "indonesian", "ms": "malay", "ja": "nihongo", "ko": "hangul", "zh": "jiantizhongwen",
}
_TRADITIONAL_CHINESE = ("zh-tw", "zh-hk", "zh-mo", "zh-hant")
# `qsr` (search results region) values of Startpage's settings form.
_REGIONS = {
    "en-us": "en_US", "es-us": "es_US", "en-gb": "en-GB_GB", "en-au": "en_AU", "en-ca": "en_CA",
    "fr-ca": "en_FR", "en-za": "en_ZA", "en-my": "en_MY", "ms-my": "ms_MY", "de-de": "de_DE",
    "de-at": "de_AT", "de-ch": "de_CH", "fr-ch": "fr_CH", "it-ch": "it_CH", "fr-fr": "fr_FR",
    "fr-be": "fr_BE", "nl-be": "nl_BE", "nl-nl": "nl_NL", "es-es": "es_ES", "ca-es": "ca_ES",
    "es-cl": "es_CL", "it-it": "it_IT", "pt-pt": "pt_PT", "pt-br": "pt-BR_BR", "pl-pl": "pl_PL",
    "ru-ru": "ru_RU", "ru-by": "ru_BY", "sv-se": "sv_SE", "da-dk": "da_DK", "fi-fi": "fi_FI",
    "nb-no": "no_NO", "no-no": "no_NO", "el-gr": "el_GR", "ro-ro": "ro_RO", "bg-bg": "bg_BG",
    "tr-tr": "tr_TR", "ar-eg": "ar_EG", "hi-in": "hi_IN", "ja-jp": "ja_JP", "ko-kr": "ko_KR",
    "zh-cn": "zh-CN_CN", "zh-tw": "zh-TW_TW", "zh-hk": "zh-TW_HK",
}

_AD_CONTAINER = re.compile(r"(?:^|[\s_-])(?:sponsored|ads?|a-gl)(?:[\s_-]|$)", re.I)


def language_for(region: str | None) -> str:
    if not region:
        return "english"
    lowered = region.lower()
    if lowered.startswith(_TRADITIONAL_CHINESE):
        return "fantizhengwen"
    return _LANGUAGES.get(lowered.split("-")[0], "english")


REGIONS = table(_REGIONS)


def region_for(region: str | None) -> str:
    return ENGINE.facts.region_code(region) or "all"


def search_request(query: str, options: SearchOptions, token: str | None) -> Request:
    """The real search: a POST to /sp/search as Startpage's own search form sends it."""
    text = query_with_domains(query, options)  # Google's site:, OR and -site:
    language = language_for(options.region)
    form: list[tuple[str, str]] = [("query", text), ("cat", "web"), ("t", "device")]
    if token:
        form.append(("sc", token))
    form += [
        ("language", language),
        ("lui", language),
        ("abd", "0"),
        ("abe", "0"),
        ("qsr", region_for(options.region)),
        ("qadf", _SAFE.get(options.safesearch, "moderate")),
        ("with_date", _TIME.get(options.time_range or "", "")),
    ]
    if options.page > 1:
        form += [("page", str(options.page)), ("segment", "startpage.udog")]  # as SearXNG's startpage engine
    # Searched from its home page: the form POST's headers as Chrome sends them (origin, referer, type).
    return Request("POST", SEARCH_URL, form=tuple(form), headers=CHROME.form_post(SEARCH_URL, HOME_URL, options.region))


def _token(tree) -> str:
    """The sc token of the search form (form#search first, then any sc input)."""
    node = first(tree, 'form#search input[name="sc"]', 'form[action="/sp/search"] input[name="sc"]',
                 'input[name="sc"]')
    return attr(node, "value")


def _query_shown(tree) -> str:
    """The query a results page echoes in its forms (a home page has none)."""
    for node in tree.css('input[name="query"]'):
        value = attr(node, "value")
        if value:
            return value
    return ""


def _is_google_ad(url: str) -> bool:
    host, path = host_and_path(url)
    return bool(re.match(r"^(www\.)?google\.[a-z.]+$", host)) and path.startswith(("/aclk", "/pagead"))


class Startpage(ScrapedEngine):
    facts = EngineFacts(
        name="startpage",
        profile=CHROME.name,
        tier="fallback",
        weight=1.0,
        region="global",
        index="google",
        native_site=True,
        native_time=True,
        safesearch_levels=("off", "moderate", "strict"),
        regions=REGIONS,
        default_region="all regions",
        native_domains=True,
        paging=True,
        description="Startpage (Google results); home page token, then a form POST",
    )
    url = SEARCH_URL
    # div.result blocks with css-hashed classes (result css-o7i03b): only stable tokens are used.
    results = "div.result"
    link = ("a.result-title", "a.result-link", "h2 a[href]", "h3 a[href]")
    snippet = ("p.description", ".description")  # may open with a date: "14 Oct 2023 ... text"
    ad_class = re.compile(r"(?!)")  # ads are told by their container (ad_around)
    ad_around = _AD_CONTAINER
    internal_hosts = ("startpage.com",)
    blocked_urls = ("startpage.com/sp/captcha",)
    # In markup (a form posting to /sp/captcha, a captcha widget) or in the visible text.
    blocked_markup = ("/sp/captcha", "g-recaptcha", "h-captcha", "hcaptcha.com", "captcha-form")
    blocked_text = ("captcha", "error 883", "unusual traffic", "verify you are human", "verify you're human")
    blocked_detail = "Startpage captcha page"
    no_results_text = ("did not match any documents", "did not match any results", "No results found for",
                       "We didn't find any results", "We did not find any results")

    def build(self, query: str, options: SearchOptions) -> Request:
        return Request("GET", HOME_URL, headers=CHROME.navigate(HOME_URL, options.region))

    def classify_status(self, response: Response) -> Parsed | None:
        if not self._searched(response):
            # The home page: its status is judged in parse_body (a failed home page still searches).
            return super().classify_status(response) if self.blocked_url(response) else None
        return super().classify_status(response)

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        if not self._searched(response):
            failure = http_failure(response)
            if failure is not None:
                if failure.status == "error" and generic_wall(response) is None:
                    # The home page only lends a token; without one the search is still worth making.
                    return Parsed("ok", rows=(), follow_up=search_request(query, options, None),
                                  detail=f"home page failed ({failure.detail}); searching without a token")
                return failure
        return super().parse_body(response, query, options)

    def is_result_url(self, url: str) -> bool:
        return super().is_result_url(url) and not _is_google_ad(url)

    def title_of(self, title_node, link) -> str:
        return text_of(first(link, "h2", "h3")) or text_of(link)

    def unrecognised(self, response: Response, text: str, tree, query: str, options: SearchOptions) -> Parsed:
        wall = generic_wall(response)
        if wall is not None:
            return wall
        if not self._searched(response) and not tree.css("div.result") and not _query_shown(tree):
            # The home page: its search form carries the token the real search needs (a page we cannot
            # read there is no reason not to search: the search goes ahead without the token).
            token = _token(tree)
            detail = "home page token" if token else "home page without sc token; searching without it"
            return Parsed("ok", rows=(), detail=detail, follow_up=search_request(query, options, token or None))
        return not_understood("no div.result blocks and no no-results message")

    def _searched(self, response: Response) -> bool:
        return host_and_path(response.url)[1].startswith("/sp/search")


ENGINE = Startpage()
