"""Open a big session file end first: index only its last lines at once, the rest later in a thread.

:func:`open_tail` reads backwards from the end for the last complete lines; :func:`full_index` indexes every
line (meant for a background thread); :func:`grow` extends an index in place with appended lines (see
:class:`sessionview.core.tail.Follower`, which reports them). :func:`open_tail_file` does what
:func:`open_tail` does through an :class:`~sessionview.core.fileaccess.OpenFile` (a file on another host).
Stdlib only.
"""

from __future__ import annotations

import os
from array import array
from typing import Callable, Sequence

from sessionview.core.doc.document import BOM, Source, open_regular, preader
from sessionview.core.doc.linescan import ScanLimit, tail_line_starts
from sessionview.core.fileaccess import OpenFile
from sessionview.core.values import Value

__all__ = ["TailOpen", "complete_end", "open_tail", "open_tail_file", "full_index", "grow", "heap_gives_back"]

BIG_BUFFER = 8 << 20  # glibc: buffers from this size on get mappings of their own (given back when freed)
HEAP_TRIM = 128 << 10  # glibc: free memory beyond this at the top of the heap is given back at once


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


class TailOpen(Value):
    """A file opened end first: an index of its last lines, and where its complete lines end (a
    :class:`~sessionview.core.values.Value`: no dataclass to build at import)."""

    __slots__ = ("fd", "source", "end", "size", "whole", "ident", "mtime_ns", "file")
    fd: int
    source: Source  # only the last lines are indexed; ``source.size`` is ``end``
    end: int  # just past the last complete line
    size: int  # file size when opened (``size - end`` bytes are a pending partial line)
    whole: bool  # the tail index covers every line of the file: line numbers are known
    ident: tuple[int, int]
    mtime_ns: int
    #: the file when it is read through a FileAccess (another host): ``fd`` is then -1
    file: OpenFile | None

    def __init__(
        self, fd: int, source: Source, end: int, size: int, whole: bool, ident: tuple[int, int], mtime_ns: int,
        file: OpenFile | None = None,
    ) -> None:
        self.fd = fd
        self.source = source
        self.end = end
        self.size = size
        self.whole = whole
        self.ident = ident
        self.mtime_ns = mtime_ns
        self.file = file

    @property
    def read(self) -> Callable[[int, int], bytes]:
        """Range reads of the open file (``pread`` on ``fd``, or the OpenFile's own)."""
        if self.file is not None:
            return _reader(self.file)
        return preader(self.fd)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            return
        try:
            os.close(self.fd)
        except OSError:
            pass


def _reader(opened: OpenFile) -> Callable[[int, int], bytes]:
    """The OpenFile's reads for a session: its ``cached_read`` (range reads through a block cache, for a
    file on a network) when it has one, else ``read``."""
    return getattr(opened, "cached_read", None) or opened.read


def open_tail_file(opened: OpenFile, count: int = 256) -> TailOpen:
    """:func:`open_tail` through an already open :class:`~sessionview.core.fileaccess.OpenFile`: the last
    ``count`` complete lines are indexed, reading backwards in ranges. The TailOpen owns ``opened``."""
    st = opened.stat()
    read = _reader(opened)
    size = st.st_size
    bom = BOM if read(0, min(3, size)) == BOM else b""
    end = max(complete_end(read, size), len(bom)) if size else 0
    starts = tail_line_starts(read, len(bom), end, count) if end > len(bom) else []
    whole = not starts or starts[0] == len(bom)
    source = Source(read, end, array("q", starts), bom)
    return TailOpen(-1, source, end, size, whole, (st.st_dev, st.st_ino), st.st_mtime_ns, opened)


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
        starts = tail_line_starts(read, begin, end, count, max_scan) if end > begin else []
        whole = not starts or starts[0] == begin
        source = Source(read, end, array("q", starts), bom)
        return TailOpen(fd, source, end, size, whole, (st.st_dev, st.st_ino), st.st_mtime_ns)
    except BaseException:
        os.close(fd)
        raise


def full_index(fd: int | Callable[[int, int], bytes], end: int, progress: Callable[[int], None] | None = None) -> Source:
    """Index every line of ``[0, end)`` (``end`` just past a newline, or 0) of the file at ``fd`` (or read by
    a ``read(offset, size)`` callable, e.g. :attr:`TailOpen.read`). Meant for a background thread.

    For display only: no digest is taken (a save stamps its own load, see :mod:`sessionview.core.edit.history`).
    """
    read = preader(fd) if isinstance(fd, int) else fd
    return Source.from_reader(read, end, progress, digest=False)


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


_heap_set = False


def heap_gives_back() -> None:
    """Before a pass over every record of a big file (the stats): make freed memory go back to the system.

    glibc raises its mmap threshold (up to 32 MiB) and its trim threshold (twice that) each time it frees a
    big mapping, such as the text of a multi-megabyte record. Freed buffers below them stay in the
    process's heaps, and after a pass over a 100 MB session about 30 MB of them stayed resident for good
    (a follower's peak RSS came near 100 MiB from that alone). Fixed thresholds (BIG_BUFFER, HEAP_TRIM)
    give such memory back at once; the 4 MiB blocks the scans read stay heap buffers. Once per process
    (before the stats, not before the index: the index's blocks would be mapped anew each time); a no-op
    where there is no glibc ``mallopt``."""
    global _heap_set
    if _heap_set:
        return
    _heap_set = True
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-3, BIG_BUFFER)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, HEAP_TRIM)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass
