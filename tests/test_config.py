"""Configuration precedence, secret masking, schema export and the engines listing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plugin.errors import SearchError
from plugin.surfaces.catalog import masked_settings
from plugin.surfaces.cli import main
from plugin.version import VERSION
from plugin.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("METASEARCH_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))  # `config` looks at the store: not the user's
    return tmp_path


def test_precedence_defaults_toml_env_flags(clean_env, monkeypatch):
    assert Settings.load().timeout_ms == 15000 and Settings.load().rrf_k == 2
    config = clean_env / "xdg" / "metasearch" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("timeout_ms = 9000\nrrf_k = 40\nfreshness_days = 7\n", encoding="utf-8")
    loaded = Settings.load()
    assert (loaded.timeout_ms, loaded.rrf_k, loaded.freshness_days) == (9000, 40, 7)
    monkeypatch.setenv("METASEARCH_TIMEOUT_MS", "5000")
    monkeypatch.setenv("METASEARCH_RRF_K", "80")
    loaded = Settings.load()
    assert (loaded.timeout_ms, loaded.rrf_k, loaded.freshness_days) == (5000, 80, 7)
    loaded = Settings.load(timeout_ms=1234)
    assert (loaded.timeout_ms, loaded.rrf_k) == (1234, 80)


def test_tables_set_in_several_places_merge_key_by_key_the_higher_place_winning(clean_env, monkeypatch):
    """As the README says: a table (official_sites, endpoints …) set in the config file and the environment is
    the two merged, the environment's entry winning for a key both name; code overrides merge over both."""
    config = clean_env / "xdg" / "metasearch" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('official_sites = {"foo" = ["foo.com"], "bar" = ["old-bar.com"]}\n', encoding="utf-8")
    monkeypatch.setenv("METASEARCH_OFFICIAL_SITES", '{"bar": ["bar.com"]}')
    assert Settings.load().official_sites == {"foo": ["foo.com"], "bar": ["bar.com"]}
    assert Settings.load(official_sites={"baz": ["baz.com"]}).official_sites == {
        "foo": ["foo.com"], "bar": ["bar.com"], "baz": ["baz.com"]}


def test_explicit_config_file_and_section(clean_env):
    path = clean_env / "custom.toml"
    path.write_text('[metasearch]\nauthority_boost = 0.4\nendpoints = { bing = "http://127.0.0.1:9" }\n',
                    encoding="utf-8")
    loaded = Settings.load(path)
    assert loaded.authority_boost == 0.4 and loaded.endpoints == {"bing": "http://127.0.0.1:9"}


def test_api_keys_never_come_from_the_toml_file(clean_env):
    path = clean_env / "keys.toml"
    path.write_text('exa_api_key = "from-toml-1234"\n', encoding="utf-8")
    with pytest.raises(SearchError) as caught:  # refused with the way to do it, not silently ignored
        Settings.load(path)
    assert caught.value.code == "invalid_parameter" and "EXA_API_KEY" in caught.value.message
    assert "from-toml-1234" not in caught.value.message


def test_api_keys_from_environment_and_key_file(clean_env, monkeypatch):
    monkeypatch.setenv("EXA_API_KEY", "exa-secret-value-123")
    key_file = clean_env / "keys.env"
    key_file.write_text("export TAVILY_API_KEY='tavily-secret-456'\n# comment\n", encoding="utf-8")
    monkeypatch.setenv("METASEARCH_KEY_FILE", str(key_file))
    loaded = Settings.load()
    assert loaded.api_key("exa") == "exa-secret-value-123"
    assert loaded.api_key("tavily") == "tavily-secret-456"
    assert loaded.api_key("serper") is None


