"""Settings that say what went wrong, where (issue 29 item 15): a misspelt METASEARCH_* variable is named
with the closest setting (config, search, /health); a config file's bad value names the file and the
key, not a variable; a variable that is not JSON is named without pydantic's internals; --config works
after the subcommand too."""

from __future__ import annotations

import json

import pytest

from plugin.errors import SearchError
from plugin.settings import Settings
from plugin.surfaces.cli import main
from test_config import clean_env  # noqa: F401  (no METASEARCH_* variable of the user's; config and state in tmp)


# ----- a misspelt variable -----
def test_a_misspelt_variable_is_named_with_the_closest_setting(clean_env, monkeypatch):
    monkeypatch.setenv("METASEARCH_LIMT", "3")
    monkeypatch.setenv("METASEARCH_TIMEOUT", "5000")
    monkeypatch.setenv("METASEARCH_CORPUS", "/somewhere")  # the bench scripts' own variable, not a setting
    warnings = Settings().warnings
    assert any("METASEARCH_LIMT" in w and "METASEARCH_LIMIT" in w for w in warnings), warnings
    assert any("METASEARCH_TIMEOUT" in w and "METASEARCH_TIMEOUT_MS" in w for w in warnings), warnings
    assert not any("CORPUS" in w for w in warnings) and len(warnings) == 2
    monkeypatch.setenv("metasearch_limit", "3")  # the names are read case-insensitively: a setting
    assert len(Settings().warnings) == 2


def test_config_shows_the_misspelt_variable(clean_env, monkeypatch, capsys):
    monkeypatch.setenv("METASEARCH_LIMT", "3")
    assert main(["config"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert any("METASEARCH_LIMT" in w and "METASEARCH_LIMIT" in w for w in data["warnings"])
    assert "METASEARCH_LIMT" in captured.err


async def test_search_and_health_show_the_misspelt_variable(clean_env, monkeypatch, standins):
    from aiohttp.test_utils import TestClient, TestServer

    from plugin.pipeline.searcher import Searcher
    from plugin.surfaces.service import build_app
    from standins import bing_page, page

    monkeypatch.setenv("METASEARCH_CACHE_TTL", "0")
    engine = await standins(page(bing_page([("Rust", "https://rust-lang.org/", "rust language")])))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"], state_backend="memory")
    async with Searcher(settings) as searcher:
        response = await searcher.search("rust language")
    assert any("METASEARCH_CACHE_TTL" in w and "METASEARCH_CACHE_TTL_S" in w for w in response.warnings)
    async with TestClient(TestServer(build_app(settings))) as client:
        health = await (await client.get("/health")).json()
    assert any("METASEARCH_CACHE_TTL_S" in w for w in health["warnings"])


# ----- where a bad value came from -----
def test_a_config_file_type_error_names_the_file_and_key(clean_env, capsys):
    path = clean_env / "bad.toml"
    path.write_text('limit = "many"\n', encoding="utf-8")
    with pytest.raises(SearchError) as caught:
        Settings.load(path)
    message = caught.value.message
    assert str(path) in message and "limit" in message and "METASEARCH_LIMIT" not in message, message
    assert caught.value.details["parameter"] == "limit"
    nested = clean_env / "nested.toml"
    nested.write_text('[metasearch]\nweights = {bing = "heavy"}\n', encoding="utf-8")
    with pytest.raises(SearchError) as caught:
        Settings.load(nested)
    assert str(nested) in caught.value.message and "weights.bing" in caught.value.message


def test_a_bad_variable_still_names_the_variable(clean_env, monkeypatch):
    monkeypatch.setenv("METASEARCH_LIMIT", "many")
    with pytest.raises(SearchError) as caught:
        Settings.load()
    assert "METASEARCH_LIMIT" in caught.value.message
    with pytest.raises(SearchError) as caught:  # in code: neither a file nor a variable
        Settings(limit="many")
    assert "METASEARCH_LIMIT" not in caught.value.message and "limit" in caught.value.message


@pytest.mark.parametrize(("variable", "value", "shape"), [
    ("METASEARCH_ENDPOINTS", "not json", "JSON object"), ("METASEARCH_WEIGHTS", "bing=2", "JSON object"),
    ("METASEARCH_OFFICIAL_SITES", "{", "JSON object"), ("METASEARCH_AUTHORITY_DOMAINS", "python.org", "JSON list"),
])
def test_a_variable_that_is_not_json_is_named_plainly(variable, value, shape, clean_env, monkeypatch):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SearchError) as caught:
        Settings()
    message = caught.value.message
    assert variable in message and shape in message, message
    for internal in ("EnvSettingsSource", "error parsing value", "source"):
        assert internal not in message, message
    assert caught.value.details["parameter"] == variable.removeprefix("METASEARCH_").lower()


# ----- --config after the subcommand -----
def test_config_after_the_subcommand_works(clean_env, capsys):
    path = clean_env / "limit.toml"
    path.write_text("limit = 3\n", encoding="utf-8")
    assert main(["config", "--config", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["limit"] == 3
    assert main(["--config", str(path), "config"]) == 0
    assert json.loads(capsys.readouterr().out)["limit"] == 3
    bad = clean_env / "bad.toml"
    bad.write_text('limit = "many"\n', encoding="utf-8")
    assert main(["search", "x", "--config", str(bad), "--json"]) == 2
    assert str(bad) in json.loads(capsys.readouterr().out)["error"]["message"]
    # (mcp reports a settings error to its client on every call instead: tests/test_mcp.py)
    for command in (["engines"], ["cooldowns"], ["fetch", "http://127.0.0.2/x"], ["verify", "http://127.0.0.2/x", "q"],
                    ["serve"]):
        json_flag = [] if command == ["serve"] else ["--json"]
        assert main([*command, "--config", str(clean_env / "missing.toml"), *json_flag]) == 2, command
        captured = capsys.readouterr()
        assert "missing.toml" in captured.out + captured.err, command
