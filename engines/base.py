"""The engine contract.

An engine is pure: from a query and options it builds a `Request`; from a
`Response` (bytes already fetched by the plugin's transport) it produces a
`Parsed` outcome: rows in the engine's own order, or a classification
(empty, blocked, rate-limited, error). It never does I/O, so every parser can
be exercised on a recorded page.
"""

from __future__ import annotations

import email.utils
import functools
import re
import time
import traceback
from pathlib import Path
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal, Mapping

from multidict import CIMultiDict

from engines.regions import is_region_tag, region_tag

Tier = Literal["primary", "fallback"]
Region = Literal["global", "cjk"]
TimeRange = Literal["day", "week", "month", "year"]
SafeSearch = Literal["off", "moderate", "strict"]
Category = Literal["web", "news"]
# What a parser can conclude from one response. The pipeline adds the statuses
# that need no response at all (timeout, cooldown, skipped, disabled, irrelevant).
ParseStatus = Literal["ok", "empty", "blocked", "ratelimited", "error"]

TIME_RANGES: tuple[str, ...] = ("day", "week", "month", "year")
SAFESEARCH_LEVELS: tuple[str, ...] = ("off", "moderate", "strict")


@dataclass(frozen=True)
class EngineFacts:
    """Static facts about an engine, kept in one place (its module)."""

    name: str
    tier: Tier
    weight: float
    region: Region
    # The underlying index the engine draws on: engines sharing an index are
    # correlated voters (DuckDuckGo and Yahoo serve Bing's index).
    index: str
    # Environment variable holding the API key, for keyed engines.
    key_env: str | None = None
    # Environment variable holding the instance URL, for self-hosted engines.
    url_env: str | None = None
    # Operators the engine applies itself; the pipeline filters rows of the others.
    native_site: bool = False
    native_time: bool = False
    # Time ranges the engine applies itself when native_time is set; None = all of them.
    native_time_ranges: tuple[str, ...] | None = None
    # Safe-search levels the engine applies as asked; () = it has no safe-search switch at all.
    # A level it lacks is served with its nearest one (see Engine.ignored_options).
    safesearch_levels: tuple[str, ...] = ()
    # The region vocabulary (engines.regions: "en-US", "zh-CN", ...) translated to the engine's own
    # code. None: any language-COUNTRY tag is passed on by rule (APIs that take any ISO country);
    # an empty table: the engine has no region switch.
    regions: Mapping[str, str] | None = field(default_factory=dict)
    # What the engine serves when it has no region or cannot honour the one asked ("en-US", "worldwide").
    default_region: str = "worldwide"
    # The engine applies allowed/blocked domain lists itself (site: OR-groups and -site: in the query, or
    # its API's own include/exclude lists); the pipeline still filters every engine's rows.
    native_domains: bool = False
    # The engine has a news vertical it searches when SearchOptions.category is "news"; an engine
    # without one is skipped by the pipeline for news ("skipped: no news vertical").
    news: bool = False
    # The engine serves SearchOptions.page beyond the first, up to max_page (None: no known limit); a page
    # it cannot serve is not asked for (it would repeat page 1 or waste a request): see missing_page.
    paging: bool = False
    max_page: int | None = None
    description: str = ""
    # The browser the transport presents to this engine (a name in engines.browser.PROFILES: its TLS and
    # HTTP/2 fingerprint with its headers); None: a JSON API, reached as the API client it is.
    profile: str | None = None

    def applies_time(self, time_range: str | None) -> bool:
        return self.native_time and (self.native_time_ranges is None or time_range in self.native_time_ranges)

    def missing_page(self, page: int) -> str | None:
        """Why the engine cannot serve result page `page` (the pipeline's `skipped` detail), else None."""
        if page <= 1:
            return None
        if not self.paging:
            return f"no page {page}"
        if self.max_page is not None and page > self.max_page:
            return f"no page {page} (last page {self.max_page})"
        return None

    def honours_region(self, region: str | None) -> bool:
        """Whether the engine serves this region as asked (a region tag of engines.regions)."""
        if not region:
            return True
        tag = region_tag(region)
        if self.regions is None:
            return is_region_tag(tag)
        return tag in self.regions

    def region_code(self, region: str | None) -> str | None:
        """The engine's own code for a region it honours, else None."""
        if not region or self.regions is None:
            return None
        return self.regions.get(region_tag(region))


