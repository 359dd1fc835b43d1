"""robots.txt for page reads, as RFC 9309 says, for the product token `metasearch`.

- 2xx: the file's rules (Protego parses them; the first 512 KiB are read, the RFC's minimum is 500 KiB).
  The group for us is the one whose product token is `metasearch` (any case), else `*` (`for_our_token`).
- 4xx ("unavailable"), more than five redirects (a loop among them), or a redirect to an address a
  read may not reach (a private one): no rules, everything may be read.
- 5xx ("unreachable"), or a hop of it that cannot be read: everything is disallowed, for
  `robots_error_ttl_s`, then the file is asked for again.
- No HTTP answer at all (refused connection, unknown host, TLS failure, timeout): the site is down or out
  of reach, which says nothing about what it allows. The page is not read (the RFC's "unreachable"), and
  the read fails with that network error (`http_error` without a status, or `timeout`), not
  `blocked_by_robots`; nothing is kept, so the next read asks again.
Verdicts are kept in the state store (`robots_cache_ttl_s`, 24 h by default, the RFC's upper bound for
caching; a ttl of 0 keeps nothing), so every process of a user, or of a fleet on Redis, asks a site for
its robots.txt once. Reads of one site started together share one lookup, which runs on its own: a read
that is cancelled (its caller went away) leaves it to the others, and it stops only when none is left. It
runs under the deadline of the read that started it; a read that joined it with much more time left asks
again when it ran out of time (as page reads do: plugin.reading.reader.ran_out_sooner).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Awaitable, Callable

from engines.base import Response
from plugin.errors import BLOCKED_BY_ROBOTS, HTTP_ERROR, OVERLOADED, PRIVATE_ADDRESS, TIMEOUT, FetchError
from plugin.infra.singleflight import SingleFlight
from plugin.infra.state import State
from plugin.infra.transport import TransportError
from plugin.reading.addresses import Target
from plugin.reading.hops import TooManyRedirects
from plugin.settings import Settings

ROBOTS_TOKEN = "metasearch"
MAX_ROBOTS_CHARS = 512 * 1024

# Fetches a URL following redirects hop by hop (the reader's own getter); raises FetchError or
# TransportError when no answer could be had.
Getter = Callable[[str, float], Awaitable[Response]]

# A user-agent line (as Protego reads one: "User-agent:", "User agent", "useragent", the colon optional) and
# its value up to a comment; and the product token a value starts with (RFC 9309 2.2.1: letters, "_", "-").
_USER_AGENT_LINE = re.compile(r"^([ \t]*user[ -]?agent(?:[ \t]*:|[ \t]))([^#\r\n]*)", re.I | re.M)
_PRODUCT_TOKEN = re.compile(r"[A-Za-z_-]+")
OTHER_AGENT = "~another-crawler"  # what a group for any other crawler is renamed to: no token can match it


def for_our_token(text: str) -> str:
    """robots.txt as Protego should read it for `metasearch`: a group applies to us when its product token
    is ours, case-insensitively (RFC 9309 2.2.1; `Metasearch/1.0` names us, as Google's parser reads it),
    or when it is `*`. Protego alone takes any group whose name is a prefix of ours (`meta`, `m`) for ours,
    so a site that disallows every crawler but `meta` would be read. A leading byte-order mark is dropped
    (it would hide the first user-agent line)."""
    def rename(line: re.Match) -> str:
        value = line.group(2).strip()
        if not value or value == "*":
            return line.group(0)
        token = _PRODUCT_TOKEN.match(value)
        ours = token is not None and token.group(0).lower() == ROBOTS_TOKEN
        return f"{line.group(1)} {ROBOTS_TOKEN if ours else OTHER_AGENT}"

    return _USER_AGENT_LINE.sub(rename, text.lstrip("\ufeff"))


class SiteUnreachable(Exception):
    """robots.txt got no HTTP answer at all: `code` (http_error or timeout) and the why (its message) for
    the page's error."""

    def __init__(self, code: str, why: str):
        super().__init__(why)
        self.code = code
        self.deadline: float | None = None  # the lookup's (loop time), for the callers that shared it


@dataclass(frozen=True)
class RobotsRules:
    kind: str  # rules | allow_all | disallow_all
    text: str = ""
    why: str = ""


class RobotsPolicy:
    def __init__(self, settings: Settings, state: State, get: Getter):
        self.settings = settings
        self.state = state
        self.get = get
        self._parsed: dict[str, object] = {}  # robots.txt text -> Protego, for this process
        self._lookups: SingleFlight[RobotsRules] = SingleFlight()

    async def check(self, target: Target, deadline: float) -> None:
        """Nothing when `target` may be read; FetchError blocked_by_robots otherwise, or the network error
        (http_error without a status, timeout) that kept robots.txt from being had."""
        try:
            rules = await self.rules(target.origin, deadline)
        except SiteUnreachable as exc:
            raise FetchError(exc.code, f"{target.origin}/robots.txt could not be fetched, so the page was not "
                                       f"read: {exc}", **({"status": None} if exc.code == HTTP_ERROR else {}),
                             url=target.url[:500]) from None
        if rules.kind == "allow_all":
            return
        if rules.kind == "disallow_all":
            raise FetchError(BLOCKED_BY_ROBOTS, f"{target.origin}/robots.txt {rules.why}; the site counts as "
                                                f"disallowing every page for now (RFC 9309)", url=target.url)
        if not self._parser(rules.text).can_fetch(target.url, ROBOTS_TOKEN):
            raise FetchError(BLOCKED_BY_ROBOTS, f"{target.origin}/robots.txt disallows this page for "
                                                f"{ROBOTS_TOKEN!r}", url=target.url)

    def _parser(self, text: str):
        from protego import Protego

        parsed = self._parsed.get(text)
        if parsed is None:
            if len(self._parsed) > 256:
                self._parsed.clear()
            parsed = self._parsed[text] = Protego.parse(for_our_token(text))
        return parsed

    async def rules(self, origin: str, deadline: float) -> RobotsRules:
        key = f"robots:{origin}"
        cached = await self.state.cache_get(key)
        if cached is not None:
            try:
                return RobotsRules(**json.loads(cached))
            except (ValueError, TypeError):
                pass  # an entry from another version: ask again
        # Reads of one site started together share one lookup (a task of its own: see the docstring).
        # It runs under the deadline of the read that started it; one that joined it with much more time
        # left (a fetch beside a search's short read window) asks again when it ran out of that time.
        from plugin.reading.reader import ran_out_sooner

        lookup = lambda: self._lookup(key, origin, deadline)  # noqa: E731
        try:
            return await self._lookups.run(origin, lookup)
        except SiteUnreachable as exc:
            if exc.code not in (TIMEOUT, OVERLOADED) or not ran_out_sooner(exc.deadline, deadline):
                raise
            return await self._lookups.run(origin, lookup)

    async def _lookup(self, key: str, origin: str, deadline: float) -> RobotsRules:
        try:
            rules = await self._fetch(origin, deadline)
        except SiteUnreachable as exc:
            exc.deadline = deadline
            raise
        ttl = self.settings.robots_error_ttl_s if rules.kind == "disallow_all" else self.settings.robots_cache_ttl_s
        if ttl > 0:
            await self.state.cache_put(key, json.dumps(rules.__dict__), ttl)
        return rules

    async def _fetch(self, origin: str, deadline: float) -> RobotsRules:
        url = origin + "/robots.txt"
        try:
            response = await self.get(url, deadline)
        except TooManyRedirects:
            return RobotsRules("allow_all", why="redirected more than five times")
        except FetchError as exc:
            if exc.code == PRIVATE_ADDRESS:
                if exc.details.get("url") == url:
                    raise  # the site itself is out of reach: that, not robots.txt, is why it cannot be read
                # Redirected where no read may go: the file cannot be had, as with a 4xx ("unavailable").
                return RobotsRules("allow_all", why="redirected to a private address")
            # No answer (or none asked: our own queue was full): the page's error, never a robots verdict.
            if exc.code in (TIMEOUT, OVERLOADED) or (exc.code == HTTP_ERROR and exc.details.get("status") is None):
                raise SiteUnreachable(exc.code, exc.message[:200]) from None
            return RobotsRules("disallow_all", why=f"could not be fetched ({exc.code}: {exc.message[:120]})")
        except TransportError as exc:
            code = {"timeout": TIMEOUT, "skipped": OVERLOADED}.get(exc.kind, HTTP_ERROR)
            raise SiteUnreachable(code, exc.detail[:200]) from None
        status = response.status
        if 200 <= status < 300:
            text = response.text or response.body[:MAX_ROBOTS_CHARS].decode("utf-8", "replace")
            return RobotsRules("rules", text=text[:MAX_ROBOTS_CHARS])
        if 400 <= status < 500:
            return RobotsRules("allow_all", why=f"answered HTTP {status}")
        return RobotsRules("disallow_all", why=f"answered HTTP {status}")
