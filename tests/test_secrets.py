"""API keys never reach a log (at any level), a response, an error message or a recording."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path

from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings


ROOT = Path(__file__).resolve().parents[1]
SECRET = "exa-SECRET-key-5f2b9c7d1e"


def echoing_exa(status: int):
    """An Exa stand-in that echoes the key it was sent into its answer (the worst case)."""

    async def handler(request, standin):
        from aiohttp import web

        sent = request.headers.get("x-api-key", "")
        if status != 200:
            return web.json_response({"error": f"Invalid API key {sent}"}, status=status)
        return web.json_response({"results": [{
            "title": f"Result mentioning {sent}", "url": f"https://example.org/page?token={sent}",
            "highlights": [f"snippet with {sent} inside"], "publishedDate": "2026-11-01T00:00:00.000Z"}]})

    return handler


async def run_cli(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "plugin.surfaces.cli", *args, cwd=ROOT, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


async def test_key_absent_from_debug_logs_and_output_of_the_cli(standins):
    for status in (401, 200):
        exa = await standins(echoing_exa(status))
        env = {**os.environ, "PYTHONPATH": str(ROOT), "EXA_API_KEY": SECRET, "METASEARCH_LOG": "debug",
               "METASEARCH_STATE_BACKEND": "memory"}  # each run asks the engine afresh
        for extra in (["--json"], ["--verbose"], ["--json", "--verbose"]):
            code, out, err = await run_cli("search", "example query", "--engines", "exa", "--endpoint",
                                           f"exa={exa.url}", *extra, env=env)
            assert code == (3 if status == 401 else 0), err  # a rejected key: no engine could answer
            assert exa.requests[-1].headers.get("x-api-key") == SECRET  # it was really sent
            assert SECRET not in out and SECRET not in err
            assert "DEBUG" in err or "INFO" in err  # the logs really were on
        code, out, err = await run_cli("config", env=env)
        assert SECRET not in out and SECRET not in err


async def test_key_absent_from_python_logs_responses_and_error_details(standins, caplog):
    exa = await standins(echoing_exa(401))
    settings = Settings(endpoints={"exa": exa.url}, engines=["exa"], exa_api_key=SECRET)
    searcher = Searcher(settings)
    caplog.set_level(logging.DEBUG)
    response = await searcher.search("example query")
    assert response.engines[0].status == "error" and "API key rejected" in response.engines[0].detail
    assert SECRET not in response.model_dump_json()
    exa.behaviour = echoing_exa(200)
    await searcher.cooldowns.store.clear(searcher.settings.upstream("exa"))
    response = await searcher.search("example query")
    await searcher.close()
    assert response.engines[0].status == "ok"
    dumped = response.model_dump_json()
    assert SECRET not in dumped and "[redacted]" in dumped
    assert SECRET not in caplog.text
    assert SECRET not in json.dumps([repr(r.msg) for r in caplog.records])


def test_log_filter_redacts_keys_in_messages_and_tracebacks(caplog):
    from plugin.infra.logs import get_logger, register_secrets

    register_secrets(["another-secret-value-42"])
    log = get_logger("metasearch.test")
    caplog.set_level(logging.DEBUG)
    try:
        raise RuntimeError("failed with another-secret-value-42")
    except RuntimeError:
        log.exception("request with key %s failed", "another-secret-value-42")
    assert "another-secret-value-42" not in caplog.text


def test_urls_are_shown_without_their_credentials():
    from plugin.infra.secrets import mask_url, redact

    assert mask_url("redis://default:S3cret@cache.internal:6379/0") == "redis://****@cache.internal:6379/0"
    assert mask_url("redis://cache.internal:6379/0?password=hunter22&db=1") == \
        "redis://cache.internal:6379/0?password=****&db=1"
    assert mask_url("http://proxy:3128") == "http://proxy:3128"
    # One rule everywhere: values too short to be a key are left alone, longer ones never survive.
    assert redact("key abc and abcd", ["abc", "abcd"]) == "key abc and [redacted]"


async def test_instance_url_credentials_absent_from_debug_logs_and_responses(standins):
    """A SearXNG behind basic auth (METASEARCH_SEARXNG_URL=https://user:pass@searx.example): the password is
    sent, and shown nowhere (the transport's debug line printed the URL's netloc, user-info included)."""
    import io

    from standins import page

    password = "s3cret-Instance-Passw0rd"
    searx = await standins(page('{"results": [], "query": "q"}', status=503, content_type="application/json"))
    url = searx.url.replace("http://", f"http://alice:{password}@")
    # A handler of our own on the package's logger: another test may have configured it not to propagate.
    logger, written = logging.getLogger("metasearch"), io.StringIO()
    handler, level = logging.StreamHandler(written), logger.level
    handler.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        for settings in (Settings(searxng_url=url, engines=["searxng"], state_backend="memory"),
                         Settings(endpoints={"searxng": url}, engines=["searxng"], state_backend="memory")):
            async with Searcher(settings) as searcher:
                response = await searcher.search("example query")
            assert response.engines[0].status == "error"
            assert searx.requests[-1].headers.get("Authorization", "").startswith("Basic ")  # really sent
            assert password not in response.model_dump_json()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert "/search -> 503" in written.getvalue()  # the debug line was written
    assert password not in written.getvalue()


async def test_a_key_does_not_follow_a_redirect_to_another_origin(standins):
    """An API (or the mirror an endpoint names) redirecting elsewhere: the key header is sent to the host it was
    given for and to a redirect on that same origin, never to another host or port (it went along before)."""
    from aiohttp import web

    key = "brave-SECRET-key-1234567890"
    elsewhere = await standins(lambda request, standin: _json({"web": {"results": []}, "type": "search"}))

    async def api(request, standin):
        if request.path == "/moved":  # same origin: the key still goes
            raise web.HTTPFound("/res/v1/web/search?" + request.query_string + "&hop=2")
        if request.query.get("hop") == "2":
            raise web.HTTPFound(elsewhere.url + "/res/v1/web/search?" + request.query_string)
        raise web.HTTPFound("/moved?" + request.query_string)

    origin = await standins(api)
    settings = Settings(endpoints={"brave-api": origin.url}, engines=["brave-api"], brave_api_key=key,
                        state_backend="memory")
    async with Searcher(settings) as searcher:
        response = await searcher.search("python release notes")
    assert response.engines[0].status == "empty", response.engines[0].detail  # the answer came from `elsewhere`
    assert [seen.headers.get("X-Subscription-Token") for seen in origin.requests] == [key, key, key]
    assert len(elsewhere.requests) == 1
    assert not [value for value in elsewhere.requests[0].headers.values() if key in value]


async def _json(data):
    from aiohttp import web

    return web.json_response(data)
