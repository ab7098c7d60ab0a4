"""What the transcript shows, without any Textual: the open session, how it grows, filter rows, stats.

A JSONL file is opened end first (:func:`sessionview.core.tail_open.open_tail`): only its last lines are
indexed, so the last page shows at once whatever the file's size. Record numbers of that first session
are relative (1 is the first indexed line); :attr:`TranscriptModel.base` says how far they are from the
true line numbers, and is ``None`` until the full index is built in the background
(:meth:`TranscriptModel.attach_index`). A single JSON document (LittleGhost) is opened whole.

Appended lines (from a :class:`~sessionview.core.tail.Follower`) grow the same index in place.

A file on another host is opened the same way through a :class:`~sessionview.core.fileaccess.FileAccess`
(``TranscriptModel.open(path, access=...)``): range reads, end first; a document is read whole.
"""

from __future__ import annotations

import os
import re
from array import array
from typing import Callable, Iterator

import orjson

from sessionview.core import formats, jsondoc
from sessionview.core.doc.document import Document, Record, Source, preader
from sessionview.core.doc.model import Kind, View
from sessionview.core.doc.parse import DEFAULT_CAP
from sessionview.core.fileaccess import FileAccess, OpenFile
from sessionview.core.formats.base import Adapter
from sessionview.core.session import JsonlSession
from sessionview.core.session_base import Session
from sessionview.core.tail import Appended, Pending
from sessionview.core.tail_open import TailOpen, grow, open_tail, open_tail_file
from sessionview.core.view import timing
from sessionview.core.view.documents import document_from_bytes, looks_like_json_document, open_document_session, read_whole
from sessionview.core.view.filter import Filter
from sessionview.core.view.stats import Stats, compact_json

__all__ = ["Filter", "TranscriptModel", "Scanner", "quick_view", "searchable_text", "open_document_session"]

TAIL_COUNT = 256
QUICK_VIEW_SIZE = 1 << 20  # records over this are read without the slow byte-level checks
_BIG_DIGITS = re.compile(rb"\d{19}")


