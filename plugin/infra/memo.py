"""What the process remembers between calls, reachable from one place.

Memo caches (canonical URLs, official-name patterns, …), tables built once (the public suffix trie, …)
and the long-lived searchers and page readers (`lifecycle.KeptPerSettings`) live at module level. Each
registers here where it is defined (`@memo.register` above `@functools.lru_cache`, `memo.register({})`
around a dict, `@memo.register_table`; a `KeptPerSettings` registers itself), so a test or a long-lived
host starts cold with one call, `forget_all()`, without knowing each one. tests/test_memo.py fails when
a module-level cache in plugin/ does not register.
"""

from __future__ import annotations

import inspect
from typing import Callable, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound=Callable[[], object])

_KEPT: list[object] = []
_TABLES: list[object] = []


def register(kept: T) -> T:
    """Make `kept` forgotten by `forget_all()` and hand it back unchanged: a function wrapped by
    `functools.lru_cache` or `functools.cache` (emptied with `cache_clear()`), or an object with `clear()`
    (a dict or set used as a cache, a `KeptPerSettings`)."""
    if not callable(getattr(kept, "cache_clear", None)) and not callable(getattr(kept, "clear", None)):
        raise TypeError(f"{kept!r} has neither cache_clear() nor clear(): it cannot be forgotten")
    _add(_KEPT, kept)
    return kept


def register_table(table: F) -> F:
    """Register a cached function without arguments that builds a table from what does not change while
    the process runs (the installed public suffix list, Unicode data). Forgetting one changes
    nothing but the time to build it again (the suffix trie: ~15 ms), so only `forget_all(tables=True)`
    does."""
    if not callable(getattr(table, "cache_clear", None)):
        raise TypeError(f"{table!r} is not a functools cache: it cannot be forgotten")
    if inspect.signature(table).parameters:
        raise TypeError(f"{table!r} takes arguments: what it remembers depends on them, register it as a memo")
    _add(_TABLES, table)
    return table


def _add(kept_list: list[object], kept: object) -> None:
    if not any(kept is known for known in _KEPT + _TABLES):
        kept_list.append(kept)


def registered() -> tuple[object, ...]:
    """Everything registered so far (modules not yet imported have registered nothing, and hold nothing)."""
    return tuple(_KEPT + _TABLES)


def registered_tables() -> tuple[object, ...]:
    """The tables among them (`register_table`): kept by `forget_all()` unless asked."""
    return tuple(_TABLES)


def forget_all(*, tables: bool = False) -> None:
    """Empty every registered memo cache and forget every kept searcher and reader, closing each (see
    `KeptPerSettings.clear`; meant for between calls: a search still running on a forgotten searcher
    loses its sessions). `tables=True` forgets the tables too, as a new process would start."""
    for kept in _KEPT + (_TABLES if tables else []):
        forget = getattr(kept, "cache_clear", None)
        (forget if callable(forget) else kept.clear)()  # type: ignore[attr-defined]
