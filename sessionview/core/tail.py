"""Follow a session file that is being written, and open a big one end first.

A :class:`Follower` watches one path. Each :meth:`Follower.poll` is one cheap ``os.stat``; only when the
size, mtime or inode changed does it read, and then only the new bytes. It keeps:

* the offset just past the last complete line it reported (``offset``),
* the file's identity (device, inode), to notice a new file at the same path,
* the bytes of the reported prefix while it is small (``verify_limit``), otherwise its first and last
  ``window`` bytes, to tell an append from a rewrite,
* the pending partial last line (its size and the first bytes), which is reported as :class:`Pending`
  and never as a line until its newline arrives.

Brute rewrites its whole session at the end of every turn (truncate, then write). A rewrite whose result
starts with what was already reported is an append: only the new lines are reported. While the file is
shorter than what was reported but still a prefix of it, the follower waits up to ``grace`` seconds for the
writer to finish before it gives up and reports :class:`Truncated`. Content that is not a prefix of what was
reported is :class:`Truncated` at once. After a truncation or a replacement the follower starts again at
offset 0 of the current file and reports its lines as :class:`Appended`.

This module is pure: stdlib only, no threads. The caller decides how often to poll.
"""

from __future__ import annotations

import os
import stat
import time
from array import array
from dataclasses import dataclass
from typing import Callable, Sequence


from sessionview.core.doc.document import (  # noqa: F401 - ScanLimit and preader are re-exported
    BOM,
    ScanLimit,
    Source,
    SourceChanged,
    open_regular,
    preader,
    tail_line_starts,
)

DEFAULT_VERIFY_LIMIT = 1 << 20  # keep the whole reported prefix up to this size
DEFAULT_WINDOW = 64 * 1024  # beyond that, compare its first and last bytes
DEFAULT_GRACE = 0.5  # seconds a shrunken file may stay a prefix before it counts as truncated
DEFAULT_MAX_READ = 8 << 20  # bytes read per poll at most, so a huge append never blocks a poll long
DATA_LIMIT = 4 << 20  # Appended.data is kept only up to this size
PREVIEW = 4096
RESCAN_LIMIT = 1 << 20  # a pending line up to this size is searched again on every change


# -- events -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Appended:
    """New complete lines: they start at ``starts`` and the last one ends at ``end`` (after its terminator)."""

    starts: tuple[int, ...]
    end: int
    data: bytes | None = None  # the bytes [starts[0], end) when at most DATA_LIMIT
    rewritten: bool = False  # the file was rewritten, and the rewrite kept what had been reported

    @property
    def start(self) -> int:
        return self.starts[0] if self.starts else self.end

    @property
    def count(self) -> int:
        return len(self.starts)

    def lines(self) -> list[bytes]:
        """The new lines, terminators included (needs ``data``)."""
        if self.data is None:
            raise ValueError("the appended bytes were too big to keep; read them from the file")
        base = self.start
        bounds = [s - base for s in self.starts] + [self.end - base]
        return [self.data[a:b] for a, b in zip(bounds, bounds[1:])]


@dataclass(frozen=True, slots=True)
class Pending:
    """The file ends with ``size`` bytes of a line that has no newline yet (0: no pending line any more)."""

    offset: int
    size: int
    preview: bytes = b""  # the first bytes of the pending line


@dataclass(frozen=True, slots=True)
class Truncated:
    """What was reported is gone: the file shrank or was rewritten with other content. Reload."""

    size: int
    reason: str  # "shrank" or "rewritten"


@dataclass(frozen=True, slots=True)
class Replaced:
    """A different file now sits at the path (rotation, atomic replace, or deleted and created again)."""

    reason: str = "a new file at the same path"


@dataclass(frozen=True, slots=True)
class Deleted:
    """The path is gone. What was read stays readable through the follower's open descriptor."""


Event = Appended | Pending | Truncated | Replaced | Deleted


# -- helpers ------------------------------------------------------------------------------------
def complete_end(
    read: Callable[[int, int], bytes], size: int, step: int = 256 * 1024, max_scan: int | None = None
) -> int:
    """The offset just past the last ``\\n`` in the first ``size`` bytes (0 if there is none)."""
    if max_scan is not None:
        step = max(1, min(step, max_scan))
    pos = size
    while pos > 0:
        lo = max(0, pos - step)
        chunk = read(lo, pos - lo)
        i = chunk.rfind(b"\n")
        if i != -1:
            return lo + i + 1
        pos = lo
        if max_scan is not None and pos > 0 and size - pos >= max_scan:
            raise ScanLimit(f"no newline in the last {max_scan} bytes")
    return 0


@dataclass
class TailOpen:
    """A file opened end first: an index of its last lines, and where its complete lines end."""

    fd: int
    source: Source  # only the last lines are indexed; ``source.size`` is ``end``
    end: int  # just past the last complete line
    size: int  # file size when opened (``size - end`` bytes are a pending partial line)
    whole: bool  # the tail index covers every line of the file: line numbers are known
    ident: tuple[int, int]
    mtime_ns: int

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


