"""The page cache against a plain model: a stateful test driving the real reader (plugin.reading.reader)
against a loopback site on 127.0.0.1 whose pages change, with the store's clock moved by the test.

The model: what each (page, format) entry holds and when it was kept. A read of a kept, unexpired entry
is `cached` and shows the version kept, whatever the site shows now, and asks the site nothing; any other
read asks the site once (two reads at once share that one request), shows its current version and keeps
it. Markdown and plain text are kept apart. robots.txt's word holds for every read that respects it,
cached or not: a page read past robots.txt (`ignore_robots`) and kept is still refused to the next read
that respects it. The entries outlive the reader (a new one over the same store finds them).
"""

from __future__ import annotations

import asyncio

from aiohttp import web
from examples import scaled
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from pages import article_html, reading_settings
from plugin.errors import FetchError
from plugin.infra.state import MemoryState
from plugin.reading.reader import Reader
from standins import StandIn

TTL_S = 600
PAGES = ("a", "b", "private-c")
FORMATS = ("markdown", "text")
# Waits that never add up to exactly the ttl (an entry is either plainly fresh or plainly gone).
WAITS = (1, 250, TTL_S + 1)


def path_of(name: str) -> str:
    return "/private/c" if name == "private-c" else f"/{name}"


class PageCacheMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.now = 1_000_000.0
        self.versions = {name: 1 for name in PAGES}  # what the site shows now
        self.kept: dict[tuple[str, str], tuple[int, float]] = {}  # (page, format) -> (version, kept at)
        self.asked = {name: 0 for name in PAGES}  # requests the model expects the site to have had
        self.state = MemoryState(clock=lambda: self.now)
        self.settings = reading_settings(fetch_cache_ttl_s=TTL_S)
        self.site = self.run(StandIn(self.serve).start())
        self.reader = self.run(self.new_reader_here())

    async def new_reader_here(self) -> Reader:
        return Reader(self.settings, state=self.state)  # made on the loop (its resolver belongs to it)

    def run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    async def serve(self, request: web.Request, standin: StandIn) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nDisallow: /private/\n", content_type="text/plain")
        name = next((n for n in PAGES if path_of(n) == request.path), None)
        if name is None:
            return web.Response(status=404, text="not found")
        await asyncio.sleep(0.01)  # reads started together are still under way together
        return web.Response(text=article_html(title=f"Page {name} version {self.versions[name]}"),
                            content_type="text/html")

    def teardown(self) -> None:
        self.run(self.reader.close())
        self.run(self.site.stop())
        self.run(self.state.close())
        self.loop.close()

    # ----- the model's answer -----
    def expect(self, name: str, fmt: str, ignore_robots: bool) -> tuple[str, int | None, bool]:
        """(outcome, version shown, from the cache) for a read now, and the model moved on by it."""
        if name == "private-c" and not ignore_robots:
            return "blocked_by_robots", None, False
        entry = self.kept.get((name, fmt))
        if entry is not None and self.now - entry[1] < TTL_S:
            return "read", entry[0], True
        self.kept[(name, fmt)] = (self.versions[name], self.now)
        self.asked[name] += 1
        return "read", self.versions[name], False

    async def fetch(self, name: str, fmt: str, ignore_robots: bool) -> tuple[str, int | None, bool]:
        try:
            response = await self.reader.fetch(self.site.url + path_of(name), format=fmt, ignore_robots=ignore_robots)
        except FetchError as exc:
            return exc.code, None, False
        title = response.title or ""
        assert title.startswith(f"Page {name} version "), title
        return "read", int(title.split("version ", 1)[1].split()[0]), response.cached

    def page_requests(self, name: str) -> int:
        return sum(1 for seen in self.site.requests if seen.path == path_of(name))

    # ----- the rules -----
    @rule(name=st.sampled_from(PAGES))
    def edit(self, name):
        self.versions[name] += 1

    @rule(seconds=st.sampled_from(WAITS))
    def wait(self, seconds):
        self.now += seconds

    @rule(name=st.sampled_from(PAGES), fmt=st.sampled_from(FORMATS), ignore_robots=st.booleans())
    def read(self, name, fmt, ignore_robots):
        expected = self.expect(name, fmt, ignore_robots)
        assert self.run(self.fetch(name, fmt, ignore_robots)) == expected
        assert self.page_requests(name) == self.asked[name]

    @rule(name=st.sampled_from(PAGES), fmt=st.sampled_from(FORMATS), ignore_robots=st.booleans())
    def read_twice_at_once(self, name, fmt, ignore_robots):
        expected = self.expect(name, fmt, ignore_robots)

        async def both():
            return await asyncio.gather(self.fetch(name, fmt, ignore_robots), self.fetch(name, fmt, ignore_robots))

        first, second = self.run(both())
        assert first == expected
        assert second[:2] == expected[:2]  # the same text; one asked the site, or both found it kept
        assert self.page_requests(name) == self.asked[name]

    @rule()
    def new_reader(self):
        """Another reader over the same store (a new process of the same user): the entries are there."""
        self.run(self.reader.close())
        self.reader = self.run(self.new_reader_here())


def test_the_page_cache_answers_as_the_model():
    run_state_machine_as_test(PageCacheMachine, settings=hypothesis_settings(
        max_examples=scaled(20), stateful_step_count=20, deadline=None))
