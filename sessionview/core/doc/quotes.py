"""The quotes of each line that no backslash escapes, counted by a second process ahead of a pass over a big file.

:func:`~sessionview.core.doc.parse.parse_record` proves that a record repeats no key by counting the strings of
its bytes (two unescaped quotes each) against the strings of its parsed value. Counting them takes two to three
scans of the bytes, a quarter to a third of the parse itself. On a pass over a big file (``JsonlSession.view(n,
keep=False)`` for every ``n``, see :class:`~sessionview.core.doc.ahead.LinesAhead`) a forked helper reads the
blocks ahead of the reader and counts their lines (:func:`unescaped_quotes_of_lines`), into memory shared with
the reader: the bytes of each block in a ring of :data:`SLOTS` cells, and the counts of every line.

A block is the run of lines that start in one :data:`CELL` of the file (a grid both processes compute from the
same line index, copied on fork), so the reader's window of lines is the helper's block. The reader takes a
block the helper has there, **its bytes with its counts**, and parses those bytes: a count is always of the very
bytes it is used for, even when the file is rewritten in place between the helper's read and the reader's (its
own read would then see other bytes). A block that is not there (the helper is behind, gone, or the block is
longer than the ring) the reader reads and counts itself: the records and their marks are the same either
way, only the time differs.

A block's bytes lie in the ring at the block's offset in the file modulo the ring's size (``SLOTS * CELL``),
one after the other as in the file, and one that wraps goes on past the ring's end (into as many bytes again):
so a block of several cells (a long line) is handed over too, and two blocks less than a ring apart never
share a byte. Each cell of the ring has a tag, the block that starts in it. The hand-over is a sequence lock
over plain stores to shared memory: the helper marks the tag as being written, writes the block, then stores
the block's first line in the tag; the reader copies a block only between two reads of the same tag. It relies
on stores not being reordered with other stores, nor loads with other loads, as x86-64 guarantees: elsewhere
no helper starts. The helper writes a block only when it starts fewer than :data:`SLOTS` cells, and ends at
most a ring's bytes, after the start of the block the reader last posted: so it never writes over the block
the reader is copying, nor into a tag of its.
"""

from __future__ import annotations

import bisect
import codecs
import mmap
import os
import signal
import sys
import threading
import time
from array import array
from typing import Callable, Sequence

from sessionview.core.doc.document import Source

__all__ = ["ENABLED", "MIN_BYTES", "CELL", "QuoteHelper", "unescaped_quotes_of_lines", "can_fork"]

#: whether a pass may start a helper at all (a process that already splits its work between cores turns it off)
ENABLED = True
MIN_BYTES = 32 * 1024 * 1024  # the bytes left to read below which a second process costs more than it saves
CELL = 1 << 20  # the grid of blocks: a block is the lines that start in one cell (LinesAhead's window)
SLOTS = 16  # the cells of the ring (a block longer than the ring is left to the reader)
WAIT = 0.002  # seconds the helper waits for the reader when the ring is full


def unescaped_quotes_of_lines(data: bytes, offsets: Sequence[int]) -> array:
    """:func:`~sessionview.core.doc.parse.unescaped_quotes` of each ``data[offsets[k]:offsets[k + 1]]``, the lines
    of a block (each ends with its ``\\n`` but perhaps the last).

    Four passes in C over the whole block, two thirds of :func:`_by_replacing`'s time on the escape-dense bench
    session (1.7-2.2 s against 2.6-3.0 s a GiB: its two-byte searches scan at about 1 GB/s):
    :data:`_MARKS` keeps backslashes and line ends, makes each quote an ``a`` and every other byte a ``'``; then
    ``codecs.escape_decode`` pairs the backslashes from the left, as JSON does (``\\\\`` becomes one backslash,
    an escaped quote ``\\a`` a BEL, any other escape ``\\'`` a quote mark); then the ``a`` left, the quotes no
    backslash escapes, are counted line by line once the rest is deleted. A backslash before a line end (only in a
    line that is not JSON) would join two lines: the count of lines then differs, and :func:`_by_replacing`
    counts the block instead."""
    lines = len(offsets) - 1
    try:
        marks = _escape_decode(data.translate(_MARKS))[0]
    except ValueError:  # a backslash at the very end (of an unterminated last line)
        return _by_replacing(data, offsets)
    pieces = marks.translate(None, _NOT_QUOTE).split(b"\n")
    if len(pieces) != lines + (data[-1:] == b"\n"):
        return _by_replacing(data, offsets)
    return array("i", map(len, pieces[:lines]))


