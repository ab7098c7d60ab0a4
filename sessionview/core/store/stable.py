"""Wait until a file stops changing: its size, mtime and inode unchanged for a quiet period.

An agent such as Brute rewrites its session in place (truncate, then one line per message). Reading it in
the middle of that sees a shrunk or half-written file; waiting for a quiet moment first avoids it.
"""

from __future__ import annotations

import os
import time

ATTEMPTS = 6  # the first try and 5 more after the file was rewritten under us
QUIET = 0.1  # seconds the file must be unchanged before a load, when it is being written
STABLE_TIMEOUT = 1.0  # then try anyway: a plan and a save need only a short quiet window
#: before a refusal of a file caught mid-write is believed (empty, or its last line without its newline): the
#: file Brute has just truncated stays so until its writer runs again, which on a loaded machine can be longer
#: than QUIET
MID_WRITE_QUIET = 1.0
MID_WRITE_TIMEOUT = 3.0


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


def wait_quiet(path: str) -> None:
    """Wait for a quiet moment before reading ``path`` again (it changed under the last read)."""
    wait_stable(path, quiet=QUIET, timeout=STABLE_TIMEOUT)


def wait_before_refusing(path: str, mid_write: bool) -> None:
    """Wait before a refusal of ``path`` is believed: a quiet moment, and a longer one when the file was loaded
    as a rewrite in place leaves it midway (``mid_write``: empty, or its last line unfinished), since its
    writer, preempted, may not have written the rest yet."""
    if mid_write:
        wait_stable(path, quiet=MID_WRITE_QUIET, timeout=MID_WRITE_TIMEOUT)
    else:
        wait_quiet(path)
