"""What the engines see (issue 26): our engine request and our page read present Chromium's TLS ClientHello,
HTTP/2 SETTINGS, WINDOW_UPDATE and pseudo-header order, and headers that tell one story, compared on the
suite's own loopback TLS listener (plugin.bench.fingerprint) with the reference recorded from Chromium
(bench/fingerprints/chromium.json) and, where one is installed, with the live Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from engines import ENGINES
from engines.base import SearchOptions
from engines.browser import CHROME
from plugin.bench.fingerprint import (FORM_PAGE, ClientHello, FingerprintListener, capture_chromium, differences,
                                      find_chromium, header_order, load_reference, pick)
from plugin.infra.admission import EngineClock
from plugin.infra.transport import Transport
from plugin.reading.reader import Reader
from plugin.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "bench" / "fingerprints" / "chromium.json"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    trustme = pytest.importorskip("trustme")
    folder = tmp_path_factory.mktemp("fingerprint")
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1", "localhost")
    files = {name: str(folder / f"{name}.pem") for name in ("cert", "key", "ca")}
    issued.cert_chain_pems[0].write_to_path(files["cert"])
    issued.private_key_pem.write_to_path(files["key"])
    ca.cert_pem.write_to_path(files["ca"])
    return files


@pytest.fixture
def listener(certificate):
    with FingerprintListener(certificate["cert"], certificate["key"], body=FORM_PAGE) as running:
        yield running


async def captured(listener: FingerprintListener, bundle: str, transport: str = "browser"):
    """(our engine request, our page read) as the listener saw them: DuckDuckGo's form POST through the
    transport, and a page read through the reader, both trusting the listener through ca_bundle."""
    settings = Settings(endpoints={"duckduckgo-html": listener.url}, ca_bundle=bundle, transport=transport,
                        allow_private_hosts="127.0.0.1/32", fetch_robots=False, state_backend="memory")
    engine = Transport(settings)
    try:
        request = ENGINES["duckduckgo-html"].build("what engines see", SearchOptions())
        await engine.fetch(request, "duckduckgo-html", EngineClock(10, 10))
    finally:
        await engine.close()
    async with Reader(settings) as reader:
        await reader.fetch(listener.url + "/page")
    await asyncio.sleep(0.1)
    return pick(listener.captures, "POST", "/html/"), pick(listener.captures, "GET", "/page")


def one_story(capture) -> None:
    """Item 2: the Chrome version of the User-Agent is the client hints' and the TLS profile's."""
    agent = capture.header("user-agent")
    hints = capture.header("sec-ch-ua")
    assert re.search(r"Chrome/(\d+)\.", agent).group(1) == str(CHROME.major)
    assert f'"Chromium";v="{CHROME.major}"' in hints and f'"Google Chrome";v="{CHROME.major}"' in hints
    assert CHROME.name == f"chrome{CHROME.major}"
    assert capture.header("sec-ch-ua-platform") == f'"{CHROME.platform}"' and CHROME.platform in "Windows"
    assert capture.header("accept-encoding") == "gzip, deflate, br, zstd"
    assert capture.header("sec-fetch-mode") == "navigate" and capture.header("accept-language")


def test_ja4_of_the_published_example():
    # FoxIO's JA4 example (a Chrome ClientHello): GREASE aside, SNI and ALPN counted but not hashed.
    hello = ClientHello(
        ciphers=[0x0A0A, 0x1301, 0x1302, 0x1303, 0xC02B, 0xC02F, 0xC02C, 0xC030, 0xCCA9, 0xCCA8, 0xC013, 0xC014,
                 0x009C, 0x009D, 0x002F, 0x0035],
        extensions=[0x1A1A, 0x0000, 0x0017, 0xFF01, 0x000A, 0x000B, 0x0023, 0x0010, 0x0005, 0x000D, 0x0012, 0x0033,
                    0x002D, 0x002B, 0x001B, 0x4469, 0x0015],
        signature_algorithms=[0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601],
        alpn=["h2", "http/1.1"], versions=[0x3A3A, 0x0304, 0x0303])
    assert hello.ja4() == "t13d1516h2_8daaf6152771_e5627efa2ab1"


async def test_our_requests_match_the_chromium_recorded_in_the_repository(listener, certificate):
    facts, navigate, form_post = load_reference(REFERENCE)
    assert facts["browser"] == "Chromium" and facts["version"] and facts["recorded"]
    engine, page = await captured(listener, certificate["ca"])
    assert engine is not None and page is not None
    assert differences(engine, form_post) == {} and differences(page, navigate) == {}
    assert engine.protocol == "h2" and engine.hello.ja4() == form_post.hello.ja4()
    # The header order is Chromium's: DuckDuckGo's form POST as Chrome sends one, the read as Chrome opens a page.
    assert header_order(engine) == header_order(form_post)
    assert header_order(page) == header_order(navigate)
    for capture in (engine, page):
        one_story(capture)
    assert engine.header("origin") == "https://html.duckduckgo.com"
    assert engine.header("referer") == "https://html.duckduckgo.com/"
    assert engine.header("content-type") == "application/x-www-form-urlencoded"
    assert engine.header("sec-fetch-site") == "same-origin" and page.header("sec-fetch-site") == "none"


async def test_our_requests_match_the_installed_chromium(listener, certificate):
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium installed (.ci/services installs Debian's chromium; METASEARCH_CHROMIUM names one)")
    engine, page = await captured(listener, certificate["ca"])
    before = len(listener.captures)
    await asyncio.to_thread(capture_chromium, binary, listener.url + "/")
    await asyncio.sleep(0.3)
    live = listener.captures[before:]
    navigate, form_post = pick(live, "GET", "/"), pick(live, "POST", "/html/")
    assert navigate is not None and form_post is not None, listener.errors
    assert differences(engine, form_post) == {} and differences(page, navigate) == {}
    assert header_order(engine) == header_order(form_post) and header_order(page) == header_order(navigate)


async def test_the_comparison_tells_a_python_client_apart(listener, certificate):
    # The plain path (aiohttp) is what engines saw before: the same comparison must fail on it.
    _, navigate, form_post = load_reference(REFERENCE)
    engine, page = await captured(listener, certificate["ca"], transport="plain")
    for ours, theirs in ((engine, form_post), (page, navigate)):
        found = differences(ours, theirs)
        assert {"cipher_suites", "extensions", "groups", "alpn", "protocol", "h2_settings"} <= set(found)


async def test_one_profile_for_a_whole_engine_session(listener, certificate):
    settings = Settings(endpoints={"duckduckgo-html": listener.url, "bing": listener.url}, ca_bundle=certificate["ca"])
    transport = Transport(settings)
    try:
        for engine in ("duckduckgo-html", "duckduckgo-html", "bing"):
            request = ENGINES[engine].build("same story", SearchOptions())
            await transport.fetch(request, engine, EngineClock(10, 10))
    finally:
        await transport.close()
    await asyncio.sleep(0.1)
    first, second, bing = listener.captures[:3]
    assert first.comparable() == second.comparable() == bing.comparable()
    assert first.headers == second.headers  # nothing drawn at random per request
    assert bing.header("user-agent") == first.header("user-agent") == CHROME.user_agent
    # One connection per upstream, reused: the second request rode on the first one's connection.
    assert (first.connection_request, second.connection_request) == (0, 1)


async def test_the_cli_presents_chromium_to_the_engine_and_the_page(listener, certificate, tmp_path):
    # The issue's own check: the commands a user runs, trusting the listener through METASEARCH_CA_BUNDLE.
    _, navigate, form_post = load_reference(REFERENCE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("METASEARCH_")}
    env.update({"METASEARCH_CA_BUNDLE": certificate["ca"], "METASEARCH_STATE_DIR": str(tmp_path / "state"),
                "METASEARCH_CACHE_TTL_S": "0", "METASEARCH_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32",
                "PYTHONPATH": str(ROOT)})

    async def cli(*args: str) -> dict:
        process = await asyncio.create_subprocess_exec(sys.executable, "-m", "plugin.surfaces.cli", *args, env=env,
                                                       cwd=ROOT, stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.PIPE)
        out, _ = await asyncio.wait_for(process.communicate(), 120)
        return json.loads(out)

    searched = await cli("search", "what engines see", "--engines", "duckduckgo-html", "--endpoint",
                         f"duckduckgo-html={listener.url}", "--json")
    read = await cli("fetch", listener.url + "/page", "--json")
    assert searched["engines"][0]["name"] == "duckduckgo-html" and read["status"] == 200
    await asyncio.sleep(0.1)
    engine, page = pick(listener.captures, "POST", "/html/"), pick(listener.captures, "GET", "/page")
    assert differences(engine, form_post) == {} and differences(page, navigate) == {}
    assert header_order(engine) == header_order(form_post) and header_order(page) == header_order(navigate)
