"""Reading a page for a model: `fetch(url)` -> one slice of its main text, and how to read on.

    url ─ check (http/https, no private address) ─ page cache? ─ hit: robots.txt allows it? ──────┐
        ─ miss: robots.txt (cached) ─ get, hop by hop (each hop checked, guarded DNS, politeness)   │
        ─ by content type: HTML main text | PDF pages | text | Markdown | JSON ─ clean ─ cache
        ─ an app shell (plugin.reading.shells)? with render=auto, or any HTML with render=always:
          the page rendered by Chromium (plugin.reading.render), its DOM read the same way, cached apart
        ─ slice [offset, offset + max_chars), cut at a paragraph, line or word ─ FetchResponse

`Reader` owns what outlives one read (the HTTP session, the state store, robots verdicts, per-host
turns); `fetch()` uses a shared reader per settings object, `fetch_sync()` a fresh one per call.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import time
from dataclasses import dataclass
from typing import Callable

from aiohttp.abc import AbstractResolver

from engines.base import Response
from plugin.errors import HTTP_ERROR, INVALID_PARAMETER, OVERLOADED, TIMEOUT, FetchError, checked_arguments
from plugin.infra.admission import EngineClock
from plugin.infra.lifecycle import KeptPerSettings, run_sync
from plugin.infra.singleflight import SingleFlight
from plugin.infra.state import State, open_state
from plugin.models import FetchResponse
from plugin.pipeline.query import whole_number
from plugin.reading.documents import HTML_TYPES, Document, build_document
from plugin.reading.hops import PageClient
from plugin.reading.robots import RobotsPolicy
from plugin.settings import Settings

FORMATS = ("markdown", "text")
MAX_SLICE = 1_000_000
RENDER_MODES = ("auto", "always", "never")
RENDER_MARGIN_S = 0.5  # of a read's deadline, kept for reading the rendered page's text
# A read or render shared with other callers that ran out of a deadline at least this much earlier than a
# caller's own (another caller's: a search's read window, say) is run again for that caller.
SOONER_S = 1.0


def ran_out_sooner(ran_out_under: float | None, deadline: float) -> bool:
    """A shared run ran out of time under a deadline (`ran_out_under`) much earlier than `deadline`: out of
    its time is not out of the caller's."""
    return ran_out_under is not None and ran_out_under <= deadline - SOONER_S


@dataclass(frozen=True)
class RenderOutcome:
    """What a render gave: the document (the plain one, saying why, when the render failed), whether it came
    from the cache, and the deadline it ran out of when it failed for want of time (for the renders that
    shared it)."""
    document: Document
    cached: bool
    ran_out_under: float | None = None


def check_render(value: object, settings: Settings) -> str:
    """`render` checked: auto, always or never (None: the `render` setting); FetchError invalid_parameter."""
    if value is None:
        return settings.render
    if isinstance(value, str) and value.strip().lower() in RENDER_MODES:
        return value.strip().lower()
    raise FetchError(INVALID_PARAMETER, f"render must be auto, always or never, got {str(value)[:40]!r}",
                     parameter="render")


def check_fetch_args(max_chars: object, offset: object, format: object, default_max: int) -> tuple[int, int, str]:
    """(max_chars, offset, format) checked; FetchError invalid_parameter otherwise. max_chars above
    1,000,000 is clamped, like a search's limit."""
    chars = _integer("max_chars", max_chars, default_max)
    if chars < 1:
        raise FetchError(INVALID_PARAMETER, f"max_chars must be at least 1, got {chars}", parameter="max_chars")
    start = _integer("offset", offset, 0)
    if start < 0:
        raise FetchError(INVALID_PARAMETER, f"offset must be 0 or more, got {start}", parameter="offset")
    fmt = "markdown" if format is None else format
    if not isinstance(fmt, str) or fmt.strip().lower() not in FORMATS:
        raise FetchError(INVALID_PARAMETER, f"format must be markdown or text, got {str(fmt)[:40]!r}",
                         parameter="format")
    return min(chars, MAX_SLICE), start, fmt.strip().lower()


def _integer(name: str, value: object, default: int) -> int:
    number = default if value is None else whole_number(value)
    if number is not None:
        return number
    raise FetchError(INVALID_PARAMETER, f"{name} must be an integer, got {str(value)[:40]!r}", parameter=name)


