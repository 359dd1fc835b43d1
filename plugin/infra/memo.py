"""What the process remembers between calls, reachable from one place.

Memo caches (canonical URLs, official-name patterns, the public suffix trie, …) and the long-lived
searchers and page readers (`lifecycle.KeptPerSettings`) live at module level. Each registers here where
it is defined, `@memo.register` above `@functools.lru_cache`, `memo.register({})` around a dict, so a
test or a long-lived host starts cold with one call, `forget_all()`, without knowing each one.
tests/test_memo.py fails when a module-level cache in plugin/ does not register.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")

_KEPT: list[object] = []


def register(kept: T) -> T:
    """Make `kept` forgettable by `forget_all()` and hand it back unchanged: a function wrapped by
    `functools.lru_cache` or `functools.cache` (emptied with `cache_clear()`), or an object with `clear()`
    (a dict or set used as a cache, a `KeptPerSettings`)."""
    if not callable(getattr(kept, "cache_clear", None)) and not callable(getattr(kept, "clear", None)):
        raise TypeError(f"{kept!r} has neither cache_clear() nor clear(): it cannot be forgotten")
    if not any(kept is known for known in _KEPT):
        _KEPT.append(kept)
    return kept


def registered() -> tuple[object, ...]:
    """Everything registered so far (modules not yet imported have registered nothing, and hold nothing)."""
    return tuple(_KEPT)


def forget_all() -> None:
    """Empty every registered cache and forget every kept searcher and reader, closing each (see
    `KeptPerSettings.clear`): what comes next starts cold, as in a new process."""
    for kept in _KEPT:
        forget = getattr(kept, "cache_clear", None)
        (forget if callable(forget) else kept.clear)()  # type: ignore[attr-defined]