@dataclass(frozen=True)
class SearchOptions:
    """Per-search options an engine maps onto its own parameters."""

    region: str | None = None  # BCP-47-ish, e.g. "en-US", "zh-CN"; None = engine default
    time_range: TimeRange | None = None
    safesearch: SafeSearch = "moderate"
    site: str | None = None
    # Domains the rows must come from / must not come from (each also matches its subdomains);
    # the plugin filters every engine's rows, engines that can pass them on natively do so.
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    category: Category = "web"
    page: int = 1  # 1-based result page
    count: int = 10  # how many rows to ask for, where the engine takes a count
    # Filled in by the plugin for keyed / self-hosted engines; never logged.
    api_key: str | None = None
    base_url: str | None = None
    # Reference time for relative dates ("3 days ago"); replay pins it.
    now: datetime | None = None


@dataclass(frozen=True)
class Request:
    method: Literal["GET", "POST"]
    url: str
    params: tuple[tuple[str, str], ...] = ()
    form: tuple[tuple[str, str], ...] | None = None
    json: Mapping[str, object] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # Secret values carried by this request (API keys): the transport and the
    # recorder scrub them from anything they log or store.
    secrets: tuple[str, ...] = ()


class Headers(CIMultiDict):
    """Response headers, looked up case-insensitively (multidict's CIMultiDict, installed with aiohttp)."""

    def __init__(self, items: Mapping[str, str] | None = None):
        super().__init__(items or {})


@dataclass(frozen=True)
class Response:
    status: int
    url: str
    headers: Headers
    body: bytes
    text: str  # body decoded with the charset the transport settled on


@dataclass(frozen=True)
class Row:
    title: str
    url: str
    snippet: str
    position: int  # 1-based, in the engine's own order
    date: date | None = None
    source: str | None = None  # the publisher of a news row ("Reuters", "新华网")
    # The page's text when the API sent it with the row (Exa's `text`, Firecrawl's `markdown`), as sent:
    # search(read=N) uses it instead of reading the page. Not part of a row's identity or repr.
    content: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Parsed:
    status: ParseStatus
    rows: tuple[Row, ...] = ()
    detail: str = ""
    retry_after: float | None = None  # seconds, from Retry-After or the page
    # A second request the engine needs before it has rows (e.g. Startpage's
    # home page yields a token for the real search).
    follow_up: Request | None = None
    # The engine's own corrected query where the page shows one ("Including results for ...",
    # "Did you mean ...", 以下是…的结果): what the rows are really about.
    correction: str | None = None
    # Set only when the parser itself crashed (our bug, not the engine's): the formatted traceback,
    # for the plugin to log. The detail then reads "parser failure at engines/x.py:123 (TypeError)".
    failure: str | None = field(default=None, compare=False, repr=False)


def query_with_site(query: str, site: str | None) -> str:
    """The query text with a `site:` operator, for engines that understand it in the text."""
    return f"{query} site:{site}" if site else query


def allowed_of(options: "SearchOptions") -> tuple[str, ...]:
    """The domains rows must come from: the allow list, or the one `site`."""
    return tuple(options.allowed_domains) or ((options.site,) if options.site else ())


def query_with_domains(query: str, options: "SearchOptions") -> str:
    """The query text with the domain lists as operators, for engines that honour them in the text:
    `site:a.com`, `(site:a.com OR site:b.org)`, `-site:x.com` (Bing, and the engines that relay Bing,
    Google or Brave, document and honour these; the corpus' DuckDuckGo Lite page for an OR-group of
    three sites shows only those sites)."""
    allowed = allowed_of(options)
    parts = [query]
    if len(allowed) == 1:
        parts.append(f"site:{allowed[0]}")
    elif allowed:
        parts.append("(" + " OR ".join(f"site:{domain}" for domain in allowed) + ")")
    parts += [f"-site:{domain}" for domain in options.blocked_domains]
    return " ".join(parts)


