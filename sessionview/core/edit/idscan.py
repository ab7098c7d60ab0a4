"""The tool pairing of a few ids, from the records that mention them: found by a byte search of the file,
so the integrity check of a local change never parses the whole session.

A record can only pair through an id whose bytes it contains. An id is searched for as a whole token (the
bytes either side are not id characters), so ``call_1`` does not find ``call_10`` and a number id (``17``,
which the formats read as ``"17"``) is found unquoted too. JSON could still spell an id character as a
``\\u00XX`` escape (no common writer does so for letters, digits, ``_``, ``-``): every record holding an
escaped ASCII character (``\\u0020``-``\\u007f``) is parsed as well. Ids that a byte search cannot find
reliably (other characters, what a JSON number, NaN or boolean reads as, many ids without a common prefix
for memmem) and sessions that are not one unedited JSONL file fall back to the full pairing
(:meth:`Session.pairing`).

The byte search runs in Hyperscan where its wheel is installed (:mod:`.literals`): every id and every escape
in one pass, whole tokens checked here; ids need no common prefix then. Else in libc's ``memmem`` through
ctypes, a pass per needle. Both let go of the GIL, so a big file is searched in two threads (and the stamp's
hash runs alongside, :mod:`~.store.stamp`). Without either, ``bytes.find`` holds the GIL, and a big file is
searched in two processes instead (a fork).

The escapes are searched for while the file is loaded (:class:`Escapes`) for a check that runs before the
change is written; a deferred check (:attr:`~.change.Change.unchecked`), which runs while the new content is
copied, searches for them in the same pass as for the ids.
"""

from __future__ import annotations

import bisect
import os
import re
import sys
import threading
import weakref
from array import array
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Protocol

from sessionview.core.doc.document import Source
from sessionview.core.doc.pairing import Pairing, pair
from sessionview.core.edit.literals import ESCAPES, Literals, compile_literals

if TYPE_CHECKING:
    from sessionview.core.session import JsonlSession

__all__ = ["Escapes", "IdPairing", "adopt", "lines_mentioning", "searchable"]

CHUNK = 4 * 1024 * 1024  # bytes searched at a time (by each of up to three threads)
PARALLEL_MIN = 64 * 1024 * 1024  # a file this big is searched in two processes (its second half in a fork)
MAX_SEPARATE = 8  # ids searched one by one; more are searched by their common prefix
MIN_PREFIX = 3  # the shortest common prefix worth a search of its own, for many ids
LONG_PREFIX = 7  # a common prefix this long is rare enough to search for instead of each id
_ID = re.compile(r"[A-Za-z0-9_:+=~-]{1,512}\Z")
#: what a format may have made of a JSON value that was not a string, spelled otherwise in the file: a number
#: (``-0``, ``1e2``; ``1e16`` read as ``1e+16``), a NaN or an infinity (``NaN``, ``Infinity``, ``1e999``: ``nan``,
#: ``inf``), a boolean (``true``: ``True``). Such ids take the full pairing.
_NUMBERISH = re.compile(r"[0-9+-]+\Z|[0-9+-]*[0-9][eE][+-]?[0-9]+\Z|[+-]?(?:nan|inf|infinity)\Z|true\Z|false\Z|none\Z", re.I)
_TOKEN = re.compile(rb"[A-Za-z0-9_:+=~-]*")
_ID_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:+=~-")
_ESCAPE = b"\\u00"  # then one of _ESCAPED: \u0020-\u007f, an escaped printable ASCII character
_ESCAPED = frozenset(b"234567")


def searchable(ids: Iterable[str]) -> bool:
    return all(_ID.match(i) and not _NUMBERISH.match(i) for i in ids)


def _common_prefix(ids: list[bytes]) -> bytes:
    lo, hi = min(ids), max(ids)
    n = 0
    while n < min(len(lo), len(hi)) and lo[n] == hi[n]:
        n += 1
    return lo[:n]