class TranscriptModel:
    """The open session and its numbering, growing as the file grows."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.session: Session
        self.lines = True  # a JSONL file (False: one JSON document)
        self.base: int | None = 0  # true line number = base + record number
        self.tail: TailOpen | None = None
        self.end = 0  # just past the last complete line
        self.size = 0
        self.pending: Pending | None = None
        self.adapter: Adapter | None = None
        self.stats: Stats | None = None  # every record (record numbers of the session)
        self.appended_stats = Stats()  # records appended while the stats are not there yet
        self.rows: array | None = None  # filtered record numbers (session numbering), None: all
        self.filter = Filter()
        self.tail_count = 0  # records indexed when opened end first
        self._big_views: dict[int, View] = {}
        self._start: float | None | bool = False  # the session's first time (False: not looked for yet)
        self._old_fds: list[int] = []  # files read before :meth:`adopt`, closed with the model
        self._old_files: list[OpenFile] = []  # the same for :meth:`adopt_file`

    # -- opening -------------------------------------------------------------------------------
    @classmethod
    def open(
        cls, path: str, tail_count: int = TAIL_COUNT, max_scan: int | None = None, access: FileAccess | None = None
    ) -> "TranscriptModel":
        """Open ``path``. With ``max_scan``, raise :class:`~sessionview.core.doc.linescan.ScanLimit` instead of
        reading more than that many bytes (the caller then opens it in a thread). With ``access``, the file
        is read through it (a file on another host)."""
        if access is not None:
            return cls._open_through(path, access, tail_count)
        m = cls(path)
        doc_session = open_document_session(path, max_scan)
        if doc_session is not None:
            m.session = doc_session
            m.lines = False
            m.base = 0
            try:
                m.size = os.path.getsize(path)
            except OSError:
                m.size = 0
            return m
        t = open_tail(path, tail_count, max_scan)
        try:
            m._from_tail(t, os.pread(t.fd, formats.HEAD_BYTES, 0))
        except BaseException:
            t.close()
            raise
        return m

    @classmethod
    def _open_through(cls, path: str, access: FileAccess, tail_count: int) -> "TranscriptModel":
        m = cls(path)
        opened = access.open(path)
        try:
            head = opened.read(0, max(jsondoc.HEAD_BYTES, formats.HEAD_BYTES))
            size = opened.stat().st_size
            if size <= jsondoc.MAX_DOCUMENT and (jsondoc.looks_like_document(head[: jsondoc.HEAD_BYTES]) or (
                path.lower().endswith(".json") and looks_like_json_document(head[: jsondoc.HEAD_BYTES])
            )):
                m.size = size
                m.session = document_from_bytes(read_whole(opened, m.size), path)
                m.lines = False
                opened.close()
                return m
            t = open_tail_file(opened, tail_count)
        except BaseException:
            opened.close()
            raise
        m._from_tail(t, head[: formats.HEAD_BYTES])
        return m

    def _from_tail(self, t: TailOpen, head: bytes) -> None:
        self.tail = t
        self.adapter = formats.detect_head(head)
        self.end = t.end
        self.size = t.size
        self.tail_count = t.source.count
        self.base = 0 if t.whole else None
        self.session = JsonlSession(Document(t.source, path=self.path), adapter=self.adapter)
        if t.size > t.end:
            preview = t.read(t.end, min(t.size - t.end, 4096))
            self.pending = Pending(t.end, t.size - t.end, preview)

    def close(self) -> None:
        if self.tail is not None:
            self.tail.close()
            self.tail = None
        for opened in self._old_files:
            opened.close()
        self._old_files.clear()
        for fd in self._old_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._old_fds.clear()
        try:
            self.session.close()
        except Exception:
            pass

    @property
    def indexed(self) -> bool:
        return self.base is not None

    @property
    def source(self) -> Source:
        assert isinstance(self.session, JsonlSession)
        return self.session.doc.source

    def attach_index(self, full: Source) -> int:
        """Swap the end-first index for the full one (built over ``[0, end at open)``).

        Record numbers become true line numbers. Returns the shift: record ``n`` of the end-first
        session is record ``n + shift`` now.
        """
        assert isinstance(self.session, JsonlSession)
        old = self.source
        if self.tail is not None:
            full = Source(self.tail.read, full.size, full.starts, full.bom)  # the file read now (adopt)
        shift = full.count - self.tail_count
        extra = old.starts[self.tail_count :]
        new = grow(full, extra, old.size) if len(extra) else full
        self.session = JsonlSession(Document(new, path=self.path), adapter=self.adapter)
        self._big_views.clear()
        self._start = False
        self.base = 0
        if self.rows is not None:
            self.rows = array("q", (n + shift for n in self.rows))
        if self.stats is not None:
            self.stats = self.stats.shifted(shift)
        self.appended_stats = self.appended_stats.shifted(shift)
        return shift

    # -- growth ---------------------------------------------------------------------------------
    def append(self, ev: Appended) -> tuple[int, int]:
        """Add appended complete lines. Returns the range of new record numbers (first, last)."""
        assert isinstance(self.session, JsonlSession)
        first = len(self.session) + 1
        src = grow(self.source, ev.starts, ev.end)
        self.session.doc = Document(src, path=self.path)
        self.end = ev.end
        self.size = max(self.size, ev.end)
        return first, len(self.session)

    def adopt(self, fd: int) -> None:
        """Read the file at ``fd`` from now on: a new file at the path that starts with every byte loaded
        (a temp file renamed over it, see :class:`~sessionview.core.tail.Renamed`). The model owns ``fd``;
        the old descriptor stays open until :meth:`close` (a worker may still be reading it)."""
        assert isinstance(self.session, JsonlSession) and self.tail is not None
        self._old_fds.append(self.tail.fd)
        self.tail.fd = fd
        src = self.source
        self.session.doc = Document(Source(preader(fd), src.size, src.starts, src.bom), path=self.path)

    def adopt_from(self, access: FileAccess) -> bool:
        """:meth:`adopt` through a FileAccess, whose identities belong to one open handle each: the path is
        opened again (the follower checked that the new file starts with what was loaded, and reports it if
        the path changes once more). False if it cannot be opened or is shorter than what was loaded."""
        try:
            opened = access.open(self.path)
        except OSError:
            return False
        if self.tail is None or opened.stat().st_size < self.end:
            opened.close()
            return False
        self.adopt_file(opened)
        return True

    def adopt_file(self, opened: OpenFile) -> None:
        """:meth:`adopt` for a file read through a FileAccess: read ``opened`` from now on (the model owns it)."""
        assert isinstance(self.session, JsonlSession) and self.tail is not None
        if self.tail.file is not None:
            self._old_files.append(self.tail.file)
        self.tail.file = opened
        src = self.source
        self.session.doc = Document(Source(self.tail.read, src.size, src.starts, src.bom), path=self.path)

    def set_pending(self, ev: Pending) -> None:
        self.pending = ev if ev.size else None
        self.size = ev.offset + ev.size

    # -- numbering and rows -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.session)

    def line_number(self, n: int) -> int | None:
        """The true line number (#N) of record ``n``, or None while the index is being built."""
        return None if self.base is None else self.base + n

    def record_of_line(self, line: int) -> int | None:
        """The record number for true line number ``line`` (clamped), or None if not known yet."""
        if self.base is None:
            return None
        n = line - self.base
        return max(1, min(n, len(self.session))) if len(self.session) else None

    def row_count(self) -> int:
        return len(self.rows) if self.rows is not None else len(self.session)

    def number_at(self, row: int) -> int:
        """The record number shown at ``row`` (0-based)."""
        return self.rows[row] if self.rows is not None else row + 1

    def row_of(self, n: int) -> int:
        """The row showing record ``n``, or the row of the nearest record after it (filtered views)."""
        if self.rows is None:
            return max(0, min(n - 1, len(self.session) - 1))
        import bisect

        i = bisect.bisect_left(self.rows, n)
        return min(i, max(0, len(self.rows) - 1))

    # -- records --------------------------------------------------------------------------------
    def view(self, n: int) -> View:
        try:
            size = self.record_size(n)
            if size is not None and QUICK_VIEW_SIZE < size <= DEFAULT_CAP:
                return self._big_view(n)
            return self.session.view(n)
        except OSError as exc:  # the file shrank under us (a rewrite under way)
            return View(n, Kind.INVALID, label="unavailable", text=f"cannot read the record now: {exc}")

    def _big_view(self, n: int) -> View:
        """A record over QUICK_VIEW_SIZE: orjson and the adapter only, cached. The byte-level checks
        (duplicate keys, nesting depth) cost seconds on such a record and are left to ``check``."""
        hit = self._big_views.get(n)
        if hit is not None:
            return hit
        session = self.session
        if not isinstance(session, JsonlSession):  # only JSONL records have a size (see record_size)
            return session.view(n)
        record = session.record(n)
        view = quick_view(session, n, record.raw)
        self._big_views[n] = view
        if len(self._big_views) > 8:
            self._big_views.pop(next(iter(self._big_views)))
        return view

    def record(self, n: int) -> Record | None:
        if isinstance(self.session, JsonlSession):
            try:
                return self.session.record(n)
            except OSError:
                return None
        return None

    def record_size(self, n: int) -> int | None:
        if isinstance(self.session, JsonlSession):
            return self.session.doc.record_size(n)
        return None

    # -- time -------------------------------------------------------------------------------------
    def start_time(self, look: int = 50) -> float | None:
        """The time of the session's first timed record (among its first ``look``), once numbering is
        known; None where the format records no time."""
        if self._start is not False:
            return self._start if isinstance(self._start, float) else None
        if not self.indexed:
            return None
        found: float | None = None
        for n in range(1, min(len(self.session), look) + 1):
            found = timing.view_time(self.view(n))
            if found is not None:
                break
        self._start = found
        return found

    # -- scanning (for worker threads) ----------------------------------------------------------
    def scanner(self) -> "Scanner":
        return Scanner(self.session)

    def compute_stats(self, should_stop: Callable[[], bool] = lambda: False) -> Stats | None:
        stats = Stats()
        for view in self.scanner().quick_views(1, len(self.session), should_stop):
            stats.add(view)
        if should_stop():
            return None
        stats.complete = True
        return stats

    def names(self) -> dict[str, str]:
        names: dict[str, str] = {}
        if self.stats is not None:
            names.update(self.stats.names)
        names.update(self.appended_stats.names)
        return names

    def current_stats(self) -> Stats:
        """Where stats of newly appended records go."""
        return self.stats if self.stats is not None else self.appended_stats

    def row_visible(self, n: int) -> bool:
        if self.rows is None:
            return 1 <= n <= len(self.session)
        import bisect

        i = bisect.bisect_left(self.rows, n)
        return i < len(self.rows) and self.rows[i] == n

    def partner(self, n: int, view: View | None = None, scan_limit: int = 5000) -> int | None:
        """For a tool call: the record of its (first) result; for a result: the record of its call."""
        view = view if view is not None else self.view(n)
        known = [s for s in (self.stats, self.appended_stats) if s is not None]
        for call in view.tool_calls:
            if call.id is None:
                continue
            for s in known:
                if call.id in s.results:
                    return s.results[call.id]
            for m in range(n + 1, min(len(self.session), n + scan_limit) + 1):
                if any(r.call_id == call.id for r in self.view(m).tool_results):
                    return m
        for result in view.tool_results:
            if result.call_id is None:
                continue
            for s in known:
                if result.call_id in s.calls:
                    return s.calls[result.call_id]
            for m in range(n - 1, max(0, n - scan_limit), -1):
                if any(c.id == result.call_id for c in self.view(m).tool_calls):
                    return m
        return None


class Scanner:
    """Views of many records for a worker thread, without touching the display's parse cache."""

    def __init__(self, session: Session) -> None:
        self.session = session
        if isinstance(session, JsonlSession):
            self._private: Session = JsonlSession(session.doc, adapter=session.adapter, cap=session.cap, cache_size=4)
        else:
            self._private = session

    def views(self, first: int, last: int, should_stop: Callable[[], bool] = lambda: False) -> Iterator[View]:
        step = 1 if last >= first else -1
        for n in range(first, last + step, step):
            if (n & 255) == 0 and should_stop():
                return
            try:
                yield self._private.view(n)
            except OSError:
                return

    def blocks(self, first: int, last: int, chunk: int = 4 << 20, cap: int = DEFAULT_CAP) -> Iterator[tuple[int, int, bytes | None, list[int]]]:
        """For JSONL: ``(n0, n1, data, offsets)`` for runs of records read in one go, in the direction
        from ``first`` to ``last``. ``offsets`` are the starts of records n0..n1 in ``data`` plus its end.
        A record over ``cap`` comes alone with ``data`` None (it is never read)."""
        session = self._private
        assert isinstance(session, JsonlSession)
        src = session.doc.source
        reverse = last < first
        n = first
        while (n >= last) if reverse else (n <= last):
            s0, e0 = src.span(n - 1)
            if e0 - s0 > cap:
                yield n, n, None, [0, e0 - s0]
                n += -1 if reverse else 1
                continue
            m = n
            if reverse:
                while m > last and e0 - src.span(m - 2)[0] <= chunk and src.span(m - 2)[1] - src.span(m - 2)[0] <= cap:
                    m -= 1
                lo, hi = m, n
            else:
                while m < last and src.span(m)[1] - s0 <= chunk and src.span(m)[1] - src.span(m)[0] <= cap:
                    m += 1
                lo, hi = n, m
            start = src.starts[lo - 1]
            end = src.span(hi - 1)[1]
            try:
                data = src.read(start, end - start)
            except OSError:
                return
            offsets = [src.starts[i] - start for i in range(lo - 1, hi)] + [end - start]
            yield lo, hi, data, offsets
            n = (m - 1) if reverse else (m + 1)

    def view(self, n: int) -> View:
        return self._private.view(n)

    def quick_view(self, n: int, raw: bytes | None = None) -> View:
        """See :func:`quick_view`."""
        if raw is None:
            return self._private.view(n)
        return quick_view(self._private, n, raw)

    def quick_views(self, first: int, last: int, should_stop: Callable[[], bool] = lambda: False) -> Iterator[View]:
        """:meth:`quick_view` of records ``first..last`` (ascending), read in big blocks."""
        if not isinstance(self._private, JsonlSession):
            yield from self.views(first, last, should_stop)
            return
        for n0, n1, data, offsets in self.blocks(first, last):
            if should_stop():
                return
            for n in range(n0, n1 + 1):
                raw = None if data is None else data[offsets[n - n0] : offsets[n - n0 + 1]]
                yield self.quick_view(n, raw)


def quick_view(session: Session, n: int, raw: bytes) -> View:
    """The view of record ``n`` for counting, filtering, searching and big records: the adapter's
    reading of the record, without the byte-level checks (duplicate keys, nesting) of the full path.
    Falls back to the full path for anything orjson does not take as is."""
    if not isinstance(session, JsonlSession):
        return session.view(n)
    raw = raw[:-1] if raw.endswith(b"\n") else raw
    raw = raw[:-1] if raw.endswith(b"\r") else raw
    if len(raw) > session.cap or not raw.strip():
        return session.view(n)
    try:
        value = orjson.loads(raw)
        if _BIG_DIGITS.search(raw):
            raise ValueError("maybe an integer beyond 64 bits")
        view = session.linked(session.adapter.view(n, value), value)
    except Exception:
        return session.view(n)
    if view.kind is Kind.UNKNOWN and view.raw is None:
        view.raw = raw[:4096]
    if view.timestamp is None:
        try:
            view.timestamp = session.adapter.timestamp_of(value)
        except Exception:
            pass
    return view


def searchable_text(view: View) -> str:
    """The text a search looks at: what the transcript shows for a record, unabridged."""
    parts = [view.role or "", view.label or "", view.text or "", view.reasoning or ""]
    for call in view.tool_calls:
        parts.append(call.name)
        parts.append(call.raw_arguments if call.raw_arguments is not None else compact_json(call.arguments))
    for result in view.tool_results:
        if result.content != view.text:
            parts.append(result.content or "")
    if view.kind in (Kind.INVALID, Kind.UNKNOWN) and view.raw is not None:
        parts.append(view.raw.decode("utf-8", "replace"))
    for p in view.problems:
        parts.append(p.message)
    return "\n".join(parts)