# Bot walls no engine's own check recognised: third-party challenges (Cloudflare, reCAPTCHA, hCaptcha,
# Turnstile, DataDome, PerimeterX, Arkose, GeeTest) and generic wording, in English and Chinese. Consulted
# only for a page that yielded no rows and was not understood. A wall is recognised by what a person sees
# (the visible text and the <title>), by a challenge widget's element, and by the address of a known
# challenge script or frame; never by an asset's name (a 2018 Baidu Tieba page links captcha_8dce960.css
# for its login dialog) nor by a string inside a script, save Cloudflare's challenge settings object. A
# page that is none of these is a parser failure, not a wall that would bench the engine.
_CHALLENGE_TEXT = (
    "captcha", "just a moment...", "are you a robot", "not a robot", "unusual traffic", "verify you are human",
    "verify you're human", "made by a human", "complete the following challenge", "automated queries",
    "bot detection", "access denied", "人机验证", "安全验证", "验证码", "请完成验证",
    # Cloudflare's firewall block page, which runs no challenge (no script, widget or frame to recognise):
    # headline and <title>. Not its "Cloudflare Ray ID", which its plain 5xx error pages show too.
    "sorry, you have been blocked", "attention required! | cloudflare",
)
_RATE_LIMIT_TEXT = ("too many requests", "rate limit exceeded", "rate-limited", "请求过于频繁", "访问过于频繁")
# In the src of a <script> or <iframe>, or the action of a <form>.
_CHALLENGE_ADDRESSES = (
    "/cdn-cgi/challenge-platform/", "challenges.cloudflare.com", "google.com/recaptcha", "gstatic.com/recaptcha",
    "recaptcha.net/recaptcha", "hcaptcha.com", "captcha-delivery.com", "perimeterx.net", "px-cloud.net",
    "arkoselabs.com", "funcaptcha.com", "geetest.com", "/_incapsula_resource", "__cf_chl_",
)
# The class or id of a challenge widget's element.
_CHALLENGE_WIDGETS = frozenset({"g-recaptcha", "h-captcha", "cf-turnstile", "cf-challenge", "cf-challenge-running",
                                "challenge-form", "challenge-stage", "px-captcha", "geetest_holder"})
_CHALLENGE_SCRIPT = "_cf_chl_opt"  # Cloudflare's challenge page sets it inline
_HTML_START = re.compile(r"^[\ufeff\s]*<")


def _wall_evidence(text: str) -> tuple[str, str] | None:
    """("ratelimited" | "blocked", the marker) for an HTML page that shows or runs a wall, else None."""
    from engines.markup import page_text, parse_html, text_of

    tree = parse_html(text)
    title = tree.css_first("title")
    seen = f"{text_of(title) if title is not None else ''} {page_text(tree, 8000)}".lower()
    for marker in _RATE_LIMIT_TEXT:
        if marker in seen:
            return "ratelimited", marker
    for marker in _CHALLENGE_TEXT:
        if marker in seen:
            return "blocked", marker
    for node in tree.css("script[src], iframe[src], form[action]"):
        address = (node.attributes.get("src") or node.attributes.get("action") or "").lower()
        marker = next((m for m in _CHALLENGE_ADDRESSES if m in address), None)
        if marker is not None:
            return "blocked", marker
    for node in tree.css("[class], [id]"):
        names = {*(node.attributes.get("class") or "").lower().split(), (node.attributes.get("id") or "").lower()}
        marker = next(iter(names & _CHALLENGE_WIDGETS), None)
        if marker is not None:
            return "blocked", marker
    if any(_CHALLENGE_SCRIPT in (node.text() or "") for node in tree.css("script:not([src])")):
        return "blocked", _CHALLENGE_SCRIPT
    return None


