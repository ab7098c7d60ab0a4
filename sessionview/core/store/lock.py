"""The LittleGhost store lock: an exclusive flock on the store's lock file, held for the whole save."""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from sessionview.core.errors import Locked, write_failed
from sessionview.core.store.fsio import O_CLOEXEC, O_NOFOLLOW
from sessionview.core.store.writers import command

__all__ = ["LOCK_TIMEOUT", "store_lock"]

LOCK_TIMEOUT = 2.0  # seconds to wait for a LittleGhost store lock


def _lock_holder(st: os.stat_result) -> str:
    """Best effort: who holds a flock on this inode (from /proc/locks)."""
    try:
        with open("/proc/locks", "rb") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    for line in lines:
        parts = line.split()
        if b"FLOCK" not in parts:
            continue
        for i, p in enumerate(parts):
            if p.count(b":") == 2:
                try:
                    ino = int(p.rsplit(b":", 1)[1])
                    pid = int(parts[i - 1])
                except (ValueError, IndexError):
                    break
                if ino == st.st_ino and pid > 0:
                    return f" by pid {pid} ({command(pid)})"
                break
    return ""


@contextmanager
def store_lock(
    lock_path: str | os.PathLike[str] | None,
    timeout: float,
    given: str,
    step: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the flock of ``lock_path`` (None: no lock) or raise :class:`Locked` after ``timeout`` seconds.

    ``step("lock")`` is called once the lock is held (the save's crash-test hook).
    """
    if lock_path is None:
        yield
        return
    lp = os.fspath(lock_path)
    try:
        fd = os.open(lp, os.O_RDWR | os.O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise write_failed(exc, "opening the lock file", given) from exc
    try:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    who = _lock_holder(os.fstat(fd))
                    raise Locked(
                        f"refused: {given} is locked: {lp} is held{who}; the store is being written, try again",
                        given,
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
            except OSError as exc:
                raise write_failed(exc, "locking the store", given) from exc
        if step is not None:
            step("lock")
        yield
    finally:
        os.close(fd)  # releases the flock
