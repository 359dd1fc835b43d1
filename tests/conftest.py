"""Shared fixtures: the real-page corpus beside the project, and engine responses."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

# Property tests explore the same examples on every run (CI must not turn red by luck), half as many as
# Hypothesis's default 100 (the suite stays within a few minutes; tests/examples.py scales the counts tests
# name); HYPOTHESIS_PROFILE=explore searches with twenty times as many fresh random examples.
hypothesis_settings.register_profile("stable", derandomize=True, max_examples=50)
hypothesis_settings.register_profile("explore", derandomize=False, max_examples=2000)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "stable"))

from engines.base import Headers, Response, SearchOptions

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("METASEARCH_CORPUS", ROOT.parent / "shared" / "serp-corpus"))


def corpus_path(*parts: str) -> Path:
    """A path inside ../shared/serp-corpus, skipping the test when the corpus is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real-page corpus not found at {CORPUS} (../shared is absent); parser conformance needs it")
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is not in this copy of the corpus")
    return path


def corpus_files(engine_dir: str, pattern: str = "*.html") -> list[str]:
    """File names for parametrising; empty (tests then skip) when the corpus is absent."""
    folder = CORPUS / engine_dir
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.glob(pattern) if "CASSETTE" not in p.name)


def response_from_bytes(body: bytes, url: str = "https://example.invalid/", status: int = 200,
                        headers: dict[str, str] | None = None, encoding: str | None = None) -> Response:
    """A Response as the transport would hand it to a parser."""
    if encoding is None:
        if body.startswith(b"\xff\xfe") or body.startswith(b"\xfe\xff"):
            encoding = "utf-16"
        else:
            encoding = "utf-8"
    return Response(status=status, url=url, headers=Headers(headers or {}), body=body,
                    text=body.decode(encoding, errors="replace"))


# pytest keeps each test module's rewritten assertions in tests/__pycache__ unless bytecode writing is off
# (PYTHONDONTWRITEBYTECODE, set on CI machines): then every worker of every run rewrote all of them again,
# ~12 s of CPU each. Ignored for the test run, as pytest's default is to keep them (installed packages
# already have theirs).
sys.dont_write_bytecode = False


def pytest_configure(config):
    """Compile the project's modules once, before the workers start: hundreds of tests start a
    `metasearch` process, and where PYTHONDONTWRITEBYTECODE is set (as on CI machines) each of them compiled
    every module again (~0.45 s of CPU per process)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import compileall

    for package in ("plugin", "engines"):
        compileall.compile_dir(str(ROOT / package), quiet=1, workers=1)


FIXED_NOW = datetime(2026, 11, 29, 12, 0, 0)


@pytest.fixture
def options() -> SearchOptions:
    return SearchOptions(now=FIXED_NOW)


@pytest.fixture(autouse=True)
def private_state(tmp_path, monkeypatch):
    """Every test gets its own embedded state store, and the result cache off unless a test turns it on,
    so cooldowns and cached answers never leak between tests or into the user's own state."""
    state = tmp_path / "state"
    monkeypatch.setenv("METASEARCH_STATE_DIR", str(state))
    monkeypatch.setenv("METASEARCH_CACHE_TTL_S", "0")
    # A store read answers within state_wait_ms or counts as a miss (and a warning). 250 ms by default:
    # a reader thread's first read on a loaded CI machine can take longer, which would make tests that
    # are not about that bound flaky. Tests of the bound set state_wait_ms themselves.
    monkeypatch.setenv("METASEARCH_STATE_WAIT_MS", "5000")
    monkeypatch.delenv("METASEARCH_REDIS_URL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    return state


@pytest.fixture(autouse=True)
def cold_caches():
    """Every test starts with nothing remembered from the tests before it: every memo cache empty
    (canonical URLs, official-name patterns, …) and no kept searcher or reader, whatever registered with
    plugin.infra.memo (tables built once from what does not change, such as the public suffix trie, stay:
    rebuilding them for each test would cost seconds and change nothing), so what a test exercises does
    not depend on which tests ran before it. Mutation
    testing relies on it: mutmut maps each function to the tests that call it in one run of the suite,
    and a function behind a warm cache was only ever called by the first test that needed it (the
    official-name patterns' mutants survived, run against that one unrelated test alone)."""
    from plugin.infra import memo

    memo.forget_all()


# The MCP SDK's stdio client takes sys.stderr as its errlog default when first imported: imported first by a
# test under capsys (tests/test_wording.py), it kept the capture, which has no file number, and every later
# stdio client in that worker failed (io.UnsupportedOperation: fileno). Imported here, it keeps the real one.
try:
    import mcp.client.stdio  # noqa: E402, F401
except ImportError:  # the mcp extra is not installed: the MCP tests skip
    pass


# ----- loopback stand-ins -----
from standins import StandIn  # noqa: E402


@pytest.fixture
async def standins():
    """Factory for loopback engines: `await standins(behaviour)` -> a started StandIn."""
    started: list[StandIn] = []

    async def make(behaviour) -> StandIn:
        standin = await StandIn(behaviour).start()
        started.append(standin)
        return standin

    yield make
    for standin in started:
        await standin.stop()


@pytest.fixture
def standins_sync():
    """A loopback engine answering 500 from its own thread, for code that runs its own event loop."""
    from plugin.bench.loopback import LoopbackSite

    requests: list[str] = []

    def answer(path: str) -> tuple[int, str, bytes]:
        requests.append(path)
        return 500, "text/plain", b"down"

    with LoopbackSite(answer) as site:
        yield site.base, requests


@pytest.fixture(params=["browser", "plain"])
def both_transports(request, monkeypatch):
    """Runs a test on each HTTP client behind the one transport (issue 26: every guarantee the transport makes
    holds on the browser path, curl_cffi, as on the plain one, aiohttp): METASEARCH_TRANSPORT for the test."""
    monkeypatch.setenv("METASEARCH_TRANSPORT", request.param)
    return request.param
