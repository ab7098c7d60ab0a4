"""Helpers for the serve tests (a module of its own: every test directory has a conftest)."""

from __future__ import annotations

import asyncio
import glob
import os
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).parent

FAKE_APP = HERE / "fake_app.py"
BRUTE = HERE.parent / "fixtures" / "brute-session.jsonl"


def fake_argv(*extra: str) -> list[str]:
    return [sys.executable, str(FAKE_APP), *extra]


def children() -> set[int]:
    """Process ids of this test process's children, from /proc (no bookkeeping of the server's)."""
    pids: set[int] = set()
    for f in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        try:
            with open(f) as fh:
                pids.update(int(p) for p in fh.read().split())
        except OSError:
            pass
    return pids


def gone(pid: int) -> bool:
    """True once the process is reaped (a zombie still has its /proc entry)."""
    return not os.path.exists(f"/proc/{pid}")


async def wait_for(predicate, timeout: float = 10.0, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(step)
    return predicate()


def none_left(server) -> bool:
    """None of the server's app processes is still a child of this process (running or a zombie).

    Compared with the server's own list, not with "no children at all": other tests' processes (the
    browser's driver, a CLI under test) may still be on their way out.
    """
    return not (children() & set(server.stats.pids))
