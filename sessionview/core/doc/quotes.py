"""The quotes of each line that no backslash escapes, counted by a second process ahead of a pass over a big file.

:func:`~sessionview.core.doc.parse.parse_record` proves that a record repeats no key by counting the strings of
its bytes (two unescaped quotes each) against the strings of its parsed value. Counting them takes two to three
scans of the bytes, a quarter to a third of the parse itself. On a pass over a big file (``JsonlSession.view(n,
keep=False)`` for every ``n``, see :class:`~sessionview.core.doc.ahead.LinesAhead`) a forked helper counts them
for the lines ahead of the reader, a few megabytes at a time (:func:`unescaped_quotes_of_lines`), into memory
shared with the reader (4 bytes a line). The reader takes a count when it is there and counts itself when it is
not (the helper is behind, or gone): the records and their marks are the same either way, only the time differs.

Both processes read the same open file at the offsets of the same line index (copied on fork). A count only ever
says "as many strings as the value's, so no duplicate key"; any other count sends the record to the exact test
of the bytes it was parsed from.
"""

from __future__ import annotations

import bisect
import mmap
import os
import signal
import sys
import threading
from array import array
from typing import Sequence

from sessionview.core.doc.document import Source

__all__ = ["ENABLED", "MIN_BYTES", "QuoteHelper", "unescaped_quotes_of_lines", "can_fork"]

#: whether a pass may start a helper at all (a process that already splits its work between cores turns it off)
ENABLED = True
MIN_BYTES = 32 * 1024 * 1024  # the bytes left to read below which a second process costs more than it saves
BLOCK = 4 * 1024 * 1024  # bytes counted at once by the helper
LONG = 16 * 1024 * 1024  # a line longer than this is not read by the helper (over the parse's default cap)


def unescaped_quotes_of_lines(data: bytes, offsets: Sequence[int]) -> array:
    """:func:`~sessionview.core.doc.parse.unescaped_quotes` of each ``data[offsets[k]:offsets[k + 1]]``.

    Over the whole block at once: escaped backslashes, then escaped quotes, become two NULs each (the same
    length, so the offsets stay; neither ever spans a line end), and the quotes left are counted line by line."""
    c = data
    if b"\\" in c:
        if b"\\\\" in c:
            c = c.replace(b"\\\\", b"\0\0")
        c = c.replace(b'\\"', b"\0\0")
    count = c.count
    return array("i", [count(b'"', offsets[k], offsets[k + 1]) for k in range(len(offsets) - 1)])


def can_fork() -> bool:
    """Whether this process may fork a helper: Linux, two cores, no thread but this one (a fork copies only the
    calling thread, so a lock another thread holds would stay locked in the child), and a core left idle by the
    rest of the machine (the one-minute load average below the cores): the helper spends more CPU on its counts
    than the reader saves, so it pays only where it runs beside the reader, not instead of another's work."""
    if not (ENABLED and hasattr(os, "fork") and sys.platform.startswith("linux") and threading.active_count() == 1):
        return False
    cpus = os.cpu_count() or 1
    return cpus > 1 and _load() < cpus


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("inf")


class QuoteHelper:
    """A forked process counting the unescaped quotes of lines ``first..`` of ``source`` ahead of the reader.

    The counts go into memory shared with it (4 bytes a line: the count plus one, 0 while not counted). The reader
    posts the line it is at; a helper that finds itself behind it skips ahead of it, so the two never count the
    same lines for long, whichever is faster (or more loaded)."""

    def __init__(self, source: Source, first: int) -> None:
        self.source = source
        self.first = first
        lines = len(source.starts) - first
        self._map = mmap.mmap(-1, 4 * (lines + _HEAD))  # anonymous and shared: zeros
        self._shared = memoryview(self._map).cast("i")
        self._counts = self._shared[_HEAD:]
        self._posted = first
        self._pid: int | None = None
        reader = os.getpid()
        pid = os.fork()
        if pid == 0:  # the helper: count, and exit without this process's cleanup
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                _count_lines(source, first, self._shared, reader)
            except BaseException:  # noqa: BLE001 - the file changed (a short read): the reader counts itself
                code = 1
            finally:
                os._exit(code)
        self._pid = pid

    def get(self, i: int) -> int:
        """The count of line ``i``, or -1 when the helper has not counted it."""
        k = i - self.first
        if k >= 0:
            if i >= self._posted:  # tell the helper where the reader is (every few lines: it looks once a block)
                self._shared[_AT] = i
                self._posted = i + _POST_EVERY
            try:
                return self._counts[k] - 1
            except IndexError:  # a line beyond the index of the fork (none: the source is immutable)
                pass
        return -1

    def close(self) -> None:
        """Stop the helper (if it still runs) and reap it."""
        pid, self._pid = self._pid, None
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit
            pass


_HEAD = 2  # the shared ints before the counts: [the line the reader is at, unused]
_AT = 0
_POST_EVERY = 32  # lines between two posts of the reader's place
LEAD = 1 << 20  # bytes past the reader where a helper that fell behind starts again


def _count_lines(source: Source, first: int, shared: memoryview, reader: int) -> None:
    starts = source.starts
    count = len(starts)
    size = source.size
    counts = shared[_HEAD:]
    i = first
    while i < count:
        if os.getppid() != reader:  # the reader is gone (a pass cut short by its exit): nobody needs the rest
            return
        at = shared[_AT]
        if at >= i:  # the reader passed us: go on a little ahead of it
            i = bisect.bisect_left(starts, starts[at] + LEAD, at + 1, count)
            if i >= count:
                break
        start = starts[i]
        stop = max(bisect.bisect_right(starts, start + BLOCK, i + 1, count) - 1, i + 1)
        end = starts[stop] if stop < count else size
        if end - start <= LONG:  # a longer line is over the parse's cap, or not worth a read: left uncounted
            data = source.read(start, end - start)
            offsets = [starts[k] - start for k in range(i, stop)]
            offsets.append(end - start)
            # one int at a time (an aligned 4-byte store: the reader sees 0 or the count, never a part of it)
            for k, c in enumerate(unescaped_quotes_of_lines(data, offsets), i - first):
                counts[k] = c + 1
        i = stop
