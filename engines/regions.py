"""One region vocabulary for every engine: language-COUNTRY tags such as "en-US" and "zh-CN".

Callers speak this vocabulary; each engine declares in its facts a table from these tags to its own
codes (Bing's market, DuckDuckGo's `kl`, Startpage's `qsr`, ...), or None when it takes any tag by
rule. An asked region outside an engine's table is reported by `Engine.ignored_options` instead of
being swapped silently for another.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Mapping

_TAG = re.compile(r"^[a-z]{2,3}-[A-Z]{2}$")

# The tags the engines' tables are built over: every market, region and country one of our engines
# documents (Bing's markets, DuckDuckGo's and Startpage's regions, Yahoo's country sites, Brave's
# countries), as language-COUNTRY.
REGIONS: frozenset[str] = frozenset("""
    ar-AE ar-EG ar-SA ar-XA bg-BG ca-ES cs-CZ da-DK de-AT de-CH de-DE el-GR en-AU en-CA en-GB en-ID en-IE
    en-IL en-IN en-MY en-NZ en-PH en-PK en-SG en-TH en-US en-VN en-ZA es-AR es-CL es-CO es-ES es-MX es-PE
    es-US es-VE et-EE fi-FI fil-PH fr-BE fr-CA fr-CH fr-FR he-IL hi-IN hr-HR hu-HU id-ID is-IS it-CH it-IT
    ja-JP ko-KR lt-LT lv-LV ms-MY nb-NO nl-BE nl-NL no-NO pl-PL pt-BR pt-PT ro-RO ru-BY ru-RU sk-SK sl-SI
    sv-SE th-TH tl-PH tr-TR uk-UA vi-VN zh-CN zh-HK zh-SG zh-TW
""".split())


def region_tag(text: str) -> str:
    """A region in the vocabulary's spelling: "EN_us" -> "en-US", "zh-Hans-CN" -> "zh-CN" (script dropped).

    Text that is no language-COUNTRY pair comes back lower-cased and otherwise as it was ("en" -> "en").
    """
    parts = [p for p in re.split(r"[-_]", (text or "").strip()) if p]
    if not parts:
        return ""
    language = parts[0].lower()
    countries = [p for p in parts[1:] if len(p) == 2 and p.isalpha()]
    if countries:
        return f"{language}-{countries[-1].upper()}"
    return "-".join(p.lower() for p in parts)


def is_region_tag(tag: str) -> bool:
    return bool(_TAG.match(tag or ""))


def language_of(region: str) -> str:
    """The lower-case language subtag of a region ("pt_BR" -> "pt")."""
    return region.replace("_", "-").split("-")[0].lower()


def country_of(region: str | None) -> str | None:
    """The two-letter country subtag of a region ("en-US" -> "US", "zh-Hans-CN" -> "CN"), else None."""
    parts = (region or "").replace("_", "-").split("-")[1:]
    for part in reversed(parts):
        if len(part) == 2 and part.isalpha():
            return part.upper()
    return None


def table(codes: Mapping[str, str]) -> dict[str, str]:
    """An engine's region table from {tag in any spelling: engine code}, keys in the vocabulary's spelling."""
    return {region_tag(tag): code for tag, code in codes.items()}


def by_country(countries: Iterable[str], code: Callable[[str], str] = str.lower) -> dict[str, str]:
    """A table for an engine that takes a country: every vocabulary tag whose country it lists."""
    listed = {c.upper() for c in countries}
    return {tag: code(country_of(tag) or "") for tag in sorted(REGIONS) if country_of(tag) in listed}
