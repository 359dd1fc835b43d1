"""robots.txt, behaviour by behaviour (issue 29, items 9 and 13): one shared lookup per site that no
caller's cancellation takes from another, redirects (a loop, more than five hops, a private address),
what is kept and for how long, and each way the lookup can end.

Two kinds of test: `RobotsPolicy` with a scripted getter (what the reader's getter answers or raises,
in isolation), and reads through the real reader against loopback stand-ins on 127.0.0.1. A refusal of
a private address targets 127.0.0.2, with only 127.0.0.1 playing a public site (`loopback_is_public`).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines.base import Headers, Response
from pages import ROBOTS_OPEN, StandInDNS, article_html, loopback_is_public, paths, reading_settings, redirect, routes
from plugin.errors import FetchError
from plugin.infra.state import MemoryState
from plugin.reading.addresses import check_url
from plugin.reading.hops import TooManyRedirects
from plugin.reading.reader import Reader
from plugin.reading.robots import MAX_ROBOTS_CHARS, ROBOTS_TOKEN, RobotsPolicy, RobotsRules
from plugin.settings import Settings
from standins import page


def settings(**overrides) -> Settings:
    return reading_settings(**{"fetch_cache_ttl_s": 0, **overrides})


def robots_response(text: str, status: int = 200, url: str = "http://site.example/robots.txt") -> Response:
    return Response(status=status, url=url, headers=Headers({}), body=text.encode(), text=text)


def target(url: str):
    return check_url(url, allow_private=True)


def soon() -> float:
    return asyncio.get_running_loop().time() + 10


class ScriptedGetter:
    """The reader's getter, answering each call with the next outcome (a Response, or an exception raised);
    `gate`, when set, holds every call until it is set."""

    def __init__(self, *outcomes, gate: asyncio.Event | None = None):
        self.outcomes = list(outcomes)
        self.gate = gate
        self.asked: list[str] = []
        self.cancelled = 0

    async def __call__(self, url: str, deadline: float) -> Response:
        self.asked.append(url)
        outcome = self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]
        if self.gate is not None:
            try:
                await self.gate.wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


async def verdict(policy: RobotsPolicy, url: str) -> str:
    """"read" when `url` may be read, else the code of the error the check raised."""
    try:
        await policy.check(target(url), soon())
    except FetchError as exc:
        return exc.code
    return "read"


# ----- item 9: one lookup per site, and no caller's cancellation reaches another -----
async def test_cancelling_one_read_does_not_cancel_another_read_of_the_same_site():
    gate = asyncio.Event()
    getter = ScriptedGetter(robots_response("User-agent: *\nDisallow: /private/\n"), gate=gate)
    policy = RobotsPolicy(settings(), MemoryState(), getter)
    first = asyncio.create_task(policy.check(target("http://site.example/a"), soon()))
    second = asyncio.create_task(policy.check(target("http://site.example/private/b"), soon()))
    for _ in range(5):
        await asyncio.sleep(0)
    assert getter.asked == ["http://site.example/robots.txt"]  # one lookup for both
    first.cancel()  # its caller went away (a client hung up on `serve`, an MCP request cancelled)
    with pytest.raises(asyncio.CancelledError):
        await first
    gate.set()
    with pytest.raises(FetchError) as caught:
        await asyncio.wait_for(second, 10)
    assert caught.value.code == "blocked_by_robots"  # the other read got robots.txt's verdict, not a cancellation
    assert getter.cancelled == 0 and getter.asked == ["http://site.example/robots.txt"]


async def test_the_shared_lookup_stops_when_every_read_waiting_for_it_is_cancelled_and_starts_afresh():
    gate = asyncio.Event()
    getter = ScriptedGetter(robots_response("User-agent: *\nDisallow:\n"), gate=gate)
    policy = RobotsPolicy(settings(), MemoryState(), getter)
    readers = [asyncio.create_task(policy.check(target(f"http://site.example/{i}"), soon())) for i in range(2)]
    for _ in range(5):
        await asyncio.sleep(0)
    for reader in readers:
        reader.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
    for _ in range(5):
        await asyncio.sleep(0)
    assert getter.cancelled == 1  # nobody waits for it any more: it stops
    gate.set()
    assert await verdict(policy, "http://site.example/x") == "read"  # a new read asks again
    assert len(getter.asked) == 2


async def test_reads_of_different_sites_do_not_share_a_lookup():
    getter = ScriptedGetter(robots_response("User-agent: *\nDisallow: /\n"), robots_response("User-agent: *\nDisallow:\n"))
    policy = RobotsPolicy(settings(), MemoryState(), getter)
    first, second = await asyncio.gather(verdict(policy, "http://one.example/a"),
                                         verdict(policy, "http://two.example/a"))
    assert (first, second) == ("blocked_by_robots", "read")
    assert sorted(getter.asked) == ["http://one.example/robots.txt", "http://two.example/robots.txt"]


async def test_a_failed_shared_lookup_fails_every_read_waiting_for_it_with_the_network_error():
    gate = asyncio.Event()
    getter = ScriptedGetter(FetchError("timeout", "site.example: no complete answer within the deadline"),
                            gate=gate)
    policy = RobotsPolicy(settings(), MemoryState(), getter)
    readers = [asyncio.create_task(verdict(policy, f"http://site.example/{i}")) for i in range(2)]
    for _ in range(5):
        await asyncio.sleep(0)
    gate.set()
    assert await asyncio.gather(*readers) == ["timeout", "timeout"]
    assert len(getter.asked) == 1
    assert await policy.state.cache_get("robots:http://site.example") is None  # nothing kept: asked again
    assert await verdict(policy, "http://site.example/x") == "timeout" and len(getter.asked) == 2


# ----- item 13: redirects -----
async def test_a_robots_txt_redirecting_in_a_loop_is_unavailable_so_everything_may_be_read(standins):
    site = await standins(routes({"/robots.txt": redirect("/robots.txt"), "/post": page(article_html())}))
    async with Reader(settings()) as reader:
        response = await reader.fetch(site.url + "/post")
        assert response.status == 200
        assert paths(site) == ["/robots.txt"] * 6 + ["/post"]  # the first ask and five redirects, no more
        await reader.fetch(site.url + "/post")  # the verdict is kept like any other
        assert paths(site).count("/robots.txt") == 6


def redirect_chain(hops: int, rules: str) -> dict:
    """/robots.txt redirecting `hops` times (/r1, /r2, ...) before the file with `rules`."""
    table = {"/robots.txt": redirect("/r1" if hops else "/file")}
    for hop in range(1, hops):
        table[f"/r{hop}"] = redirect(f"/r{hop + 1}")
    if hops:
        table[f"/r{hops}"] = redirect("/file")
    table["/file"] = page(rules, content_type="text/plain")
    return table


@pytest.mark.parametrize("hops, code", [(4, "blocked_by_robots"), (5, "blocked_by_robots"), (6, "read")])
async def test_more_than_five_redirects_is_unavailable_five_are_followed(standins, hops, code):
    """robots.txt redirected `hops` times before the file: five redirects are followed (the file's rules
    hold: everything disallowed); a sixth is one too many, and the site counts as having none."""
    chain = redirect_chain(hops - 1, "User-agent: *\nDisallow: /\n")  # hops - 1 between robots.txt and the file
    site = await standins(routes({**chain, "/post": page(article_html())}))
    async with Reader(settings()) as reader:
        try:
            await reader.fetch(site.url + "/post")
            outcome = "read"
        except FetchError as exc:
            outcome = exc.code
    assert outcome == code, paths(site)


async def test_too_many_redirects_from_the_getter_allows_everything_and_is_kept():
    getter = ScriptedGetter(TooManyRedirects("http_error", "more than 5 redirects", status=302,
                                             url="http://site.example/r5"))
    store = MemoryState()
    policy = RobotsPolicy(settings(), store, getter)
    assert await policy.rules("http://site.example", soon()) == RobotsRules(
        "allow_all", why="redirected more than five times")
    assert json.loads(await store.cache_get("robots:http://site.example"))["kind"] == "allow_all"


def public_loopback_reader(**overrides) -> Reader:
    """A reader that refuses private addresses, with 127.0.0.1 (the stand-ins) playing a public site and
    `inner.example` resolving to 127.0.0.2 (a private address: refused, never connected to)."""
    return Reader(settings(allow_private_hosts=False, **overrides), public=loopback_is_public,
                  resolver=StandInDNS({"inner.example": ["127.0.0.2"], "news.example": ["127.0.0.1"]}))


@pytest.mark.parametrize("where", ["http://127.0.0.2:{port}/robots.txt", "http://inner.example:{port}/robots.txt"])
async def test_a_robots_txt_redirected_to_a_private_address_is_unavailable(standins, where):
    """The redirect is not followed (the address guard refuses it): robots.txt is unavailable, and by RFC
    9309 everything may be read, as for a 4xx; the page is read, and the verdict kept."""
    site = await standins(page("routes are set once the port is known"))
    port = site.url.rsplit(":", 1)[1]
    site.behaviour = routes({"/robots.txt": redirect(where.format(port=port)), "/post": page(article_html())})
    async with public_loopback_reader() as reader:
        response = await reader.fetch(site.url + "/post")
        assert response.status == 200 and paths(site) == ["/robots.txt", "/post"]
        verdict_kept = json.loads(await reader.state.cache_get(f"robots:{site.url}"))
    assert verdict_kept == {"kind": "allow_all", "text": "", "why": "redirected to a private address"}


async def test_a_site_whose_own_name_is_private_is_refused_not_allowed(standins):
    """robots.txt of a site whose name resolves to a private address: not "unavailable" (that is for a
    redirect elsewhere), the read itself is refused."""
    site = await standins(ROBOTS_OPEN)
    port = site.url.rsplit(":", 1)[1]
    async with public_loopback_reader() as reader:
        with pytest.raises(FetchError) as caught:
            await reader.fetch(f"http://inner.example:{port}/post")
    assert caught.value.code == "private_address" and site.requests == []


async def test_a_getter_refusing_a_private_redirect_target_allows_and_refusing_the_site_itself_raises():
    redirected = FetchError("private_address", "redirected to http://127.0.0.2/robots.txt: private",
                            url="http://127.0.0.2/robots.txt")
    policy = RobotsPolicy(settings(), MemoryState(), ScriptedGetter(redirected))
    assert await policy.rules("http://site.example", soon()) == RobotsRules("allow_all",
                                                                           why="redirected to a private address")
    itself = FetchError("private_address", "site.example resolves to a private address",
                        url="http://site.example/robots.txt")
    policy = RobotsPolicy(settings(), MemoryState(), ScriptedGetter(itself))
    with pytest.raises(FetchError) as caught:
        await policy.rules("http://site.example", soon())
    assert caught.value is itself
    assert await policy.state.cache_get("robots:http://site.example") is None


# ----- item 13: what is kept, and for how long -----
class CountingState(MemoryState):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.puts: list[tuple[str, float]] = []

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        self.puts.append((key, ttl_s))
        await super().cache_put(key, value, ttl_s)


@pytest.mark.parametrize("status, setting", [(200, "robots_cache_ttl_s"), (404, "robots_cache_ttl_s"),
                                             (503, "robots_error_ttl_s")])
async def test_a_ttl_of_zero_caches_nothing(status, setting):
    store = CountingState()
    getter = ScriptedGetter(robots_response("User-agent: *\nDisallow:\n", status=status))
    policy = RobotsPolicy(settings(**{setting: 0}), store, getter)
    for _ in range(3):
        await policy.rules("http://site.example", soon())
    assert store.puts == [] and len(getter.asked) == 3


@pytest.mark.parametrize("status, kept_for", [(200, 7), (404, 7), (503, 3), (500, 3)])
async def test_a_verdict_is_kept_for_its_ttl_and_asked_again_after(status, kept_for):
    """Rules and "unavailable" for `robots_cache_ttl_s`, "unreachable" (5xx) for `robots_error_ttl_s`;
    one second is a ttl like any other."""
    now = [1000.0]
    store = CountingState(clock=lambda: now[0])
    getter = ScriptedGetter(robots_response("User-agent: *\nDisallow:\n", status=status))
    policy = RobotsPolicy(settings(robots_cache_ttl_s=7, robots_error_ttl_s=3), store, getter)
    await policy.rules("http://site.example", soon())
    assert store.puts == [("robots:http://site.example", kept_for)]
    now[0] += kept_for - 0.5
    await policy.rules("http://site.example", soon())
    assert len(getter.asked) == 1
    now[0] += 0.5
    await policy.rules("http://site.example", soon())
    assert len(getter.asked) == 2
    one_second = RobotsPolicy(settings(robots_cache_ttl_s=1, robots_error_ttl_s=1), CountingState(), getter)
    await one_second.rules("http://site.example", soon())
    assert len(one_second.state.puts) == 1


async def test_a_kept_verdict_of_another_version_is_asked_again():
    store = MemoryState()
    await store.cache_put("robots:http://site.example", '{"verdict": "old format"}', 600)
    getter = ScriptedGetter(robots_response("User-agent: *\nDisallow: /\n"))
    policy = RobotsPolicy(settings(), store, getter)
    assert await verdict(policy, "http://site.example/a") == "blocked_by_robots"
    await store.cache_put("robots:http://other.example", "not json", 600)
    assert await verdict(policy, "http://other.example/a") == "blocked_by_robots"
    assert len(getter.asked) == 2
    assert json.loads(await store.cache_get("robots:http://site.example")) == {
        "kind": "rules", "text": "User-agent: *\nDisallow: /\n", "why": ""}


# ----- item 13: each way a lookup ends -----
@pytest.mark.parametrize("status, kind", [(199, "disallow_all"), (200, "rules"), (204, "rules"), (299, "rules"),
                                          (300, "disallow_all"), (399, "disallow_all"), (400, "allow_all"),
                                          (499, "allow_all"), (500, "disallow_all")])
async def test_each_status_of_robots_txt_is_its_rfc_verdict(status, kind):
    getter = ScriptedGetter(robots_response("User-agent: *\nDisallow: /\n", status=status))
    rules = await RobotsPolicy(settings(), MemoryState(), getter).rules("http://site.example", soon())
    assert rules.kind == kind
    if kind != "rules":
        assert rules.why == f"answered HTTP {status}"


async def test_rules_past_the_first_512_kib_are_not_read():
    filler = "# " + "x" * 1000 + "\n"
    text = "User-agent: *\nDisallow: /early/\n" + filler * ((MAX_ROBOTS_CHARS // len(filler)) + 1)
    text += "Disallow: /late/\n"
    body_only = Response(status=200, url="http://site.example/robots.txt", headers=Headers({}), body=text.encode(),
                         text="")
    for answer in (robots_response(text), body_only):
        policy = RobotsPolicy(settings(), MemoryState(), ScriptedGetter(answer))
        rules = await policy.rules("http://site.example", soon())
        assert len(rules.text) == MAX_ROBOTS_CHARS and rules.text.startswith("User-agent: *\nDisallow: /early/")
        assert await verdict(policy, "http://site.example/early/a") == "blocked_by_robots"
        assert await verdict(policy, "http://site.example/late/a") == "read"
    assert MAX_ROBOTS_CHARS == 512 * 1024


async def test_rules_are_read_for_the_metasearch_token_and_say_so():
    text = "User-agent: *\nDisallow:\n\nUser-agent: metasearch\nDisallow: /no-bots/\n"
    policy = RobotsPolicy(settings(), MemoryState(), ScriptedGetter(robots_response(text)))
    with pytest.raises(FetchError) as caught:
        await policy.check(target("http://site.example/no-bots/page"), soon())
    assert caught.value.code == "blocked_by_robots" and caught.value.details["url"] == "http://site.example/no-bots/page"
    assert caught.value.message == f"http://site.example/robots.txt disallows this page for {ROBOTS_TOKEN!r}"
    assert ROBOTS_TOKEN == "metasearch"
    assert await verdict(policy, "http://site.example/fine") == "read"


async def test_a_disallow_all_verdict_says_why_and_names_the_rfc():
    policy = RobotsPolicy(settings(), MemoryState(), ScriptedGetter(robots_response("down", status=503)))
    with pytest.raises(FetchError) as caught:
        await policy.check(target("http://site.example/page"), soon())
    assert caught.value.message == ("http://site.example/robots.txt answered HTTP 503; the site counts as "
                                    "disallowing every page for now (RFC 9309)")
    assert caught.value.details["url"] == "http://site.example/page"


@pytest.mark.parametrize("failure, code, status_key", [
    (FetchError("timeout", "site.example: no complete answer"), "timeout", False),
    (FetchError("overloaded", "site.example: waited its turn"), "overloaded", False),
    (FetchError("http_error", "site.example: connection refused", status=None), "http_error", True),
])
async def test_no_answer_at_all_is_the_reads_own_error_and_nothing_is_kept(failure, code, status_key):
    store = CountingState()
    policy = RobotsPolicy(settings(), store, ScriptedGetter(failure))
    long_url = "http://site.example/page?" + "q" * 600
    with pytest.raises(FetchError) as caught:
        await policy.check(target(long_url), soon())
    error = caught.value
    assert error.code == code and ("status" in error.details) is status_key
    assert error.details["url"] == long_url[:500]  # a URL in an error is cut at 500 characters
    assert error.message.startswith("http://site.example/robots.txt could not be fetched, so the page was not read: ")
    assert store.puts == []


@pytest.mark.parametrize("failure", [FetchError("http_error", "redirected (HTTP 302) to ftp://x", status=302),
                                     FetchError("too_large", "site.example: more than 10000000 bytes")])
async def test_an_answer_that_cannot_be_read_disallows_for_the_error_ttl(failure):
    store = CountingState()
    policy = RobotsPolicy(settings(robots_error_ttl_s=42), store, ScriptedGetter(failure))
    rules = await policy.rules("http://site.example", soon())
    assert rules.kind == "disallow_all" and rules.why == f"could not be fetched ({failure.code}: {failure.message})"
    assert store.puts == [("robots:http://site.example", 42)]


async def test_parsed_rules_are_kept_per_text_and_the_memory_is_bounded():
    policy = RobotsPolicy(settings(), MemoryState(), ScriptedGetter(robots_response("")))
    first = policy._parser("User-agent: *\nDisallow: /a\n")
    assert policy._parser("User-agent: *\nDisallow: /a\n") is first
    for i in range(300):
        policy._parser(f"User-agent: *\nDisallow: /{i}\n")
    assert len(policy._parsed) <= 257


async def test_why_a_failed_robots_txt_is_quoted_to_120_characters():
    long_reason = FetchError("http_error", "redirected (HTTP 302) to a URL that cannot be read: " + "x" * 300,
                             status=302)
    rules = await RobotsPolicy(settings(), MemoryState(), ScriptedGetter(long_reason)).rules("http://s.example",
                                                                                              soon())
    assert rules.why == f"could not be fetched (http_error: {long_reason.message[:120]})"


@pytest.mark.parametrize("kind, code", [("timeout", "timeout"), ("skipped", "overloaded"), ("error", "http_error")])
async def test_a_transport_error_is_the_reads_network_error_cut_to_200_characters(kind, code):
    from plugin.infra.transport import TransportError

    policy = RobotsPolicy(settings(), MemoryState(), ScriptedGetter(TransportError(kind, "no route " + "y" * 400)))
    with pytest.raises(FetchError) as caught:
        await policy.check(target("http://site.example/page"), soon())
    assert caught.value.code == code
    assert caught.value.message.endswith(": no route " + "y" * 191)  # the reason, cut at 200 characters


async def test_a_read_cancelled_during_the_shared_robots_lookup_leaves_the_other_read_whole(standins):
    """Through the real reader, as `serve` or MCP run two requests for one site: the first client goes away
    while robots.txt is still coming; the second request gets its page."""
    site = await standins(routes({"/robots.txt": page("User-agent: *\nDisallow:\n", content_type="text/plain",
                                                      delay=0.5),
                                  "/a": page(article_html()), "/b": page(article_html())}))
    async with Reader(settings()) as reader:
        first = asyncio.create_task(reader.fetch(site.url + "/a"))
        second = asyncio.create_task(reader.fetch(site.url + "/b"))
        while not site.requests:  # robots.txt has been asked
            await asyncio.sleep(0.01)
        first.cancel()
        response = await asyncio.wait_for(second, 30)
        with pytest.raises(asyncio.CancelledError):
            await first
    assert response.status == 200 and response.final_url == site.url + "/b"
    assert paths(site) == ["/robots.txt", "/b"]


# ----- which group is ours (RFC 9309 2.2.1), and a byte-order mark -----
@pytest.mark.parametrize("text, path, expected", [
    # A group for another crawler whose name is a prefix of ours is not ours: `*` holds.
    ("User-agent: *\nDisallow: /\n\nUser-agent: meta\nAllow: /\n", "/a", "blocked_by_robots"),
    ("User-agent: meta\nDisallow: /\n", "/a", "read"),
    ("User-agent: m\nUser-agent: metas\nDisallow: /\n", "/a", "read"),
    ("User-agent: *\nDisallow: /\n\nUser-agent: metasearch-bot\nAllow: /\n", "/a", "blocked_by_robots"),
    # Our token however it is written: any case, a version after it, a comment after it.
    ("User-agent: *\nAllow: /\n\nUser-agent: Metasearch/1.0\nDisallow: /private\n", "/private/a", "blocked_by_robots"),
    ("User-agent: *\nDisallow: /\n\nuser-agent: METASEARCH # us\nAllow: /\n", "/a", "read"),
    ("User-agent: other\nUser-agent: metasearch\nDisallow: /x\n", "/x", "blocked_by_robots"),
])
async def test_only_a_group_naming_our_token_or_star_applies_to_us(text, path, expected):
    policy = RobotsPolicy(settings(), MemoryState(), ScriptedGetter(robots_response(text)))
    assert await verdict(policy, "http://site.example" + path) == expected


@given(st.one_of(st.integers(1, len(ROBOTS_TOKEN) - 1).map(lambda n: ROBOTS_TOKEN[:n]),  # prefixes of ours
                 st.from_regex(r"[A-Za-z_-]{1,14}", fullmatch=True)).filter(lambda name: name.lower() != ROBOTS_TOKEN))
def test_no_other_crawlers_group_is_read_as_ours(name):
    """Whatever another crawler is called (a prefix of our token included), its group neither lets us in
    where `*` keeps crawlers out nor keeps us out where `*` lets them in."""
    policy = RobotsPolicy(settings(), MemoryState(), ScriptedGetter(robots_response("")))
    allows_it = policy._parser(f"User-agent: *\nDisallow: /\n\nUser-agent: {name}\nAllow: /\n")
    keeps_it_out = policy._parser(f"User-agent: *\nAllow: /\n\nUser-agent: {name}\nDisallow: /\n")
    assert not allows_it.can_fetch("http://site.example/a", ROBOTS_TOKEN)
    assert keeps_it_out.can_fetch("http://site.example/a", ROBOTS_TOKEN)


@pytest.mark.parametrize("content_type", ["application/octet-stream", "text/plain; charset=utf-8"])
async def test_a_robots_txt_starting_with_a_byte_order_mark_keeps_its_first_group(standins, content_type):
    """A robots.txt saved by a Windows editor starts with a UTF-8 byte-order mark; served as text it is
    decoded without it, and served with a generic type (or none) its first line must still be read."""
    rules = "\ufeffUser-agent: *\nDisallow: /private/\n".encode()
    site = await standins(routes({"/robots.txt": page(rules, content_type=content_type),
                                  "/private/post": page(article_html())}))
    async with Reader(settings()) as reader:
        with pytest.raises(FetchError) as caught:
            await reader.fetch(site.url + "/private/post")
    assert caught.value.code == "blocked_by_robots"
    assert paths(site) == ["/robots.txt"]


async def test_a_read_that_joined_a_robots_lookup_under_a_shorter_deadline_asks_again_under_its_own(standins):
    """A search's read window (short) and a fetch (the page's whole time) of two pages of one site at once
    share one robots.txt lookup. It runs under the deadline of whoever started it: when that was the
    short one and robots.txt is slow, the fetch has time left and asks again, as a page read that joined
    another caller's read does, instead of failing with the other caller's timeout."""
    site = await standins(routes({"/robots.txt": page("User-agent: *\nDisallow:\n", content_type="text/plain",
                                                      delay=1.5),
                                  "/a": page(article_html()), "/b": page(article_html())}))
    async with Reader(settings(fetch_timeout_ms=20_000)) as reader:
        short = asyncio.get_running_loop().time() + 0.3
        searched = asyncio.create_task(reader.document(site.url + "/a", markdown=True, ignore_robots=False,
                                                       deadline=short))
        while not site.requests:  # robots.txt has been asked, under the short deadline
            await asyncio.sleep(0.01)
        fetched = await reader.fetch(site.url + "/b")
        with pytest.raises(FetchError) as caught:
            await searched
    assert caught.value.code == "timeout"  # the short one ran out, as it should
    assert fetched.status == 200 and fetched.final_url == site.url + "/b"
    assert paths(site).count("/robots.txt") == 2 and paths(site)[-1] == "/b"
