"""Lossless line documents.

A session file is a sequence of records. Each record keeps its raw bytes (without the terminator and
without a leading BOM) and its own terminator: ``b"\\n"``, ``b"\\r\\n"`` or ``b""`` for an unterminated
last line. A UTF-8 BOM at the very start of the file is kept apart in :attr:`Document.bom` and written
back before whatever record is first, so deleting line 1 moves the BOM onto the new first line.

The bytes of a file are never held whole: a :class:`Source` keeps the start offset of every line in an
``array('q')`` (8 bytes per line) and reads a record on demand with ``os.pread``. Edits build a new
:class:`Document` over the same source with a piece table, so untouched records are never copied or
re-encoded. ``Document.iter_bytes()`` with no edits yields exactly the bytes that were loaded.
"""

from __future__ import annotations

import bisect
import os
import stat
import time
from array import array
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

from sessionview.core.doc import linescan
from sessionview.core.doc.digest import new_hash
from sessionview.core.doc.linescan import SourceChanged, closed_reader, scan_newlines, scan_newlines_split
from sessionview.core.values import Frozen

if TYPE_CHECKING:
    from sessionview.core.doc.digest import Hasher
_set = object.__setattr__  # lines and records are frozen (sessionview.core.values: no dataclass to build at import)
BOM = b"\xef\xbb\xbf"


class Line(Frozen):
    """A record's bytes: ``raw`` without terminator, plus the terminator itself."""

    __slots__ = ("raw", "terminator")
    raw: bytes
    terminator: bytes

    def __init__(self, raw: bytes, terminator: bytes = b"\n") -> None:
        _set(self, "raw", raw)
        _set(self, "terminator", terminator)

    @property
    def data(self) -> bytes:
        return self.raw + self.terminator


class Record(Frozen):
    """One record of a document, as seen through a document version."""

    __slots__ = ("number", "raw", "terminator", "start", "end")
    number: int  # 1-based position in this document
    raw: bytes
    terminator: bytes
    start: int | None  # byte offset of ``raw`` in the loaded source, None for a new record
    end: int | None  # byte offset just past the terminator in the loaded source

    def __init__(self, number: int, raw: bytes, terminator: bytes, start: int | None, end: int | None) -> None:
        _set(self, "number", number)
        _set(self, "raw", raw)
        _set(self, "terminator", terminator)
        _set(self, "start", start)
        _set(self, "end", end)

    @property
    def partial(self) -> bool:
        return self.terminator == b""

    @property
    def data(self) -> bytes:
        return self.raw + self.terminator


def split_terminator(line: bytes) -> tuple[bytes, bytes]:
    if line.endswith(b"\r\n"):
        return line[:-2], b"\r\n"
    if line.endswith(b"\n"):
        return line[:-1], b"\n"
    return line, b""


