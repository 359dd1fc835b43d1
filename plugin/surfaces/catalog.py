"""The engine catalogue (`metasearch engines`) and the effective settings (`metasearch config`)."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any

from engines import ENGINES
from engines.base import SearchOptions
from plugin.infra.cooldown import Cooldowns
from plugin.settings import Settings


def not_selected_reason(settings: Settings, name: str) -> str | None:
    """Why a search does not ask `name` unless it names it: the `engines` setting leaves it out."""
    if settings.engines and name not in settings.engines:
        return ("not in the engines setting (METASEARCH_ENGINES); asked only by a search that names it, "
                "engines=" + name)
    return None


async def engine_catalog(settings: Settings, cooldowns: Cooldowns | None = None) -> list[dict[str, Any]]:
    """Every engine with its facts, whether it is enabled (a search asks it unless told otherwise: it can
    run, and the `engines` setting, when set, names it), and its cooldown in the shared state store."""
    if cooldowns is None:
        from plugin.infra.state import open_state

        state = open_state(settings)
        try:
            return await engine_catalog(settings, Cooldowns(settings, state))
        finally:
            await state.close()
    rows = []
    now = time.time()
    for name, engine in ENGINES.items():
        facts = engine.facts
        options = SearchOptions(api_key=settings.api_key(name),
                                base_url=settings.instance_url(name))
        reason = engine.disabled_reason(options) or not_selected_reason(settings, name)
        entry = await cooldowns.store.get(settings.upstream(name))
        cooling = entry is not None and entry.active(now)
        rows.append({
            "name": name,
            "tier": settings.tiers.get(name, facts.tier),
            "weight": settings.weights.get(name, facts.weight),
            "region": facts.region,
            "index": facts.index,
            "needs_key": facts.key_env is not None,
            # What the engine can do itself (issue 15): a news vertical, further pages, domain lists.
            "news": facts.news,
            "paging": facts.paging,
            "native_domains": facts.native_domains,
            "key_env": facts.key_env,
            "enabled": reason is None,
            "disabled_reason": reason,
            "cooldown": {
                "active": cooling,
                "seconds_left": round(entry.until - now, 1) if cooling and entry else 0,
                "failures": entry.failures if entry else 0,
                "last_failure": entry.status if entry else None,
            },
            "description": facts.description,
        })
    return rows


def render_catalog(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'engine':<16} {'tier':<9} {'weight':>6}  {'region':<7} {'index':<10} {'news':<5} {'enabled':<8} state"]
    for row in rows:
        state = row["disabled_reason"] or (
            f"cooling down {row['cooldown']['seconds_left']:.0f}s after {row['cooldown']['last_failure']}"
            if row["cooldown"]["active"] else "ready")
        lines.append(f"{row['name']:<16} {row['tier']:<9} {row['weight']:>6.2f}  {row['region']:<7} "
                     f"{row['index']:<10} {'yes' if row['news'] else 'no':<5} {'yes' if row['enabled'] else 'no':<8} "
                     f"{state}")
    news = [row["name"] for row in rows if row["news"] and row["enabled"]]
    lines.append(f"news (category=news) from: {', '.join(news) or 'no enabled engine'}")
    return "\n".join(lines)


def _mask_urls(value: Any) -> Any:
    """Every URL inside settings data with its credentials masked (Redis, SearXNG, endpoints, budget keys)."""
    from plugin.infra.secrets import mask_url

    if isinstance(value, str):
        return mask_url(value) if "://" in value else value
    if isinstance(value, dict):  # budget keys may be engine@URL
        return {_mask_key(k): _mask_urls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_urls(v) for v in value]
    return value


def _mask_key(key: str) -> str:
    engine, at, url = key.partition("@")  # engine@URL
    return f"{engine}@{_mask_urls(url)}" if at and "://" in url else _mask_urls(key)


def masked_settings(settings: Settings) -> dict[str, Any]:
    """Effective settings as JSON-ready data; API keys show only whether they are set, credentials inside
    URLs (Redis, SearXNG, endpoints) are masked."""
    from plugin.infra.secrets import mask_url
    from plugin.settings import KEY_FIELDS, SECRET_HEADER

    data = _mask_urls(settings.model_dump(mode="json"))
    engine_of = {env.lower(): name for name, env in KEY_FIELDS.items()}
    for field in list(data):
        if field.endswith("_api_key"):  # set in the environment or in the key file: the key in use, masked
            data[field] = "set (masked)" if field in engine_of and settings.api_key(engine_of[field]) else None

    # Proxy credentials and credential-like headers: shown as set, never as written.
    data["proxy"] = mask_url(settings.proxy) if settings.proxy else None
    data["proxies"] = {name: mask_url(url) for name, url in settings.proxies.items()}
    data["extra_headers"] = {name: "set (masked)" if SECRET_HEADER.search(name) else value
                             for name, value in settings.extra_headers.items()}
    if settings.proxy_from_env:
        from plugin.infra.egress import environment_proxies

        data["environment_proxies"] = {scheme: mask_url(url) for scheme, url in environment_proxies().items()}

    data["keys_from_key_file"] = sorted(
        env for name, env in KEY_FIELDS.items()
        if settings.key_file and getattr(settings, env.lower()) is None and settings.api_key(name)
    )
    return data


# ----- `metasearch cooldowns`: what is benched, and clearing it -----
def store_location(settings: Settings, state) -> str:
    """Where cooldowns, answers and budgets live, for people: the SQLite file or the Redis URL (no password)."""
    from plugin.infra.secrets import mask_url
    from plugin.infra.state import FailoverState, SqliteState, state_path

    if isinstance(state, FailoverState):
        return f"redis {mask_url(state.primary.url)} (embedded fallback: {state_path(settings)})"
    if isinstance(state, SqliteState):
        return f"sqlite {state.path}"
    return f"{state.backend} (this process only)"


async def cooldown_report(settings: Settings, *, clear: str | None = None) -> dict[str, Any]:
    """Every benched upstream (`engine` or `engine@endpoint`) in the shared store; with `clear` ("*" for
    every one, else an engine name or an exact upstream), those entries are deleted first, failure
    counts included, and listed under "cleared"."""
    from plugin.infra.state import open_state

    state = open_state(settings)
    try:
        entries = await state.all()
        cleared: list[str] = []
        if clear is not None:
            for upstream in sorted(entries):
                if clear == "*" or upstream == clear or upstream.split("@", 1)[0] == clear:
                    await state.clear(upstream)
                    cleared.append(upstream)
            entries = {k: v for k, v in entries.items() if k not in cleared}
        now = time.time()
        benched = []
        for upstream, entry in sorted(entries.items()):
            if not entry.active(now):
                continue  # remembered for escalation only, not benched
            engine, _, endpoint = upstream.partition("@")
            benched.append({
                "upstream": upstream, "engine": engine, "endpoint": endpoint or None,
                "status": entry.status, "failures": entry.failures,
                "seconds_left": round(entry.until - now, 1),
                "until": datetime.fromtimestamp(entry.until, timezone.utc).isoformat(timespec="seconds"),
                "detail": entry.detail,
            })
        report: dict[str, Any] = {"store": store_location(settings, state), "cooldowns": benched}
        if clear is not None:
            report["cleared"] = cleared
        return report
    finally:
        await state.close()


def render_cooldowns(report: dict[str, Any]) -> str:
    lines = []
    if "cleared" in report:
        lines.append(f"cleared {len(report['cleared'])}: {', '.join(report['cleared'])}" if report["cleared"]
                     else "nothing to clear")
    if report["cooldowns"]:
        lines.append(f"{'upstream':<40} {'after':<12} {'failures':>8}  left")
        for row in report["cooldowns"]:
            lines.append(f"{row['upstream']:<40} {row['status']:<12} {row['failures']:>8}  "
                         f"{row['seconds_left']:.0f}s (until {row['until']})")
    else:
        lines.append("no engine is cooling down")
    lines.append(f"state store: {report['store']}")
    return "\n".join(lines)
