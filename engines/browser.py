"""Headers a desktop browser sends, so scraped engines serve their normal page."""

from __future__ import annotations

USER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
)


def accept_language(region: str | None) -> str:
    if not region:
        return "en-US,en;q=0.9"
    lang = region.split("-")[0].lower()
    if lang == "en":
        return f"{region},en;q=0.9"
    return f"{region},{lang};q=0.9,en;q=0.6"


def browser_headers(region: str | None = None) -> dict[str, str]:
    return {
        "User-Agent": USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "Accept-Language": accept_language(region),
        # Only what aiohttp decodes without optional packages.
        "Accept-Encoding": "gzip, deflate",
        "Upgrade-Insecure-Requests": "1",
    }


def api_headers() -> dict[str, str]:
    return {"Accept": "application/json", "User-Agent": "metasearch/0.1 (+https://pypi.org/project/metasearch)"}