def _by_replacing(data: bytes, offsets: Sequence[int]) -> array:
    """:func:`unescaped_quotes_of_lines`, another way: escaped backslashes, then escaped quotes, become two NULs each
    (the same length, so the offsets stay; neither ever spans a line end), and the quotes left are counted line by
    line."""
    c = data
    if c.find(b"\\") != -1:
        if c.find(b"\\\\") != -1:
            c = c.replace(b"\\\\", b"\0\0")
        c = c.replace(b'\\"', b"\0\0")
    count = c.count
    return array("i", [count(b'"', offsets[k], offsets[k + 1]) for k in range(len(offsets) - 1)])


_MARKS = bytes(0x61 if b == 0x22 else b if b in (0x5C, 0x0A) else 0x27 for b in range(256))
_NOT_QUOTE = b"'\\\x07"  # what escape_decode leaves of the marks but the quotes (``a``) and the line ends
_escape_decode = codecs.escape_decode


def can_fork() -> bool:
    """Whether this process may fork a helper: Linux on x86-64 (the hand-over's ordering, see the module), two
    cores, no thread but this one (a fork copies only the calling thread, so a lock another thread holds would
    stay locked in the child), and a core left idle by the rest of the machine (the one-minute load average
    below the cores): the helper spends more CPU on its counts than the reader saves, so it pays only where it
    runs beside the reader, not instead of another's work."""
    if not (ENABLED and hasattr(os, "fork") and sys.platform.startswith("linux") and threading.active_count() == 1):
        return False
    if os.uname().machine not in ("x86_64", "AMD64"):
        return False
    cpus = os.cpu_count() or 1
    return cpus > 1 and _load() < cpus


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("inf")


