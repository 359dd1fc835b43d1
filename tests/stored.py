"""What a server process left in the SQLite state store once it has ended: read back the way the next
process would read it, with the database's own integrity check (a store left half-written fails it)."""

from __future__ import annotations

import sqlite3

from plugin.infra.state import open_state
from plugin.settings import Settings


async def stored_entries(endpoints: dict[str, str], *engines: str) -> dict:
    """{engine: its stored cooldown entry or None} in the default SQLite store, for engines sent to
    `endpoints` (an upstream is keyed by its endpoint); asserts the database checks clean."""
    settings = Settings(endpoints=endpoints, state_backend="sqlite")
    state = open_state(settings)
    try:
        entries = {engine: await state.get(settings.upstream(engine)) for engine in engines}
        path = state.path
    finally:
        await state.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    return entries
