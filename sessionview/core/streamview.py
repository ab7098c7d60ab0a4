"""The views of a JSONL session read once, front to back, without indexing the file first (``sessionview
show`` of a big file: the first record is out before the rest of the file is read).

:func:`open_stream` gives the same views, numbers and format as :func:`sessionview.core.session.open_session`
followed by :meth:`Session.stream` over every record: the same parse (:func:`parse_record`), the same view
(:func:`sessionview.core.session.build_view`), the same format detection over the first valid records. It
reads the bytes the file had when it was opened; a line over the cap is never held whole.
"""

from __future__ import annotations

import os
from typing import Iterator

from sessionview.core import formats, jsondoc, littleghost
from sessionview.core.doc.document import BOM, open_regular
from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.doc.model import View
from sessionview.core.doc.parse import DEFAULT_CAP, Parsed, Status, parse_record
from sessionview.core.formats.base import Adapter
from sessionview.core.session import RAW_PREVIEW, build_view

__all__ = ["LineReader", "StreamedSession", "open_stream", "parsed_of"]

CHUNK = 4 * 1024 * 1024
HEAD_BUDGET = 64 * 1024 * 1024  # the lines held while the format is detected (few valid ones: read it indexed)


class LineReader:
    """The lines of ``fd`` from byte ``start`` (after a BOM at 0) up to byte ``end``, which may be lowered while
    they are read, to no less than :attr:`pos` (bytes are read up to :attr:`pos`); iterating gives
    ``(raw, terminator, size)`` of each line, where ``raw`` is a preview for a line over the cap (then
    ``size > cap + 2``: see :func:`parsed_of`)."""

    def __init__(self, fd: int, start: int, end: int, cap: int = DEFAULT_CAP) -> None:
        self.fd = fd
        self.pos = start
        self.end = end
        self.cap = cap

    def __iter__(self) -> Iterator[tuple[bytes, bytes, int]]:
        fd, cap = self.fd, self.cap
        rest = b""
        skipping = -1  # the size so far of a line over the cap whose start is kept in ``rest``
        if self.pos == 0 and os.pread(fd, min(3, self.end), 0) == BOM:
            self.pos = len(BOM)
        while self.pos < self.end:
            pos = self.pos
            chunk = os.pread(fd, min(CHUNK, self.end - pos), pos)
            if not chunk:
                raise SourceChanged(f"file ended at byte {pos}, expected {self.end}")
            self.pos = pos + len(chunk)
            if skipping >= 0:
                i = chunk.find(b"\n")
                if len(rest) < RAW_PREVIEW:
                    rest += chunk[: RAW_PREVIEW - len(rest) if i == -1 else min(i, RAW_PREVIEW - len(rest))]
                if i == -1:
                    skipping += len(chunk)
                    continue
                yield rest, b"\n", skipping + i + 1
                rest, skipping = b"", -1
                chunk = chunk[i + 1:]
            data = rest + chunk if rest else chunk
            start = 0
            find = data.find
            i = find(b"\n")
            while i != -1:  # split_terminator, without a copy of the line first
                if i > start and data[i - 1] == 13:
                    yield data[start:i - 1], b"\r\n", i + 1 - start
                else:
                    yield data[start:i], b"\n", i + 1 - start
                start = i + 1
                i = find(b"\n", start)
            rest = data[start:]
            if len(rest) > cap + 2:
                skipping, rest = len(rest), rest[:RAW_PREVIEW]
        if skipping >= 0:
            yield rest, b"", skipping
        elif rest:
            yield rest, b"", len(rest)


def parsed_of(raw: bytes, term: bytes, size: int, cap: int = DEFAULT_CAP) -> Parsed:
    """The parse of a line :class:`LineReader` gave (as :meth:`JsonlSession.parsed` gives it)."""
    if size > cap + 2:
        return _oversized(size, cap)
    return parse_record(raw, terminated=bool(term), cap=cap)


class StreamedSession:
    """A JSONL file read once: its format, then :meth:`views` (once); ``count`` is final after them."""

    def __init__(self, fd: int, path: str, size: int, cap: int = DEFAULT_CAP) -> None:
        self._fd = fd
        self.path = path
        self.size = size
        self.cap = cap
        self.count = 0
        self.head: list[tuple[bytes, bytes, int, Parsed]] = []  # the lines read for the format detection
        self._held = 0
        self.overflow = False  # detection read more than HEAD_BUDGET bytes of lines: not replayable
        self.reader = LineReader(fd, 0, size, cap)
        self.lines = iter(self.reader)  # the lines after ``head``
        self.adapter: Adapter = self._detect()
        self.read_only_reason = getattr(self.adapter, "read_only", None)

    @property
    def fd(self) -> int:
        return self._fd

    @property
    def format(self) -> str:
        return self.adapter.name

    @property
    def format_title(self) -> str:
        return self.adapter.title

    def _detect(self) -> Adapter:
        def values() -> Iterator[object]:
            cap = self.cap
            for raw, term, size in self.lines:
                parsed = parsed_of(raw, term, size, cap)
                self._held += size
                if self._held > HEAD_BUDGET:
                    self.overflow = True
                    self.head.clear()
                if not self.overflow:
                    self.head.append((raw, term, size, parsed))
                if size <= cap and parsed.ok:
                    yield parsed.value

        return formats.detect(values())

    def view(self, n: int, raw: bytes, term: bytes, size: int, parsed: Parsed | None = None) -> View:
        """The view of line ``n`` as :class:`LineReader` gave it (parsed here unless ``parsed`` is given)."""

        def raw_of(limit: int | None) -> bytes:
            if limit is None or size <= limit:
                return raw
            return (raw + term)[:limit]

        if parsed is None:
            parsed = parsed_of(raw, term, size, self.cap)
        return build_view(self.adapter, n, parsed, size, raw_of)

    def views(self) -> Iterator[View]:
        """Every record's view, first to last (as ``JsonlSession.stream()``)."""
        n = 0
        head, self.head = self.head, []
        for raw, term, size, parsed in head:
            n += 1
            self.count = n
            yield self.view(n, raw, term, size, parsed)
        del head[:]
        for raw, term, size in self.lines:
            n += 1
            self.count = n
            yield self.view(n, raw, term, size)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _oversized(size: int, cap: int) -> Parsed:
    return Parsed(Status.OVERSIZED, error=f"{size} bytes, over the {cap} byte cap", size=size)


def open_stream(path: str, cap: int = DEFAULT_CAP) -> StreamedSession | None:
    """The file at ``path`` to read once, or None when it is not a JSONL session (a LittleGhost store document,
    a whole JSON document: :func:`~sessionview.core.session.open_session` reads those). Raises as
    ``open_session`` does for a file that cannot be opened."""
    if littleghost.looks_like_store_document(path):
        return None
    head = jsondoc.head_of(path)
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if jsondoc.looks_like_document(head) and size <= jsondoc.MAX_DOCUMENT:
            os.close(fd)
            return None
        stream = StreamedSession(fd, path, size, cap)
        # records linked by id across the file (pi branches, Gemini CLI's copies under one id) need the index
        if stream.overflow or stream.adapter.tree or stream.adapter.updates_by_id:
            stream.close()
            return None
        return stream
    except BaseException:
        try:
            os.close(fd)
        except OSError:
            pass
        raise
