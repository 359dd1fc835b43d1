"""Where the caller is and which results it wants: the `region` vocabulary (engines.regions: en-US,
zh-CN, ...) and `user_location` country codes, as Anthropic's and OpenAI's web search tools take them
(`{"country": "DE"}`, `{"type": "approximate", "approximate": {"country": "DE"}}` or just `"DE"`).

A country is mapped to the region its searchers most use (DE -> de-DE, CH -> de-CH, CA -> en-CA);
a valid country outside the vocabulary (KE) asks for no region, with a warning, rather than a guess.
An explicit `region` always wins over `user_location`.
"""

from __future__ import annotations

import json
import re
from typing import Mapping

from engines.regions import REGIONS, country_of, region_tag
from plugin.errors import INVALID_PARAMETER, SearchError

# ISO 3166-1 alpha-2, every officially assigned code.
COUNTRIES: frozenset[str] = frozenset("""
    AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV
    BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES
    ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE
    IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY
    MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU
    NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM
    SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE
    VG VI VN VU WF WS YE YT ZA ZM ZW
""".split())
# Common spellings that are not the ISO code.
_ALIASES = {"UK": "GB", "EL": "GR"}
# Countries with several tags in the vocabulary: the one their searchers mostly use.
_PREFERRED = {
    "ES": "es-ES", "CH": "de-CH", "CA": "en-CA", "ID": "id-ID", "IL": "he-IL", "IN": "en-IN", "MY": "en-MY",
    "PH": "en-PH", "SG": "en-SG", "TH": "th-TH", "US": "en-US", "VN": "vi-VN", "BE": "nl-BE", "NO": "nb-NO",
}


def _by_country() -> dict[str, str]:
    found: dict[str, str] = {}
    for tag in sorted(REGIONS):
        country = country_of(tag)
        if country and country in COUNTRIES:
            found.setdefault(country, tag)
    found.update({country: tag for country, tag in _PREFERRED.items() if tag in REGIONS})
    return found


REGION_OF_COUNTRY: Mapping[str, str] = _by_country()

# How a caller may spell a region: language, an optional script subtag (zh-Hans-CN), country; "-" or "_"
# between them, any case. The tool schemas advertise this very pattern (plugin.surfaces.schemas), so
# whatever check_region reads passes the schema; a well-formed tag outside REGIONS passes the schema and
# is still invalid_parameter here (the vocabulary itself would make the schema ~2,500 characters long).
# Written for ECMA-262 and Rust regexes alike (JSON Schema validators, pydantic).
REGION_PATTERN = r"^[A-Za-z]{2,3}(?:[-_][A-Za-z]{4})?[-_][A-Za-z]{2}$"


def check_region(raw: object) -> str | None:
    """A region of the vocabulary in its spelling ("en_us" -> "en-US"), else `invalid_parameter`."""
    if raw is None or raw == "":
        return None
    # fullmatch: Python's `$` would also match before a final newline, which the schema's validators refuse.
    tag = region_tag(raw) if isinstance(raw, str) and re.fullmatch(REGION_PATTERN, raw) else ""
    if tag not in REGIONS:
        raise SearchError(INVALID_PARAMETER, f"region must be a language-COUNTRY tag such as en-US, de-DE or zh-CN "
                                             f"(one of {len(REGIONS)}), got {str(raw)[:40]!r}", parameter="region")
    return tag


def check_user_location(raw: object) -> str | None:
    """The ISO 3166-1 alpha-2 country of a `user_location`, else `invalid_parameter`."""
    if raw is None or raw == "" or raw == {}:
        return None
    value = raw
    if isinstance(value, str) and value.strip().startswith("{"):  # the object form as text (HTTP, the CLI)
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, Mapping):
        nested = value.get("approximate")  # OpenAI: {"type": "approximate", "approximate": {...}}
        value = (nested if isinstance(nested, Mapping) else value).get("country")
    code = value.strip().upper() if isinstance(value, str) else ""
    code = _ALIASES.get(code, code)
    if code not in COUNTRIES:
        raise SearchError(INVALID_PARAMETER, "user_location must hold an ISO 3166-1 alpha-2 country such as "
                                             f"\"DE\" or {{\"country\": \"DE\"}}, got {str(raw)[:60]!r}",
                          parameter="user_location")
    return code


def region_for_country(country: str | None) -> str | None:
    return REGION_OF_COUNTRY.get(country) if country else None
