"""Getting a page: the one transport, redirects followed hop by hop, every hop checked, hosts spared.

Each hop's URL goes through `check_url` (http/https only, no private address literals) and its
connection through the guarded resolver (no name resolving to a private address), so a public page
cannot redirect a read into the local network. Through a proxy, the hop's name is resolved and checked
before the hop is handed over; the proxy's own name is not (the operator chose it, and it often lives
in the private network). At most `max_redirects` hops (5 by default). Reads of one host wait their
turn: at most `fetch_host_concurrency` at once, their starts at least `fetch_host_interval_ms` apart
(a `Lane` of plugin.infra.admission). That wait is the read's queue time: reported (`queue_ms`), bounded
by the caller's overall deadline, never the page's `timeout` (`fetch_timeout_ms` is the page's own time,
spent while a request is out); a read whose deadline passes while it waits is `overloaded`.

Cookies: the transport keeps no jar, so a read keeps its own (`ReadCookies`): a cookie a hop's response
sets is sent on the following hops of the same read to the same host (sites that set a cookie and
redirect back to see it), and goes nowhere else: not to other hosts, not to other reads, not to
engines. Identity: on the browser transport (the default) a read is Chrome opening the page (engines.browser:
its TLS, HTTP/2 and headers), since sites that turn away scripts turn away a Python client; on the plain
transport it is a reader for agents (`PLAIN_READER_AGENT`). `fetch_user_agent` when set, else the global
`user_agent`, replaces the User-Agent (`page_user_agent`). robots.txt is honoured for the token
`metasearch` either way. `extra_headers` whose names look like credentials (`Authorization`, `Cookie`,
`*token*`, `*key*`) are meant for engines and are not sent to pages.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable
from urllib.parse import urljoin

from aiohttp.abc import AbstractResolver

from engines.base import Request, Response
from engines.browser import CHROME
from plugin.errors import HTTP_ERROR, OVERLOADED, PRIVATE_ADDRESS, TIMEOUT, TOO_LARGE, FetchError
from plugin.infra.admission import EngineClock, Lane, Lanes, Overloaded, turn
from plugin.infra.egress import choose_proxy
from plugin.infra.transport import Transport, TransportError
from plugin.reading.addresses import (NOTHING_ALLOWED, GuardedResolver, PrivateAddressRefused, PrivateAllowance,
                                     Target, check_url, private_address, public_address)
from plugin.settings import SECRET_HEADER, Settings

REDIRECTS = frozenset({301, 302, 303, 307, 308})
# The transport's name for page reads: their admission lane (upstream_concurrency at once, all hosts
# together, beside the lane of each host), no endpoint override, the global proxy if one is set.
PAGE_UPSTREAM = "page"
# What a read on the plain transport says of itself and accepts (the browser transport's are Chrome's).
ACCEPT = ("text/html,application/xhtml+xml,application/pdf;q=0.9,text/markdown;q=0.9,text/plain;q=0.8,"
          "application/json;q=0.8,*/*;q=0.5")
PLAIN_READER_AGENT = "Mozilla/5.0 (compatible; metasearch/0.1; page reader for AI agents)"
PAGE_PROFILE = CHROME


class TooManyRedirects(FetchError):
    pass


def page_user_agent(settings: Settings) -> str | None:
    """The User-Agent page reads send instead of their own: `fetch_user_agent` when set, else the global
    `user_agent` when set, else None (the browser profile's, or PLAIN_READER_AGENT on the plain transport)."""
    return settings.fetch_user_agent or settings.user_agent


def page_settings(settings: Settings) -> Settings:
    """The transport's settings for page reads: the page size cap, the page User-Agent, and no
    credential-like extra headers (those are for engines; a model chooses which sites are read)."""
    return settings.model_copy(update={
        "max_response_bytes": settings.fetch_max_bytes,
        "user_agent": page_user_agent(settings),
        "extra_headers": {k: v for k, v in settings.extra_headers.items() if not SECRET_HEADER.search(k)},
    })


class ReadCookies:
    """The cookies of one read, by host: set by a hop's response, sent on the read's later hops to the
    same host. A cookie set over https is not sent over plain http."""

    def __init__(self) -> None:
        self._by_host: dict[str, dict[str, tuple[str, bool]]] = {}

    def for_hop(self, target: Target) -> dict[str, str]:
        """The jar the transport sends with this hop and fills with what the hop's response sets."""
        secure = target.scheme == "https"
        return {name: value for name, (value, over_https) in self._by_host.get(target.host, {}).items()
                if secure or not over_https}

    def after_hop(self, target: Target, sent: dict[str, str], jar: dict[str, str]) -> None:
        """Take what the hop's response set (new or changed values) and removed (Max-Age=0)."""
        host = self._by_host.setdefault(target.host, {})
        over_https = target.scheme == "https"
        for name in sent.keys() - jar.keys():
            host.pop(name, None)
        for name, value in jar.items():
            if sent.get(name) != value:
                host[name] = (value, over_https)


class PageClient:
    def __init__(self, settings: Settings, *, resolver: AbstractResolver | None = None,
                 public: Callable[[str], bool] = public_address, transport: Transport | None = None):
        """`resolver` is the DNS lookup under the guard (the system's by default) and `public` the address
        classification (`public_address`); tests pass their own, never production code. `transport`: one
        made for page reads elsewhere (a replay's, which answers from recordings), else the guarded one."""
        self.settings = settings
        self.public = public
        self.allowance = settings.private_allowance()
        self.guard = GuardedResolver(resolver, allow_private=self.allowance, public=public)
        # The one transport, with the page cap and the guarded resolver; an HTTP proxy's own name is
        # resolved without the guard (the operator chose it; the page's name is checked before a hop is
        # handed to it, in _check_behind_proxy).
        self.transport = transport or Transport(page_settings(settings), resolver=self.guard,
                                                proxy_resolver=self.guard.inner)
        self.browser = settings.transport == "browser"
        # Politeness per host: the admission module's lanes (fetch_host_concurrency at once, starts
        # fetch_host_interval_ms apart); waiting for a turn is the read's queue time, not the page's.
        self.hosts = Lanes(lambda host: Lane(settings.fetch_host_concurrency, settings.fetch_host_interval_ms / 1000))
        self.requests = 0  # exchanges made, every hop and robots.txt included (for tests and benchmarks)

    async def close(self) -> None:
        await self.transport.close()

    def check(self, url: object) -> Target:
        return check_url(url, allow_private=self.allowance, public=self.public)

    def read_clock(self, deadline: float) -> EngineClock:
        """One read's time: the page's own (`fetch_timeout_ms`, spent only while a request is out) and the
        time it waits for its turn (queue time: at most `admission_wait_ms`, and never past the caller's
        overall `deadline`)."""
        now = asyncio.get_running_loop().time()
        wait = min(deadline - now, self.settings.admission_wait_ms / 1000)
        return EngineClock(self.settings.fetch_timeout_ms / 1000, max(0.0, wait))

    async def get(self, url: str, deadline: float, *,
                  before_hop: Callable[[Target, float], Awaitable[None]] | None = None,
                  clock: EngineClock | None = None) -> Response:
        """The final response for `url` (any status), redirects followed and checked hop by hop, by
        `deadline` (the caller's, queue time included); `before_hop` (the robots.txt check) may refuse a
        hop by raising. `clock` (`read_clock`) keeps the read's page time and queue time."""
        clock = clock or self.read_clock(deadline)
        target = self.check(url)
        limit = self.settings.max_redirects
        cookies = ReadCookies()  # this read's own: never shared with another read or an engine
        previous_host = None
        for hop in range(limit + 1):
            if before_hop is not None:
                await before_hop(target, deadline)
            # A redirect within the host is the same read going on: it waits for a slot, not the spacing again.
            response = await self._exchange(target, deadline, cookies, clock, spaced=target.host != previous_host)
            previous_host = target.host
            location = response.headers.get("location")
            if response.status not in REDIRECTS or not location:
                return response
            if hop == limit:
                break
            following = urljoin(response.url, location.strip())
            try:
                target = self.check(following)
            except FetchError as exc:
                if exc.code == PRIVATE_ADDRESS:
                    raise FetchError(PRIVATE_ADDRESS, f"redirected to {following[:200]}: {exc.message}",
                                     url=following[:500]) from None
                raise FetchError(HTTP_ERROR, f"redirected (HTTP {response.status}) to a URL that cannot be read: "
                                             f"{exc.message}", status=response.status, url=following[:500]) from None
        raise TooManyRedirects(HTTP_ERROR, f"more than {limit} redirects, the last to {target.url[:200]}",
                               status=response.status, url=target.url[:500])

    async def _exchange(self, target: Target, deadline: float, cookies: ReadCookies, clock: EngineClock, *,
                        spaced: bool = True) -> Response:
        if self.browser:  # a person opening the page (the transport lays page_user_agent over it)
            headers = PAGE_PROFILE.navigate(target.url)
        else:
            headers = {"User-Agent": PLAIN_READER_AGENT, "Accept": ACCEPT, "Accept-Encoding": "gzip, deflate",
                       "Accept-Language": "en;q=0.9, *;q=0.5"}
        request = Request("GET", target.url, headers=headers)
        asked = False  # the turn was had: from here on a timeout is the page's
        try:
            # The caller's deadline covers everything; the page's own time (the clock's) runs only while a
            # request is out, so waiting for a turn at the host or for admission is never the page's timeout.
            async with asyncio.timeout_at(deadline):
                async with turn([self.hosts.get(target.host)], clock, spaced=spaced):
                    asked = True
                    await self._check_behind_proxy(target, deadline)
                    self.requests += 1
                    sent = cookies.for_hop(target)
                    jar = dict(sent)
                    response = await self.transport.fetch(request, PAGE_UPSTREAM, clock, jar, follow_redirects=False,
                                                          any_content_type=True, profile=PAGE_PROFILE.name)
                    cookies.after_hop(target, sent, jar)
                    return response
        except Overloaded:
            raise self.queued_too_long(target, clock) from None
        except (asyncio.TimeoutError, TimeoutError):
            if not asked:  # the deadline passed while the read waited its turn: our load, not the page
                raise self.queued_too_long(target, clock) from None
            raise FetchError(TIMEOUT, f"{target.host}: no complete answer within the deadline",
                             url=target.url[:500]) from None
        except TransportError as exc:
            if exc.kind == "skipped":  # not admitted in time (too many reads out): our load too
                raise self.queued_too_long(target, clock) from None
            raise as_fetch_error(exc, target, self.allowance) from None
        except PrivateAddressRefused as exc:
            raise private_address(str(exc), url=target.url[:500], allowance=self.allowance) from None

    def queued_too_long(self, target: Target, clock: EngineClock) -> FetchError:
        settings = self.settings
        return FetchError(OVERLOADED, f"{target.host}: waited {clock.queue_ms()} ms for a turn (at most "
                                      f"{settings.fetch_host_concurrency} reads of one host at once, started "
                                      f"{settings.fetch_host_interval_ms} ms apart) and the read's deadline passed "
                                      "before the page was asked; nothing is wrong with the page: try again later",
                          url=target.url[:500], queue_ms=clock.queue_ms())


    async def _check_behind_proxy(self, target: Target, deadline: float) -> None:
        """A read that goes through a proxy connects by the proxy's DNS, not through the guarded resolver:
        the name is resolved and checked here first (every address), so a proxy inside a private network
        is not a way into it. On the plain transport only: the browser transport pins the connection (or the
        proxy's CONNECT) to the address its guarded lookup checked, so there is no second lookup to race."""
        settings = self.settings
        if self.browser or self.allowance.everything or ":" in target.host or target.host.replace(".", "").isdigit():
            return  # no guard wanted, or an address literal (check_url judged it)
        if page_proxy(target.url, settings) is None:
            return
        try:
            async with asyncio.timeout_at(deadline):
                await self.guard.resolve(target.host, target.port)
        except PrivateAddressRefused:
            raise
        except OSError as exc:
            raise TransportError("error", f"{target.host} could not be resolved to check its address before "
                                          f"the read goes through the proxy: {exc}") from None


def page_proxy(url: str, settings: Settings) -> str | None:
    """The proxy a page read of `url` goes through (None: directly), as plugin.infra.egress chooses it; a
    rendered page's requests go the same way (plugin.reading.render_egress)."""
    return choose_proxy(url, PAGE_UPSTREAM, settings.proxy, settings.proxies, settings.proxy_from_env)


def as_fetch_error(exc: TransportError, target: Target, allowance: PrivateAllowance = NOTHING_ALLOWED) -> FetchError:
    if isinstance(exc.cause, PrivateAddressRefused):
        return private_address(str(exc.cause), url=target.url[:500], allowance=allowance)
    if exc.kind == "skipped":  # not admitted before the deadline (too many reads out): our load
        return FetchError(OVERLOADED, f"{target.host}: {exc.detail}", url=target.url[:500])
    if exc.kind == "timeout":
        return FetchError(TIMEOUT, f"{target.host}: {exc.detail}", url=target.url[:500])
    if exc.reason == "too_large":
        return FetchError(TOO_LARGE, f"{target.host}: {exc.detail}", url=target.url[:500])
    # No HTTP answer at all (refused, unknown host, TLS, a broken body): an HTTP error without a status.
    return FetchError(HTTP_ERROR, f"{target.host}: {exc.detail}", status=None, url=target.url[:500])
