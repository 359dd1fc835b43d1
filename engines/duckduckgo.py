"""What DuckDuckGo's two no-JavaScript endpoints (html and lite) share: options and refusals."""

from __future__ import annotations

from engines.base import Parsed, Response, http_failure, parse_retry_after
from engines.regions import region_tag, table

# kl: DuckDuckGo's region codes are country-language (the list SerpApi documents at
# serpapi.com/duckduckgo-regions.json, which ddgs uses too); "wt-wt" is no region.
REGIONS = table({
    "es-AR": "ar-es", "en-AU": "au-en", "de-AT": "at-de", "fr-BE": "be-fr", "nl-BE": "be-nl", "pt-BR": "br-pt",
    "bg-BG": "bg-bg", "en-CA": "ca-en", "fr-CA": "ca-fr", "ca-ES": "ct-ca", "es-CL": "cl-es", "zh-CN": "cn-zh",
    "es-CO": "co-es", "hr-HR": "hr-hr", "cs-CZ": "cz-cs", "da-DK": "dk-da", "et-EE": "ee-et", "fi-FI": "fi-fi",
    "fr-FR": "fr-fr", "de-DE": "de-de", "el-GR": "gr-el", "zh-HK": "hk-tzh", "hu-HU": "hu-hu", "is-IS": "is-is",
    "en-IN": "in-en", "id-ID": "id-id", "en-ID": "id-en", "en-IE": "ie-en", "he-IL": "il-he", "en-IL": "il-en",
    "it-IT": "it-it", "ja-JP": "jp-jp", "ko-KR": "kr-kr", "lv-LV": "lv-lv", "lt-LT": "lt-lt", "ms-MY": "my-ms",
    "en-MY": "my-en", "es-MX": "mx-es", "nl-NL": "nl-nl", "en-NZ": "nz-en", "nb-NO": "no-no", "no-NO": "no-no",
    "en-PK": "pk-en", "es-PE": "pe-es", "en-PH": "ph-en", "tl-PH": "ph-tl", "fil-PH": "ph-tl", "pl-PL": "pl-pl",
    "pt-PT": "pt-pt", "ro-RO": "ro-ro", "ru-RU": "ru-ru", "ar-SA": "xa-ar", "en-SG": "sg-en", "sk-SK": "sk-sk",
    "sl-SI": "sl-sl", "en-ZA": "za-en", "es-ES": "es-es", "sv-SE": "se-sv", "de-CH": "ch-de", "fr-CH": "ch-fr",
    "it-CH": "ch-it", "zh-TW": "tw-tzh", "th-TH": "th-th", "en-TH": "th-en", "tr-TR": "tr-tr", "en-US": "us-en",
    "es-US": "us-es", "uk-UA": "ua-uk", "en-GB": "uk-en", "vi-VN": "vn-vi", "en-VN": "vn-en",
})
TIME = {"day": "d", "week": "w", "month": "m", "year": "y"}
SAFE = {"off": "-2", "moderate": "-1", "strict": "1"}

# DDG's bot pages: the anomaly challenge ("Unfortunately, bots use DuckDuckGo too").
BLOCKED_TEXT = ("bots use DuckDuckGo too",)
BLOCKED_MARKUP = ("anomaly-modal", "anomaly.js", 'id="challenge-form"')
BLOCKED_DETAIL = "DuckDuckGo anomaly challenge (CAPTCHA)"


def page_fields(page: int) -> list[tuple[str, str]]:
    """The fields DDG's own "Next" form posts for `page` (both endpoints; seen on the corpus pages: s=10,
    nextParams, v=l, o=json, dc=11, api=d.js for page 2), later pages 15 rows on (as SearXNG and ddgs
    compute them). DDG's form also carries a vqd token, which a fresh request does not have."""
    if page <= 1:
        return []
    offset = rows_before(page)
    return [("s", str(offset)), ("nextParams", ""), ("v", "l"), ("o", "json"), ("dc", str(offset + 1)),
            ("api", "d.js")]


def rows_before(page: int) -> int:
    """Rows DDG showed before `page`: 10 on the first page, 15 on each later one."""
    return 0 if page <= 1 else 10 + (page - 2) * 15


def region_code(region: str | None) -> str:
    """DuckDuckGo's kl for a region; "wt-wt" (no region) when DDG has none for it."""
    return REGIONS.get(region_tag(region or ""), "wt-wt")


def refusal_status(response: Response) -> Parsed | None:
    """DDG answers a too-eager client with 202 and an empty or anomaly page; other statuses as usual."""
    if response.status == 202:
        return Parsed("ratelimited", detail="HTTP 202 rate-limit page",
                      retry_after=parse_retry_after(response.headers.get("retry-after")))
    return http_failure(response)