def last_line_starts(
    read: Callable[[int, int], bytes], begin: int, end: int, count: int, max_scan: int | None = None
) -> list[int]:
    """Start offsets of the last ``count`` lines of ``[begin, end)`` (``end`` just past a newline)."""
    return tail_line_starts(read, begin, end, count, max_scan)


def open_tail(path: str | os.PathLike[str], count: int = 256, max_scan: int | None = None) -> TailOpen:
    """Open ``path`` and index only its last ``count`` complete lines (reading backwards from the end).

    With ``max_scan``, give up (:class:`ScanLimit`) rather than read more than that many bytes
    backwards: for a caller that wants an answer within a frame or falls back to a thread.
    The descriptor belongs to the caller (``TailOpen.close``).
    """
    fd = open_regular(path)
    try:
        st = os.fstat(fd)
        read = preader(fd)
        size = st.st_size
        head = read(0, min(3, size))
        bom = BOM if head == BOM else b""
        end = max(complete_end(read, size, max_scan=max_scan), len(bom)) if size else 0
        begin = len(bom)
        starts = last_line_starts(read, begin, end, count, max_scan) if end > begin else []
        whole = not starts or starts[0] == begin
        source = Source(read, end, array("q", starts), bom)
        return TailOpen(fd, source, end, size, whole, (st.st_dev, st.st_ino), st.st_mtime_ns)
    except BaseException:
        os.close(fd)
        raise


def full_index(fd: int, end: int, progress: Callable[[int], None] | None = None) -> Source:
    """Index every line of ``[0, end)`` (``end`` just past a newline, or 0). Meant for a background thread.

    For display only: no digest is taken (a save stamps its own load, see :mod:`sessionview.core.edit.history`).
    """
    return Source.from_reader(preader(fd), end, progress, digest=False)


def grow(source: Source, starts: Sequence[int], end: int) -> Source:
    """``source`` with complete lines appended (their ``starts``; the last ends at ``end``).

    The offsets array is extended in place and shared with the returned source (copying it would cost
    8 bytes a line on every append). A :class:`Document` made from the older source *before* this call
    keeps reading its own lines correctly, because complete lines never change; do not make new documents
    from the older source afterwards.
    """
    if starts and starts[0] != source.size:
        raise ValueError(f"appended lines start at {starts[0]}, the source ends at {source.size}")
    arr = source.starts
    arr.extend(starts)
    return Source(source._read, end if starts else source.size, arr, source.bom)


