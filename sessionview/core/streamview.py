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
from sessionview.core.doc.document import BOM, open_regular, split_terminator
from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.doc.model import View
from sessionview.core.doc.parse import DEFAULT_CAP, Parsed, Status, parse_record
from sessionview.core.formats.base import Adapter
from sessionview.core.session import RAW_PREVIEW, build_view

__all__ = ["StreamedSession", "open_stream"]

CHUNK = 4 * 1024 * 1024
HEAD_BUDGET = 64 * 1024 * 1024  # the lines held while the format is detected (few valid ones: read it indexed)


class StreamedSession:
    """A JSONL file read once: its format, then :meth:`views` (once); ``count`` is final after them."""

    def __init__(self, fd: int, path: str, size: int, cap: int = DEFAULT_CAP) -> None:
        self._fd = fd
        self.path = path
        self.size = size
        self.cap = cap
        self.count = 0
        self._head: list[tuple[bytes, bytes, int, Parsed]] = []
        self._held = 0
        self.overflow = False  # detection read more than HEAD_BUDGET bytes of lines: not replayable
        self._lines = self._read_lines()
        self.adapter: Adapter = self._detect()
        self.read_only_reason = getattr(self.adapter, "read_only", None)

    @property
    def format(self) -> str:
        return self.adapter.name

    @property
    def format_title(self) -> str:
        return self.adapter.title

    def _read_lines(self) -> Iterator[tuple[bytes, bytes, int, Parsed]]:
        """``(raw, terminator, size, parsed)`` of every line; ``raw`` is a preview for a line over the cap."""
        pos, end, fd, cap = 0, self.size, self._fd, self.cap
        rest = b""
        skipping = -1  # the size so far of a line over the cap whose start is kept in ``rest``
        if os.pread(fd, min(3, end), 0) == BOM:
            pos = len(BOM)
        while pos < end:
            chunk = os.pread(fd, min(CHUNK, end - pos), pos)
            if not chunk:
                raise SourceChanged(f"file ended at byte {pos}, expected {end}")
            pos += len(chunk)
            if skipping >= 0:
                i = chunk.find(b"\n")
                if len(rest) < RAW_PREVIEW:
                    rest += chunk[: RAW_PREVIEW - len(rest) if i == -1 else min(i, RAW_PREVIEW - len(rest))]
                if i == -1:
                    skipping += len(chunk)
                    continue
                size = skipping + i + 1
                yield rest, b"\n", size, _oversized(size, cap)
                rest, skipping = b"", -1
                chunk = chunk[i + 1:]
            data = rest + chunk if rest else chunk
            start = 0
            find = data.find
            i = find(b"\n")
            while i != -1:
                line = data[start:i + 1]
                raw, term = split_terminator(line)
                yield raw, term, len(line), parse_record(raw, cap=cap) if len(line) <= cap + 2 else _oversized(len(line), cap)
                start = i + 1
                i = find(b"\n", start)
            rest = data[start:]
            if len(rest) > cap + 2:
                skipping, rest = len(rest), rest[:RAW_PREVIEW]
        if skipping >= 0:
            yield rest, b"", skipping, _oversized(skipping, cap)
        elif rest:
            yield rest, b"", len(rest), parse_record(rest, terminated=False, cap=cap)

    def _detect(self) -> Adapter:
        def values() -> Iterator[object]:
            for line in self._lines:
                _, _, size, parsed = line
                self._held += size
                if self._held > HEAD_BUDGET:
                    self.overflow = True
                    self._head.clear()
                if not self.overflow:
                    self._head.append(line)
                if size <= self.cap and parsed.ok:
                    yield parsed.value

        return formats.detect(values())

    def views(self) -> Iterator[View]:
        """Every record's view, first to last (as ``JsonlSession.stream()``)."""
        adapter, n = self.adapter, 0
        head, self._head = self._head, []
        for lines in (head, self._lines):
            for raw, term, size, parsed in lines:
                n += 1
                self.count = n

                def raw_of(limit: int | None, raw: bytes = raw, term: bytes = term, size: int = size) -> bytes:
                    if limit is None or size <= limit:
                        return raw
                    return (raw + term)[:limit]

                yield build_view(adapter, n, parsed, size, raw_of)
            del head[:]

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
