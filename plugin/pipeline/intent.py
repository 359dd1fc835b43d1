"""What a query asks for, as far as ranking cares: does time matter, and which sites are official for it.

- Timely: the query asks for recent things — the news category, a time operator
  (`past week`, `最近一周`, `2025年以后`), words such as latest, new, today,
  this week, 最新, 发布, 今天, 本周, hôm nay, or a year close to now. Only then
  can a recent date make a page better.
- Official: the sites of what the query names (python → python.org and
  docs.python.org, kubernetes → kubernetes.io, react → react.dev), from the
  curated `official_sites` table in settings; and, for a query that is just a
  one-word name, the site spelled like it ("bilibili" → bilibili.com,
  "Tauri v2" → tauri.app).
- Reference: the query asks for documentation or a package (docs, tutorial,
  api, package, install, 文档, 教程, …): then standards bodies, package
  registries and the language references of `authority_domains` are official
  too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Mapping, Sequence

from engines.script import has_cjk
from plugin.infra import memo
from plugin.pipeline.operators import Operators

# A place named "New …" is not a request for new things. "Update" / 更新 are left out: in "rolling
# update" (滚动更新) or "windows update error" they name a thing, not a time.
_NEW_PLACES = r"york|zealand|jersey|mexico|delhi|orleans|hampshire|england|brunswick|caledonia|guinea|south\s+wales"
_TIMELY_WORDS = re.compile(
    r"\b(?:news|latest|newest|new(?!\s+(?:" + _NEW_PLACES + r")\b)|today'?s?|tonight|yesterday|this\s+(?:week|month|year)|"
    r"breaking|recent(?:ly)?|upcoming|current(?:ly)?|releases?|released|announce[ds]?|announcements?|"
    r"changelog|what'?s\s+new|trends?|trending|weather|forecast|live\s+scores?)\b"
    r"|最新|新闻|资讯|今天|今日|昨天|本周|这周|本月|今年|近期|最近|近日|发布|动态|公告|新版|实时|快讯|头条|天气"
    r"|hôm\s+nay|mới\s+nhất|tin\s+tức|hiện\s+nay|tuần\s+này|gần\s+đây|thời\s+tiết",
    re.I,
)
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")  # in any script's digits (２０２６, ٢٠٢٦): int() reads them all

_REFERENCE_WORDS = re.compile(
    r"\b(?:docs?|documentation|api|reference|manual|tutorials?|guide|spec|specification|rfc|syntax|examples?|"
    r"install(?:ation|ing)?|package|library|module|crate|gem|npm|pip|pypi|cargo|sdk|release\s+notes|changelog)\b"
    r"|文档|教程|手册|安装|示例|用法|官方|hướng\s+dẫn|tài\s+liệu",
    re.I,
)

# Words that do not belong to the name a navigational query spells: question words, articles, and
# words about the kind of page wanted ("python docs", "bilibili official site", "apple inc").
_NOT_NAME = frozenset("""
a an the of for to in on and or is are was what who whom which where when why how does do
official site website homepage home page web online docs doc documentation inc ltd llc corp co
company corporation download login app
""".split())
_VERSION = re.compile(r"^v?\d+(?:\.\d+)*[a-z]?$", re.I)
_WORD = re.compile(r"[^\W_]+(?:[-'.][^\W_]+)*", re.U)


@dataclass(frozen=True)
class Intent:
    timely: bool = False
    official: tuple[str, ...] = ()  # domains official for what the query names
    subject: str = ""  # a query that is only a name, in letters and digits ("modelcontextprotocol")
    reference: bool = False  # asks for documentation or a package


def is_timely(query: str, operators: Operators | None = None, *, category: str | None = None,
              now: datetime | None = None) -> bool:
    """Whether a recent date should count for this query."""
    if category == "news":
        return True
    if operators is not None and (operators.time_range or operators.since):
        return True
    if _TIMELY_WORDS.search(query):
        return True
    # A year asks for its own time; only a year at most one away from now asks for recent pages.
    year = (now or datetime.now()).year
    return any(abs(int(found) - year) <= 1 for found in _YEAR.findall(query))


def _name_pattern(name: str) -> re.Pattern[str]:
    """A name as a whole word (digits may follow: vue3, python3); a name of one or two letters ("go",
    "r") only when a version number follows it, since alone it is an ordinary word."""
    escaped = re.escape(name.casefold()).replace(r"\ ", r"\s+")
    if has_cjk(name):  # CJK text has no word boundaries (Korean attaches particles: 카카오의)
        return re.compile(escaped)
    tail = r"(?=\s*v?\d)" if len(name) <= 2 else r"(?![^\W\d_])"
    return re.compile(r"(?<![\w.+#-])" + escaped + tail)


_PATTERNS: dict[str, re.Pattern[str]] = memo.register({})


def official_domains(query: str, table: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Domains of the projects, products and organisations `query` names, from `table` (name → domains).
    Longer names first, and a name found inside a longer one does not count on its own ("react native"
    names React Native, not React)."""
    text = query.casefold()
    squeezed = " ".join(text.split())
    found: list[str] = []
    for name in sorted(table, key=len, reverse=True):
        if name.casefold() not in squeezed:  # cannot match: no pattern compiled for it (~150 names, 25 ms a process)
            continue
        pattern = _PATTERNS.get(name)
        if pattern is None:
            pattern = _PATTERNS[name] = _name_pattern(name)
        match = pattern.search(text)
        if match:
            found.extend(d.lower() for d in table[name] if d.lower() not in found)
            text = text[:match.start()] + " " * (match.end() - match.start()) + text[match.end():]
    return tuple(found)


def query_subject(query: str) -> str:
    """The name a navigational query spells, in letters and digits: one word once question words,
    page-kind words and versions are gone ("Tauri v2" → "tauri", "apple inc" → "apple"); empty for
    anything else. Names of several words ("hello world", "model context protocol") are too often
    ordinary phrases: those come from the official-sites table only."""
    words = [w.casefold() for w in _WORD.findall(query)]
    name = [w for w in words if w not in _NOT_NAME and not _VERSION.match(w)]
    if len(name) != 1:
        return ""
    subject = re.sub(r"[^a-z0-9]", "", name[0])
    return subject if len(subject) >= 4 and subject.isascii() and not subject.isdigit() else ""


def read_intent(query: str, operators: Operators | None = None, *, official_sites: Mapping[str, Sequence[str]],
                category: str | None = None, now: datetime | None = None) -> Intent:
    text = operators.text if operators is not None else query
    return Intent(
        timely=is_timely(query, operators, category=category, now=now),
        official=official_domains(text, official_sites),
        subject=query_subject(text),
        reference=bool(_REFERENCE_WORDS.search(text)) or category in ("docs", "package"),
    )