def slice_text(text: str, offset: int, max_chars: int) -> tuple[str, int | None]:
    """The slice starting at `offset`, at most `max_chars` long, and where the next one starts (None at
    the end). A slice that does not reach the end and would end inside a word is cut after a paragraph
    break, a line break or a space in its last fifth when there is one, so words are not split between
    calls; one that already ends before whitespace, or after a mark that ends a sentence or clause with no
    space after it (`。`, `、`), is not moved, so a passage's `fetch(offset=start, max_chars=end-start)`
    gives back exactly its text (every passage ends so)."""
    total = len(text)
    if offset >= total:
        return "", None
    end = offset + max_chars
    if end >= total:
        return text[offset:], None
    if _ends_cleanly(text, end):
        return text[offset:end], end
    floor = offset + (max_chars * 4) // 5
    for separator in ("\n\n", "\n", " "):
        cut = text.rfind(separator, floor, end)
        if cut > offset:
            end = cut + len(separator)
            break
    return text[offset:end], end


# Marks after which a sentence or clause ends with no space (CJK, Devanagari, Arabic, Armenian, Ethiopic,
# Khmer, Myanmar: plugin.reading.sentences cuts there), and the closing quotes and brackets that may follow.
_STOPS_WITHOUT_SPACE = frozenset("。！？．｡।॥؟۔։።។៕။、，；")
_CLOSERS = frozenset("」』）】〕》\"”’)")


def _ends_cleanly(text: str, end: int) -> bool:
    """Cutting before `text[end]` splits no word: whitespace follows, or a stop that needs no space after
    it comes before (closing quotes and brackets after the stop included)."""
    if text[end].isspace():
        return True
    before = end - 1
    while before > 0 and text[before] in _CLOSERS:
        before -= 1
    mark = text[before]
    return mark in _STOPS_WITHOUT_SPACE or (mark in "!?" and before > 0 and text[before - 1] in "。！？．｡")


def checked_settings(settings: object) -> Settings | None:
    """`settings` when it is a Settings or None; anything else (a dict, a model's `settings` argument) is
    refused as search refuses it, not left to fail as an AttributeError deep in a read."""
    if settings is not None and not isinstance(settings, Settings):
        raise FetchError(INVALID_PARAMETER, f"settings must be a plugin.Settings, not {type(settings).__name__}",
                         parameter="settings")
    return settings


def with_fragment(address: str, asked: str) -> str:
    """`address` (where a read ended up) with the fragment of the address `asked`, when it has none of its
    own: the fragment is the client's and is never sent, and a redirect without one keeps it (RFC 9110
    10.2.2), as browsers do."""
    if "#" in address or "#" not in asked:
        return address
    return f"{address}#{asked.split('#', 1)[1]}"


