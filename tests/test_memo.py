"""Everything the process remembers between calls is reachable from one place (plugin.infra.memo): a
module-level cache in plugin/ that does not register fails here, and `forget_all()` empties every one and
closes the kept searchers and readers, in a running loop and outside one."""

from __future__ import annotations

import ast
import asyncio
import functools
import importlib
import pkgutil
from pathlib import Path

import pytest

import plugin
from plugin.infra import memo
from plugin.infra.lifecycle import KeptPerSettings
from plugin.settings import Settings
from standins import page

# Module-level state that looks like a cache but must outlive a reset, and why.
NOT_CACHES = {
    "plugin.infra.logs._REGISTERED": "API keys registered for redaction: forgetting one would let it into a log",
    "plugin.infra.memo._KEPT": "the registry itself",
    "plugin.infra.memo._TABLES": "the registry itself",
    "plugin.reading.chromium._live": "browsers running, killed at interpreter exit: forgetting one would leave it running",
}
_CACHE_DECORATORS = {"lru_cache", "cache"}  # functools.lru_cache(...), functools.cache, bare or called
_EMPTY_CONTAINERS = {"dict", "set", "list", "OrderedDict", "Counter", "WeakValueDictionary", "WeakKeyDictionary",
                     "WeakSet"}
_ANY_ARGUMENTS = {"defaultdict", "deque", "KeptPerSettings"}  # state whatever they are made with


def _name_called(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _starts_empty(value: ast.expr | None) -> bool:
    """A value a module-level cache starts as: an empty container, or a keeper of long-lived objects."""
    if isinstance(value, ast.Call) and _name_called(value) == "register" and value.args:
        value = value.args[0]  # memo.register({}): look at what is registered
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, (ast.Set, ast.List)):
        return not value.elts
    if isinstance(value, ast.Call):
        name = _name_called(value)
        return name in _ANY_ARGUMENTS or (name in _EMPTY_CONTAINERS and not value.args and not value.keywords)
    return False