def generic_wall(response: "Response") -> "Parsed | None":
    """`blocked` / `ratelimited` when an HTML page shows or runs a bot wall, else None."""
    raw = (response.text or "")[:500_000]
    if not _HTML_START.match(raw):
        return None  # walls are HTML pages; a JSON or text body that says "captcha" is not one
    found = _wall_evidence(raw)
    if found is None:
        return None
    status, marker = found
    if status == "ratelimited":
        return Parsed("ratelimited", detail=f"rate-limit page (generic marker {marker!r})",
                      retry_after=parse_retry_after(response.headers.get("retry-after")))
    return Parsed("blocked", detail=f"challenge page (generic marker {marker!r})")


PARSER_FAILURE = "parser failure"
_ENGINES_DIR = Path(__file__).resolve().parent


def failure_location(exc: BaseException) -> str:
    """`engines/x.py:123`: the innermost frame of the traceback inside the engines package."""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename).resolve()
        if path.is_relative_to(_ENGINES_DIR):
            where = f"{_ENGINES_DIR.name}/{path.relative_to(_ENGINES_DIR).as_posix()}:{frame.lineno}"
    return where or "engines"


def parser_failure(exc: BaseException) -> Parsed:
    """A crashed parser: our bug, not the engine's. The detail names where; `failure` keeps the traceback."""
    return Parsed("error", detail=f"{PARSER_FAILURE} at {failure_location(exc)} ({type(exc).__name__})",
                  failure="".join(traceback.format_exception(exc)))


def _never_raises(parse):
    """Enforce the parse contract on every engine: never raise (a crash is an `error` that says where, as
    SearXNG's error recorder counts parser exceptions by file and line), and a page that was not understood
    but carries a generic bot-wall marker is `blocked` / `ratelimited`, not `error`."""

    @functools.wraps(parse)
    def guarded(self, response: "Response", query: str, options: "SearchOptions") -> "Parsed":
        try:
            parsed = parse(self, response, query, options)
        except Exception as exc:
            return parser_failure(exc)
        if parsed.status == "error" and not parsed.rows and parsed.failure is None and (
                parsed.detail.startswith(NOT_UNDERSTOOD) or response.status >= 500):
            try:
                return generic_wall(response) or parsed
            except Exception as exc:
                return parser_failure(exc)
        return parsed

    guarded.__wrapped_never_raises__ = True  # type: ignore[attr-defined]
    return guarded


class Engine:
    """Base class: subclasses set `facts` and implement `build` and `parse_body`.

    `parse` is the contract the pipeline calls: the HTTP status is classified once, here
    (`classify_status`, which an engine overrides where a status means something of its own, as
    SearXNG engines opt out of `raise_for_httperror`), then `parse_body` reads the page. It never
    raises; a subclass that overrides `parse` itself is wrapped the same way.
    """

    facts: EngineFacts

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        parse = cls.__dict__.get("parse")
        if parse is not None and not getattr(parse, "__wrapped_never_raises__", False):
            cls.parse = _never_raises(parse)  # type: ignore[method-assign]

    @property
    def name(self) -> str:
        return self.facts.name

    def build(self, query: str, options: SearchOptions) -> Request:
        raise NotImplementedError

    def classify_status(self, response: Response) -> Parsed | None:
        """What the HTTP status alone says (None for a 2xx answer): `http_failure` unless overridden."""
        return http_failure(response)

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        """The rows of a response whose status said nothing (a 2xx, or one `classify_status` let through)."""
        raise NotImplementedError

    @_never_raises
    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        failure = self.classify_status(response)
        if failure is not None:
            return failure
        return self.parse_body(response, query, options)

    def disabled_reason(self, options: SearchOptions) -> str | None:
        """Why this engine cannot run with these options (missing key/URL), else None."""
        if self.facts.key_env and not options.api_key:
            return f"set {self.facts.key_env} to enable"
        if self.facts.url_env and not options.base_url:
            return f"set {self.facts.url_env} to enable"
        return None

    def ignored_options(self, options: SearchOptions) -> list[str]:
        """Human notes on the options this engine cannot apply as asked, for its detail (pure, no I/O).

        Safe search: only a level the caller changed from the default (moderate) is noted when the
        engine has no switch; the engine's own default applies. Site and time range: the pipeline
        still filters the rows, so the note says the engine itself did not.
        """
        facts = self.facts
        notes: list[str] = []
        level = options.safesearch
        if not facts.safesearch_levels:
            if level != "moderate":
                notes.append(f"safesearch {level} not supported")
        elif level not in facts.safesearch_levels:
            notes.append(f"safesearch {level} not supported; used {_nearest_level(level, facts.safesearch_levels)}")
        if options.region and not facts.honours_region(options.region):
            notes.append(f"region {options.region} not supported; used {facts.default_region}")
        if options.time_range and not facts.applies_time(options.time_range):
            notes.append(f"time range {options.time_range} not supported by the engine; rows filtered by date")
        allowed = allowed_of(options)
        if len(allowed) > 1 or options.blocked_domains:
            if not facts.native_domains:
                notes.append("domain lists not supported by the engine; rows filtered by URL")
        elif allowed and not facts.native_site:
            notes.append("site: not supported by the engine; rows filtered by URL")
        # A page the engine cannot serve is no note: the engine is not asked (EngineFacts.missing_page).
        return notes


