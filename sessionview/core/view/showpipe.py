"""The plumbing between ``show``'s two processes (:mod:`~sessionview.core.view.showstream`): the child's
frames (:class:`Frames`: each block's bytes, the call ids its links depend on and its log, written to a file
the parent reads, with a header through a pipe), the freeing of the blocks the parent has printed
(:func:`free_relayed`), that file (:func:`scratch`), and the byte-level helpers both sides need (line ends
and counts, exact reads)."""

from __future__ import annotations

import mmap
import os
import pickle
import struct
from typing import Any

from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.streamview import CHUNK
from sessionview.core.view.fastrender import Event

__all__ = [
    "DATA", "END", "ERROR", "HEADER", "SPAN", "Frames", "available_memory", "block_ids", "count_lines",
    "free_relayed", "line_end", "pread_exact", "read_exact", "scratch",
]

WINDOW = 32 * 1024 * 1024  # the bytes mapped at a time to count lines (a multiple of the page size)
HEADER = struct.Struct("<BQQQQQQ")  # kind, text, ids and log bytes, first and last record, the byte after them
DATA, END, ERROR = 0, 1, 2
SPAN = struct.Struct("<QQ")  # a block of the child's file that was printed: its first byte and the byte after


def free_relayed(out: int, size: int, relayed: int) -> None:
    """The child's last step: free the pages of ``out`` (its file of ``size`` bytes) inside each span that
    comes through ``relayed``, until the parent closes it. The parent, busy relaying the blocks in order, then
    does not free them all at its end (78 ms for the 490 MB of the 1 GiB bench file, in its last 0.15 s)."""
    if size <= 0:
        return
    try:
        mm = mmap.mmap(out, size)
    except (OSError, ValueError):
        return
    page = mmap.PAGESIZE
    with mm:
        rest = b""
        while True:
            got = os.read(relayed, 1 << 16)
            if not got:
                return
            rest += got
            whole = len(rest) - len(rest) % SPAN.size
            for (start, end) in SPAN.iter_unpack(rest[:whole]):
                start = -(-start // page) * page
                end = min(end, size) // page * page
                if end > start:
                    try:
                        mm.madvise(mmap.MADV_REMOVE, start, end - start)
                    except OSError:  # a file system that cannot punch holes: the parent frees it all
                        return
            rest = rest[whole:]


def scratch(size: int) -> int | None:
    """A file for the child's output of about ``size`` bytes, open for reading and writing: in memory
    (``memfd_create``) where the memory available holds it four times over, else an unlinked temporary
    file (on ext4 writing one costs about three times as much); None if neither can be made."""
    memfd = getattr(os, "memfd_create", None)
    if memfd is not None and 4 * size < available_memory():
        try:
            return int(memfd("sessionview-show", os.MFD_CLOEXEC))
        except OSError:
            pass
    import tempfile  # here: after the first records are out

    try:
        tmp = tempfile.TemporaryFile(prefix="sessionview-show-")
    except OSError:
        return None
    fd = os.dup(tmp.fileno())
    tmp.close()
    return fd


def available_memory() -> int:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (0 if unknown)."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def line_end(fd: int, at: int, size: int) -> int | None:
    """The byte after the first newline at or after ``at`` (before ``size``), or None."""
    pos = at
    while pos < size:
        chunk = os.pread(fd, min(CHUNK, size - pos), pos)
        if not chunk:
            return None
        i = chunk.find(b"\n")
        if i != -1:
            return pos + i + 1 if pos + i + 1 < size else None
        pos += len(chunk)
    return None


def count_lines(fd: int, end: int) -> int:
    """The newlines before byte ``end``: the records before the line that starts there. Through maps of the
    file, :data:`WINDOW` bytes at a time, where they can be made (a newline search is memchr's, without a copy:
    ``bytes.count`` reads about five times slower); a file cut shorter meanwhile ends this process by SIGBUS,
    as a failed child."""
    n = pos = 0
    while pos < end:
        size = min(WINDOW, end - pos)
        try:
            mm = mmap.mmap(fd, size, prot=mmap.PROT_READ, offset=pos)
        except (OSError, ValueError):
            chunk = os.pread(fd, min(4 * CHUNK, end - pos), pos)
            if not chunk:
                raise SourceChanged(f"file ended at byte {pos}, expected {end}") from None
            n += chunk.count(b"\n")
            pos += len(chunk)
            continue
        with mm:
            find = mm.find
            i = find(b"\n")
            while i != -1:
                n += 1
                i = find(b"\n", i + 1)
        pos += size
    return n


def block_ids(log: list[Event]) -> list[Any]:
    """The call ids a block's links depend on: its calls' and its results' (each once)."""
    ids = {cid for _, calls, _ in log for cid, _ in calls}
    ids.update(rid for _, _, results in log for rid in results)
    return list(ids)


class Frames:
    """The child's side: each block's bytes written to ``out`` at the end of the blocks before (so that a
    block that could not be written whole is overwritten by the next), then its header sent through ``w``."""

    def __init__(self, w: int, out: int) -> None:
        self.w = w
        self.out = out
        self.off = 0

    def write(self, kind: int, blob: bytes, events: list[Event], first: int, last: int, end: int) -> None:
        ids = pickle.dumps(block_ids(events), protocol=pickle.HIGHEST_PROTOCOL) if events else b""
        ev = pickle.dumps(events, protocol=pickle.HIGHEST_PROTOCOL) if events else b""
        off = self.off
        for data in (blob, ids, ev):
            view = memoryview(data)
            while view:
                done = os.pwrite(self.out, view, off)
                view = view[done:]
                off += done
        os.write(self.w, HEADER.pack(kind, len(blob), len(ids), len(ev), first, last, end))
        self.off = off


def read_exact(fd: int, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        got = os.read(fd, n - len(data))
        if not got:
            return None
        data += got
    return data


def pread_exact(fd: int, n: int, off: int) -> bytes:
    parts = []
    while n > 0:
        got = os.pread(fd, n, off)
        if not got:
            raise OSError(f"the temporary file of the second half ended early at byte {off}")
        parts.append(got)
        n -= len(got)
        off += len(got)
    return b"".join(parts)
