"""Every knob in one typed model, with the documented defaults.

Precedence (lowest first): defaults < TOML file < environment (`METASEARCH_*`,
and the engines' own key variables such as `EXA_API_KEY`) < explicit arguments
(command-line flags). API keys are read from the environment or a key file only.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import os
import re
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal, Sequence

from pydantic import AliasChoices, Field, PrivateAttr, SecretStr, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError, TomlConfigSettingsSource

from engines import ENGINES
from engines.base import SafeSearch, Tier
from plugin.errors import INVALID_PARAMETER, UNKNOWN_ENGINE, SearchError, engine_names_with_hints

# Authority means official for this query (plugin/pipeline/intent.py, plugin/pipeline/fusion.py):
# 1. the sites of what the query names, from this table (name, as a whole word, → domains; subdomains
#    count: python.org covers docs.python.org). Curated from general knowledge of where each project,
#    product or standard publishes itself. Setting `official_sites` replaces the whole table (README):
#    to add a name, give the table with it ({**DEFAULT_OFFICIAL_SITES, "mylib": ("mylib.dev",)}).
# 2. for a query that is only a name, the site spelled like it (`official_from_name`).
# 3. for a query asking for documentation or a package, DEFAULT_AUTHORITY_DOMAINS below.
# A top-level domain says who runs a site, not that it is official for the query: no suffix counts by
# default (`authority_suffixes` is there for users who want one to count everywhere).
DEFAULT_OFFICIAL_SITES: dict[str, tuple[str, ...]] = {
    # languages and runtimes
    "python": ("python.org",), "cpython": ("python.org",), "typescript": ("typescriptlang.org",),
    "javascript": ("developer.mozilla.org", "tc39.es"), "ecmascript": ("tc39.es", "ecma-international.org"),
    "node.js": ("nodejs.org",), "nodejs": ("nodejs.org",), "deno": ("deno.com", "deno.land"),
    "rust": ("rust-lang.org",), "golang": ("go.dev", "golang.org"), "go": ("go.dev", "golang.org"),
    "java": ("openjdk.org", "docs.oracle.com", "java.com"), "openjdk": ("openjdk.org",),
    "kotlin": ("kotlinlang.org",), "swift": ("swift.org",), "php": ("php.net",), "ruby": ("ruby-lang.org",),
    "perl": ("perl.org",), "haskell": ("haskell.org",), "scala": ("scala-lang.org",),
    "elixir": ("elixir-lang.org",), "erlang": ("erlang.org",), "julia": ("julialang.org",), "dart": ("dart.dev",),
    "lua": ("lua.org",), "zig": ("ziglang.org",), "r": ("r-project.org",), "c++": ("isocpp.org", "cppreference.com"),
    "webassembly": ("webassembly.org",), "wasm": ("webassembly.org",),
    "html": ("whatwg.org", "developer.mozilla.org"), "css": ("w3.org", "developer.mozilla.org"),
    # frameworks and libraries
    "react": ("react.dev", "reactjs.org"), "react native": ("reactnative.dev",), "vue": ("vuejs.org",),
    "vue.js": ("vuejs.org",), "vuejs": ("vuejs.org",), "angular": ("angular.dev", "angular.io"),
    "svelte": ("svelte.dev",), "next.js": ("nextjs.org",), "nextjs": ("nextjs.org",), "nuxt": ("nuxt.com",),
    "tailwind": ("tailwindcss.com",), "tailwindcss": ("tailwindcss.com",), "bootstrap": ("getbootstrap.com",),
    "jquery": ("jquery.com",), "express.js": ("expressjs.com",), "expressjs": ("expressjs.com",),
    "django": ("djangoproject.com",), "flask": ("flask.palletsprojects.com",),
    "fastapi": ("fastapi.tiangolo.com",), "pydantic": ("pydantic.dev",), "numpy": ("numpy.org",),
    "pandas": ("pandas.pydata.org",), "scipy": ("scipy.org",), "matplotlib": ("matplotlib.org",),
    "scikit-learn": ("scikit-learn.org",), "sklearn": ("scikit-learn.org",), "pytorch": ("pytorch.org",),
    "tensorflow": ("tensorflow.org",), "keras": ("keras.io",), "hugging face": ("huggingface.co",),
    "huggingface": ("huggingface.co",), "langchain": ("langchain.com",), "llamaindex": ("llamaindex.ai",),
    "httpx": ("python-httpx.org",), "aiohttp": ("aiohttp.org",), "tokio": ("tokio.rs",),
    "spring boot": ("spring.io",), "spring framework": ("spring.io",), "ruby on rails": ("rubyonrails.org",),
    "laravel": ("laravel.com",), "dotnet": ("dotnet.microsoft.com", "learn.microsoft.com"),
    "tauri": ("tauri.app",), "flutter": ("flutter.dev",), "godot": ("godotengine.org",), "qt": ("qt.io",),
    "gtk": ("gtk.org",), "webpack": ("webpack.js.org",), "vite": ("vite.dev", "vitejs.dev"),
    "eslint": ("eslint.org",), "graphql": ("graphql.org",), "grpc": ("grpc.io",),
    "openapi": ("openapis.org", "swagger.io"),
    # databases, infrastructure, tools
    "postgresql": ("postgresql.org",), "postgres": ("postgresql.org",), "mysql": ("mysql.com",),
    "mariadb": ("mariadb.org", "mariadb.com"), "sqlite": ("sqlite.org",), "mongodb": ("mongodb.com",),
    "redis": ("redis.io",), "elasticsearch": ("elastic.co",), "kafka": ("kafka.apache.org",),
    "apache spark": ("spark.apache.org",), "nginx": ("nginx.org", "nginx.com"), "docker": ("docker.com",),
    "kubernetes": ("kubernetes.io",), "k8s": ("kubernetes.io",), "helm": ("helm.sh",),
    "terraform": ("terraform.io", "developer.hashicorp.com"), "ansible": ("ansible.com",),
    "prometheus": ("prometheus.io",), "grafana": ("grafana.com",), "git": ("git-scm.com",),
    "github": ("github.com",), "gitlab": ("gitlab.com",), "linux kernel": ("kernel.org",),
    "ubuntu": ("ubuntu.com",), "debian": ("debian.org",), "fedora": ("fedoraproject.org",),
    "arch linux": ("archlinux.org",), "archlinux": ("archlinux.org",), "nixos": ("nixos.org",),
    "vim": ("vim.org",), "neovim": ("neovim.io",), "vscode": ("code.visualstudio.com",),
    "vs code": ("code.visualstudio.com",), "visual studio code": ("code.visualstudio.com",),
    "homebrew": ("brew.sh",), "npm": ("npmjs.com",), "pip": ("pip.pypa.io",), "pypi": ("pypi.org",),
    "aws": ("aws.amazon.com",), "amazon web services": ("aws.amazon.com",),
    "azure": ("azure.microsoft.com", "learn.microsoft.com"), "google cloud": ("cloud.google.com",),
    "gcp": ("cloud.google.com",), "cloudflare": ("cloudflare.com",), "vercel": ("vercel.com",),
    "netlify": ("netlify.com",),
    # AI products and protocols
    "openai": ("openai.com",), "chatgpt": ("openai.com", "chatgpt.com"), "anthropic": ("anthropic.com",),
    "claude": ("anthropic.com", "claude.com", "claude.ai"), "deepseek": ("deepseek.com",),
    "mistral": ("mistral.ai",), "ollama": ("ollama.com",), "model context protocol": ("modelcontextprotocol.io",),
    # standards and platforms
    "rfc": ("rfc-editor.org", "ietf.org"), "w3c": ("w3.org",), "unicode": ("unicode.org",),
    "oauth": ("oauth.net",), "google": ("google.com", "blog.google", "about.google", "abc.xyz"),
    "microsoft": ("microsoft.com",),
    # Chinese platforms and projects
    "飞桨": ("paddlepaddle.org.cn",), "paddlepaddle": ("paddlepaddle.org.cn",), "微信": ("weixin.qq.com",),
    "鸿蒙": ("harmonyos.com", "developer.huawei.com"), "harmonyos": ("harmonyos.com", "developer.huawei.com"),
}
# Official for every query asking for documentation or a package: standards bodies, package registries
# and the language references publishers defer to.
DEFAULT_AUTHORITY_DOMAINS: tuple[str, ...] = (
    # standards bodies
    "w3.org", "whatwg.org", "ietf.org", "rfc-editor.org", "iso.org", "ecma-international.org", "tc39.es",
    "unicode.org", "khronos.org", "opengroup.org",
    # package registries and their documentation hosts
    "pypi.org", "npmjs.com", "crates.io", "docs.rs", "pkg.go.dev", "rubygems.org", "packagist.org", "nuget.org",
    "central.sonatype.com", "hex.pm", "pub.dev", "cran.r-project.org", "metacpan.org", "hackage.haskell.org",
    "anaconda.org", "formulae.brew.sh", "hub.docker.com", "jsr.io", "cocoapods.org", "swiftpackageindex.com",
    # references and project documentation hosts
    "developer.mozilla.org", "learn.microsoft.com", "cppreference.com", "docs.oracle.com", "readthedocs.io",
    "readthedocs.org",
)

# Searches per minute per scraped engine, shared through the state store: enough for one busy agent,
# low enough that a fleet behind one address does not earn a ban. Keyed APIs enforce their own quotas.
DEFAULT_BUDGETS: dict[str, int] = {
    "duckduckgo-html": 30, "duckduckgo-lite": 30, "bing": 60, "bing-cn": 60, "brave": 30, "baidu": 30,
    "yahoo": 30, "startpage": 20, "mojeek": 20, "sogou": 20, "so360": 20, "wikipedia": 200,
}

# Header names whose values are credentials (masked in `metasearch config`, redacted everywhere).
SECRET_HEADER = re.compile(r"auth|token|key|cookie|secret|session|password", re.I)

# Variables that hold API keys, by engine; read from the environment (never from flags).
KEY_FIELDS: dict[str, str] = {
    name: engine.facts.key_env for name, engine in ENGINES.items() if engine.facts.key_env
}


def _default_tiers() -> dict[str, Tier]:
    return {name: engine.facts.tier for name, engine in ENGINES.items()}


def _default_weights() -> dict[str, float]:
    return {name: engine.facts.weight for name, engine in ENGINES.items()}


def default_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "metasearch" / "config.toml"


# Bounds that keep ranking sane: an engine weight of 1e-6 (or an off-region factor that small) would make
# the weighted round-robin run millions of empty rounds before that engine gets a slot.
WEIGHT_BOUNDS = (0.05, 20.0)
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def endpoint_url(url: object) -> str:
    """`url` if it can stand in for an engine's scheme, host and port; ValueError saying why otherwise
    (quoting the URL with any credentials in it masked)."""
    from yarl import URL

    from plugin.infra.secrets import mask_url

    if not isinstance(url, str) or not url.strip():
        raise ValueError("must be an http(s) URL such as http://127.0.0.1:8080")
    url = url.strip()
    shown = mask_url(url)
    if shown == "[unparseable URL]":  # still say which URL, its credentials (if any) masked
        scheme, sep, rest = url.partition("://")
        shown = f"{scheme}{sep}****@{rest.rsplit('@', 1)[1]}" if "@" in rest else url
    shown = repr(shown)
    try:
        parsed = URL(url)
        port = parsed.port  # out-of-range ports fail here
    except (ValueError, TypeError, UnicodeError) as exc:
        raise ValueError(f"{shown} is not a URL ({exc})") from None
    if parsed.scheme not in ("http", "https"):
        raise ValueError(f"{shown} must start with http:// or https://")
    if not parsed.raw_host:
        raise ValueError(f"{shown} has no host")
    try:
        URL.build(scheme=parsed.scheme, host=parsed.raw_host, port=port)  # a host yarl would refuse to send to
    except (ValueError, UnicodeError) as exc:
        raise ValueError(f"{shown} has an invalid host ({exc})") from None
    return url


def normal_endpoint(url: object, *, path_allowed: bool = False) -> str:
    """An endpoint in one spelling, so that one upstream has one key (cooldowns, budgets, admission, the
    answer cache) however it is written: scheme and host in lower case, the default port and a trailing
    slash left out (`HTTP://Mirror.Example:80/` is `http://mirror.example`). An endpoint replaces an
    engine's scheme, host and port: a path, a query or a fragment would be dropped silently, so they are
    refused (ValueError), save a path where `path_allowed` (searxng's endpoint is its instance URL)."""
    from yarl import URL

    from plugin.infra.secrets import mask_url

    text = endpoint_url(url)
    parsed = URL(text)
    shown = repr(mask_url(text))
    if parsed.raw_query_string or parsed.raw_fragment:
        raise ValueError(f"{shown} has a query or fragment; an endpoint replaces the engine's scheme, host and "
                         "port only: give scheme://host:port")
    path = parsed.raw_path.rstrip("/")
    if path and not path_allowed:
        raise ValueError(f"{shown} has a path ({path[:60]}), which would be dropped; an endpoint replaces the "
                         "engine's scheme, host and port only: give scheme://host:port (searxng's endpoint, its "
                         "instance URL, may have a path)")
    host = parsed.raw_host or ""
    host = f"[{host}]" if ":" in host else host
    port = "" if parsed.explicit_port is None or parsed.is_default_port() else f":{parsed.explicit_port}"
    user = ""
    if parsed.raw_user is not None:
        user = parsed.raw_user + (f":{parsed.raw_password}" if parsed.raw_password is not None else "") + "@"
    return f"{parsed.scheme}://{user}{host}{port}{path}"


def upstream_key(key: str) -> str:
    """`engine` or `engine@endpoint` (a budget, rate or cooldown key) with its endpoint in one spelling."""
    name, at, endpoint = key.strip().partition("@")
    name = name.strip().lower()
    return f"{name}@{normal_endpoint(endpoint, path_allowed=name == 'searxng')}" if at else name


def parse_endpoints(values: Sequence[str] | None) -> dict[str, str]:
    """`NAME=URL` flags (`--endpoint`) as a dict; bad syntax or URL is invalid_parameter, an engine that
    does not exist unknown_engine."""
    endpoints: dict[str, str] = {}
    for value in values or ():
        name, sep, url = value.partition("=")
        name = name.strip().lower()
        if not sep or not name:
            raise SearchError(INVALID_PARAMETER, f"--endpoint takes NAME=http(s)://host:port, got {value!r}",
                              parameter="endpoint")
        try:
            endpoints[name] = normal_endpoint(url, path_allowed=name == "searxng")
        except ValueError as exc:
            raise SearchError(INVALID_PARAMETER, f"--endpoint {name}: {exc}", parameter="endpoint") from None
    unknown = [name for name in endpoints if name not in ENGINES]
    if unknown:
        raise SearchError(UNKNOWN_ENGINE, f"--endpoint for unknown engine(s): "
                          f"{engine_names_with_hints(unknown, ENGINES)}; known "
                          f"engines: {', '.join(sorted(ENGINES))}", unknown=unknown, known=sorted(ENGINES))
    return endpoints


def _check_engine_names(names: Sequence[str]) -> None:
    unknown = [name for name in names if name not in ENGINES]
    if unknown:
        raise PydanticCustomError("unknown_engine", "unknown engine(s): {unknown}; known engines: {known}",
                                  {"unknown": engine_names_with_hints(unknown, ENGINES),
                                   "known": ", ".join(sorted(ENGINES))})


# A domain already in the form hosts are compared in (lower-case ASCII labels): the defaults, most values.
_PLAIN_DOMAIN = re.compile(r"(?:(?!-)[a-z0-9_-]{1,63}(?<!-)\.)+[a-z]{2,63}")


def _domain_list(name: str, values: Sequence[str], *, suffixes: bool = False) -> list[str]:
    """Domains (or, with `suffixes`, host suffixes such as gov or .gov.uk) in the lower-case ASCII form
    rows' hosts are compared in (plugin.pipeline.domains): `Docs.Python.org`, `https://bücher.de/` or
    `python org` would otherwise never match a row, and nothing would say so."""
    checked = []
    for value in values:
        text = value.strip().lstrip("*.") if suffixes else value
        if not _PLAIN_DOMAIN.fullmatch(f"x.{text}" if suffixes else text):
            from plugin.pipeline.domains import check_domain

            try:  # a scheme, a leading *. or a trailing / are forgiven; IDNA names are encoded
                text = check_domain(name, f"x.{text}" if suffixes else text).removeprefix("x." if suffixes else "")
            except SearchError:
                kind = "host suffixes such as gov or gov.uk" if suffixes else "domains such as python.org"
                raise ValueError(f"must hold {kind}, got {str(value)[:60]!r}") from None
        checked.append(text)
    return list(dict.fromkeys(checked))


def _json_list(text: str) -> Any:
    """A variable's value written as JSON (`["a", "b"]`), parsed; ValueError says it is not JSON."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not a JSON list: {exc}") from None


def _redis_url(url: str) -> str:
    from yarl import URL

    try:
        parsed = URL(url)
        parsed.port  # noqa: B018 - an out-of-range port fails here
    except (ValueError, TypeError, UnicodeError) as exc:
        raise ValueError(f"not a URL ({exc})") from None
    if parsed.scheme not in ("redis", "rediss", "unix"):
        raise ValueError("must start with redis://, rediss:// or unix://")
    if parsed.scheme != "unix" and not parsed.raw_host:
        raise ValueError("has no host (redis://host:6379/0)")
    try:  # redis-py's own reading of the URL, when the extra is installed
        from redis.connection import parse_url
    except ImportError:
        return url
    try:
        parse_url(url)
    except (ValueError, TypeError) as exc:
        raise ValueError(str(exc)) from None
    return url


def _toml_section(data: dict[str, Any], path: Path, fields: dict[str, Any]) -> dict[str, Any]:
    """The settings of a config file: top-level keys or a [metasearch] table (not both), every key known."""
    section = data
    if isinstance(data.get("metasearch"), dict):
        others = sorted(k for k in data if k != "metasearch")
        if others:
            raise SearchError(INVALID_PARAMETER, f"config file {path}: settings both at top level "
                              f"({', '.join(others)}) and in a [metasearch] table; keep one of them",
                              parameter="config")
        section = data["metasearch"]
    for key in section:
        if key.lower().endswith("_api_key"):
            raise SearchError(INVALID_PARAMETER, f"config file {path}: {key}: API keys are not read from a "
                              f"config file; set {key.upper()} in the environment or in the METASEARCH_KEY_FILE "
                              "file", parameter=key)
        if key not in fields:
            valid = [name for name in fields if not name.endswith("_api_key")]
            close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else f"; valid keys: {', '.join(sorted(valid))}"
            raise SearchError(INVALID_PARAMETER, f"config file {path}: unknown key {key!r}{hint}", parameter=key)
    return section


class _TomlSource(TomlConfigSettingsSource):
    """pydantic-settings' TOML source, strict: unreadable TOML, unknown keys, a file with settings both at
    top level and in [metasearch], and API keys (environment or key file only) are errors."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path | None):
        self.fields = settings_cls.model_fields  # the base class reads the file before it keeps settings_cls
        super().__init__(settings_cls, toml_file=path)

    def _read_file(self, file_path: Path) -> dict[str, Any]:
        try:
            data = super()._read_file(file_path)
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
            raise SearchError(INVALID_PARAMETER, f"config file {file_path} is not valid TOML: {exc}",
                              parameter="config") from None
        return _toml_section(data, file_path, self.fields)


def _variable(field: str) -> str:
    """The environment variable a field is read from (API keys: their own names, without the prefix)."""
    return field.upper() if field.endswith("_api_key") else f"METASEARCH_{field.upper()}"


def _in_environment(variable: str) -> bool:
    return any(name.upper() == variable for name in os.environ)  # read case-insensitively, as pydantic does


def _file_keys(path: Path | None) -> set[str]:
    """The setting names a config file holds (top level or its [metasearch] table)."""
    if path is None:
        return set()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return set()
    section = data.get("metasearch") if isinstance(data.get("metasearch"), dict) else data
    return set(section)


_PARSE_FAILURE = re.compile(r'field "(?P<field>\w+)" from source "(?P<source>\w+)"')


def _not_json(exc: SettingsError) -> SearchError:
    """A variable that is not valid JSON (METASEARCH_ENDPOINTS='not json'), named plainly."""
    found = _PARSE_FAILURE.search(str(exc))
    field = found.group("field") if found else None
    if field is None or field not in Settings.model_fields:
        return SearchError(INVALID_PARAMETER, f"invalid setting: {exc}" + (f" ({exc.__cause__})" if exc.__cause__ else ""))
    annotation = str(Settings.model_fields[field].annotation)
    shape = ('a JSON object, such as {"name": value}' if annotation.startswith("dict")
             else 'a JSON list, such as ["a", "b"]' if "list" in annotation else "valid JSON")
    why = f" ({exc.__cause__})" if exc.__cause__ else ""
    where = (_variable(field) if found.group("source").startswith("Env") or _in_environment(_variable(field))
             else field)
    return SearchError(INVALID_PARAMETER, f"invalid setting: {where} is not valid JSON{why}; it must be {shape}",
                       parameter=field)


def settings_error(exc: ValidationError | SettingsError, given: Sequence[str] = ()) -> SearchError:
    """A settings problem as the error every surface reports, naming the field where its value came from:
    the argument (`given`: names passed in code or by a flag), its environment variable, or the config
    file and key; unknown_engine for engine names that do not exist, invalid_parameter otherwise."""
    if isinstance(exc, SettingsError):  # a variable that is not valid JSON, e.g. METASEARCH_WEIGHTS='bing=2'
        return _not_json(exc)
    path = _CONFIG_PATH.get()
    file_keys: set[str] | None = None
    problems, fields, code = [], [], INVALID_PARAMETER
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else "settings"
        fields.append(field)
        where = ".".join(map(str, error["loc"][1:]))
        env = _variable(field)
        if error["type"] == "unknown_engine":
            code = UNKNOWN_ENGINE
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(field, list(Settings.model_fields), n=1, cutoff=0.6)
            problems.append(f"unknown setting {field!r}" + (f"; did you mean {close[0]!r}?" if close else ""))
            continue
        message = error["msg"].removeprefix("Value error, ")
        name = f"{field}{'.' + where if where else ''}"
        if field in given:  # precedence: arguments, then the environment, then the file
            problems.append(f"{name}: {message}")
            continue
        if _in_environment(env):
            problems.append(f"{name} ({env}): {message}")
            continue
        if file_keys is None:
            file_keys = _file_keys(path)
        problems.append(f"config file {path}: {name}: {message}" if field in file_keys else f"{name}: {message}")
    return SearchError(code, "invalid setting: " + "; ".join(problems), parameter=", ".join(dict.fromkeys(fields)))


# Variables with the prefix that are not settings but are read on purpose: the corpora of the benches and
# tests, the Chromium the fingerprint bench opens, the Redis of the store tests.
OTHER_VARIABLES = frozenset({"METASEARCH_CORPUS", "METASEARCH_ARTICLE_CORPUS", "METASEARCH_CHROMIUM",
                             "METASEARCH_TEST_REDIS_URL"})


def _setting_variables() -> dict[str, str]:
    """Every variable a setting is read from -> the setting: METASEARCH_<FIELD>, or its aliases."""
    from pydantic import AliasChoices

    variables = {}
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias] if isinstance(alias, str) else []
        for choice in choices:
            if isinstance(choice, str) and choice.upper() != name.upper():
                variables[choice.upper()] = name
        variables.setdefault(_variable(name), name)
    return variables


