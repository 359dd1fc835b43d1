"""The engine contract.

An engine is pure: from a query and options it builds a `Request`; from a
`Response` (bytes already fetched by the plugin's transport) it produces a
`Parsed` outcome: rows in the engine's own order, or a classification
(empty, blocked, rate-limited, error). It never does I/O, so every parser can
be exercised on a recorded page.
"""

from __future__ import annotations

import email.utils
import re
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal, Mapping

Tier = Literal["primary", "fallback"]
Region = Literal["global", "cjk"]
TimeRange = Literal["day", "week", "month", "year"]
SafeSearch = Literal["off", "moderate", "strict"]
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
    description: str = ""

    def applies_time(self, time_range: str | None) -> bool:
        return self.native_time and (self.native_time_ranges is None or time_range in self.native_time_ranges)


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
    category: Literal["web", "news"] = "web"
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


class Headers(dict):
    """Response headers with case-insensitive lookup (keys stored lower-case)."""

    def __init__(self, items: Mapping[str, str] | None = None):
        super().__init__()
        for key, value in (items or {}).items():
            self[key.lower()] = value

    def get(self, key: str, default=None):  # type: ignore[override]
        return super().get(key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())


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


@dataclass(frozen=True)
class Parsed:
    status: ParseStatus
    rows: tuple[Row, ...] = ()
    detail: str = ""
    retry_after: float | None = None  # seconds, from Retry-After or the page
    # A second request the engine needs before it has rows (e.g. Startpage's
    # home page yields a token for the real search).
    follow_up: Request | None = None


def query_with_site(query: str, site: str | None) -> str:
    """The query text with a `site:` operator, for engines that understand it in the text."""
    return f"{query} site:{site}" if site else query


# Markers of bot walls that no engine's own check recognised: third-party challenges (Cloudflare,
# reCAPTCHA, hCaptcha, Turnstile) and generic wording, in English and Chinese. Consulted only for a page
# that yielded no rows and was not understood, so a result page that mentions "captcha" is unaffected.
_CHALLENGE_MARKERS = (
    "captcha", "cf-challenge", "challenge-platform", "cf-turnstile", "cf_chl_", "just a moment...",
    "are you a robot", "not a robot", "unusual traffic", "verify you are human", "verify you're human",
    "automated queries", "bot detection", "access denied", "人机验证", "安全验证", "验证码", "请完成验证",
)
_RATE_LIMIT_MARKERS = ("too many requests", "rate limit exceeded", "rate-limited", "请求过于频繁", "访问过于频繁")


_SCRIPT_BODY = re.compile(r"(<(script|style)\b[^>]*>).*?</\2\s*>", re.S | re.I)


def generic_wall(response: "Response") -> "Parsed | None":
    """`blocked` / `ratelimited` when an HTML page carries a generic bot-wall marker, else None."""
    raw = (response.text or "")[:500_000]
    if not raw.lstrip("\ufeff \t\r\n").startswith("<"):
        return None  # walls are HTML pages; a JSON or text body that says "captcha" is not one
    # Script and style bodies are dropped (pages ship UI strings such as "captcha" in them); the tags
    # stay, so a challenge script's src (Cloudflare's /cdn-cgi/challenge-platform/) still counts.
    text = _SCRIPT_BODY.sub(r"\1", raw).lower()
    for marker in _RATE_LIMIT_MARKERS:
        if marker in text:
            return Parsed("ratelimited", detail=f"rate-limit page (generic marker {marker!r})",
                          retry_after=parse_retry_after(response.headers.get("retry-after")))
    for marker in _CHALLENGE_MARKERS:
        if marker in text:
            return Parsed("blocked", detail=f"challenge page (generic marker {marker!r})")
    return None


def _never_raises(parse):
    """Enforce the parse contract on every engine: never raise (a crash is an `error`), and a page that
    was not understood but carries a generic bot-wall marker is `blocked` / `ratelimited`, not `error`."""
    import functools

    @functools.wraps(parse)
    def guarded(self, response: "Response", query: str, options: "SearchOptions") -> "Parsed":
        try:
            parsed = parse(self, response, query, options)
        except Exception as exc:
            return Parsed("error", detail=f"parser failure: {type(exc).__name__}")
        if parsed.status == "error" and not parsed.rows and (
                parsed.detail.startswith(NOT_UNDERSTOOD) or response.status >= 500):
            try:
                return generic_wall(response) or parsed
            except Exception:
                return parsed
        return parsed

    guarded.__wrapped_never_raises__ = True  # type: ignore[attr-defined]
    return guarded


class Engine:
    """Base class: subclasses set `facts` and implement `build` and `parse`.

    Every subclass's `parse` is wrapped so it never raises (the contract the pipeline and the
    property tests rely on), without each engine repeating a try/except.
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

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        raise NotImplementedError

    def disabled_reason(self, options: SearchOptions) -> str | None:
        """Why this engine cannot run with these options (missing key/URL), else None."""
        if self.facts.key_env and not options.api_key:
            return f"set {self.facts.key_env} to enable"
        if self.facts.url_env and not options.base_url:
            return f"set {self.facts.url_env} to enable"
        return None


# No engine page shows more; a page with thousands of blocks is not allowed to cost more.
MAX_ROWS = 100


def rows_from(items: list[tuple[str, str, str, date | None]]) -> tuple[Row, ...]:
    """Number (title, url, snippet, date) tuples 1..n, dropping rows without title or URL; at most MAX_ROWS."""
    rows: list[Row] = []
    seen: set[str] = set()
    for title, url, snippet, when in items:
        if not title or not url or url in seen:
            continue
        seen.add(url)
        rows.append(Row(title=title, url=url, snippet=snippet, position=len(rows) + 1, date=when))
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
