"""Wait until a file stops changing: its size, mtime and inode unchanged for a quiet period.

An agent such as Brute rewrites its session in place (truncate, then one line per message). Reading it in
the middle of that sees a shrunk or half-written file; waiting for a quiet moment first avoids it.
"""

from __future__ import annotations

import os
import time


def _key(path: str | os.PathLike[str]) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def wait_stable(path: str | os.PathLike[str], quiet: float = 0.1, timeout: float = 3.0) -> bool:
    """Wait until ``path``'s size, mtime and inode have not changed for ``quiet`` seconds.

    True once they have; False if ``timeout`` seconds passed first (or the file cannot be stat'ed: the
    caller's next open reports why). Polls every few milliseconds; never raises for a missing file.
    """
    start = time.monotonic()
    deadline = start + timeout
    key = _key(path)
    if key is None:
        return False
    since = start
    while True:
        now = time.monotonic()
        if now - since >= quiet:
            return True
        if now >= deadline:
            return False
        time.sleep(min(0.005, max(0.0, quiet - (now - since))) or 0.001)
        k = _key(path)
        if k is None:
            return False
        if k != key:
            key, since = k, time.monotonic()