# -- the follower -------------------------------------------------------------------------------
class Follower:
    """Follow one path. See the module docstring.

    ``fd`` (optional) is a descriptor of the file already read up to ``offset``; the follower takes it
    over and closes it in :meth:`close`. Without it the path is opened now. ``offset`` must be just past a
    newline (or 0).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fd: int | None = None,
        offset: int = 0,
        verify_limit: int = DEFAULT_VERIFY_LIMIT,
        window: int = DEFAULT_WINDOW,
        grace: float = DEFAULT_GRACE,
        max_read: int = DEFAULT_MAX_READ,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = os.fspath(path)
        self.verify_limit = verify_limit
        self.window = window
        self.grace = grace
        self.max_read = max(1, max_read)
        self.clock = clock
        self.deleted = False
        self._fd = open_regular(self.path) if fd is None else fd
        st = os.fstat(self._fd)
        self.ident = (st.st_dev, st.st_ino)
        self._read = preader(self._fd)
        self._reset(offset)
        if offset:
            prefix_len = min(offset, verify_limit)
            if offset <= verify_limit:
                self._shown = bytearray(self._read(0, offset))
            else:
                self._shown = None
                self._head = self._read(0, min(window, prefix_len))
                self._tail = self._read(max(0, offset - window), min(window, offset))
        # Sizes as of the last full look at the file; a first poll reads what is past ``offset``.
        self._size = offset
        self._mtime = -1

    # -- state ---------------------------------------------------------------------------------
    def _reset(self, offset: int = 0) -> None:
        self.offset = offset  # just past the last reported complete line
        self._scanned = offset  # bytes searched for a newline
        self._shown: bytearray | None = bytearray()
        self._head = b""
        self._tail = b""
        self._pending_size = 0
        self._shrunk_since: float | None = None
        self._more = False  # a poll stopped at max_read: there is more to read
        self._size = 0
        self._mtime = -1

    @property
    def pending(self) -> int:
        """Size of the pending partial last line."""
        return self._pending_size

    def fileno(self) -> int:
        return self._fd

    def read(self, offset: int, size: int) -> bytes:
        """Read from the followed file (the open descriptor: still works after a deletion)."""
        return self._read(offset, size)

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1

    def __enter__(self) -> "Follower":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- polling -------------------------------------------------------------------------------
    def poll(self) -> list[Event]:
        """Look at the file once and return what happened since the last poll (often nothing)."""
        try:
            pst = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            if not self.deleted:
                self.deleted = True
                return [Deleted()]
            return []
        except OSError:
            return []  # e.g. permission flapping: look again next time
        ident = (pst.st_dev, pst.st_ino)
        if ident != self.ident or not stat.S_ISREG(pst.st_mode):
            if not stat.S_ISREG(pst.st_mode):
                if not self.deleted:
                    self.deleted = True
                    return [Deleted()]
                return []
            return self._switch("deleted and created again" if self.deleted else "a new file at the same path")
        self.deleted = False
        size, mtime = pst.st_size, pst.st_mtime_ns
        if size == self._size and mtime == self._mtime and self._shrunk_since is None and not self._more:
            return []
        return self._changed(size, mtime)

    def _switch(self, reason: str) -> list[Event]:
        try:
            fd = open_regular(self.path)
        except OSError:
            return []  # gone again or not readable yet: try next poll
        self.close()
        self._fd = fd
        st = os.fstat(fd)
        self.ident = (st.st_dev, st.st_ino)
        self._read = preader(fd)
        self.deleted = False
        self._reset(0)
        events: list[Event] = [Replaced(reason)]
        events.extend(self._read_new(st.st_size, st.st_mtime_ns))
        return events

    def _changed(self, size: int, mtime: int) -> list[Event]:
        now = self.clock()
        if size < self.offset:
            if self._is_prefix(size):
                if self._shrunk_since is None:
                    self._shrunk_since = now
                if now - self._shrunk_since < self.grace:
                    # Probably a rewrite under way (Brute: truncate, then write). Wait for it.
                    self._size, self._mtime = size, mtime
                    return []
                return self._truncated(size, mtime, "shrank")
            return self._truncated(size, mtime, "rewritten")
        if not self._prefix_intact():
            return self._truncated(size, mtime, "rewritten")
        rewritten = self._shrunk_since is not None
        self._shrunk_since = None
        if rewritten or size < self._scanned or self._scanned - self.offset <= RESCAN_LIMIT:
            # The pending partial line may have been rewritten in place: search it again for a
            # newline (unless it is huge and the file was only appended to).
            self._scanned = self.offset
        return self._read_new(size, mtime, rewritten)

    def _truncated(self, size: int, mtime: int, reason: str) -> list[Event]:
        self._reset(0)
        events: list[Event] = [Truncated(size, reason)]
        events.extend(self._read_new(size, mtime))
        return events

    def _is_prefix(self, size: int) -> bool:
        """Whether the file's first ``size`` bytes (size < offset) are what was reported."""
        if size == 0:
            return True
        if self._shown is not None:
            return self._read(0, size) == bytes(self._shown[:size])
        n = min(size, len(self._head))
        return self._read(0, n) == self._head[:n]

    def _prefix_intact(self) -> bool:
        """Whether the reported prefix ``[0, offset)`` is unchanged (file size >= offset)."""
        if self.offset == 0:
            return True
        if self._shown is not None:
            return self._read(0, self.offset) == self._shown
        if self._read(0, len(self._head)) != self._head:
            return False
        return self._read(self.offset - len(self._tail), len(self._tail)) == self._tail

    def _read_new(self, size: int, mtime: int, rewritten: bool = False) -> list[Event]:
        events: list[Event] = []
        pos = self._scanned
        limit = min(size, pos + self.max_read)
        chunk = self._read(pos, limit - pos) if limit > pos else b""
        if len(chunk) < limit - pos:
            limit = pos + len(chunk)  # the file shrank under us: the next poll sorts it out
            size = limit
        starts: list[int] = []
        line_start = self.offset
        find = chunk.find
        i = find(b"\n")
        while i != -1:
            starts.append(line_start)
            line_start = pos + i + 1
            i = find(b"\n", i + 1)
        old_offset = self.offset
        self._scanned = limit
        self._more = limit < size
        self._size, self._mtime = size, mtime
        if starts:
            new_offset = line_start
            data: bytes | None = None
            if new_offset - old_offset <= DATA_LIMIT:
                if old_offset >= pos:
                    data = chunk[old_offset - pos : new_offset - pos]
                else:
                    data = self._read(old_offset, pos - old_offset) + chunk[: new_offset - pos]
            self._remember(old_offset, new_offset, data)
            self.offset = new_offset
            events.append(Appended(tuple(starts), new_offset, data, rewritten))
        if not self._more:
            pending = size - self.offset
            if pending != self._pending_size or (pending and starts):
                self._pending_size = pending
                preview = self._read(self.offset, min(pending, PREVIEW)) if pending else b""
                events.append(Pending(self.offset, pending, preview))
        return events

    def _remember(self, old: int, new: int, data: bytes | None) -> None:
        """Extend the verification data with the newly reported bytes ``[old, new)``."""
        if self._shown is not None and new <= self.verify_limit:
            self._shown += data if data is not None else self._read(old, new - old)
            return
        if self._shown is not None:
            self._head = bytes(self._shown[: self.window])
            self._shown = None
        if len(self._head) < self.window:
            self._head = self._read(0, min(self.window, new))
        self._tail = self._read(max(0, new - self.window), min(self.window, new))
