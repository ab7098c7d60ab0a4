"""Waiting between two polls of a followed file: woken at once when the file changes (Linux inotify).

A :class:`Wake` is what the follow thread waits on. It is a stop flag like :class:`threading.Event` (``set``,
``is_set``, ``wait``), and once :meth:`Wake.watch` was called for a path, :meth:`Wake.wait` also returns
as soon as the kernel reports a change to the file or to its name in its directory (written, truncated,
its attributes changed, created, moved or renamed over, deleted). The follower then looks at the file
right away instead of at its next poll: an append shows a poll interval sooner, and a quiet file costs
no polls but the rare fallback ones.

Polling stays the rule: a change that inotify does not report (a network file system, a FUSE mount) is
found by the fallback poll, and the caller then stops trusting the watch (:meth:`Wake.unwatch`). Where
inotify is missing (not Linux, no instances left, a directory that cannot be watched) :meth:`Wake.watch`
returns False and ``wait`` is a plain timed wait.

Stdlib only (``ctypes`` is imported when a watch starts, never at import).
"""

from __future__ import annotations

import os
import select
import struct
import sys
import threading
import time
from typing import Any, Callable

# inotify(7)
IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

FILE_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF
DIR_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
WATCHED_POLL = 0.25  # seconds between two polls of a watched file that did not change (the safety net)
MIN_GAP = 0.25  # of the poll interval: the least time between two polls woken by changes (a burst of writes)
MISS_GRACE = 0.02  # seconds a notice may come after the change a poll found
MISSES = 2  # changes found by fallback polls and never reported that end the watching
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)

_libc: Any = None


def _lib() -> Any:
    global _libc
    if _libc is None:
        import ctypes

        lib = ctypes.CDLL(None, use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        _libc = lib
    return _libc


class Wake:
    """A stop flag that a follow thread waits on between polls; see the module docstring.

    ``set`` may be called from any thread; the other methods belong to the waiting thread."""

    armed = False  # set (by the thread that starts the follower) once watching may start: poll_loop then watches

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._pipe: tuple[int, int] | None = None  # wakes a select() when set() is called
        self._fd = -1  # the inotify descriptor (-1: not watching)
        self._dir_wd = -1
        self._name = b""
        self._lock = threading.Lock()

    # -- the stop flag ------------------------------------------------------------------------
    def set(self) -> None:
        self._stopped.set()
        with self._lock:
            if self._pipe is not None:
                try:
                    os.write(self._pipe[1], b"x")
                except OSError:
                    pass

    def is_set(self) -> bool:
        return self._stopped.is_set()

    # -- watching -----------------------------------------------------------------------------
    @property
    def watching(self) -> bool:
        return self._fd >= 0

    def watch(self, path: str) -> bool:
        """Be woken by changes to ``path`` (and its name in its directory). False where that cannot be done."""
        if self._fd >= 0:
            return True
        if not sys.platform.startswith("linux") or self._stopped.is_set():
            return False
        try:
            lib = _lib()
        except (OSError, AttributeError):
            return False
        fd = lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return False
        directory, name = os.path.split(os.path.abspath(path))
        wd = lib.inotify_add_watch(fd, os.fsencode(directory), DIR_MASK)
        if wd < 0:
            os.close(fd)
            return False
        with self._lock:
            try:
                self._pipe = os.pipe()
            except OSError:  # out of descriptors: no watch, plain polling (the follower goes on)
                os.close(fd)
                return False
            if self._stopped.is_set():
                os.write(self._pipe[1], b"x")
        self._fd, self._dir_wd, self._name = fd, wd, os.fsencode(name)
        self._path = os.fsencode(path)
        self.watch_file()
        return True

    def watch_file(self) -> None:
        """(Again) watch the file now at the path itself: writes through another name (a hard link) wake too."""
        if self._fd >= 0:
            _lib().inotify_add_watch(self._fd, self._path, FILE_MASK)  # (fails quietly while the path is missing)

    def unwatch(self) -> None:
        """Stop watching: ``wait`` is a plain timed wait from now on."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        self.unwatch()
        with self._lock:
            if self._pipe is not None:
                for fd in self._pipe:
                    os.close(fd)
                self._pipe = None

    # -- waiting ------------------------------------------------------------------------------
    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds, until stopped or (when watching) until the file changed.
        Returns whether the file changed (as far as the watch knows: False after a plain timeout)."""
        if self._fd < 0 or self._pipe is None:
            self._stopped.wait(timeout)
            return False
        deadline = time.monotonic() + timeout
        while not self._stopped.is_set():
            try:
                ready, _, _ = select.select([self._fd, self._pipe[0]], [], [], max(0.0, deadline - time.monotonic()))
            except (OSError, ValueError):
                self._stopped.wait(max(0.0, deadline - time.monotonic()))
                return False
            if self._fd not in ready:
                return False  # the time is up, or stopped
            if self._drain():
                return True
            # (another file in the directory changed: wait on)
        return False

    def sleep(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds or until stopped; changes reported meanwhile stay queued."""
        self._stopped.wait(timeout)

    def pending(self, timeout: float = 0.0) -> bool:
        """Whether a change was reported (within ``timeout`` seconds) and not waited for yet (consumed)."""
        if self._fd < 0:
            return False
        try:
            ready, _, _ = select.select([self._fd], [], [], timeout)
        except (OSError, ValueError):
            return False
        return bool(ready) and self._drain()

    def _drain(self) -> bool:
        """Read every queued notice; whether one is about the followed file."""
        relevant = False
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return relevant
            except OSError:
                return True
            if not data:
                return relevant
            pos = 0
            while pos + _HEADER.size <= len(data):
                wd, mask, _, size = _HEADER.unpack_from(data, pos)
                name = data[pos + _HEADER.size : pos + _HEADER.size + size].rstrip(b"\0")
                pos += _HEADER.size + size
                if wd != self._dir_wd or mask & IN_Q_OVERFLOW or name == self._name:
                    relevant = True


def poll_loop(wake: Wake, follower: Any, path: str, interval: float, post: Callable[[list], object]) -> None:
    """Poll ``follower`` (a :class:`~sessionview.core.tail.Follower`) and ``post`` what it reports, until
    ``wake`` is set: every ``interval`` seconds; once ``wake`` is armed and watches ``path``, when the file
    changed (at most every ``MIN_GAP * interval``) and every WATCHED_POLL otherwise, while the follower is
    settled. Fallback polls that find changes the watch did not report (MISSES of them) end the watching."""
    timed_out = False
    misses = 0
    while not wake.is_set():
        ident = getattr(follower, "ident", None)
        last = time.monotonic()
        events = follower.poll()
        if events:
            # a change the kernel did not report (twice: a writer may be preempted between growing the file
            # and queueing the notice): poll from now on
            if timed_out and wake.watching and not wake.pending(MISS_GRACE):
                misses += 1
                if misses >= MISSES:
                    wake.unwatch()
            if wake.watching and getattr(follower, "ident", None) != ident:
                wake.watch_file()  # a new file at the path
            post(events)
        if wake.armed and not wake.watching:
            wake.armed = False  # (once)
            wake.watch(path)
        if wake.watching and getattr(follower, "settled", False):
            timed_out = not wake.wait(WATCHED_POLL)
            rest = last + interval * MIN_GAP - time.monotonic()
            if not timed_out and rest > 0:
                wake.sleep(rest)
        else:
            wake.wait(interval)
            timed_out = False