class Source:
    """The loaded bytes of a file: line offsets plus a reader. Immutable once built."""

    def __init__(
        self, read: Callable[[int, int], bytes], size: int, starts: array, bom: bytes, hash_state: "Hasher | None" = None
    ) -> None:
        self._read = read
        self.size = size
        self.starts = starts  # start offset of every line (after the BOM for line 0)
        self.bom = bom
        self._hash = hash_state  # the hash (:mod:`.digest`) of the ``size`` bytes as they were read while indexing

    @property
    def hexdigest(self) -> str | None:
        return self._hash.hexdigest() if self._hash is not None else None

    @property
    def count(self) -> int:
        return len(self.starts)

    def read(self, offset: int, size: int) -> bytes:
        data = self._read(offset, size)
        if len(data) != size:
            raise SourceChanged(f"could only read {len(data)} of {size} bytes at offset {offset}: the file changed")
        return data

    def span(self, i: int) -> tuple[int, int]:
        start = self.starts[i]
        end = self.starts[i + 1] if i + 1 < len(self.starts) else self.size
        return start, end

    def line(self, i: int) -> tuple[bytes, bytes, int, int]:
        start, end = self.span(i)
        raw, term = split_terminator(self.read(start, end - start))
        return raw, term, start, end

    def line_length(self, i: int) -> int:
        start, end = self.span(i)
        return end - start

    def iter_bytes(self, first: int, stop: int) -> Iterator[bytes]:
        """The raw bytes of lines ``[first, stop)``, in chunks of bounded size."""
        if first >= stop:
            return
        pos = self.starts[first]
        end = self.span(stop - 1)[1]
        while pos < end:
            size = min(linescan.CHUNK, end - pos)
            yield self.read(pos, size)
            pos += size

    @classmethod
    def from_bytes(cls, data: bytes) -> "Source":
        bom = BOM if data.startswith(BOM) else b""
        begin = len(bom)
        starts = array("q")
        if len(data) > begin:
            starts.append(begin)
            scan_newlines(lambda o, n: data[o : o + n], begin, len(data), starts)
            if starts and starts[-1] == len(data):
                starts.pop()
        mv = memoryview(data)
        return cls(lambda o, n: bytes(mv[o : o + n]), len(data), starts, bom)

    @classmethod
    def from_fd(
        cls, fd: int, size: int | None = None, progress: Callable[[int], None] | None = None, digest: bool = True
    ) -> "Source":
        if size is None:
            size = os.fstat(fd).st_size
        return cls.from_reader(preader(fd), size, progress, digest)

    @classmethod
    def from_reader(
        cls,
        read: Callable[[int, int], bytes],
        size: int,
        progress: Callable[[int], None] | None = None,
        digest: bool = True,
    ) -> "Source":
        """Index ``size`` bytes. With ``digest``, the hash (:mod:`.digest`) of exactly those bytes is taken in
        the same pass, so a later save can tell whether the file still starts with what was loaded."""
        head = read(0, min(3, size))
        bom = BOM if head == BOM else b""
        begin = len(bom)
        starts = array("q")
        hasher = new_hash() if digest else None
        if hasher is not None and bom:
            hasher.update(bom)
        if size > begin:
            starts.append(begin)
            if hasher is None and progress is None:  # nothing needs the bytes in order: on two cores
                scan_newlines_split(read, begin, size, starts)
            else:
                scan_newlines(read, begin, size, starts, progress, hasher)
            if starts[-1] == size:
                starts.pop()
        return cls(read, size, starts, bom, hasher)


def preader(fd: int) -> Callable[[int, int], bytes]:
    def read(offset: int, size: int) -> bytes:
        parts = []
        got = 0
        while got < size:
            chunk = os.pread(fd, size - got, offset + got)
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    return read


class _Run(Frozen):
    """Lines ``[first, first+count)`` of the source."""

    __slots__ = ("first", "count")
    first: int
    count: int

    def __init__(self, first: int, count: int) -> None:
        _set(self, "first", first)
        _set(self, "count", count)


class _New(Frozen):
    __slots__ = ("lines",)
    lines: tuple[Line, ...]

    def __init__(self, lines: tuple[Line, ...]) -> None:
        _set(self, "lines", lines)

    @property
    def count(self) -> int:
        return len(self.lines)