def lines_mentioning(source: Source, ids: Iterable[str]) -> set[int] | None:
    """The indices of the source lines that may mention one of ``ids`` (a superset), or None when a byte
    search cannot answer for these ids."""
    wanted = sorted({i.encode() for i in ids})
    if not wanted:
        return set()
    if not searchable(i.decode() for i in wanted):
        return None
    members = set(wanted)
    overlap = max(len(n) for n in wanted) + 8
    starts = source.starts
    start, end = (starts[0] if len(starts) else 0), source.size
    early = _early.get(source)  # the escapes, searched for while the file was loaded (or still being)
    found = _search_literals(source, start, end, wanted, overlap, early is None)
    if found is None:  # no Hyperscan here: memmem, one pass per id, or one for their common prefix
        prefix = _common_prefix(wanted)
        if len(wanted) == 1:
            needles, whole = wanted, True
        elif len(prefix) >= LONG_PREFIX or (len(wanted) > MAX_SEPARATE and len(prefix) >= MIN_PREFIX):
            needles, whole = [prefix], False  # one pass: ids of one turn share most of their characters
        elif len(wanted) <= MAX_SEPARATE:
            needles, whole = wanted, True
        else:
            return None
        found = _search(source, start, end, needles, whole, members, overlap, _memmem_finder(), early is None)
    if early is None:
        return found
    escaped = early.lines(source)
    if escaped is None:  # that search does not count: search for them now
        escaped = _search_literals(source, start, end, [], overlap, True)
        if escaped is None:
            escaped = _search(source, start, end, [], True, members, overlap, _memmem_finder(), True)
    return found | escaped


def _search_literals(
    source: Source, start: int, end: int, ids: list[bytes], overlap: int, escapes: bool
) -> set[int] | None:
    """The lines of ``[start, end)`` that hold one of ``ids`` as a whole token (and unless not ``escapes``,
    an escaped printable ASCII character), found in one pass for all of them by Hyperscan
    (:mod:`.literals`), in two threads for a big file (its scan lets go of the GIL); None without it."""
    literals = compile_literals(ids + list(ESCAPES) if escapes else ids)
    if literals is None:
        return None

    def scan(lo: int, hi: int) -> set[int]:
        return _scan_literals(source, lo, hi, literals, len(ids), overlap)

    return _scan_threads(scan, start, end) if end - start >= PARALLEL_MIN else scan(start, end)


def _scan_literals(source: Source, lo: int, hi: int, literals: Literals, ids: int, overlap: int) -> set[int]:
    """The lines with a match that starts in bytes ``[lo, hi)``: needles ``0..ids - 1`` are ids (whole tokens
    only), the others escapes (:data:`~.literals.ESCAPES`)."""
    found: set[int] = set()
    starts = source.starts
    end = source.size
    needles = literals.needles
    scan = literals.scanner()
    pos = lo
    before = source.read(lo - 1, 1)[0] if lo > (starts[0] if len(starts) else 0) else 0  # the byte before (0: none)
    while pos < hi:
        size = min(CHUNK, hi - pos)
        buf = source.read(pos, min(size + overlap, end - pos))
        for index, i in scan(buf):
            if i >= size:  # the next chunk's (read again there)
                continue
            if index < ids:
                j = i + len(needles[index])
                if (buf[i - 1] if i else before) in _ID_BYTES or (j < len(buf) and buf[j] in _ID_BYTES):
                    continue  # inside a longer token
            found.add(bisect.bisect_right(starts, pos + i) - 1)
        before = buf[size - 1]
        pos += size
    return found


def _search(
    source: Source, start: int, end: int, needles: list[bytes], whole: bool, members: set[bytes], overlap: int,
    finder: "Finder | None", escapes: bool,
) -> set[int]:
    """:func:`_scan` of ``[start, end)``: in two threads, two processes or one, as the file's size and the search allow."""

    def scan(lo: int, hi: int) -> set[int]:
        return _scan(source, lo, hi, needles, whole, members, overlap, finder or _bytes_finder, escapes)

    if end - start < PARALLEL_MIN:
        return scan(start, end)
    if finder is not None:
        return _scan_threads(scan, start, end)
    if not _can_fork():
        return scan(start, end)
    return _scan_halves(scan, start, end)


#: ``finds(buf, needle, lo, hi)``: the offsets in ``[lo, hi)`` where ``needle`` starts in ``buf`` (it may end past ``hi``)
Finder = Callable[[bytes, bytes, int, int], Iterator[int]]


def _bytes_finder(buf: bytes, needle: bytes, lo: int, hi: int) -> Iterator[int]:
    i = buf.find(needle, lo)
    while 0 <= i < hi:
        yield i
        i = buf.find(needle, i + 1)