def test_config_command_masks_secrets(clean_env, monkeypatch, capsys):
    monkeypatch.setenv("SERPER_API_KEY", "serper-secret-789xyz")
    assert main(["config"]) == 0
    assert "serper-secret-789xyz" not in capsys.readouterr().out
    assert main(["config", "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert "serper-secret-789xyz" not in out
    assert data["serper_api_key"] == "set (masked)" and data["exa_api_key"] is None
    assert data["timeout_ms"] == 15000
    assert "serper-secret-789xyz" not in json.dumps(masked_settings(Settings.load()))
    assert "serper-secret-789xyz" not in repr(Settings.load())


def test_no_flag_takes_an_api_key():
    from plugin.surfaces.cli import build_parser

    help_text = build_parser().format_help() + "".join(
        action.format_help() if hasattr(action, "format_help") else ""
        for action in build_parser()._subparsers._group_actions[0].choices.values())
    assert "api-key" not in help_text.lower() and "api_key" not in help_text.lower()


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_schema_export_is_valid_json_schema(fmt, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    assert main(["schema", "--format", fmt]) == 0
    exported = json.loads(capsys.readouterr().out)
    schema = {"openai": lambda e: e["function"]["parameters"], "anthropic": lambda e: e["input_schema"],
              "mcp": lambda e: e["inputSchema"]}[fmt](exported)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"query": "rust async", "limit": 5, "engines": ["bing"], "time_range": "week"})
    assert not validator.is_valid({"limit": 5})
    assert not validator.is_valid({"query": "x", "engines": ["nosuch"]})
    if fmt == "mcp":
        jsonschema.Draft202012Validator.check_schema(exported["outputSchema"])


def test_engines_json_lists_every_engine(clean_env, capsys):
    assert main(["engines", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert {"duckduckgo-html", "bing", "bing-cn", "brave", "baidu", "wikipedia", "duckduckgo-lite", "yahoo",
            "startpage", "mojeek", "sogou", "so360", "exa", "tavily", "brave-api", "firecrawl", "serper",
            "searxng"} == set(rows)
    assert rows["bing"]["enabled"] and rows["bing"]["tier"] == "primary"
    assert not rows["tavily"]["enabled"] and "TAVILY_API_KEY" in rows["tavily"]["disabled_reason"]
    assert not rows["searxng"]["enabled"] and "METASEARCH_SEARXNG_URL" in rows["searxng"]["disabled_reason"]
    assert rows["firecrawl"]["tier"] == "fallback"
    assert set(rows["bing"]) >= {"tier", "weight", "region", "enabled", "disabled_reason", "cooldown"}


def test_engines_left_out_by_the_engines_setting_are_not_enabled(clean_env, capsys, monkeypatch):
    """`engines` (and the MCP search_engines tool) said enabled: true for engines the `engines` setting
    leaves out, which no search asks unless it names them."""
    monkeypatch.setenv("METASEARCH_ENGINES", "bing,mojeek,tavily")
    assert main(["engines", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["bing"]["enabled"] and rows["mojeek"]["enabled"] and rows["bing"]["disabled_reason"] is None
    assert not rows["brave"]["enabled"] and "not in the engines setting (METASEARCH_ENGINES)" in \
        rows["brave"]["disabled_reason"]
    assert not rows["tavily"]["enabled"] and "TAVILY_API_KEY" in rows["tavily"]["disabled_reason"]  # the key first
    assert main(["engines"]) == 0
    table = capsys.readouterr().out
    brave = next(line for line in table.splitlines() if line.startswith("brave "))
    assert " no " in brave and "not in the engines setting" in brave


def test_version_is_fast_path():
    result = subprocess.run([sys.executable, "-m", "plugin.surfaces.cli", "--version"], capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0 and result.stdout.strip() == f"metasearch {VERSION}"


def test_bad_config_files_are_invalid_parameter(clean_env, capsys):
    assert main(["--config", str(clean_env / "missing.toml"), "config"]) == 2
    assert "missing.toml does not exist" in capsys.readouterr().err
    assert main(["--config", str(clean_env), "config"]) == 2  # a directory: not "does not exist"
    assert f"config file {clean_env} is not a file" in capsys.readouterr().err
    assert main(["schema", "--json"]) == 0 and json.loads(capsys.readouterr().out)["type"] == "function"
    broken = clean_env / "broken.toml"
    broken.write_text("timeout_ms = = 3\n", encoding="utf-8")
    assert main(["--config", str(broken), "search", "x", "--json"]) == 2
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["error"]["code"] == "invalid_parameter"
    bad_value = clean_env / "bad.toml"
    bad_value.write_text('timeout_ms = "soon"\n', encoding="utf-8")
    assert main(["--config", str(bad_value), "search", "x", "--json"]) == 2


# ----- settings must not fail silently -----
def settings_problem(**values) -> SearchError:
    with pytest.raises(SearchError) as caught:
        Settings(**values)
    return caught.value


@pytest.mark.parametrize("values", [
    {"engines": ["bing", "duckduckgo"]}, {"engines": ["nope"]}, {"tiers": {"bnig": "fallback"}},
    {"weights": {"nope": 1.0}}, {"endpoints": {"altavista": "http://127.0.0.1:9"}},
    {"budget_per_minute": {"nope": 5}}, {"budget_per_minute": {"nope@http://127.0.0.1:9": 5}},
])
def test_unknown_engine_names_in_settings_are_unknown_engine(values, clean_env):
    problem = settings_problem(**values)
    field = next(iter(values))
    assert problem.code == "unknown_engine" and field in problem.message, problem.message
    assert problem.details["parameter"] == field


def test_unknown_engines_from_the_environment_and_toml(clean_env, monkeypatch, capsys):
    monkeypatch.setenv("METASEARCH_ENGINES", '["bing", "duckduckgo"]')
    assert main(["search", "hello", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "unknown_engine" and "duckduckgo" in error["message"]
    assert "METASEARCH_ENGINES" in error["message"] and "duckduckgo-html" in error["message"]  # the hint
    monkeypatch.setenv("METASEARCH_ENGINES", "bing, brave")  # comma-separated is accepted too
    assert Settings.load().engines == ["bing", "brave"]
    monkeypatch.delenv("METASEARCH_ENGINES")
    path = clean_env / "engines.toml"
    path.write_text('engines = ["nope"]\n', encoding="utf-8")
    assert main(["--config", str(path), "search", "hello", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "unknown_engine"


@pytest.mark.parametrize(("text", "named", "hint"), [
    ("timeout = 5000\n", "'timeout'", "'timeout_ms'"),
    ("limmit = 3\n", "'limmit'", "'limit'"),
    ("[metasearch]\nrrf = 3\n", "'rrf'", "'rrf_k'"),
])
def test_unknown_toml_keys_name_the_closest_valid_one(text, named, hint, clean_env, capsys):
    path = clean_env / "typo.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["--config", str(path), "config", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "invalid_parameter"
    assert named in error["message"] and f"did you mean {hint}" in error["message"] and str(path) in error["message"]


def test_top_level_keys_and_a_metasearch_table_do_not_shadow_each_other(clean_env):
    path = clean_env / "both.toml"
    path.write_text("limit = 3\n[metasearch]\nlimit = 5\n", encoding="utf-8")
    with pytest.raises(SearchError) as caught:
        Settings.load(path)
    assert caught.value.code == "invalid_parameter" and "[metasearch]" in caught.value.message
    assert "limit" in caught.value.message


def test_unknown_keyword_in_code_is_refused(clean_env):
    problem = settings_problem(limmit=3)
    assert problem.code == "invalid_parameter" and "did you mean 'limit'" in problem.message


@pytest.mark.parametrize("values", [
    {"weights": {"bing": -1}}, {"weights": {"bing": 0}}, {"weights": {"bing": 1e9}},
    {"off_region_weight": 1e-6}, {"off_region_weight": 0}, {"budget_per_minute": {"bing": -5}},
    {"log": "loud"},
    # no bound above, but no infinity or NaN either (a NaN passage weight made every score NaN)
    {"passage_bm25_k1": float("inf")}, {"passage_weights": {"bm25": float("nan")}},
    {"cooldown_max_s": float("inf")}, {"upstream_rps": {"bing": float("nan")}},
])
def test_weights_and_other_numbers_are_bounded(values, clean_env):
    problem = settings_problem(**values)
    field = next(iter(values))
    assert problem.code == "invalid_parameter" and field in problem.message, problem.message
    assert "Traceback" not in problem.message and "pydantic" not in problem.message


def test_overrides_merge_over_the_defaults(clean_env, monkeypatch):
    monkeypatch.setenv("METASEARCH_BUDGET_PER_MINUTE", '{"bing": 5}')
    monkeypatch.setenv("METASEARCH_WEIGHTS", '{"brave": 2.0}')
    monkeypatch.setenv("METASEARCH_TIERS", '{"mojeek": "primary"}')
    loaded = Settings.load()
    assert loaded.budget_per_minute["bing"] == 5
    assert loaded.budget_per_minute["brave"] == 30 and loaded.budget_per_minute["wikipedia"] == 200
    assert loaded.weights["brave"] == 2.0 and loaded.weights["baidu"] == 0.8
    assert loaded.tiers["mojeek"] == "primary" and loaded.tiers["yahoo"] == "fallback"
    monkeypatch.delenv("METASEARCH_BUDGET_PER_MINUTE")
    budgets = Settings(budget_per_minute={"bing@http://127.0.0.1:9": 3}).budget_per_minute
    assert budgets["bing@http://127.0.0.1:9"] == 3 and budgets["bing"] == 60


@pytest.mark.parametrize("url", ["http://[::1", "http://", "http://127.0.0.1:99999", "http://exa mple.com",
                                 "ftp://example.com", "bing.com"])
def test_endpoints_are_checked_wherever_they_come_from(url, clean_env, monkeypatch, capsys):
    problem = settings_problem(endpoints={"bing": url})
    assert problem.code == "invalid_parameter" and "endpoints" in problem.message
    monkeypatch.setenv("METASEARCH_ENDPOINTS", json.dumps({"bing": url}))
    assert main(["search", "hello", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "invalid_parameter" and "METASEARCH_ENDPOINTS" in error["message"]


@pytest.mark.parametrize("url", ["redis://localhost:abc", "localhost:6379", "redis://h:99999", "http://h",
                                 "redis://[::1"])
def test_a_malformed_redis_url_is_refused_at_start_up_naming_the_variable(url, clean_env, monkeypatch, capsys):
    monkeypatch.setenv("METASEARCH_REDIS_URL", url)
    assert main(["search", "hello", "--engines", "bing", "--endpoint", "bing=http://127.0.0.1:9", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "invalid_parameter" and "METASEARCH_REDIS_URL" in error["message"]
    with pytest.raises(SearchError) as caught:  # the Python API says the same
        Settings()
    assert "METASEARCH_REDIS_URL" in caught.value.message


def test_config_masks_credentials_inside_urls(clean_env, monkeypatch, capsys):
    monkeypatch.setenv("METASEARCH_REDIS_URL", "redis://default:S3cret@localhost:6379/0")
    monkeypatch.setenv("METASEARCH_SEARXNG_URL", "https://admin:hunter22@searx.example")
    monkeypatch.setenv("METASEARCH_ENDPOINTS", '{"bing": "http://proxyuser:pr0xyPass@127.0.0.1:9"}')
    monkeypatch.setenv("METASEARCH_BUDGET_PER_MINUTE", '{"bing@http://proxyuser:pr0xyPass@127.0.0.1:9": 3}')
    for args in (["config"], ["config", "--json"]):
        assert main(args) == 0
        out = capsys.readouterr().out
        for secret in ("S3cret", "hunter22", "pr0xyPass"):
            assert secret not in out
    data = json.loads(out)
    assert data["redis_url"] == "redis://****@localhost:6379/0"
    assert data["searxng_url"] == "https://****@searx.example"
    assert data["endpoints"] == {"bing": "http://****@127.0.0.1:9"}
    assert list(data["budget_per_minute"])[-1] == "bing@http://****@127.0.0.1:9"


def test_a_missing_key_file_is_refused_and_keys_from_one_show_as_set(clean_env, monkeypatch, capsys):
    """METASEARCH_KEY_FILE naming no file used to leave every keyed engine silently disabled (issue 21,
    item 13): it is invalid_parameter naming the variable, at start-up of every command. A key from a
    key file is in use, so `config` shows it set (masked), as one from the environment."""
    monkeypatch.setenv("METASEARCH_KEY_FILE", str(clean_env / "nonexistent.env"))
    with pytest.raises(SearchError) as caught:
        Settings.load()
    assert caught.value.code == "invalid_parameter" and "METASEARCH_KEY_FILE" in caught.value.message
    assert "does not exist" in caught.value.message
    for command in (["engines", "--json"], ["config", "--json"], ["search", "x", "--json"]):
        assert main(command) == 2
        error = json.loads(capsys.readouterr().out)["error"]
        assert error["code"] == "invalid_parameter" and "METASEARCH_KEY_FILE" in error["message"], command
    monkeypatch.setenv("METASEARCH_KEY_FILE", str(clean_env))  # a directory
    with pytest.raises(SearchError, match="is not a file"):
        Settings.load()

    key_file = clean_env / "keys.env"
    key_file.write_text("TAVILY_API_KEY=tavily-secret-4567\n", encoding="utf-8")
    monkeypatch.setenv("METASEARCH_KEY_FILE", str(key_file))
    assert main(["config", "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert data["tavily_api_key"] == "set (masked)" and data["exa_api_key"] is None
    assert data["keys_from_key_file"] == ["TAVILY_API_KEY"] and "tavily-secret-4567" not in out


def test_the_schemas_least_max_tokens_is_the_one_every_surface_takes():
    from plugin.reading import evidence
    from plugin.surfaces import schemas

    assert schemas.MIN_MAX_TOKENS == evidence.MIN_MAX_TOKENS
    for schema in (schemas.input_schema(), schemas.fetch_input_schema()):
        assert schema["properties"]["max_tokens"]["anyOf"][0]["minimum"] == evidence.MIN_MAX_TOKENS, schema


def test_the_schema_bounds_of_limit_and_read_agree_with_their_clamping():
    """limit and read are clamped, never refused: the schema declares no bound a strict client would
    refuse a value by, and the range each description names is the one the search clamps into (issue 21,
    item 17: the schema said maximum 20 for read while its text said 5, and 'clamped' beside a maximum)."""
    import re

    from plugin.pipeline.query import clamp_limit
    from plugin.reading.attach import check_read
    from plugin.surfaces.schemas import input_schema

    properties = input_schema()["properties"]
    settings = Settings()
    clamps = {"limit": lambda n: clamp_limit(n, 8), "read": lambda n: check_read(n, settings)}
    for name, clamp in clamps.items():
        schema = properties[name]
        assert not {"maximum", "exclusiveMaximum", "exclusiveMinimum"} & set(schema), schema
        low, high = map(int, re.search(r"(\d+)(?: \(default\))?(?:-| to )(\d+)", schema["description"]).groups())
        assert (clamp(high), clamp(high + 1), clamp(10**6)) == (high, high, high), name
        if name == "read":  # a negative count is refused, not clamped (issue 29 item 21): the schema says so
            assert schema["minimum"] == low == 0 and clamp(low) == low
            with pytest.raises(SearchError):
                clamp(low - 1)
        else:
            assert "minimum" not in schema
            assert (clamp(low), clamp(low - 1), clamp(-10**6)) == (low, low, low), name
        assert "clamped" in schema["description"]


@pytest.mark.parametrize("values", [
    {"authority_domains": ["python org"]}, {"authority_domains": ["docs.python.org/3/"]},
    {"official_sites": {"mylib": ["mylib"]}}, {"official_sites": {"mylib": ["my lib.dev"]}},
    {"authority_suffixes": ["gov uk"]}, {"authority_suffixes": ["g/v"]},
])
def test_a_domain_setting_that_is_no_domain_is_refused(values, clean_env):
    """A value no row's host can ever equal was taken silently: the boost it asked for never happened."""
    problem = settings_problem(**values)
    field = next(iter(values))
    assert problem.code == "invalid_parameter" and field in problem.message, problem.message


def test_domain_settings_are_compared_in_the_form_hosts_have(clean_env):
    """`Docs.Python.org`, `https://MyLib.dev/` and `bücher.de` were kept as written, and a row's host (lower-case
    ASCII, IDNA-encoded) never equalled them."""
    from plugin.pipeline.fusion import is_authority
    from plugin.pipeline.intent import Intent

    settings = Settings(authority_domains=["Docs.Python.org", "bücher.de"], official_sites={"mylib": ["https://MyLib.dev/"]},
                        authority_suffixes=[".GOV", "*.ac.jp"])
    assert settings.authority_domains == ["docs.python.org", "xn--bcher-kva.de"]
    assert settings.official_sites == {"mylib": ["mylib.dev"]} and settings.authority_suffixes == ["gov", "ac.jp"]
    reference = Intent(reference=True)
    assert is_authority("docs.python.org", "python.org", reference, settings)
    assert is_authority("www.xn--bcher-kva.de", "xn--bcher-kva.de", reference, settings)
    assert Settings().official_sites["python"] == ["python.org"]  # the defaults pass as they are