class Document:
    """A version of a line document: a source plus a piece table of edits."""

    def __init__(self, source: Source, pieces: Sequence[_Run | _New] | None = None, path: str | None = None):
        self.source = source
        self.path = path
        self._fd: int | None = None  # the open file of :meth:`load`, closed by :meth:`close`
        self.loaded_stat: os.stat_result | None = None  # its stat at load (None: not loaded from a file)
        self.loaded_at_ns: int | None = None  # time.time_ns() read right before that stat
        if pieces is None:
            pieces = [_Run(0, source.count)] if source.count else []
        self._pieces: tuple[_Run | _New, ...] = tuple(p for p in pieces if p.count)
        cum = [0]
        for p in self._pieces:
            cum.append(cum[-1] + p.count)
        self._cum = cum
        # the records are the source's first lines, in order (unedited, or only appended to): #N is line N - 1
        self._direct = len(self._pieces) == 1 and isinstance(self._pieces[0], _Run) and self._pieces[0].first == 0
        #: records ``1..direct`` are the source's lines ``0..direct - 1`` (0: none is known to be)
        self.direct = self._cum[1] if self._direct else 0

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: bytes, path: str | None = None) -> "Document":
        return cls(Source.from_bytes(data), path=path)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], progress: Callable[[int], None] | None = None, digest: bool = True
    ) -> "Document":
        """Index a regular file. The file descriptor stays open for on-demand reads.

        ``digest=False`` skips the hash taken while indexing (:mod:`.digest`, about 10 GB/s): for read-only
        uses, and for a file at rest that a save's stamp hashes alongside (:mod:`~sessionview.core.store.stamp`).
        A later ``stamp.stamp_document`` then hashes through the descriptor."""
        fd = open_regular(path)
        try:
            before = time.time_ns()  # for the save's proof that the file did not change (store.proof.settled)
            st = os.fstat(fd)
            source = Source.from_fd(fd, st.st_size, progress=progress, digest=digest)
        except BaseException:
            os.close(fd)
            raise
        doc = cls(source, path=os.fspath(path))
        doc._fd = fd
        doc.loaded_stat = st
        doc.loaded_at_ns = before
        return doc

    # -- reading ------------------------------------------------------------------------------
    @property
    def bom(self) -> bytes:
        return self.source.bom

    @property
    def edited(self) -> bool:
        return not (
            len(self._pieces) == (1 if self.source.count else 0)
            and all(isinstance(p, _Run) and p.first == 0 and p.count == self.source.count for p in self._pieces)
        )

    def __len__(self) -> int:
        return self._cum[-1]

    def _locate(self, index: int) -> tuple[_Run | _New, int]:
        if not 0 <= index < len(self):
            raise IndexError(index)
        k = bisect.bisect_right(self._cum, index) - 1
        return self._pieces[k], index - self._cum[k]

    def record(self, number: int) -> Record:
        """Record ``number`` (1-based)."""
        piece, off = self._locate(number - 1)
        if isinstance(piece, _Run):
            raw, term, start, end = self.source.line(piece.first + off)
            return Record(number, raw, term, start, end)
        line = piece.lines[off]
        return Record(number, line.raw, line.terminator, None, None)

    def record_size(self, number: int) -> int:
        piece, off = self._locate(number - 1)
        if isinstance(piece, _Run):
            return self.source.line_length(piece.first + off)
        return len(piece.lines[off].data)

    def source_index(self, number: int) -> int | None:
        """The index of record ``number`` in the loaded source, or None if it is new."""
        if 0 < number <= self.direct:
            return number - 1
        piece, off = self._locate(number - 1)
        return piece.first + off if isinstance(piece, _Run) else None

    def __iter__(self) -> Iterator[Record]:
        n = 0
        for piece in self._pieces:
            if isinstance(piece, _Run):
                for i in range(piece.first, piece.first + piece.count):
                    n += 1
                    raw, term, start, end = self.source.line(i)
                    yield Record(n, raw, term, start, end)
            else:
                for line in piece.lines:
                    n += 1
                    yield Record(n, line.raw, line.terminator, None, None)

    def records(self, first: int, last: int) -> list[Record]:
        """Records ``first..last`` (1-based, inclusive), clamped."""
        first = max(first, 1)
        last = min(last, len(self))
        return [self.record(n) for n in range(first, last + 1)]

    def iter_bytes(self) -> Iterator[bytes]:
        """The serialized document in chunks. Identical to the loaded bytes when nothing was edited."""
        if self._pieces or self.bom:
            yield self.bom
        for piece in self._pieces:
            if isinstance(piece, _Run):
                yield from self.source.iter_bytes(piece.first, piece.first + piece.count)
            else:
                for line in piece.lines:
                    yield line.data

    def layout(self) -> Iterator[bytes | tuple[int, int]]:
        """The serialized document as :meth:`iter_bytes` gives it, but each run of lines kept from the loaded
        source as its byte range ``(start, end)`` there instead of its bytes (a save copies those in the kernel)."""
        if self._pieces or self.bom:
            yield self.bom
        for piece in self._pieces:
            if isinstance(piece, _Run):
                if piece.count:
                    yield (self.source.starts[piece.first], self.source.span(piece.first + piece.count - 1)[1])
            else:
                for line in piece.lines:
                    yield line.data

    def to_bytes(self) -> bytes:
        return b"".join(self.iter_bytes())

    def size(self) -> int:
        total = len(self.bom) if (self._pieces or self.bom) else 0
        for piece in self._pieces:
            if isinstance(piece, _Run):
                if piece.count:
                    start = self.source.starts[piece.first]
                    end = self.source.span(piece.first + piece.count - 1)[1]
                    total += end - start
            else:
                total += sum(len(line.data) for line in piece.lines)
        return total

    # -- editing (pure: returns a new document) ------------------------------------------------
    def splice(self, first: int, last: int, lines: Iterable[Line]) -> "Document":
        """Replace records ``first..last`` (1-based, inclusive; ``last == first - 1`` inserts)."""
        if not (1 <= first <= len(self) + 1 and first - 1 <= last <= len(self)):
            raise IndexError(f"range {first}:{last} outside 1:{len(self)}")
        new = tuple(lines)
        pieces: list[_Run | _New] = []
        lo, hi = first - 1, last  # 0-based half-open [lo, hi)
        pos = 0
        inserted = False
        for piece in self._pieces:
            p_lo, p_hi = pos, pos + piece.count
            pos = p_hi
            if p_hi <= lo or p_lo >= hi:
                if p_lo >= hi and not inserted:
                    if new:
                        pieces.append(_New(new))
                    inserted = True
                pieces.append(piece)
                continue
            # overlap: keep the parts outside [lo, hi)
            keep_before = max(0, lo - p_lo)
            keep_after = max(0, p_hi - hi)
            if keep_before:
                pieces.append(_slice(piece, 0, keep_before))
            if not inserted:
                if new:
                    pieces.append(_New(new))
                inserted = True
            if keep_after:
                pieces.append(_slice(piece, piece.count - keep_after, piece.count))
        if not inserted and new:
            pieces.append(_New(new))
        return Document(self.source, _merge(pieces), self.path)

    # -- fingerprints -------------------------------------------------------------------------
    def source_digest(self) -> str:
        """The hash (:mod:`.digest`) of the loaded bytes (the whole source, regardless of edits), as read while
        indexing, else read now."""
        if self.source.hexdigest is not None:
            return self.source.hexdigest
        h = new_hash()
        if self.source.bom:
            h.update(self.source.bom)
        if self.source.count:
            for chunk in self.source.iter_bytes(0, self.source.count):
                h.update(chunk)
        return h.hexdigest()

    def close(self) -> None:
        fd = self._fd
        if fd is not None:
            self.source._read = closed_reader  # not the number: once closed it may name another file
            os.close(fd)
            self._fd = None