def _nearest_level(level: str, levels: tuple[str, ...]) -> str:
    """The level an engine without `level` serves instead: the next stricter one it has, else the laxer."""
    order = list(SAFESEARCH_LEVELS)
    at = order.index(level) if level in order else 1
    stricter = [l for l in order[at:] if l in levels]
    laxer = [l for l in reversed(order[:at]) if l in levels]
    return (stricter or laxer or ["its default"])[0]


# No engine page shows more; a page with thousands of blocks is not allowed to cost more.
MAX_ROWS = 100


def rows_from(items: list[tuple], offset: int = 0) -> tuple[Row, ...]:
    """Rows from (title, url, snippet, date[, source[, content]]) tuples, dropping those without title or
    URL and repeated URLs; at most MAX_ROWS. Positions run offset+1.., so page 2 of a 10-row page starts
    at 11."""
    rows: list[Row] = []
    seen: set[str] = set()
    for title, url, snippet, when, *rest in items:
        if not title or not url or url in seen:
            continue
        seen.add(url)
        rows.append(Row(title=title, url=url, snippet=snippet, position=offset + len(rows) + 1, date=when,
                        source=rest[0] if rest and rest[0] else None,
                        content=rest[1] if len(rest) > 1 and rest[1] else None))
        if len(rows) >= MAX_ROWS:
            break
    return tuple(rows)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def http_failure(response: Response) -> Parsed | None:
    """The classification HTTP status alone gives, or None for a 2xx answer.

    Engines call this first and then look at the page; an engine with its own
    meaning for a status (DDG's 202 rate-limit page) checks that before.
    """
    status = response.status
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if 200 <= status < 300:
        return None
    if status == 429:
        return Parsed("ratelimited", detail="HTTP 429", retry_after=retry_after)
    if status in (401, 403, 451):
        return Parsed("blocked", detail=f"HTTP {status}", retry_after=retry_after)
    if status == 503 and retry_after is not None:
        return Parsed("ratelimited", detail="HTTP 503 with Retry-After", retry_after=retry_after)
    if 300 <= status < 400:
        where = response.headers.get("location", "")
        return Parsed("error", detail=f"HTTP {status} redirect not followed ({where[:80]})")
    return Parsed("error", detail=f"HTTP {status}", retry_after=retry_after)


NOT_UNDERSTOOD = "page not understood"


def not_understood(what: str) -> Parsed:
    """A page with neither rows nor a recognised no-results message: markup drift."""
    return Parsed("error", detail=f"{NOT_UNDERSTOOD}: {what}")
