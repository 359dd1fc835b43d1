"""Wikipedia full-text search (MediaWiki action=query&list=search), keyless."""

from __future__ import annotations

from urllib.parse import quote

from engines.base import Engine, EngineFacts, Parsed, Request, Response, SearchOptions, not_understood, rows_from
from engines.browser import api_headers
from engines.dates import parse_date
from engines.jsonapi import header_retry_after, load_json
from engines.markup import parse_html, text_of
from engines.regions import REGIONS, language_of
from engines.script import has_cjk

# Language editions a region may select (the larger Wikipedias). A region whose
# language is not here falls back to the script rule.
WIKI_LANGS = frozenset(
    "af ar az be bg bn bs ca cs cy da de el en eo es et eu fa fi fr ga gl he hi hr hu hy id is it ja "
    "ka kk ko la lt lv mk ml mr ms nl nn no pl pt ro ru sh simple sk sl sq sr sv sw ta te th tl tr uk "
    "ur uz vi yue zh".split()
)
# Editions written in CJK scripts: a CJK query goes to one of these, a Latin one never does.
CJK_LANGS = frozenset({"zh", "ja", "ko", "yue"})
# Region language subtags whose Wikipedia has another code.
_ALIASES = {"nb": "no", "iw": "he", "in": "id", "fil": "tl", "zh-yue": "yue"}


def _edition(tag: str) -> str:
    lang = language_of(tag)
    return _ALIASES.get(lang, lang)


_EDITIONS = {tag: _edition(tag) for tag in sorted(REGIONS) if _edition(tag) in WIKI_LANGS}


def wiki_language(query: str, region: str | None) -> str:
    """zh for a CJK query, en otherwise; a region's language overrides when it fits the query's script."""
    cjk = has_cjk(query)
    default = "zh" if cjk else "en"
    if not region:
        return default
    lang = region.split("-")[0].lower()
    lang = _ALIASES.get(lang, lang)
    if lang not in WIKI_LANGS:
        return default
    if (lang in CJK_LANGS) != cjk:
        return default  # a Chinese query on en.wikipedia (or the reverse) finds little
    return lang


def article_url(lang: str, title: str) -> str:
    # MediaWiki's own encoding (wfUrlencode): spaces to underscores, these kept as-is.
    return f"https://{lang}.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe=";@$!*(),/~:")


def snippet_text(fragment: str) -> str:
    """The search snippet is HTML: <span class="searchmatch"> marks hits, entities are escaped."""
    if not fragment:
        return ""
    return text_of(parse_html(f"<div>{fragment}</div>").css_first("div"))


class Wikipedia(Engine):
    facts = EngineFacts(
        name="wikipedia",
        tier="primary",
        weight=0.6,
        region="global",
        index="wikipedia",
        native_site=False,  # the API cannot filter by site; the pipeline does
        native_time=False,
        # A region picks the edition of its language (when the query is in that edition's script).
        regions=_EDITIONS,
        default_region="en (zh for CJK queries)",
        paging=True,
        description="Wikipedia search API (zh for CJK queries, en otherwise), keyless",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        lang = wiki_language(query, options.region)
        params = (
            ("action", "query"),
            ("list", "search"),
            ("srsearch", query),
            ("srlimit", str(_limit(options))),
            # MediaWiki's documented offset for list=search: the 0-based index of the first hit.
            *((("sroffset", str(_before(options))),) if options.page > 1 else ()),
            ("srprop", "snippet|timestamp"),
            ("format", "json"),
            ("formatversion", "2"),
            ("utf8", "1"),
        )
        # api_headers carries a descriptive User-Agent, as Wikimedia's policy asks.
        return Request("GET", f"https://{lang}.wikipedia.org/w/api.php", params=params, headers=api_headers())

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = load_json(response)
        if not isinstance(data, dict):
            return not_understood("response is not a JSON object")
        error = data.get("error")
        if isinstance(error, dict):
            code = error.get("code") if isinstance(error.get("code"), str) else ""
            info = error.get("info") if isinstance(error.get("info"), str) else ""
            detail = f"MediaWiki error {code}: {info}".strip(": ")[:200]
            if code in ("maxlag", "ratelimited"):
                return Parsed("ratelimited", detail=detail, retry_after=header_retry_after(response))
            return Parsed("error", detail=detail)
        lang = _lang_of(response.url) or wiki_language(query, options.region)
        block = data.get("query")
        hits = block.get("search") if isinstance(block, dict) else None
        if not isinstance(hits, list):
            return not_understood("no query.search array")
        items = []
        for hit in hits:
            if not isinstance(hit, dict) or not isinstance(hit.get("title"), str):
                continue
            title = hit["title"].strip()
            if not title:
                continue
            snippet = hit.get("snippet")
            stamp = hit.get("timestamp")
            items.append((
                title,
                article_url(lang, title),
                snippet_text(snippet) if isinstance(snippet, str) else "",
                # The page's LAST-EDITED time: the only date the search API gives,
                # not when the article was written.
                parse_date(stamp, options.now) if isinstance(stamp, str) else None,
            ))
        rows = rows_from(items, offset=_before(options))
        if rows:
            return Parsed("ok", rows)
        if not hits:
            return Parsed("empty", detail="no results")
        return not_understood("search hits without titles")


def _limit(options: SearchOptions) -> int:
    return min(max(options.count, 1), 50)


def _before(options: SearchOptions) -> int:
    return (max(options.page, 1) - 1) * _limit(options)


def _lang_of(url: str) -> str | None:
    """The edition the response came from (https://<lang>.wikipedia.org/...)."""
    host = url.split("://", 1)[-1].split("/", 1)[0].lower()
    if host.endswith(".wikipedia.org"):
        sub = host[: -len(".wikipedia.org")]
        if sub and "." not in sub and sub != "www":
            return sub
    return None


ENGINE = Wikipedia()
