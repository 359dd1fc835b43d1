"""Checking that CPU work runs off the event loop: the function is patched to wait until a coroutine on
the loop has run (run on the loop itself, it would wait in vain; bounded, so a wrong placement fails
instead of hanging), while `other_request` plays another request of the same process."""

from __future__ import annotations

import asyncio
import threading


def waiting_for_the_loop(monkeypatch, module, name: str) -> tuple[dict, threading.Event]:
    """`module.name` patched to wait for the loop; `seen` gets the thread it ran on and whether the loop
    ran meanwhile."""
    loop_ran = threading.Event()
    seen: dict[str, object] = {}
    real = getattr(module, name)

    def waiting(*args, **kwargs):
        seen["thread"] = threading.current_thread()
        seen["loop_ran_meanwhile"] = loop_ran.wait(timeout=20)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, waiting)
    return seen, loop_ran


async def other_request(seen: dict, loop_ran: threading.Event) -> int:
    """Another request of the same process: it makes progress while the patched function runs."""
    turns = 0
    for turns in range(20000):
        if "thread" in seen:
            loop_ran.set()
            break
        await asyncio.sleep(0.001)
    return turns


def ran_off_the_loop(seen: dict) -> bool:
    return seen.get("thread") not in (None, threading.main_thread()) and seen.get("loop_ran_meanwhile") is True