class Reader:
    def __init__(self, settings: Settings | None = None, *, state: State | None = None,
                 resolver: AbstractResolver | None = None, public: Callable[[str], bool] | None = None,
                 transport=None):
        """`state`: the store for the page cache and robots verdicts (the embedded store by default; a
        Searcher passes its own). `resolver` and `public`: the DNS lookup under the address guard and the
        address classification, for tests (see PageClient). `transport`: the page reads' own instead of
        the guarded network one (a replay's)."""
        self.settings = checked_settings(settings) or Settings()
        self._owns_state = state is None
        self.state: State = state if state is not None else open_state(self.settings)
        self.client = PageClient(self.settings, resolver=resolver, transport=transport,
                                 **({"public": public} if public else {}))
        self.robots = RobotsPolicy(self.settings, self.state, self.client.get)
        self._renderer = None  # plugin.reading.render.Renderer, made at the first page that needs one
        self._reads: SingleFlight[Document] = SingleFlight()  # plain reads of one page under way, shared
        self._renders: SingleFlight[RenderOutcome] = SingleFlight()  # and renders of one page

    def renderer(self):
        """The Chromium renderer of this reader (made on first use; the browser starts at the first render)."""
        if self._renderer is None:
            from plugin.reading.render import Renderer

            self._renderer = Renderer(self.settings, guard=self.client.guard, check=self.client.check)
        return self._renderer

    async def close(self) -> None:
        if self._renderer is not None:
            await self._renderer.close()
        await self.client.close()
        if self._owns_state:
            await self.state.close()

    async def __aenter__(self) -> "Reader":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    def deadline(self) -> float:
        """A read's overall deadline: the page's own time (`fetch_timeout_ms`) plus the longest it may wait
        for its turn at the host and for admission (`admission_wait_ms`), which is ours, not the page's."""
        settings = self.settings
        return asyncio.get_running_loop().time() + (settings.fetch_timeout_ms + settings.admission_wait_ms) / 1000

    async def fetch(self, url: object, *, max_chars: object = None, offset: object = 0, format: object = "markdown",
                    ignore_robots: bool = False, query: object = None, passages: object = None,
                    max_tokens: object = None, render: object = None) -> FetchResponse:
        """One slice of the page's text; FetchError (with `.code`) when the page cannot be had. With
        `query`: the `passages` best passages instead (plugin.reading.evidence); `max_tokens` bounds
        either. `render`: auto, always or never (default: the `render` setting)."""
        from plugin.reading.evidence import check_focus, focus_fetch

        started = time.perf_counter()
        chars, start, fmt = check_fetch_args(max_chars, offset, format, self.settings.fetch_max_chars)
        focus = check_focus(query, passages, max_tokens, self.settings, error=FetchError)
        mode = check_render(render, self.settings)
        target = self.client.check(url)
        deadline = self.deadline()
        clock = self.client.read_clock(deadline)
        document, cached = await self.document(target.url, markdown=fmt == "markdown", ignore_robots=ignore_robots,
                                               deadline=deadline, clock=clock, render=mode)
        piece, next_offset = slice_text(document.content, start, chars)
        warnings = list(document.warnings)
        if start and start >= len(document.content):
            warnings.append(f"offset {start} is past the end of the text ({len(document.content)} characters)")
        warnings.extend(w for w in self.state.warnings if w not in warnings)
        response = FetchResponse(
            url=target.url, final_url=with_fragment(document.final_url, target.url), status=document.status,
            content_type=document.content_type,
            title=document.title, published=document.published, content=piece, offset=start,
            next_offset=next_offset, total_chars=len(document.content), truncated=next_offset is not None,
            cached=cached, elapsed_ms=int((time.perf_counter() - started) * 1000), queue_ms=clock.queue_ms(),
            warnings=warnings, rendered=document.rendered, may_require_js=document.may_require_js)
        if focus is None:
            return response
        # Ranking a long page takes a while (~0.4 ms of CPU per 1,000 characters, up to passage_scan_chars):
        # off the event loop, like extraction, so other requests of a serve or MCP process go on meanwhile.
        response = await asyncio.to_thread(focus_fetch, response, document.content, focus, self.settings,
                                           markdown=fmt == "markdown",
                                           max_chars=chars if max_chars is not None else None)
        return response.model_copy(update={"elapsed_ms": int((time.perf_counter() - started) * 1000)})

    def cache_key(self, url: str, markdown: bool, rendered: bool = False) -> str:
        """The page cache's key: the text as sent, and (`rendered`) the text the browser showed, apart."""
        kind = f"{'rendered' if rendered else ''}{'markdown' if markdown else 'text'}"
        return "page:" + hashlib.sha256(f"{kind}\n{url}".encode()).hexdigest()

    async def document(self, url: str, *, markdown: bool, ignore_robots: bool, deadline: float,
                       clock: EngineClock | None = None, render: str | None = None) -> tuple[Document, bool]:
        """The whole text of the page at `url` (already checked), from the page cache when it is there;
        (document, came from the cache). `deadline` is the caller's; `clock` (PageClient.read_clock)
        keeps the page's own time and the read's queue time. `render` (checked; None: the setting):
        whether an HTML page is rendered by the browser (auto: when it looks like an app shell)."""
        mode = render or self.settings.render
        # The fragment is the client's: never sent, so one page whatever it is (read and cached once). The
        # browser keeps it (a hash-routed app's scripts read it to choose what they show).
        plain, cached = await self._plain_document(url.split("#", 1)[0], markdown=markdown,
                                                   ignore_robots=ignore_robots, deadline=deadline, clock=clock)
        wanted = plain.content_type in HTML_TYPES and (mode == "always" or (mode == "auto" and plain.may_require_js))
        if not wanted:
            if plain.may_require_js:
                return _outcome(plain, "it was not rendered (render=never), so its text may be a placeholder or "
                                       "missing; read it with render=auto or always"), cached
            return plain, cached
        renderer = self.renderer()
        if not renderer.available:
            return _outcome(plain, f"it was not rendered: {renderer.unavailable}; its text may be a placeholder "
                                   "or missing", always=mode == "always"), cached
        return await self._rendered_document(url, plain, cached, markdown=markdown,
                                             respect_robots=self.settings.fetch_robots and not ignore_robots,
                                             deadline=deadline, always=mode == "always")

    async def _rendered_document(self, url: str, plain: Document, plain_cached: bool, *, markdown: bool,
                                 respect_robots: bool, deadline: float, always: bool) -> tuple[Document, bool]:
        """The page as the browser shows it, read like any HTML page, cached apart from the plain text;
        the plain document, saying why, when it cannot be rendered."""
        key = self.cache_key(url, markdown, rendered=True)
        use_cache = self.settings.fetch_cache_ttl_s > 0
        if use_cache:
            document = await self._cached_document(key)
            if document is not None:
                if respect_robots:
                    await self._check_robots(url, document.final_url, deadline)
                return _outcome(document, "it was rendered with Chromium, and the text is what the browser showed"), True
            # Renders of one page at once share one browser page, as plain reads share one request.
            shared = f"{key}:{'robots' if respect_robots else 'ignore-robots'}:{'always' if always else 'auto'}"
            render = functools.partial(self._render_and_read, url, plain, plain_cached, key, markdown=markdown,
                                       respect_robots=respect_robots, deadline=deadline, always=always, use_cache=True)
            outcome = await self._renders.run(shared, render)
            if ran_out_sooner(outcome.ran_out_under, deadline):  # joined another caller's, under its shorter time
                outcome = await self._renders.run(shared, render)
            return outcome.document, outcome.cached
        outcome = await self._render_and_read(url, plain, plain_cached, key, markdown=markdown,
                                              respect_robots=respect_robots, deadline=deadline, always=always,
                                              use_cache=False)
        return outcome.document, outcome.cached

    async def _render_and_read(self, url: str, plain: Document, plain_cached: bool, key: str, *, markdown: bool,
                               respect_robots: bool, deadline: float, always: bool,
                               use_cache: bool) -> RenderOutcome:
        """The page rendered and its text read (kept in the page cache under `key` with `use_cache`); the
        plain document, saying why, when it cannot be rendered."""
        outcome = await self._try_render(url, plain, plain_cached, key, markdown=markdown,
                                         respect_robots=respect_robots, deadline=deadline, always=always,
                                         use_cache=use_cache)
        loop_time = asyncio.get_running_loop().time()
        out_of_time = not outcome[0].rendered and loop_time >= deadline - RENDER_MARGIN_S - 0.05
        return RenderOutcome(*outcome, ran_out_under=deadline if out_of_time else None)

    async def _try_render(self, url: str, plain: Document, plain_cached: bool, key: str, *, markdown: bool,
                          respect_robots: bool, deadline: float, always: bool,
                          use_cache: bool) -> tuple[Document, bool]:
        """`_render_and_read`'s work: (document, came from the cache)."""
        from plugin.reading.render import RenderFailed

        loop = asyncio.get_running_loop()
        try:
            # the client's fragment goes with the browser: a hash-routed app's scripts read it to choose what to show
            page = await self.renderer().render(with_fragment(plain.final_url, url),
                                                deadline=deadline - RENDER_MARGIN_S,
                                                robots=self.robots.check if respect_robots else None)
            if page.status >= 400:  # turned away (a bot wall), the proxy would not carry it, or the page is gone
                why = f"the browser was answered HTTP {page.status}" + (
                    f" ({'; '.join(page.warnings[:2])})" if page.warnings else "")
                return _outcome(plain, f"{why}; the text is the page as sent, which may be a placeholder or missing",
                                always=always), plain_cached
            response = Response(status=page.status, url=page.url, headers={"content-type": "text/html; charset=utf-8"},
                                body=b"", text=page.html)
            built = await asyncio.wait_for(
                asyncio.to_thread(build_document, response, markdown=markdown, settings=self.settings,
                                  detect_shell=False),
                timeout=max(deadline - loop.time(), 0.001))
        except RenderFailed as exc:
            return _outcome(plain, f"rendering it failed: {exc}; the text is the page as sent, which may be a "
                                   "placeholder or missing", always=always), plain_cached
        except FetchError as exc:
            return _outcome(plain, f"rendering it failed ({exc.code}: {exc.message}); the text is the page as "
                                   "sent, which may be a placeholder or missing", always=always), plain_cached
        except (asyncio.TimeoutError, TimeoutError):
            return _outcome(plain, "the rendered page's text was not read before the deadline; the text is the page "
                                   "as sent, which may be a placeholder or missing", always=always), plain_cached
        document = Document(final_url=built.final_url, status=built.status, content_type=plain.content_type,
                            title=built.title or plain.title, published=built.published or plain.published,
                            content=built.content, warnings=[*built.warnings, *page.warnings],
                            shell_signs=list(plain.shell_signs), rendered=True)
        if use_cache:
            await self.state.cache_put(key, document.to_json(), self.settings.fetch_cache_ttl_s)
        return _outcome(document, "it was rendered with Chromium, and the text is what the browser showed"), False

    async def _cached_document(self, key: str) -> Document | None:
        """The page cache's document under `key`, or None (none kept, or an entry from another version:
        the page is read again)."""
        hit = await self.state.cache_get(key)
        if hit is None:
            return None
        try:
            return Document.from_json(hit)
        except (ValueError, TypeError, KeyError):
            return None

    async def _plain_document(self, url: str, *, markdown: bool, ignore_robots: bool, deadline: float,
                              clock: EngineClock | None = None) -> tuple[Document, bool]:
        """The page's text as sent (no browser), from the page cache when it is there."""
        clock = clock or self.client.read_clock(deadline)
        key = self.cache_key(url, markdown)
        use_cache = self.settings.fetch_cache_ttl_s > 0
        respect_robots = self.settings.fetch_robots and not ignore_robots
        if use_cache:
            cached = await self._cached_document(key)
            if cached is not None:
                if respect_robots:  # the entry may come from a read a person let past robots.txt
                    await self._check_robots(url, cached.final_url, deadline)
                return cached, True
            # Reads of one page at once (an agent asking it several questions in parallel) share one request
            # and one extraction: the host is asked once, and the others do not wait for turns behind it.
            # Only with the page cache on: with it off, every read asks the page (fresh, by request).
            shared = f"{key}:{'robots' if respect_robots else 'ignore-robots'}"
            read = functools.partial(self._read_plain, url, key, markdown=markdown, respect_robots=respect_robots,
                                     deadline=deadline, clock=clock, use_cache=True)
            try:
                return await self._reads.run(shared, read), False
            except FetchError as exc:
                # joined another caller's read, under its shorter time
                if exc.code not in (TIMEOUT, OVERLOADED) or not ran_out_sooner(getattr(exc, "read_deadline", None),
                                                                               deadline):
                    raise
                return await self._reads.run(shared, read), False
        return await self._read_plain(url, key, markdown=markdown, respect_robots=respect_robots, deadline=deadline,
                                      clock=clock, use_cache=False), False

    async def _read_plain(self, url: str, key: str, *, markdown: bool, respect_robots: bool, deadline: float,
                          clock: EngineClock, use_cache: bool) -> Document:
        """The page asked for and its text extracted (kept in the page cache under `key` with `use_cache`).
        A timeout or overload carries the `deadline` it was under (`read_deadline`, loop time; not in the
        error's details, which callers see), for the reads that shared this one."""
        try:
            return await self._read_and_build(url, key, markdown=markdown, respect_robots=respect_robots,
                                              deadline=deadline, clock=clock, use_cache=use_cache)
        except FetchError as exc:
            if exc.code in (TIMEOUT, OVERLOADED):
                exc.read_deadline = deadline
            raise

    async def _read_and_build(self, url: str, key: str, *, markdown: bool, respect_robots: bool, deadline: float,
                              clock: EngineClock, use_cache: bool) -> Document:
        response = await self.client.get(url, deadline, before_hop=self.robots.check if respect_robots else None,
                                         clock=clock)
        if response.status >= 300:
            raise FetchError(HTTP_ERROR, f"the page answered HTTP {response.status}", status=response.status,
                             url=response.url[:500])
        remaining = min(deadline - asyncio.get_running_loop().time(), clock.remaining())  # the page's time left
        try:
            document = await asyncio.wait_for(
                asyncio.to_thread(build_document, response, markdown=markdown, settings=self.settings),
                timeout=max(remaining, 0.001))
        except (asyncio.TimeoutError, TimeoutError):
            raise FetchError(TIMEOUT, "the page arrived but reading its text did not finish before the deadline",
                             url=response.url[:500]) from None
        if use_cache:
            await self.state.cache_put(key, document.to_json(), self.settings.fetch_cache_ttl_s)
        return document

    async def _check_robots(self, url: str, final_url: str, deadline: float) -> None:
        """robots.txt's word on a cached page, as the read that cached it would have had it: the address
        asked for and the one it ended on (the page cache is shared by every read, whatever its flag)."""
        for address in dict.fromkeys((url, final_url)):
            await self.robots.check(self.client.check(address), deadline)


