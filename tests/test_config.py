"""Configuration precedence, secret masking, schema export and the engines listing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
    return tmp_path


def test_precedence_defaults_toml_env_flags(clean_env, monkeypatch):
    assert Settings.load().timeout_ms == 15000 and Settings.load().rrf_k == 60
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


def test_explicit_config_file_and_section(clean_env):
    path = clean_env / "custom.toml"
    path.write_text('[metasearch]\nauthority_boost = 0.4\nendpoints = { bing = "http://127.0.0.1:9" }\n',
                    encoding="utf-8")
    loaded = Settings.load(path)
    assert loaded.authority_boost == 0.4 and loaded.endpoints == {"bing": "http://127.0.0.1:9"}


def test_api_keys_never_come_from_the_toml_file(clean_env):
    path = clean_env / "keys.toml"
    path.write_text('exa_api_key = "from-toml-1234"\n', encoding="utf-8")
    assert Settings.load(path).api_key("exa") is None


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


def test_version_is_fast_path():
    result = subprocess.run([sys.executable, "-m", "plugin.surfaces.cli", "--version"], capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0 and result.stdout.strip() == f"metasearch {VERSION}"


def test_bad_config_files_are_invalid_parameter(clean_env, capsys):
    assert main(["--config", str(clean_env / "missing.toml"), "config"]) == 2
    broken = clean_env / "broken.toml"
    broken.write_text("timeout_ms = = 3\n", encoding="utf-8")
    assert main(["--config", str(broken), "search", "x", "--json"]) == 2
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["error"]["code"] == "invalid_parameter"
    bad_value = clean_env / "bad.toml"
    bad_value.write_text('timeout_ms = "soon"\n', encoding="utf-8")
    assert main(["--config", str(bad_value), "search", "x", "--json"]) == 2
