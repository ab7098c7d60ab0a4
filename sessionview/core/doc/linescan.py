"""Finding line starts in a file's bytes: forwards in bounded chunks (optionally hashing as it goes), or
backwards from the end for the last lines only.

Every reader here takes ``read(offset, size) -> bytes``, so it works on a file descriptor, a memory
buffer or a test double alike.
"""

from __future__ import annotations
from sessionview.core.text import plural

from array import array
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from sessionview.core.doc.digest import Hasher

__all__ = ["CHUNK", "SourceChanged", "scan_newlines", "scan_newlines_split", "ScanLimit", "tail_line_starts"]

#: bytes read at a time (tests lower it to put line ends across chunk boundaries)
CHUNK = 4 * 1024 * 1024


class SourceChanged(OSError):
    """The file shrank or changed underneath a reader."""


def closed_reader(offset: int, size: int) -> bytes:
    """The reader of a closed document's source: its descriptor's number may name another file by now."""
    raise ValueError("read of a closed session's file")


def scan_newlines(
    read: Callable[[int, int], bytes],
    start: int,
    end: int,
    out: array,
    progress: Callable[[int], None] | None = None,
    hasher: "Hasher | None" = None,
) -> None:
    """Append to ``out`` the offset just past every ``\\n`` in ``[start, end)``.

    ``read(offset, size)`` returns the bytes at offset. Reads are chunked, so memory stays bounded.
    ``hasher``, when given, is fed every byte scanned, in order.
    """
    pos = start
    append = out.append
    while pos < end:
        size = min(CHUNK, end - pos)
        chunk = read(pos, size)
        if not chunk:
            raise SourceChanged(f"file ended at byte {pos}, expected {end}")
        if hasher is not None:
            hasher.update(chunk)
        find = chunk.find
        i = find(b"\n")
        while i != -1:
            append(pos + i + 1)
            i = find(b"\n", i + 1)
        pos += len(chunk)
        if progress is not None:
            progress(pos)


#: the bytes below which :func:`scan_newlines_split` scans alone (a fork costs a few milliseconds)
SPLIT_MIN = 64 * 1024 * 1024


def scan_newlines_split(read: Callable[[int, int], bytes], start: int, end: int, out: array) -> None:
    """:func:`scan_newlines` on two cores: a forked child scans the second half of a big range and sends its
    offsets back through a pipe (8 bytes a line) while this process scans the first. The same offsets, in the
    same order; the same CPU time, spread over two. If the child fails (the file shrank under it), this process
    scans its half too, and raises as :func:`scan_newlines` does."""
    if end - start < SPLIT_MIN or not _may_fork():
        scan_newlines(read, start, end, out)
        return
    from sessionview.core.doc.forkhalf import in_a_child

    mid = start + (end - start) // 2

    def second_half() -> bytes:
        half = array("q")
        scan_newlines(read, mid, end, half)
        return half.tobytes()

    _, data = in_a_child(second_half, lambda: scan_newlines(read, start, mid, out))
    if data is None or len(data) % 8:  # no child, or it failed: this process scans its half too
        scan_newlines(read, mid, end, out)
        return
    out.frombytes(data)


def _may_fork() -> bool:
    import os
    import sys
    import threading

    return (
        hasattr(os, "fork") and sys.platform.startswith("linux") and (os.cpu_count() or 1) > 1
        and threading.active_count() == 1
    )


class ScanLimit(Exception):
    """Reading backwards went past ``max_scan`` bytes (the caller wanted a quick answer only)."""


def tail_line_starts(
    read: Callable[[int, int], bytes], begin: int, end: int, count: int, max_scan: int | None = None
) -> list[int]:
    """Start offsets of the last ``count`` lines of ``[begin, end)``, found by reading backwards.

    With ``max_scan``, raise :class:`ScanLimit` rather than read more than that many bytes backwards.
    """
    starts: list[int] = []
    pos = end
    # A final newline ends the last line; it does not start a new one.
    search_end = end - 1 if end > begin and read(end - 1, 1) == b"\n" else end
    step = 256 * 1024 if max_scan is None else max(1, min(256 * 1024, max_scan))
    while pos > begin and len(starts) < count:
        if max_scan is not None and end - pos >= max_scan:
            raise ScanLimit(f"the last {plural(count, 'line')} {'is' if count == 1 else 'are'} longer than {max_scan} bytes")
        lo = max(begin, pos - step)
        chunk = read(lo, pos - lo)
        hi = min(len(chunk), search_end - lo)
        while len(starts) < count:
            i = chunk.rfind(b"\n", 0, hi)
            if i == -1:
                break
            starts.append(lo + i + 1)
            hi = i
        search_end = lo
        pos = lo
    if len(starts) < count and (not starts or starts[-1] != begin) and end > begin:
        starts.append(begin)
    starts.reverse()
    return starts[-count:] if count else []
