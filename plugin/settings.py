"""Every knob in one typed model, with the documented defaults.

Precedence (lowest first): defaults < TOML file < environment (`METASEARCH_*`,
and the engines' own key variables such as `EXA_API_KEY`) < explicit arguments
(command-line flags). API keys are read from the environment or a key file only.
"""

from __future__ import annotations

import os
import re
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from engines import ENGINES
from plugin.errors import INVALID_PARAMETER, SearchError

Tier = Literal["primary", "fallback"]

# Authority means official for this query (plugin/pipeline/intent.py, plugin/pipeline/fusion.py):
# 1. the sites of what the query names, from this table (name, as a whole word, → domains; subdomains
#    count: python.org covers docs.python.org). Curated from general knowledge of where each project,
#    product or standard publishes itself; extend it with `official_sites`.
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


class _TomlSource(PydanticBaseSettingsSource):
    """Settings from a TOML file; API keys in it are ignored (environment or key file only)."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path | None):
        super().__init__(settings_cls)
        self.path = path
        self.data: dict[str, Any] = {}
        if path is not None and path.is_file():
            try:
                with path.open("rb") as handle:
                    data = tomllib.load(handle)
            except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
                raise SearchError(INVALID_PARAMETER, f"config file {path} is not valid TOML: {exc}") from None
            section = data.get("metasearch", data)
            self.data = {k: v for k, v in section.items() if not k.endswith("_api_key")}

    def get_field_value(self, field, field_name):  # pragma: no cover - required by the ABC
        return self.data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if k in self.settings_cls.model_fields}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="METASEARCH_", extra="ignore", validate_default=True, populate_by_name=True,
        # A rejected value may be a proxy URL with its password, or a key: errors never quote it.
        hide_input_in_errors=True,
    )

    # --- transport ---
    timeout_ms: int = Field(15000, ge=50, le=120000,
                            description="Per-engine deadline for the whole exchange (the engine's own time: "
                                        "time queued for admission is not counted)")
    max_response_bytes: int = Field(4_000_000, ge=10_000, description="Response-size cap, enforced while reading")
    max_redirects: int = Field(5, ge=0, le=20)
    pool_limit: int = Field(100, ge=1, description="Requests out at once per process")
    # --- admission: politeness per upstream, queue time kept apart (plugin/infra/admission.py) ---
    upstream_concurrency: int = Field(8, ge=1, le=1000, description="Requests out at once per upstream")
    upstream_rps: dict[str, float] = Field(
        default_factory=dict,
        description="Engine (or engine@endpoint) -> requests started per second at most (none: no rate limit)")
    admission_wait_ms: int = Field(
        60000, ge=0, le=600000,
        description="Longest a request waits for admission; then the engine is skipped as overloaded")
    # --- when a search answers (plugin/pipeline/tiers.py) ---
    deadline_ms: int = Field(
        5000, ge=100, le=600000,
        description="Overall deadline of a search, both tiers, from its first request out (METASEARCH_DEADLINE_MS)")
    quorum: float = Field(0.5, gt=0, le=1,
                          description="Share of the running engines that must have answered before an early answer")
    grace_ms: int = Field(400, ge=0, le=60000,
                          description="Wait after a quorum answered and `limit` rows were kept, for the rest")
    soft_deadline_ms: int = Field(
        2500, ge=0, le=600000,
        description="Time after which a search answers once it has `limit` rows, quorum or not, and starts the "
                    "fallback tier when it has fewer")
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
    ca_file: Path | None = Field(
        None, description="Extra CA certificates (PEM) to trust, e.g. a TLS-inspecting corporate proxy's")
    user_agent: str | None = Field(
        None, description="User-Agent for every engine instead of each engine's own default")
    extra_headers: dict[str, str] = Field(
        default_factory=dict, repr=False, description="Headers added to every request, over the engine's own "
                                          "(METASEARCH_EXTRA_HEADERS as JSON)")

    # --- engines ---
    engines: list[str] | None = Field(None, description="Default engine selection (None: every enabled engine)")
    tiers: dict[str, Tier] = Field(default_factory=_default_tiers)
    weights: dict[str, float] = Field(default_factory=_default_weights)
    region: str | None = Field(None, description="Region/language for engines, e.g. en-US, zh-CN")
    safesearch: Literal["off", "moderate", "strict"] = "moderate"
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
    # (rrf_k + 1) / (rrf_k + slot), 1.0 in the first slot, so a boost of 0.25 is a quarter of it.
    rrf_k: float = Field(60, gt=0, description="Reciprocal rank fusion constant: how slowly a vote fades with slot")
    authority_boost: float = Field(
        0.25, ge=0, description="Added for a site official for the query, in top votes of one engine")
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
    max_per_domain: int | None = Field(
        None, ge=1, description="Rows of one domain before the others get a turn (None: no limit)")
    off_region_weight: float = Field(0.5, ge=0, description="Weight multiplier for engines outside the query's region")
    official_sites: dict[str, list[str]] = Field(
        default_factory=lambda: {name: list(domains) for name, domains in DEFAULT_OFFICIAL_SITES.items()},
        description="Name (a whole word of the query) -> domains official for a query naming it")
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
    page_memory_s: float = Field(
        3600, ge=60, description="How long the URLs a page showed are remembered, so the next page of the same "
                                 "query never repeats them")
    budget_per_minute: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_BUDGETS),
        description="Engine (or engine@endpoint) -> searches per minute shared by every process using the "
                    "same state store; engines behind an endpoint override have none unless set by that key")

    log: str = Field("warning", description="Log level (METASEARCH_LOG)")

    @field_validator("upstream_rps")
    @classmethod
    def _rates_are_positive(cls, value: dict[str, float]) -> dict[str, float]:
        for name, rate in value.items():
            if not rate > 0:
                raise ValueError(f"upstream_rps for {name!r} must be a positive number, got {rate!r}")
        return value

    @field_validator("endpoints")
    @classmethod
    def _endpoints_are_urls(cls, value: dict[str, str]) -> dict[str, str]:
        for name, url in value.items():
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"endpoint for {name!r} must be an http(s) URL, got {url!r}")
        return value

    @field_validator("region")
    @classmethod
    def _region_is_in_the_vocabulary(cls, value: str | None) -> str | None:
        from plugin.pipeline.locale import check_region

        try:
            return check_region(value)
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

        checked = {}
        for name, url in value.items():
            if name not in ENGINES:
                raise ValueError(f"proxies: unknown engine {name!r}")
            checked[name] = DIRECT if url.strip().lower() == DIRECT else check_proxy_url(url)
        return checked

    @field_validator("user_agent", "extra_headers")
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
            raise SearchError(INVALID_PARAMETER, f"config file {path} does not exist")
        token = _CONFIG_PATH.set(path)
        try:
            return cls(**{k: v for k, v in overrides.items() if v is not None})
        finally:
            _CONFIG_PATH.reset(token)

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

    def secret_values(self) -> list[str]:
        """Values no log, error or response may show: API keys, proxy credentials, secret-looking headers."""
        from plugin.infra.egress import environment_proxies, url_secrets

        keys = [key for key in (self.api_key(name) for name in KEY_FIELDS) if key]
        proxies = [self.proxy, *self.proxies.values()]
        if self.proxy_from_env:
            proxies += list(environment_proxies().values())
        headers = [value for name, value in self.extra_headers.items() if SECRET_HEADER.search(name) and len(value) >= 4]
        return keys + [s for url in proxies for s in url_secrets(url)] + headers


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