def _slice(piece: _Run | _New, a: int, b: int) -> _Run | _New:
    if isinstance(piece, _Run):
        return _Run(piece.first + a, b - a)
    return _New(piece.lines[a:b])


def _merge(pieces: list[_Run | _New]) -> list[_Run | _New]:
    out: list[_Run | _New] = []
    for p in pieces:
        if not p.count:
            continue
        if out:
            q = out[-1]
            if isinstance(q, _Run) and isinstance(p, _Run) and q.first + q.count == p.first:
                out[-1] = _Run(q.first, q.count + p.count)
                continue
            if isinstance(q, _New) and isinstance(p, _New):
                out[-1] = _New(q.lines + p.lines)
                continue
        out.append(p)
    return out


class NotRegularFile(OSError):
    pass


def open_regular(path: str | os.PathLike[str]) -> int:
    """Open ``path`` read-only without blocking, and insist that it is a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = describe_mode(st.st_mode)
            raise NotRegularFile(f"{os.fspath(path)}: not a regular file ({kind})")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_whole(path: str | os.PathLike[str]) -> tuple[bytes, os.stat_result]:
    """The whole of a regular file (for one-document formats), with the stat of what was read."""
    fd = open_regular(path)
    try:
        st = os.fstat(fd)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks), st


def describe_mode(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"