_memmem: "Finder | None | bool" = None  # None: not looked up yet; False: there is none


def _memmem_finder() -> "Finder | None":
    """A finder through libc's ``memmem`` (ctypes lets go of the GIL for each call), or None without one."""
    global _memmem
    if _memmem is None:
        _memmem = False
        if sys.platform.startswith("linux") or sys.platform == "darwin":
            try:
                import ctypes

                fn = ctypes.CDLL(None).memmem
                fn.restype = ctypes.c_void_p
                fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
                as_pointer = ctypes.c_char_p
                address = ctypes.cast

                def finds(buf: bytes, needle: bytes, lo: int, hi: int) -> Iterator[int]:
                    held = as_pointer(buf)  # points into ``buf`` itself (no copy), kept alive here
                    base = address(held, ctypes.c_void_p).value or 0
                    k, n, i = len(needle), len(buf), lo
                    while i < hi and n - i >= k:
                        at = fn(base + i, n - i, needle, k)
                        if not at or at - base >= hi:
                            return
                        yield at - base
                        i = at - base + 1

                _memmem = finds
            except (ImportError, OSError, AttributeError):
                _memmem = False
    return _memmem if callable(_memmem) else None


def _scan(
    source: Source, lo: int, hi: int, needles: list[bytes], whole: bool, members: set[bytes], overlap: int,
    finds: Finder = _bytes_finder, escapes: bool = True,
) -> set[int]:
    """The lines with a match that starts in bytes ``[lo, hi)`` (read up to ``overlap`` bytes further), and
    unless not ``escapes``, those with an escaped printable ASCII character there."""
    found: set[int] = set()
    starts = source.starts
    end = source.size
    pos = lo
    before = source.read(lo - 1, 1)[0] if lo > (starts[0] if len(starts) else 0) else 0  # the byte before (0: none)

    def line_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    while pos < hi:
        size = min(CHUNK, hi - pos)
        buf = source.read(pos, min(size + overlap, end - pos))
        for needle in needles:
            k = len(needle)
            for i in finds(buf, needle, 0, size):
                prev = buf[i - 1] if i else before
                if prev not in _ID_BYTES:
                    j = i + k
                    if whole:
                        ok = j >= len(buf) or buf[j] not in _ID_BYTES
                    else:
                        m = _TOKEN.match(buf, j)
                        ok = buf[i : m.end() if m else j] in members
                    if ok:
                        found.add(line_of(pos + i))
        if escapes:
            for i in finds(buf, _ESCAPE, 0, size):  # a hit is rare
                if i + 4 < len(buf) and buf[i + 4] in _ESCAPED:
                    found.add(line_of(pos + i))
        before = buf[size - 1]
        pos += size
    return found


def _scan_threads(scan: "Callable[[int, int], set[int]]", start: int, end: int) -> set[int]:
    """Scan ``[start, end)`` in two threads, a half each (the search lets go of the GIL)."""
    mid = start + (end - start) // 2
    theirs: list[set[int]] = []
    failed: list[BaseException] = []

    def second() -> None:
        try:
            theirs.append(scan(mid, end))
        except BaseException as exc:  # given to the caller below
            failed.append(exc)

    t = threading.Thread(target=second, name="sv-idscan", daemon=True)
    t.start()
    try:
        found = scan(start, mid)
    finally:
        t.join()
    if failed:
        raise failed[0]
    return found | theirs[0]


def _can_fork() -> bool:
    """A child process may scan half the file: only from a process with a single thread (a fork copies no
    other thread, and a lock one of them held would stay held in the child)."""
    return hasattr(os, "fork") and threading.active_count() == 1 and threading.current_thread() is threading.main_thread()


def _scan_halves(scan: "Callable[[int, int], set[int]]", start: int, end: int) -> set[int]:
    """Scan ``[start, end)`` in two processes: a forked child takes the second half (the byte search holds the
    GIL, so a thread would not run alongside). Whatever goes wrong in the child, the parent scans its half."""
    from sessionview.core.doc.forkhalf import in_a_child

    mid = start + (end - start) // 2

    def second_half() -> bytes:
        lines = array("q", sorted(scan(mid, end)))
        return len(lines).to_bytes(8, "little") + lines.tobytes()

    found, got = in_a_child(second_half, lambda: scan(start, mid))
    if got is not None and len(got) >= 8 and len(got) == 8 + 8 * int.from_bytes(got[:8], "little"):
        theirs = array("q")
        theirs.frombytes(got[8:])
        found.update(theirs)
        return found
    return found | scan(mid, end)  # the child failed: scan its half here


