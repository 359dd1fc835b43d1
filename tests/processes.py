"""A server subprocess a test starts: stopped if the test leaves it running, and how it ended."""

from __future__ import annotations

import contextlib


@contextlib.asynccontextmanager
async def reaped(proc):
    """The block's subprocess, killed and waited for if the block leaves it running (a failed assertion, a
    timeout)."""
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def ended_cleanly(proc, code: int) -> str:
    """What a server process that ended said on stderr, once it is checked to have exited 0 without a
    traceback (returned for the test's own checks)."""
    errors = (await proc.stderr.read()).decode()
    assert code == 0, errors
    assert "Traceback" not in errors, errors
    return errors