def _cache_names(body: list[ast.stmt], prefix: str = "") -> list[str]:
    """Qualified names of the caches defined in a module's or class's body: functions (methods too)
    behind functools' caches, and names bound to what a cache starts as."""
    found = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_name_called(decorator) in _CACHE_DECORATORS for decorator in node.decorator_list):
                found.append(prefix + node.name)
        elif isinstance(node, ast.ClassDef):
            found += _cache_names(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _starts_empty(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            # mutmut's copy of a module (scripts/mutation.py) holds a table of each function's mutants
            # (`mutants_x_name__mutmut`): its own code, not ours, so not a cache to register.
            found += [prefix + target.id for target in targets
                      if isinstance(target, ast.Name) and not target.id.endswith("__mutmut")]
    return found


def module_level_caches() -> dict[str, object]:
    """Every cache defined at module or class level in plugin/, by qualified name (each module imported)."""
    caches: dict[str, object] = {}
    for info in pkgutil.walk_packages(plugin.__path__, "plugin."):
        module = importlib.import_module(info.name)
        for qualname in _cache_names(ast.parse(Path(module.__file__).read_text(encoding="utf-8")).body):
            found: object = module
            try:
                for part in qualname.split("."):
                    found = getattr(found, part)
            except AttributeError:  # a model's field default (pydantic keeps none on the class): no shared object
                continue
            caches[f"{info.name}.{qualname}"] = found
    return caches


def test_every_module_level_cache_in_plugin_is_registered():
    caches = module_level_caches()
    # The scan finds what is known to be there (else it could pass by finding nothing).
    assert {"plugin.pipeline.canonical._canonical_url", "plugin.pipeline.intent._PATTERNS",
            "plugin.pipeline.suffixes._trie", "plugin.pipeline.searcher._searchers",
            "plugin.reading.reader._readers", "plugin.infra.logs._REGISTERED"} <= set(caches)
    registered = memo.registered()
    unregistered = [name for name, cache in caches.items()
                    if name not in NOT_CACHES and not any(cache is kept for kept in registered)]
    assert not unregistered, (f"{unregistered}: register each with plugin.infra.memo where it is defined "
                              "(@memo.register above the lru_cache, memo.register({}) around a dict), so "
                              "forget_all() reaches it; or, if it must survive a reset, say why in NOT_CACHES")
    assert set(NOT_CACHES) <= set(caches)  # no stale exception


def test_the_scan_sees_each_shape_of_cache():
    source = '''
import functools
from functools import lru_cache
_A = {}
_B: dict[str, int] = dict()
_C = set()
_D = collections.defaultdict(list)
_E = memo.register({})
_F = KeptPerSettings(Searcher, keep=8)
TABLE = {"a": 1}
NAMES = ("a",)
@functools.lru_cache(maxsize=8)
def f(): ...
@lru_cache
def g(): ...
@functools.cache
def h(): ...
def plain(): ...
class K:
    _seen = []
    @functools.lru_cache
    def m(self): ...
'''
    assert _cache_names(ast.parse(source).body) == ["_A", "_B", "_C", "_D", "_E", "_F", "f", "g", "h", "K._seen",
                                                    "K.m"]


@pytest.fixture
def empty_registry(monkeypatch):
    """A registry of its own, so what a test registers does not stay registered."""
    monkeypatch.setattr(memo, "_KEPT", [])
    monkeypatch.setattr(memo, "_TABLES", [])


def test_register_hands_back_what_it_registers_and_refuses_what_cannot_be_forgotten(empty_registry):
    cache: dict[str, int] = {}
    assert memo.register(cache) is cache and memo.register(cache) is cache
    assert memo.registered() == (cache,)
    cache["a"] = 1
    memo.forget_all()
    assert cache == {}
    with pytest.raises(TypeError, match="cannot be forgotten"):
        memo.register(("a", "tuple"))


def test_a_table_takes_no_arguments(empty_registry):
    @functools.lru_cache(maxsize=1)
    def table() -> dict[str, int]:
        return {"a": 1}

    @functools.lru_cache(maxsize=64)
    def memo_of(text: str) -> str:
        return text.upper()

    assert memo.register_table(table) is table
    table()
    memo.forget_all(tables=True)
    assert table.cache_info().currsize == 0
    with pytest.raises(TypeError, match="register it as a memo"):
        memo.register_table(memo_of)
    with pytest.raises(TypeError, match="not a functools cache"):
        memo.register_table(lambda: {})


async def test_forget_all_empties_every_memo_and_keeper_and_the_tables_when_asked():
    from plugin.pipeline import canonical, intent, relevance, searcher, suffixes
    from plugin.reading import reader
    from plugin.surfaces import service

    def warm() -> list[object]:
        canonical.canonical_url("https://www.Example.com/a?utm_source=x")
        canonical.identity("https://example.com/a")
        intent.official_domains("python docs", {"python": ("python.org",)})
        relevance.fold("café")
        suffixes.registrable("docs.python.org")
        service._known_parameters("/search")
        searcher.searcher_for(Settings())
        reader.reader_for(Settings())
        warmed = [canonical._canonical_url, canonical._identity, intent._PATTERNS, service._known_parameters,
                  searcher._searchers, reader._readers, relevance._combining_marks, suffixes._trie]
        assert all(_size(kept) for kept in warmed), [_size(kept) for kept in warmed]
        return warmed

    memos, tables = warm()[:6], warm()[6:]
    memo.forget_all()
    # Every memo is empty; tables are kept (these two, and any other a test before this one built: the
    # meaning model's, say).
    assert {repr(kept): _size(kept) for kept in memo.registered()
            if _size(kept) and kept not in memo.registered_tables()} == {}
    assert all(_size(table) for table in tables)  # built from what does not change: kept unless asked
    warm()
    memo.forget_all(tables=True)
    assert {repr(kept): _size(kept) for kept in memo.registered() if _size(kept)} == {}
    await asyncio.gather(*searcher._searchers.retiring, *reader._readers.retiring)
    assert memos


def _size(kept: object) -> int:
    if isinstance(kept, KeptPerSettings):
        return len(kept.kept)
    info = getattr(kept, "cache_info", None)
    return info().currsize if info else len(kept)  # type: ignore[arg-type]


def test_forgotten_searchers_close_their_store_outside_a_loop(private_state):
    from plugin.pipeline.searcher import searcher_for

    searcher = searcher_for(Settings())
    assert searcher.state.close_at_exit is not None
    closed: list[str] = []
    searcher.state.close_at_exit = lambda: closed.append("store")  # the real one closes the sqlite file
    memo.forget_all()
    assert closed == ["store"]
    assert searcher_for(Settings()) is not searcher  # a new one: nothing was remembered


async def test_forgotten_readers_close_their_session_in_a_running_loop(standins, monkeypatch):
    from plugin.reading import reader as reading

    monkeypatch.setenv("METASEARCH_ALLOW_PRIVATE_HOSTS", "127.0.0.1/32")
    engine = await standins(page("<html><body><article><p>" + "Some text. " * 50 + "</p></article></body></html>"))
    kept = reading.reader_for(Settings(fetch_robots=False, allow_private_hosts="127.0.0.1/32"))
    await kept.fetch(f"{engine.url}/page")  # the reader opens its session
    session = kept.client.transport.pool
    memo.forget_all()
    await asyncio.gather(*reading._readers.retiring)  # closed in the background, without making us wait
    assert session.closed and reading._readers.kept == {}