class Escapes:
    """Where a file spells a printable ASCII character as an escape (``\\u0020``-``\\u007f``), found in a
    background thread (``memmem`` lets go of the GIL) while the file is loaded: started before the load
    (:meth:`start`), given to the loaded document when it read the file with the same stat (:func:`adopt`),
    and counted only if the file still had that stat once all of it was searched."""

    def __init__(self, path: str, finds: Finder) -> None:
        self._finds = finds
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            self.st = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        self._offsets: array | None = None
        self._lines: set[int] | None = None
        self._thread = threading.Thread(target=self._run, args=(fd,), name="sv-escapes", daemon=True)
        try:
            self._thread.start()
        except BaseException:  # no thread to be had: the id search looks for escapes itself
            os.close(fd)
            raise

    @classmethod
    def start(cls, path: str) -> "Escapes | None":
        """The search of ``path``, or None where it would hold the GIL (no ``memmem``) or cannot open it."""
        finds = _memmem_finder()
        if finds is None:
            return None
        try:
            return cls(path, finds)
        except (OSError, RuntimeError):
            return None

    def _run(self, fd: int) -> None:
        try:
            size = self.st.st_size
            offsets = array("q")
            pos = 0
            while pos < size:
                n = min(CHUNK, size - pos)
                buf = os.pread(fd, min(n + 4, size - pos), pos)  # 4 more: the character after \u00
                if len(buf) < min(n + 4, size - pos):
                    return
                for i in self._finds(buf, _ESCAPE, 0, n):
                    if i + 4 < len(buf) and buf[i + 4] in _ESCAPED:
                        offsets.append(pos + i)
                pos += n
            if _stat_key(os.fstat(fd)) == _stat_key(self.st):
                self._offsets = offsets
        except OSError:
            return
        finally:
            os.close(fd)

    def lines(self, source: Source) -> set[int] | None:
        """The lines of ``source`` with such an escape, or None when the search does not count."""
        self._thread.join()
        if self._offsets is None:
            return None
        if self._lines is None:
            starts = source.starts
            self._lines = {bisect.bisect_right(starts, o) - 1 for o in self._offsets}
        return self._lines


_early: "weakref.WeakKeyDictionary[Source, Escapes]" = weakref.WeakKeyDictionary()


def _stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def adopt(source: Source, st: os.stat_result | None, escapes: Escapes) -> bool:
    """Let the id search of ``source`` (loaded with the stat ``st``) use ``escapes`` when it searched that same file."""
    if st is None or _stat_key(st) != _stat_key(escapes.st) or source.size != st.st_size:
        return False
    _early[source] = escapes
    return True


class Paired(Protocol):
    """What the id search needs of a session: an :class:`~.change.Editable` (whose module imports this one)."""

    def pairing(self) -> Pairing: ...


class IdPairing:
    """The pairing entries of the ids asked for so far (:meth:`cover`), exactly as the whole session's
    pairing has them: every record that mentions one of them is viewed, in order."""

    def __init__(self, session: "Paired") -> None:
        self.session = session
        self._covered: set[str] = set()
        self._lines: set[int] = set()
        self._pairing = Pairing()
        self._full: Pairing | None = None

    def _jsonl(self) -> "JsonlSession | None":
        from sessionview.core.session import JsonlSession

        s = self.session
        return s if type(s) is JsonlSession and not s.doc.edited else None

    def cover(self, ids: Iterable[str]) -> Pairing:
        """A pairing that is right for ``ids`` (and every id covered before)."""
        if self._full is not None:
            return self._full
        missing = set(ids) - self._covered
        if not missing:
            return self._pairing
        jsonl = self._jsonl()
        lines = lines_mentioning(jsonl.doc.source, missing) if jsonl is not None else None
        if jsonl is None or lines is None:
            self._full = self.session.pairing()
            return self._full
        self._covered |= missing
        if lines - self._lines:
            self._lines |= lines
            self._pairing = pair(jsonl.view(i + 1, keep=False) for i in sorted(self._lines))
        return self._pairing
