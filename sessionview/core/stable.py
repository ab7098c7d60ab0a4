"""Waiting for a file to stop changing, before retrying an operation that met a concurrent rewrite."""

from __future__ import annotations

import os
import time

__all__ = ["wait_stable"]


def _key(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def wait_stable(path: str | os.PathLike[str], quiet: float = 0.1, timeout: float = 3.0) -> bool:
    """Return True once the file's inode, size and mtime stayed the same for ``quiet`` seconds.

    Returns False when that did not happen within ``timeout`` seconds. A missing file counts as a state
    too (it is stable while it stays missing). Polls ``os.stat``, never opens the file.
    """
    p = os.fspath(path)
    start = time.monotonic()
    deadline = start + timeout
    poll = max(0.002, min(quiet / 5, 0.05))
    last = _key(p)
    since = start
    while True:
        now = time.monotonic()
        if now - since >= quiet:
            return True
        if now >= deadline:
            return False
        time.sleep(min(poll, max(0.0, deadline - now), max(0.0, quiet - (now - since))) or poll)
        cur = _key(p)
        if cur != last:
            last = cur
            since = time.monotonic()