def _outcome(document: Document, outcome: str, always: bool = False) -> Document:
    """The document with the warning a shell read carries (what gave it away, what was done about it);
    for a page that is no shell, only when rendering every page was asked for and could not be done."""
    from dataclasses import replace

    from plugin.reading.shells import shell_warning

    if document.may_require_js:
        warning = shell_warning(document.shell_signs, outcome)
    elif always and not document.rendered:
        warning = f"render=always: {outcome}"
    else:
        return document
    return replace(document, warnings=[*document.warnings, warning])


# ----- module-level API -----
# Long-lived readers, one per distinct settings (as searchers are), the least recently used last out.
_readers: KeptPerSettings[Reader] = KeptPerSettings(Reader, keep=8)


def reader_for(settings: Settings | None = None) -> Reader:
    """The long-lived reader for these settings; None reads the environment again, and equal settings,
    however often rebuilt, share one reader (its session, page cache and robots verdicts)."""
    return _readers.get(checked_settings(settings) or Settings())


async def fetch(url: str, *, max_chars: int | None = None, offset: int = 0, format: str = "markdown",
                settings: Settings | None = None, ignore_robots: bool = False, query: str | None = None,
                passages: int | None = None, max_tokens: int | None = None, render: str | None = None) -> FetchResponse:
    """Read a web page: one slice of its main text (Markdown by default) with its title, date and the
    offset to read on from. Raises `FetchError` (a `SearchError`, with `.code`) when the page cannot be
    had or the arguments are wrong. `ignore_robots` is for reads a person asked for. `query`: instead of
    the slice, the `passages` passages that best answer it (by default as many as fit in the setting
    fetch_passage_chars, 1,200 characters), each with its offsets into the text (from `offset` on,
    within `max_chars` characters when given). `max_tokens`: the answer a model reads stays within this
    many (estimated) tokens; `omitted` says what was left out. `render`: auto (default, the `render`
    setting: a page that looks like an app shell is rendered by the installed Chromium), always, never;
    `rendered` and `may_require_js` say what happened."""
    return await reader_for(settings).fetch(url, max_chars=max_chars, offset=offset, format=format,
                                            ignore_robots=ignore_robots, query=query, passages=passages,
                                            max_tokens=max_tokens, render=render)


def fetch_sync(url: str, **kwargs) -> FetchResponse:
    """`fetch` for callers that do not await: plain scripts, and code already inside a running event loop
    (on a worker thread, like `search_sync`); the page cache and robots verdicts persist between calls
    through the state store."""
    settings = kwargs.pop("settings", None)

    async def run() -> FetchResponse:
        async with Reader(settings) as reader:  # a fresh reader per call: its session belongs to this loop
            return await reader.fetch(url, **kwargs)

    return run_sync(run)


# Arguments that do not fit: FetchError(invalid_parameter) with the closest name, never TypeError, whether
# these are imported from here or from `plugin`.
fetch = checked_arguments(fetch, error=FetchError)
fetch_sync = checked_arguments(fetch_sync, like=fetch, error=FetchError)