def block_end(starts: Sequence[int], i: int, cell: int) -> int:
    """The line after the block of line ``i``: the first line after ``i`` that starts in a later cell."""
    return bisect.bisect_left(starts, (starts[i] // cell + 1) * cell, i + 1, len(starts))


class QuoteHelper:
    """A forked process reading and counting the blocks of ``source`` after line ``first``'s, ahead of the reader.

    The reader posts the block it reads (:meth:`post`) and takes the blocks the helper has ready (:meth:`take`);
    a helper that finds itself behind skips ahead of the reader, so the two never read the same blocks for long,
    whichever is faster (or more loaded). :meth:`close` stops and reaps it, from any thread, once."""

    def __init__(self, source: Source, first: int) -> None:
        self.source = source
        self.first = first
        lines = len(source.starts) - first
        ints = _HEAD + SLOTS + lines
        self._base = 4 * ints  # the ring follows the ints
        self._cell = cell = CELL
        # anonymous and shared: zeros (touched pages only); a block that wraps goes on past the ring's end
        #: the ring's bytes: the longest block handed over (LinesAhead reads a block up to this long at once)
        self.ring = ring = SLOTS * cell
        self._map = mmap.mmap(-1, self._base + 2 * ring)
        self._ints = memoryview(self._map)[: self._base].cast("i")
        self._tags = self._ints[_HEAD : _HEAD + SLOTS]
        self._counts = self._ints[_HEAD + SLOTS :]
        self._owner = os.getpid()
        self._lock = threading.Lock()
        self._pid: int | None = None
        try:
            pid = os.fork()
        except BaseException:
            self._release()
            raise
        if pid == 0:  # the helper: read and count, and exit without this process's cleanup
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                _serve(source, first, self._ints, self._map, self._base, cell, ring, self._owner)
            except BaseException:  # noqa: BLE001 - the file changed (a short read): the reader reads itself
                code = 1
            finally:
                os._exit(code)
        self._pid = pid

    def post(self, i: int) -> None:
        """The reader is at the block that starts at line ``i``."""
        try:
            self._ints[_AT] = i
        except ValueError:  # closed (by another thread)
            pass

    def take(self, i: int, stop: int, size: int) -> tuple[bytes, list[int]] | None:
        """The bytes of the block of lines ``[i, stop)`` (``size`` of them) and the unescaped quotes of each of
        its lines, as the helper read and counted them; ``None`` when it has not (yet)."""
        if i <= self.first:
            return None
        start = self.source.starts[i]
        slot = start // self._cell % SLOTS
        with self._lock:  # not while close() unmaps it (a view of the counts alive then would stop the unmap)
            try:
                tags = self._tags
                if tags[slot] != i + 1:
                    return None
                offset = self._base + start % self.ring
                data = self._map[offset : offset + size]
                counts = self._counts[i - self.first : stop - self.first].tolist()
                if tags[slot] != i + 1:  # overwritten while copied (never, by the ring's rule: but proven here)
                    return None
            except ValueError:  # closed (by another thread)
                return None
        return data, counts

    def close(self) -> None:
        """Stop the helper (if it still runs), reap it and unmap the shared memory. Idempotent; only the process
        that forked it does anything (a copy of this object in a later fork leaves the helper alone)."""
        with self._lock:
            pid, self._pid = self._pid, None
            if os.getpid() != self._owner:
                return
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:  # reaped elsewhere (a SIGCHLD handler, a wait for any child)
                    pass
            self._release()

    def _release(self) -> None:
        for view in (self._tags, self._counts, self._ints):
            view.release()
        self._map.close()

    @property
    def running(self) -> bool:
        return self._pid is not None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit
            pass


#: a test's hook, called in the helper with the first line of each block it has handed over and the reader's line
#: it went by
_served: Callable[[int, int], None] | None = None

_HEAD = 2  # the shared ints before the cells' tags: [the first line of the reader's block, unused]
_AT = 0


def _serve(
    source: Source, first: int, ints: memoryview, shared: mmap.mmap, base: int, grid: int, ring: int, reader: int,
) -> None:
    starts = source.starts
    count = len(starts)
    size = source.size
    tags = ints[_HEAD : _HEAD + SLOTS]
    counts = ints[_HEAD + SLOTS :]
    i = block_end(starts, first, grid)  # the block after the reader's
    while i < count:
        if os.getppid() != reader:  # the reader is gone (a pass cut short by its exit): nobody needs the rest
            return
        at = ints[_AT]
        if at >= i:  # the reader passed us: go on a block ahead of it (the one after its next)
            i = block_end(starts, at, grid)
            if i < count:
                i = block_end(starts, i, grid)
            continue
        start = starts[i]
        cell = start // grid
        stop = bisect.bisect_left(starts, (cell + 1) * grid, i + 1, count)
        end = starts[stop] if stop < count else size
        if end - start > ring:  # a longer block is left to the reader
            i = stop
            continue
        reading = starts[max(at, first)]  # the start of the reader's block (or of one before it)
        if cell - reading // grid >= SLOTS or end - reading > ring:
            time.sleep(WAIT)  # the ring is full: the reader still needs the bytes (or the tag) this block would take
            continue
        data = source.read(start, end - start)
        offsets = [starts[k] - start for k in range(i, stop)]
        offsets.append(end - start)
        quotes = unescaped_quotes_of_lines(data, offsets)
        slot = cell % SLOTS
        tags[slot] = -1  # being written: the reader takes none of it
        offset = base + start % ring
        shared[offset : offset + len(data)] = data
        counts[i - first : stop - first] = quotes
        tags[slot] = i + 1  # the block of line i is there
        if _served is not None:
            _served(i, at)
        i = stop
