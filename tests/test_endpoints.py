"""Endpoints (issue 29 item 19): one upstream has one key (cooldowns, budgets, admission, the answer
cache) however its URL is spelt; an endpoint with a path is refused (it replaces the engine's scheme,
host and port, and a path would be dropped silently), save searxng's, whose endpoint is its instance
URL; `mcp --port` without `--http` is an error."""

from __future__ import annotations

import json

import pytest

from plugin.errors import SearchError
from plugin.settings import Settings, parse_endpoints
from standins import page


@pytest.mark.parametrize(("spellings", "canonical"), [
    (["http://127.0.0.1:8080", "http://127.0.0.1:8080/", "HTTP://127.0.0.1:8080", " http://127.0.0.1:8080// "],
     "http://127.0.0.1:8080"),
    (["http://Mirror.Example", "http://mirror.example:80", "http://MIRROR.example:80/"], "http://mirror.example"),
    (["https://mirror.example:443", "https://mirror.example/", "HTTPS://Mirror.Example:443/"],
     "https://mirror.example"),
    (["http://[::1]:8080/", "http://[0:0::1]:8080"], "http://[::1]:8080"),
    (["https://mirror.example:80"], "https://mirror.example:80"),  # not the default port of https
])
def test_one_upstream_has_one_key_however_it_is_spelt(spellings, canonical):
    for url in spellings:
        settings = Settings(endpoints={"bing": url}, state_backend="memory")
        assert settings.endpoints["bing"] == canonical, url
        assert settings.upstream("bing") == f"bing@{canonical}", url
        assert parse_endpoints([f"bing={url}"]) == {"bing": canonical}, url
    keyed = Settings(budget_per_minute={f"bing@{spellings[-1]}": 5}, upstream_rps={f"bing@{spellings[0]}": 2.0},
                     state_backend="memory")
    assert keyed.budget_per_minute[f"bing@{canonical}"] == 5 and keyed.upstream_rps == {f"bing@{canonical}": 2.0}


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/bing", "http://127.0.0.1:8080/a/b/", "http://h.example/?x=1",
                                 "http://h.example/#top"])
def test_an_endpoint_with_a_path_is_refused(url):
    with pytest.raises(SearchError) as caught:
        Settings(endpoints={"bing": url})
    assert caught.value.code == "invalid_parameter" and "endpoints" in caught.value.message
    assert "scheme, host and port" in caught.value.message, caught.value.message
    with pytest.raises(SearchError) as caught:
        parse_endpoints([f"bing={url}"])
    assert caught.value.code == "invalid_parameter" and "--endpoint bing" in caught.value.message


def test_searxng_keeps_its_instance_path():
    settings = Settings(endpoints={"searxng": "HTTP://Search.Example:80/searx/"}, state_backend="memory")
    assert settings.endpoints["searxng"] == "http://search.example/searx"
    assert settings.instance_url("searxng") == "http://search.example/searx"


async def test_a_cooldown_set_under_one_spelling_holds_under_another(standins):
    from plugin.pipeline.searcher import Searcher

    engine = await standins(page("overloaded", status=503))
    first = Settings(endpoints={"bing": engine.url + "/"}, engines=["bing"])
    async with Searcher(first) as searcher:
        assert (await searcher.search("rust async")).engines[0].status == "error"
    host, port = engine.url.removeprefix("http://").split(":")
    second = Settings(endpoints={"bing": f"HTTP://{host}:{port}"}, engines=["bing"])
    async with Searcher(second) as searcher:
        assert (await searcher.search("rust async")).engines[0].status == "cooldown"
    assert len(engine.requests) == 1


def test_cooldowns_clear_takes_any_spelling(capsys):
    from plugin.surfaces.cli import main

    # A spelling that differs from the stored key still names it.
    assert main(["cooldowns", "--clear", "bing@HTTP://127.0.0.1:9/", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cleared"] == []
    assert main(["cooldowns", "--clear", "bing@http://127.0.0.1:9/x", "--json"]) == 2
    assert "scheme, host and port" in json.loads(capsys.readouterr().out)["error"]["message"]


def test_mcp_port_without_http_is_an_error(capsys):
    from plugin.surfaces.cli import main

    for args in (["mcp", "--port", "9999"], ["mcp", "--host", "0.0.0.0"]):
        assert main([*args]) == 2
        err = capsys.readouterr().err
        assert "--http" in err and "invalid_parameter" in err, err
