"""The per-engine answer cache (issue 10): what decides an engine's answer is in its key (issue 14's
mutants: region, safe search, site, time range), an engine enabled since is asked, and every engine
report says whether its answer came from the cache."""

from __future__ import annotations

import json

import pytest

from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page, page

ROWS = [("Rust async book", "https://rust-lang.github.io/async-book/", "rust async guide"),
        ("Tokio", "https://tokio.rs/", "rust async runtime")]
EXA = json.dumps({"results": [{"title": "Asynchronous Programming in Rust", "url": "https://rust-lang.github.io/async-book/",
                               "highlights": ["rust async book"]}]})


@pytest.fixture
def cached_settings(monkeypatch):
    monkeypatch.setenv("METASEARCH_CACHE_TTL_S", "300")
    monkeypatch.delenv("EXA_API_KEY", raising=False)


async def test_an_engine_enabled_since_is_asked_not_served_a_cached_disabled(standins, cached_settings):
    """`exa disabled` was cached with the whole answer; after EXA_API_KEY is set, the next search (another
    process sharing the store: a new Searcher on the same state file) must ask Exa."""
    bing = await standins(page(bing_page(ROWS)))
    exa = await standins(page(EXA, content_type="application/json"))
    endpoints = {"bing": bing.url, "exa": exa.url}
    async with Searcher(Settings(endpoints=endpoints, engines=["bing", "exa"])) as searcher:
        before = await searcher.search("rust async")
    assert {e.name: e.status for e in before.engines} == {"bing": "ok", "exa": "disabled"}
    async with Searcher(Settings(endpoints=endpoints, engines=["bing", "exa"], exa_api_key="test-key-1234")) as searcher:
        after = await searcher.search("rust async")
    reports = {e.name: e for e in after.engines}
    assert reports["exa"].status == "ok" and reports["exa"].cached is False and len(exa.requests) == 1
    assert reports["bing"].status == "ok" and reports["bing"].cached is True and len(bing.requests) == 1
    assert after.cached is False  # Exa's answer is fresh


@pytest.mark.parametrize("option, first, second", [
    ("region", "en-US", "de-DE"),
    ("safesearch", "moderate", "strict"),
    ("site", "rust-lang.github.io", "tokio.rs"),
    ("time_range", "week", "year"),
])
async def test_every_option_the_engine_is_asked_is_in_the_key(standins, cached_settings, option, first, second):
    bing = await standins(page(bing_page(ROWS)))
    async with Searcher(Settings(endpoints={"bing": bing.url}, engines=["bing"])) as searcher:
        one = await searcher.search("rust async", **{option: first})
        again = await searcher.search("rust async", **{option: first})
        other = await searcher.search("rust async", **{option: second})
    assert (one.cached, again.cached, other.cached) == (False, True, False)
    assert again.engines[0].cached is True and other.engines[0].cached is False
    assert len(bing.requests) == 2