def misspelt_variables(environ=None) -> list[str]:
    """A warning for each METASEARCH_* variable that no setting reads (a typo is otherwise silently
    ignored), naming the closest setting's variable."""
    environ = os.environ if environ is None else environ
    variables = _setting_variables()
    prefixed = sorted(v for v in variables if v.startswith("METASEARCH_"))
    warnings = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith("METASEARCH_") or upper in variables or upper in OTHER_VARIABLES:
            continue
        bare = upper.removeprefix("METASEARCH_")
        if bare in variables:  # METASEARCH_EXA_API_KEY: keys are read from EXA_API_KEY
            warnings.append(f"{name} is not read: the key comes from {bare} (or METASEARCH_KEY_FILE)")
            continue
        close = difflib.get_close_matches(upper, prefixed, n=1, cutoff=0.6)
        warnings.append(f"{name} is no setting and is ignored" + (f"; did you mean {close[0]}?" if close else ""))
    return warnings


class Settings(BaseSettings):
    _warnings: list[str] = PrivateAttr(default_factory=list)
    model_config = SettingsConfigDict(
        env_prefix="METASEARCH_", extra="forbid", validate_default=True, populate_by_name=True,
        # A rejected value may be a proxy URL with its password, or a key: errors never quote it.
        hide_input_in_errors=True,
        # inf and nan are no deadline, weight or boost: a NaN weight made every passage score NaN.
        allow_inf_nan=False,
    )

    # --- transport ---
    timeout_ms: int = Field(15000, ge=50, le=120000,
                            description="Per-engine deadline for the whole exchange (the engine's own time: "
                                        "time queued for admission is not counted)")
    max_response_bytes: int = Field(4_000_000, ge=10_000, description="Response-size cap, enforced while reading")
    max_redirects: int = Field(5, ge=0, le=20)
    pool_limit: int = Field(100, ge=1, description="Requests out at once per process")
    pool_idle_s: float = Field(60, gt=0, le=86400, description="How long the browser transport keeps its connection "
                                                                "pool after its last request; the next request opens "
                                                                "a fresh one (an open pool wakes ten times a second)")
    # --- admission: politeness per upstream, queue time kept apart (plugin/infra/admission.py) ---
    upstream_concurrency: int = Field(8, ge=1, le=1000, description="Requests out at once per upstream")
    upstream_rps: dict[str, float] = Field(
        default_factory=dict,
        description="Engine (or engine@endpoint) -> requests started per second at most (none: no rate limit)")
    admission_wait_ms: int = Field(
        60000, ge=0, le=600000,
        description="Longest a request waits for admission; then the engine is reported queued (not asked). "
                    "A search never waits past its own deadlines for it")
    # --- when a search answers (plugin/pipeline/tiers.py) ---
    deadline_ms: int = Field(
        5000, ge=100, le=600000,
        description="Overall deadline of a search, both tiers, from its first request out (METASEARCH_DEADLINE_MS)")
    quorum: float = Field(0.5, gt=0, le=1,
                          description="Share of the engines asked or benched (at most those asked) that must have "
                                      "answered before an early answer")
    grace_ms: int = Field(400, ge=0, le=60000,
                          description="Wait after a quorum answered and `limit` rows were kept, for the rest")
    soft_deadline_ms: int = Field(
        2500, ge=0, le=600000,
        description="Time after which a search answers once it has `limit` rows, quorum or not, or with fewer "
                    "once a quorum answered (+ grace); it starts the fallback tier then when it has fewer")
    workers: int = Field(1, ge=1, le=64, description="Processes `metasearch serve` runs on one port")
    endpoints: dict[str, str] = Field(
        default_factory=dict,
        description="Engine name -> URL whose scheme, host and port replace the engine's own (mirrors, proxies, tests)",
    )
    proxy: str | None = Field(
        None, repr=False, description="Proxy for every engine: http://, https:// or socks5:// (socks needs the socks extra); "
                          "credentials in it are never shown")
    proxies: dict[str, str] = Field(
        default_factory=dict, repr=False, description="Engine name -> its own proxy URL, or 'direct' (METASEARCH_PROXIES as JSON)")
    proxy_from_env: bool = Field(
        True, description="Use HTTPS_PROXY / HTTP_PROXY / ALL_PROXY when no proxy is set; NO_PROXY hosts go direct")
    ca_bundle: Path | None = Field(
        None, validation_alias=AliasChoices("ca_bundle", "METASEARCH_CA_BUNDLE", "ca_file", "METASEARCH_CA_FILE"),
        description="A PEM file of extra root certificates trusted for engines and page reads besides the "
                    "system's, e.g. a TLS-inspecting corporate proxy's (METASEARCH_CA_BUNDLE; certificates "
                    "are always checked)")
    transport: Literal["browser", "plain"] = Field(
        "browser", description="browser: scraped engines and page reads present the TLS and HTTP/2 fingerprint "
                               "of the browser their headers name (curl_cffi); plain: every request over aiohttp")
    user_agent: str | None = Field(
        None, description="User-Agent for every engine instead of each engine's own default")
    extra_headers: dict[str, str] = Field(
        default_factory=dict, repr=False, description="Headers added to every request, over the engine's own "
                                          "(METASEARCH_EXTRA_HEADERS as JSON)")

    # --- engines ---
    engines: Annotated[list[str] | None, NoDecode] = Field(
        None, description="Default engine selection (None: every enabled engine); JSON list or comma-separated")
    tiers: dict[str, Tier] = Field(default_factory=_default_tiers,
                                   description="Engine -> tier; merged over each engine's own tier")
    weights: dict[str, float] = Field(default_factory=_default_weights,
                                      description=f"Engine -> interleave weight ({WEIGHT_BOUNDS[0]}-{WEIGHT_BOUNDS[1]}); "
                                                  "merged over each engine's own weight")
    region: str | None = Field(None, description="Region/language for engines, e.g. en-US, zh-CN")
    safesearch: SafeSearch = "moderate"
    searxng_url: str | None = Field(None, description="Self-hosted SearXNG instance (METASEARCH_SEARXNG_URL)")

    # --- cooldown after failure (seconds) ---
    cooldown_timeout_s: float = Field(30, ge=0, description="After a timeout, 5xx or other error")
    cooldown_ratelimited_s: float = Field(300, ge=0, description="After HTTP 429 or a rate-limit page")
    cooldown_blocked_s: float = Field(1800, ge=0, description="After a CAPTCHA / challenge / consent page")
    cooldown_growth: float = Field(2.0, ge=1.0, description="Window multiplier per consecutive failure")
    cooldown_max_s: float = Field(6 * 3600, ge=0, description="Upper bound, also for Retry-After")
    cooldown_memory_s: float = Field(
        24 * 3600, ge=0, description="A failure this long after the last window ended counts as the first again")

    # --- relevance gate and retry ---
    gate_min_units: int = Field(2, ge=1, description="CJK gate: overlap units a row needs")
    core_word_retry: bool = Field(True, description="Retry a long CJK query once with its core words")
    core_word_min_chars: int = Field(8, ge=2, description="A CJK query this long (in CJK characters) is 'long'")

    # --- ranking ---
    limit: int = Field(8, ge=1, le=20, description="Rows returned by default (requests are clamped to 1-20)")
    # Scores are in units of one engine's top vote: a row's vote from an engine is
    # (rrf_k + 1) / (rrf_k + place), 1.0 for its first row, so a freshness boost of 0.2 is a fifth of it;
    # authority multiplies the row's own votes. rrf_k and trust were chosen by 5-fold cross-validation on
    # the multi-engine lists (README, "Ranking"); the boosts stay below what a second engine's top-8 vote
    # adds (consensus first).
    rrf_k: float = Field(2, gt=0, description="Reciprocal rank fusion constant: how slowly a vote fades with the "
                                              "row's place in its engine's list")
    authority_boost: float = Field(
        0.4, ge=0, description="An official site's row for the query counts its votes (1 + this) times")
    # coverage_boost's ceiling keeps consensus first with every boost at once (tests/test_ranking.py).
    coverage_boost: float = Field(
        0.35, ge=0, le=0.35, description="A row's votes (after authority) count (1 + this × the share of the "
                                         "query's words its title, snippet and URL hold) times, when two or "
                                         "more engines answered")
    freshness_boost: float = Field(
        0.2, ge=0, description="Added × freshness (1 today, 0 at freshness_days) on timely queries, in top votes")
    freshness_days: float = Field(30, gt=0, description="Age at which freshness reaches 0")
    freshness_scope: Literal["all", "timely"] = Field(
        "timely", description="timely: freshness counts only for queries about recent things (news category, "
                              "a time operator, words such as latest/new/today/最新/发布/hôm nay, a year near now); "
                              "all: for every query")
    same_index_discount: float = Field(
        1.0, ge=0, le=1, description="Weight of a further vote from an engine sharing an index already counted"
    )
    # Query-dependent trust (fusion.agreement_trust): an engine whose list the others back gets more say.
    trust_strength: float = Field(
        0.5, ge=0, le=4, description="How far each engine's votes follow how much the other engines' lists agree "
                                     "with its list for this query (0: every engine as weighted)")
    trust_floor: float = Field(0.25, gt=0, le=10, description="Agreement every engine starts from, so that an engine "
                                                                "nobody backs keeps some say")
    trust_depth: int = Field(10, ge=1, le=100, description="Rows of each engine's list its agreement is measured on")
    lone_freshness_places: int = Field(
        1, ge=0, le=20, description="When one engine alone answered: places a recent row (from the first half of "
                                    "freshness_days) may rise above older ones (its own order stands otherwise)")
    max_per_domain: int | None = Field(
        None, ge=1, description="Rows of one domain before the others get a turn (None: no limit)")
    off_region_weight: float = Field(0.5, ge=WEIGHT_BOUNDS[0], le=1.0,
                                     description="Weight multiplier for engines outside the query's region")
    official_sites: dict[str, list[str]] = Field(
        default_factory=lambda: {name: list(domains) for name, domains in DEFAULT_OFFICIAL_SITES.items()},
        description="Name (a whole word of the query) -> domains official for a query naming it; setting it "
                    "replaces the whole table")
    official_from_name: bool = Field(
        True, description="For a query that is only a name, the site spelled like it is official "
                          "(model context protocol -> modelcontextprotocol.io)")
    authority_domains: list[str] = Field(
        default_factory=lambda: list(DEFAULT_AUTHORITY_DOMAINS),
        description="Official for queries asking for documentation or a package (standards bodies, registries)")
    authority_suffixes: list[str] = Field(
        default_factory=list, description="Host suffixes counted as authority for every query (none by default)")

    # --- API keys (environment or key file only) ---
    exa_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("EXA_API_KEY", "exa_api_key"))
    tavily_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("TAVILY_API_KEY", "tavily_api_key"))
    brave_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("BRAVE_API_KEY", "brave_api_key"))
    firecrawl_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("FIRECRAWL_API_KEY", "firecrawl_api_key")
    )
    serper_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("SERPER_API_KEY", "serper_api_key"))
    key_file: Path | None = Field(None, description="File of NAME=value lines with API keys (METASEARCH_KEY_FILE)")

    # --- shared state (cooldowns, cache, budgets) ---
    state_backend: Literal["auto", "memory", "sqlite", "redis"] = Field(
        "auto", description="auto: Redis when redis_url is set, else the embedded SQLite store")
    state_dir: Path | None = Field(None, description="Embedded store directory (default $XDG_STATE_HOME/metasearch)")
    redis_url: str | None = Field(None, description="Shared Redis store (METASEARCH_REDIS_URL)")
    cache_ttl_s: float = Field(300, ge=0, description="Result cache lifetime; 0 disables the cache")
    state_wait_ms: int = Field(
        250, ge=1, le=10000,
        description="Longest one read of the embedded store may take (an answer in the cache, a cooldown, a "
                    "page's memory); a slower or failed read counts as a miss. Writes never wait")
    page_memory_s: float = Field(
        3600, ge=60, description="How long the URLs a page showed are remembered, so the next page of the same "
                                 "query never repeats them")
    state_max_bytes: int = Field(
        4_000_000, ge=10_000,
        description="Most bytes of cached values one state store keeps (engines' answers, page memory, read pages, "
                    "robots.txt verdicts); past it the oldest written go first. Per process for the memory store, "
                    "per file for SQLite, for every process sharing one Redis")
    budget_per_minute: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_BUDGETS),
        description="Engine (or engine@endpoint) -> searches per minute shared by every process using the "
                    "same state store, merged over the defaults (0: no budget); engines behind an endpoint "
                    "override have none unless set by that key")

    # --- reading pages (plugin.fetch, web_fetch, search read=N) ---
    fetch_max_chars: int = Field(20000, ge=100, le=1_000_000,
                                 description="Characters of page text one fetch returns unless max_chars says")
    fetch_timeout_ms: int = Field(20000, ge=100, le=120000,
                                  description="Deadline for one page read: robots.txt, every redirect hop, the body")
    fetch_max_bytes: int = Field(10_000_000, ge=10_000, description="Cap on a page's body after decompression")
    fetch_cache_ttl_s: float = Field(3600, ge=0, description="How long a read page is kept for reading on with "
                                                             "offset; 0 disables the page cache")
    fetch_user_agent: str | None = Field(
        None, min_length=1, description="User-Agent of page reads instead of the browser profile's (or, on the plain "
                                        "transport, the reader's own); when set it wins over user_agent for them "
                                        "(see plugin.reading.hops)")
    fetch_robots: bool = Field(True, description="Honour robots.txt (RFC 9309) for the token 'metasearch'")
    robots_cache_ttl_s: float = Field(86400, ge=0, description="How long a site's robots.txt is kept")
    robots_error_ttl_s: float = Field(600, ge=0, description="A robots.txt that answered 5xx counts as "
                                                             "disallow-all this long (one that got no answer "
                                                             "at all is the read's network error, not kept)")
    allow_private_hosts: Annotated[bool | list[str], NoDecode] = Field(
        False, description="Let page reads reach loopback, private and link-local addresses: 1 for all of them, or a "
                           "comma-separated list of address blocks and host names (127.0.0.1/32,10.1.2.0/24,"
                           "searx.internal) for those only (METASEARCH_ALLOW_PRIVATE_HOSTS)")
    fetch_pdf_max_pages: int = Field(50, ge=1, description="Pages of a PDF whose text is read")
    fetch_host_concurrency: int = Field(2, ge=1, description="Page reads in flight per host (politeness)")
    fetch_host_interval_ms: int = Field(250, ge=0, description="Pause between starting reads of one host")
    fetch_fallback_min_chars: int = Field(200, ge=0, description="Main text shorter than this falls back to "
                                                                  "the page's visible text")
    # --- pages only a browser can show (plugin.reading.render; issue 27) ---
    render: Literal["auto", "always", "never"] = Field(
        "auto", description="Render pages with the installed Chromium: auto (a page whose HTML looks like an app "
                            "shell, when a Chromium is found), always (every HTML page), never (METASEARCH_RENDER)")
    chromium: str | None = Field(None, description="The Chromium (or Chrome) to render with; by default the first of "
                                                   "chromium, chromium-browser, google-chrome on the PATH "
                                                   "(METASEARCH_CHROMIUM)")
    render_timeout_ms: int = Field(10000, ge=500, le=120000,
                                   description="Longest one page is rendered (within the read's own deadline); a page "
                                               "that never settles is read as it stands then")
    render_settle_ms: int = Field(300, ge=0, le=10000, description="A rendered page counts as settled once loaded "
                                                                    "and no request has been out for this long")
    render_concurrency: int = Field(2, ge=1, le=32, description="Pages rendered at once per process")
    render_max_requests: int = Field(200, ge=1, description="Requests one rendered page may make; the rest are "
                                                            "refused")
    render_max_bytes: int = Field(20_000_000, ge=10_000, description="Bytes one rendered page may pull in, all its "
                                                                      "requests together")
    render_keep_s: float = Field(120, ge=0, description="How long the browser is kept after the last render "
                                                        "before it is closed (it starts again on the next)")
    read_max_results: int = Field(5, ge=0, le=20, description="Most results one search reads (read=N)")
    read_max_chars: int = Field(30000, ge=100, description="Characters of page text one search attaches, all "
                                                           "read results together")
    read_min_ms: int = Field(1500, ge=100, le=120000,
                             description="Reading a search's top pages (read=N) shares the search's deadline_ms; "
                                         "a search that left less than this gets this long for its reads")

    # --- passages (fetch with query, search read=N with passages; plugin.reading.passages) ---
    fetch_passage_chars: int = Field(1200, ge=50, le=1_000_000,
                                     description="A fetch with a query and neither passages= nor max_chars returns "
                                                 "the best passages that fit in this many characters")
    passages_max: int = Field(50, ge=1, le=200, description="Most passages one fetch or one read row returns")
    passage_scan_chars: int = Field(1_000_000, ge=1000, le=100_000_000,
                                    description="Passages are sought in this many characters of a page from its "
                                                "offset (ranking costs ~0.4 ms of CPU per 1,000 of prose), and in "
                                                "at most one sentence or line per 20 of them (5,000 at least: a "
                                                "page of very short lines costs per line); a warning says where a "
                                                "longer page was left unsearched")
    passage_window_chars: int = Field(120, ge=50, le=5000, description="A passage grows by whole sentences while it "
                                                                        "stays within this many characters")
    passage_prefix: int = Field(4, ge=0, le=20, description="Words longer than this are matched by their first so "
                                                            "many characters (0: whole words)")
    passage_bm25_k1: float = Field(1.2, ge=0, description="BM25 term-frequency saturation")
    passage_bm25_b: float = Field(0.75, ge=0, le=1, description="BM25 length normalisation")
    passage_meaning: bool = Field(True, description="Rank passages by meaning as well as words when the semantic "
                                                    "extra (wordllama's word vectors) is installed")
    passage_soft_threshold: float = Field(0.45, ge=0, le=1, description="A page word at least this similar to a "
                                                                        "question word stands in for it (meaning)")
    passage_grow_chars: int = Field(400, ge=0, le=5000, description="A picked passage grows by a neighbouring "
                                                                    "sentence holding question words it lacks while "
                                                                    "it stays within this many characters (0: never)")
    passage_grow_share: float = Field(0.5, ge=0, le=1, description="... when that sentence holds at least this "
                                                                   "share of the question's weight")
    passage_weights: dict[str, float] = Field(default_factory=dict,
                                              description="Overrides of the ranker's fitted feature weights, by "
                                                          "feature name (plugin.reading.passages.FEATURES)")

    # --- metasearch mcp ---
    mcp_max_tokens: int = Field(
        20000, ge=8000, le=1_000_000,
        description="Most estimated tokens one MCP tool result holds, its structured content and its text together, "
                    "whatever max_chars asks: a longer page comes in slices (next_offset), a longer search with "
                    "fewer rows or passages (omitted). At least 8,000: the engine list takes about 6,300")

    # --- metasearch serve ---
    shutdown_wait_ms: int = Field(
        5000, ge=0, le=60000,
        description="On SIGTERM or SIGINT, longest `serve` and `mcp --http` wait for requests in flight before "
                    "cancelling them, then close the state store (its writes committed) and exit 0; the default "
                    "keeps within a container's usual 10 s stop grace")
    header_timeout_ms: int = Field(
        20000, ge=1000, le=300000,
        description="Longest `serve` and `mcp --http` wait for a request's head (its line and headers) on a "
                    "connection, or for the next request on an idle kept-alive one, before closing it: a client "
                    "sending its headers a byte at a time holds a connection this long at most")
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host names `serve` and `mcp --http` answer besides those they listen on (a reverse proxy's, "
                    "say): name or name:port; '*' turns the Host/Origin check off. JSON list or comma-separated "
                    "(METASEARCH_ALLOWED_HOSTS)")

    log: str = Field("warning", description="Log level (METASEARCH_LOG)")

    def __init__(self, **values: Any):
        # Every surface reports a bad setting the same way: SearchError with the field named, never a
        # pydantic traceback (SearchError is a ValueError, as ValidationError is).
        try:
            super().__init__(**values)
        except (ValidationError, SettingsError) as exc:
            raise settings_error(exc, given=list(values)) from None
        self._warnings = misspelt_variables()

    @property
    def warnings(self) -> list[str]:
        """What a person should know about how these settings were read (a misspelt variable)."""
        return list(self._warnings)

    @field_validator("passage_weights")
    @classmethod
    def _known_passage_features(cls, weights: dict[str, float]) -> dict[str, float]:
        if not weights:
            return weights  # (the ranker's modules are not imported for nothing: every CLI call makes Settings)
        from plugin.reading.passages import FEATURES

        unknown = sorted(set(weights) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown passage feature(s) {', '.join(unknown)}; known: {', '.join(FEATURES)}")
        return weights

    @field_validator("official_sites")
    @classmethod
    def _official_sites_are_domains(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return {name: _domain_list("official_sites", domains) for name, domains in value.items()}

    @field_validator("authority_domains")
    @classmethod
    def _authority_domains_are_domains(cls, value: list[str]) -> list[str]:
        return _domain_list("authority_domains", value)

    @field_validator("authority_suffixes")
    @classmethod
    def _authority_suffixes_are_suffixes(cls, value: list[str]) -> list[str]:
        return _domain_list("authority_suffixes", value, suffixes=True)

    @field_validator("upstream_rps")
    @classmethod
    def _rates_are_positive(cls, value: dict[str, float]) -> dict[str, float]:
        for name, rate in value.items():
            if not rate > 0:
                raise ValueError(f"upstream_rps for {name!r} must be a positive number, got {rate!r}")
        return {upstream_key(name): rate for name, rate in value.items()}  # one key per upstream

    @field_validator("endpoints")
    @classmethod
    def _endpoints_are_urls(cls, value: dict[str, str]) -> dict[str, str]:
        _check_engine_names(list(value))
        return {name: normal_endpoint(url, path_allowed=name == "searxng") for name, url in value.items()}

    @field_validator("searxng_url")
    @classmethod
    def _searxng_url_is_a_url(cls, value: str | None) -> str | None:
        return endpoint_url(value) if value else value

    @field_validator("engines", mode="before")
    @classmethod
    def _engine_list(cls, value: Any) -> Any:
        if isinstance(value, str):  # METASEARCH_ENGINES: a JSON list or comma-separated names
            text = value.strip()
            if text.startswith("["):
                return _json_list(text)
            return [part for part in text.split(",") if part.strip()] or None
        return value

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _host_list(cls, value: Any) -> Any:
        if isinstance(value, str):  # METASEARCH_ALLOWED_HOSTS: a JSON list or comma-separated names
            text = value.strip()
            if text.startswith("["):
                value = _json_list(text)
            else:
                value = text.split(",")
        if isinstance(value, list):
            value = [name.strip().lower().rstrip(".") if isinstance(name, str) else name for name in value]
            value = [name for name in value if name != ""]
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts_are_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if name != "*" and not re.fullmatch(r"(\[[0-9a-f:.]+\]|[a-z0-9_.\-]+)(:\d{1,5})?", name):
                raise ValueError(f"{name[:60]!r} is not a host name, host:port or '*'")
        return value

    @field_validator("engines")
    @classmethod
    def _engines_exist(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        names = list(dict.fromkeys(name.strip().lower() for name in value if name.strip()))
        _check_engine_names(names)
        return names or None

    @field_validator("tiers")
    @classmethod
    def _tiers_merge_over_defaults(cls, value: dict[str, Tier]) -> dict[str, Tier]:
        _check_engine_names(list(value))
        return {**_default_tiers(), **value}

    @field_validator("weights")
    @classmethod
    def _weights_bounded_and_merged(cls, value: dict[str, float]) -> dict[str, float]:
        _check_engine_names(list(value))
        low, high = WEIGHT_BOUNDS
        bad = {name: weight for name, weight in value.items() if not low <= weight <= high}
        if bad:
            raise ValueError(f"weights must be between {low} and {high} (leave an engine out with `engines` "
                             f"instead), got {bad}")
        return {**_default_weights(), **value}

    @field_validator("budget_per_minute")
    @classmethod
    def _budgets_merge_over_defaults(cls, value: dict[str, int]) -> dict[str, int]:
        names = [key.partition("@")[0] for key in value]
        _check_engine_names(names)
        for key, budget in value.items():
            if budget < 0:
                raise ValueError(f"{key}: a budget is a number of searches per minute (0: none), got {budget}")
        return {**DEFAULT_BUDGETS, **{upstream_key(key): budget for key, budget in value.items()}}

    @field_validator("redis_url")
    @classmethod
    def _redis_url_is_usable(cls, value: str | None) -> str | None:
        return _redis_url(value) if value else value

    @field_validator("key_file")
    @classmethod
    def _key_file_is_readable(cls, value: Path | None) -> Path | None:
        # A key file that is not there would leave every keyed engine silently disabled.
        if value is None:
            return None
        path = Path(value).expanduser()
        if not path.is_file():
            raise ValueError(f"{'is not a file' if path.exists() else 'does not exist'}: {path}")
        if not os.access(path, os.R_OK):
            raise ValueError(f"cannot be read: {path}")
        return value

    @field_validator("ca_bundle")
    @classmethod
    def _ca_bundle_holds_certificates(cls, value: Path | None) -> Path | None:
        # A bundle that is missing or holds no certificate would fail every TLS request, far from the cause.
        if value is None:
            return None
        path = Path(value).expanduser()
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"cannot be read: {path} ({exc.strerror or exc})") from None
        if b"-----BEGIN CERTIFICATE-----" not in text:
            raise ValueError(f"holds no PEM certificate (-----BEGIN CERTIFICATE-----): {path}")
        return path

    @field_validator("allow_private_hosts", mode="before")
    @classmethod
    def _allowance_is_all_or_a_list(cls, value: Any) -> bool | list[str]:
        from plugin.reading.allowance import PrivateAllowance

        allowance = PrivateAllowance.of(value)  # ValueError names a bad entry
        return allowance.entries if allowance.entries else allowance.everything

    def private_allowance(self):
        """`allow_private_hosts` as a plugin.reading.allowance.PrivateAllowance."""
        from plugin.reading.allowance import PrivateAllowance

        return PrivateAllowance.of(self.allow_private_hosts)

    @field_validator("log")
    @classmethod
    def _log_level(cls, value: str) -> str:
        if value.lower() not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}, got {value!r}")
        return value.lower()

    @field_validator("region")
    @classmethod
    def _region_is_in_the_vocabulary(cls, value: str | None) -> str | None:
        from plugin.pipeline.locale import check_region

        try:  # a config file's or variable's stray spaces are forgiven; a tool argument must match the schema
            return check_region(value.strip() if isinstance(value, str) else value)
        except SearchError as exc:
            raise ValueError(exc.message) from None

    @field_validator("proxy")
    @classmethod
    def _proxy_is_a_proxy_url(cls, value: str | None) -> str | None:
        from plugin.infra.egress import check_proxy_url

        return check_proxy_url(value) if value else None

    @field_validator("proxies")
    @classmethod
    def _proxies_are_per_known_engine(cls, value: dict[str, str]) -> dict[str, str]:
        from plugin.infra.egress import DIRECT, check_proxy_url

        _check_engine_names(list(value))  # unknown_engine, like every other per-engine setting
        return {name: DIRECT if url.strip().lower() == DIRECT else check_proxy_url(url) for name, url in value.items()}

    @field_validator("user_agent", "fetch_user_agent", "extra_headers")
    @classmethod
    def _headers_are_single_lines(cls, value):
        # A CR or LF would let a value smuggle a header or a request of its own.
        items = value.items() if isinstance(value, dict) else [("User-Agent", value or "")]
        for name, text in items:
            if any(ch in f"{name}{text}" for ch in "\r\n\0") or not name.strip() or ":" in name:
                raise ValueError(f"header {name[:40]!r} must be a name without ':' and a single-line value")
        return value

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings):
        path = _CONFIG_PATH.get()
        return (init_settings, env_settings, _TomlSource(settings_cls, path))

    @classmethod
    def load(cls, config: str | Path | None = None, **overrides: Any) -> "Settings":
        """Defaults < TOML (`config`, else $XDG_CONFIG_HOME/metasearch/config.toml) < env < overrides."""
        path = Path(config) if config else default_config_path()
        if config and not path.is_file():
            raise SearchError(INVALID_PARAMETER, f"config file {path} " + ("is not a file" if path.exists() else
                                                                           "does not exist"))
        token = _CONFIG_PATH.set(path if path.is_file() else None)
        try:
            return cls(**{k: v for k, v in overrides.items() if v is not None})
        finally:
            _CONFIG_PATH.reset(token)

    def log_level(self) -> int:
        return getattr(logging, self.log.upper())

    # --- derived ---
    def api_key(self, engine: str) -> str | None:
        """The API key for a keyed engine: its field (environment), else the key file."""
        env_name = KEY_FIELDS.get(engine)
        if not env_name:
            return None
        secret: SecretStr | None = getattr(self, env_name.lower(), None)
        if secret is not None and secret.get_secret_value():
            return secret.get_secret_value()
        return _read_key_file(self.key_file).get(env_name)

    def instance_url(self, engine: str) -> str | None:
        """For self-hosted engines (SearXNG): the configured URL, else an endpoint given for it."""
        if engine == "searxng":
            return self.searxng_url or self.endpoints.get("searxng")
        return None

    def upstream(self, engine: str) -> str:
        """The key state is kept under: the engine, or the engine at its overriding endpoint.

        Cooldowns and budgets belong to the server that failed or that we must spare: an engine
        pointed at a mirror, proxy or test stand-in is a different upstream from the engine itself.
        """
        endpoint = self.endpoints.get(engine)
        return f"{engine}@{endpoint.rstrip('/')}" if endpoint else engine

    def sharing_key(self) -> str:
        """Equal settings share one long-lived searcher or page reader, however often they are rebuilt.
        Keys count (the dump masks them) without being kept in clear."""
        keys = hashlib.sha256("\0".join(self.secret_values()).encode()).hexdigest()
        return f"{self.model_dump_json()}|{keys}"

    def secret_values(self) -> list[str]:
        """Values no log, error or response may show: API keys, proxy credentials, secret-looking headers."""
        from plugin.infra.egress import environment_proxies
        from plugin.infra.secrets import url_secrets

        keys = [key for key in (self.api_key(name) for name in KEY_FIELDS) if key]
        proxies = [self.proxy, *self.proxies.values()]
        if self.proxy_from_env:
            proxies += list(environment_proxies().values())
        headers = [value for name, value in self.extra_headers.items() if SECRET_HEADER.search(name) and len(value) >= 4]
        # An instance, mirror or store behind basic auth (https://user:pass@searx.example): its credentials too.
        services = [self.searxng_url, *self.endpoints.values(), self.redis_url]
        return keys + [s for url in [*proxies, *services] for s in url_secrets(url)] + headers


# The TOML file `Settings.load` asked for; plain `Settings()` reads no file.
_CONFIG_PATH: ContextVar[Path | None] = ContextVar("metasearch_config_path", default=None)


def _read_key_file(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except OSError:
        return {}
    keys: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        keys[name.strip().removeprefix("export ").strip()] = value.strip().strip("'\"")
    return keys
