"""Sessions: a document plus its format, giving views, problems and tool pairing.

``open_session(path)`` picks the right kind: a LittleGhost Filesystem store document, another whole JSON
document (:mod:`sessionview.core.jsondoc`: a Gemini CLI chat document, or one of unknown format), or a JSONL
session (every other format). ``#N`` is the 1-based line number for JSONL and the 1-based
message index for a LittleGhost document.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any, Callable, Iterator

from sessionview.core import formats, jsondoc
from sessionview.core.doc import branches as tree
from sessionview.core.doc.branches import Branches
from sessionview.core.doc.document import Document, Record, Source
from sessionview.core.doc.ahead import LinesAhead
from sessionview.core.doc.model import Kind, Problem, View
from sessionview.core.doc.parse import DEFAULT_CAP, PREVIEW, Parsed, Status, nesting_depth, parse_record
from sessionview.core.formats.base import Adapter, warn
from sessionview.core.session_base import Session
from sessionview.core.store.stamp import LoadStamp, stamp_document
from sessionview.core.text import escape_control

RAW_PREVIEW = 4096

_PARSED = (Status.OK, Status.DUPLICATE_KEYS)
_OK = Status.OK  # the statuses with a value (``Status.parsed``)

_PROBLEM_SEVERITY = {
    Status.PARTIAL: "warning",
    Status.DUPLICATE_KEYS: "error",
}


# The parse of a line takes a few times its size in memory: a session followed for hours (each new record
# is parsed and drawn) keeps its last ~4 MiB of lines parsed, not its last 2048 lines (some 60 MB).
CACHE_BYTES = 4 << 20


def _weight(parsed: Parsed) -> int:
    """What a kept parse counts against CACHE_BYTES: its line's size when it holds a value (an oversized or
    invalid line holds none)."""
    return parsed.size if parsed.value is not None else 0


class JsonlSession(Session):
    def __init__(self, doc: Document, adapter: Adapter | None = None, cap: int = DEFAULT_CAP, cache_size: int = 2048, cache_bytes: int = CACHE_BYTES):
        self.doc = doc
        self.path = doc.path
        self.cap = cap
        self._cache: OrderedDict[tuple[int, int | None], Parsed] = OrderedDict()
        self._cache_size = cache_size
        self._cache_bytes = cache_bytes  # the parsed records kept hold this many bytes of lines at most
        self._cached = 0  # bytes of the lines whose parse is kept
        self._stamp: tuple[Source, LoadStamp] | None = None
        self._ids: tuple[Document, list[tuple[int, str | None, str | None]]] | None = None
        self._derived: dict[str, Any] = {}  # what is built from ``_ids`` (branches, superseded copies)
        self._ahead: LinesAhead | None = None  # the lines read ahead for ``view(n, keep=False)``
        self._owns_doc = False  # the document's descriptor is this session's to close (it loaded the file)
        self._closing = threading.Lock()
        self.adapter = adapter if adapter is not None else self._detect()
        self.read_only_reason = getattr(self.adapter, "read_only", None)

    @property
    def stamp(self) -> LoadStamp:
        """What was loaded (inode, size, mtime and the hash taken while indexing), for safe saves.

        Taken on first use and kept for as long as the document keeps the same source."""
        cached = self._stamp
        if cached is None or cached[0] is not self.doc.source:
            cached = (self.doc.source, stamp_document(self.doc))
            self._stamp = cached
        return cached[1]

    @classmethod
    def load(cls, path: str | os.PathLike[str], cap: int = DEFAULT_CAP, digest: bool = True) -> "JsonlSession":
        doc = Document.load(path, digest=digest)
        try:
            session = cls(doc, cap=cap)
        except BaseException:
            doc.close()
            raise
        session._owns_doc = True
        return session

    def close(self) -> None:
        """Stop and reap the quote helper of a pass (if one runs), and close the file's descriptor when this
        session opened it (:meth:`load`, :func:`open_session`; a document handed in stays its owner's).
        Idempotent, and safe from any thread; once closed, a session reads nothing more of its file."""
        with self._closing:
            ahead, self._ahead = self._ahead, None
            owns, self._owns_doc = self._owns_doc, False
        if ahead is not None:
            ahead.close()
        if owns:
            self.doc.close()

    @classmethod
    def from_bytes(cls, data: bytes, path: str | None = None, cap: int = DEFAULT_CAP) -> "JsonlSession":
        return cls(Document.from_bytes(data, path=path), cap=cap)

    def _detect(self) -> Adapter:
        return formats.detect(self._first_values())

    def _first_values(self) -> Iterator[Any]:
        """The parsed values of the valid records within the cap, first to last (read lazily)."""
        for n in range(1, len(self.doc) + 1):
            if self.doc.record_size(n) > self.cap:
                continue
            parsed = self.parsed(n)
            if parsed.ok:
                yield parsed.value

    def __len__(self) -> int:
        return len(self.doc)

    def _binary(self) -> bool:
        head = b"".join(self.doc.record(n).raw for n in range(1, min(len(self.doc), 64) + 1))[:4096]
        if b"\0" in head:
            return True
        text = head.decode("utf-8", "replace")
        return text.count("\ufffd") * 10 > len(text)

    def record(self, number: int) -> Record:
        return self.doc.record(number)

    def parsed(self, number: int, record: Record | None = None, keep: bool = True) -> Parsed:
        """Record ``number`` parsed (cached unless ``keep`` is false: one pass over a big file)."""
        key = (number, self.doc.source_index(number))
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        return self._parse(number, key, record, keep)

    def _parse(self, number: int, key: tuple[int, int | None], record: Record | None, keep: bool) -> Parsed:
        size = self.doc.record_size(number) if record is None else 0
        if record is None and size > self.cap + 2:
            # far over the cap even without its terminator: never read it whole
            result = Parsed(Status.OVERSIZED, error=f"{size} bytes, over the {self.cap} byte cap", size=size)
        else:
            if record is None:
                record = self.doc.record(number)
            result = parse_record(record.raw, terminated=not record.partial, cap=self.cap)
        if keep:
            self._keep(key, result)
        return result

    def _keep(self, key: tuple[int, int | None], result: Parsed) -> None:
        old = self._cache.pop(key, None)
        self._cached += _weight(result) - (_weight(old) if old is not None else 0)
        self._cache[key] = result
        while len(self._cache) > 1 and (len(self._cache) > self._cache_size or self._cached > self._cache_bytes):
            self._cached -= _weight(self._cache.popitem(last=False)[1])

    def raw_preview(self, number: int, limit: int = RAW_PREVIEW) -> bytes:
        if self.doc.record_size(number) <= limit:
            return self.doc.record(number).raw
        index = self.doc.source_index(number)
        if index is not None:
            start, _ = self.doc.source.span(index)
            return self.doc.source.read(start, limit)
        return self.doc.record(number).raw[:limit]

    def stream(self, first: int = 1, last: int | None = None) -> Iterator[View]:
        last = len(self) if last is None else min(last, len(self))
        for n in range(max(first, 1), last + 1):
            yield self.view(n, keep=False)

    def view(self, number: int, keep: bool = True) -> View:
        """Record ``number``'s view. ``keep=False``: one pass over a big file (its parse is not cached, and
        consecutive records are read a window at a time, their quotes counted ahead on another core: see
        :class:`~sessionview.core.doc.ahead.LinesAhead`)."""
        if not keep and 0 < number <= self.doc.direct and (number, number - 1) not in self._cache:
            return self._pass_view(number)
        return self._view(number, keep)

    def _view(self, number: int, keep: bool) -> View:
        doc = self.doc
        index = doc.source_index(number)
        key = (number, index)
        raw: bytes | None = None
        if index is not None:  # a record of the loaded file: one lookup for its size and bytes
            starts = doc.source.starts
            size = (starts[index + 1] if index + 1 < len(starts) else doc.source.size) - starts[index]
        else:
            size = doc.record_size(number)
        parsed: Parsed | None = self._cache.get(key) if self._cache else None
        if parsed is not None:
            self._cache.move_to_end(key)
        elif size > self.cap + 2:
            parsed = self._parse(number, key, None, keep)
        elif index is not None and not keep:
            ahead = self._ahead
            if ahead is None or ahead.source is not doc.source:
                if ahead is not None:
                    ahead.close()
                ahead = self._ahead = LinesAhead(doc.source, helper=True)
            raw, term = ahead.line(index)
            parsed = parse_record(raw, terminated=term != b"", cap=self.cap, quotes=ahead.quotes(index))
        else:
            if index is None:
                record = doc.record(number)
                raw, term = record.raw, record.terminator
            else:
                raw, term, _, _ = doc.source.line(index)
            parsed = parse_record(raw, terminated=term != b"", cap=self.cap)
            if keep:
                self._keep(key, parsed)

        def raw_of(limit: int | None) -> bytes:
            if limit is None:
                return raw if raw is not None else self.doc.record(number).raw
            return self.raw_preview(number, limit)

        view = build_view(self.adapter, number, parsed, size, raw_of)
        return self.linked(view, parsed.value) if parsed.status in _PARSED else view

    def _pass_view(self, number: int) -> View:
        """:meth:`view` of record ``number`` with ``keep=False``, when it is line ``number - 1`` of the source and
        its parse is not cached: the same view by the shortest path (it runs once per record of a pass)."""
        source = self.doc.source
        i = number - 1
        starts = source.starts
        size = (starts[number] if number < len(starts) else source.size) - starts[i]
        if size > self.cap + 2:
            return self._view(number, False)  # not read whole
        ahead = self._ahead
        if ahead is None or ahead.source is not source:
            if ahead is not None:
                ahead.close()
            ahead = self._ahead = LinesAhead(source, helper=True)
        raw, term, quotes = ahead.line_quotes(i)
        parsed = parse_record(raw, terminated=term != b"", cap=self.cap, quotes=quotes)
        adapter = self.adapter
        view = build_view(adapter, number, parsed, size, lambda limit: raw if limit is None else self.raw_preview(number, limit))
        if (adapter.tree or adapter.updates_by_id) and parsed.status in _PARSED:
            return self.linked(view, parsed.value)
        return view

    def linked(self, view: View, value: Any) -> View:
        """``view`` as the records linked by id make it: its pi branch marks, or, for an earlier copy of a record
        appended again under its id (Gemini CLI), a one-line note that names the copy that counts."""
        if self.adapter.tree:
            found = self.branches()
            if found:
                view.branch = found.on.get(view.number)
                view.branch_point = found.points.get(view.number, 0)
        if self.adapter.updates_by_id and view.kind is Kind.MESSAGE:
            later = self.superseded().get(view.number)
            if later is not None:  # the copy at ``later`` is the message; this one is history
                rid = escape_control(tree.value_ids(value)[0] or "", one_line=True)
                return View(
                    view.number, Kind.META, label="earlier copy", text=f"message {rid}: an earlier copy; the message is #{later}",
                    value=value, timestamp=view.timestamp, problems=view.problems,
                )
        return view

    def record_ids(self) -> list[tuple[int, str | None, str | None]]:
        """``(number, id, parentId)`` of every record, read from each line's first bytes once per document;
        lines appended since are read alone."""
        doc = self.doc
        cached = self._ids
        if cached is not None and cached[0] is doc:
            return cached[1]
        entries: list[tuple[int, str | None, str | None]] = []
        if cached is not None and _grown_from(cached[0], doc, len(cached[1])):
            entries = cached[1]
        for n in range(len(entries) + 1, len(doc) + 1):
            ids = tree.ids_of(self._head(n))
            if ids == (None, None) and 4 * tree.HEAD < doc.record_size(n) <= self.cap:
                parsed = self.parsed(n, keep=False)  # not the order the agent writes: read it whole
                ids = tree.value_ids(parsed.value) if parsed.ok else ids
            entries.append((n, *ids))
        self._ids = (doc, entries)
        self._derived = {}
        return entries

    def branches(self) -> Branches:
        """The branches of the ``id``/``parentId`` tree (formats with ``Adapter.tree``)."""
        entries = self.record_ids()
        if "branches" not in self._derived:
            self._derived["branches"] = tree.build(entries)
        return self._derived["branches"]

    def superseded(self) -> dict[int, int]:
        """Earlier copies of records appended again under their id (``Adapter.updates_by_id``): number → the last."""
        entries = self.record_ids()
        if "superseded" not in self._derived:
            self._derived["superseded"] = tree.superseded(entries)
        return self._derived["superseded"]

    def _head(self, n: int) -> bytes:
        """Record ``n``'s bytes when small, else its first ``branches.HEAD`` bytes (an id is never further)."""
        index = self.doc.source_index(n)
        size = self.doc.record_size(n)
        if index is None or size <= 4 * tree.HEAD:
            return self.doc.record(n).raw
        start, _ = self.doc.source.span(index)
        return self.doc.source.read(start, tree.HEAD)


def build_view(adapter: Adapter, number: int, parsed: Parsed, size: int, raw_of: Callable[[int | None], bytes]) -> View:
    """The view of record ``number`` from its parse, for any reader of the records (``JsonlSession.view``, the
    streaming of :mod:`sessionview.core.streamview`). ``size`` counts the terminator; ``raw_of(limit)`` gives
    the record's first ``limit`` bytes as :meth:`JsonlSession.raw_preview` does, ``raw_of(None)`` all of them."""
    if parsed.status not in _PARSED:
        problems = []
        if parsed.status is not Status.BLANK:
            problems.append(
                Problem(
                    parsed.status.value,
                    parsed.error or parsed.status.value,
                    number,
                    severity=_PROBLEM_SEVERITY.get(parsed.status, "error"),
                )
            )
        raw = raw_of(PREVIEW if parsed.status is Status.OVERSIZED else RAW_PREVIEW)
        return View(number, Kind.INVALID, label=parsed.status.value, problems=problems, raw=raw, text=parsed.error)
    value = parsed.value
    try:
        plain = adapter.plain_view(number, value)
    except Exception:  # an adapter must never take the app down: its view says what is wrong
        plain = None
    if plain is not None:
        if parsed.status is _OK and not parsed.notes and 0 <= parsed.depth_bound <= 100:
            return plain  # no mark to add: what follows would add none
        view = plain
    else:
        try:
            view = adapter.view(number, value)
        except Exception as exc:  # an adapter must never take the app down
            view = View(number, Kind.UNKNOWN, label="unreadable", value=value)
            view.problems.append(warn(number, f"could not interpret the record: {type(exc).__name__}: {exc}"))
        if view.kind is Kind.UNKNOWN and view.raw is None:
            view.raw = raw_of(RAW_PREVIEW)
        if view.timestamp is None:
            view.timestamp = _timestamp(adapter, value)
    if parsed.status is Status.DUPLICATE_KEYS:
        view.problems.append(Problem("duplicate keys", parsed.error, number))
    for note in parsed.notes:
        if note in ("NaN/Infinity", "lone surrogate"):
            view.problems.append(warn(number, f"{note}: not strict JSON; most readers reject it"))
    if plain is None:
        try:
            view.problems.extend(adapter.schema_problems(number, value))
        except Exception as exc:
            view.problems.append(warn(number, f"schema check failed: {type(exc).__name__}: {exc}"))
    if size > 200 and adapter.name == "brute":
        bound = parsed.depth_bound
        raw = b""
        if bound < 0:  # a parse from elsewhere: count the brackets
            raw = raw_of(None)
            bound = raw.count(b"[") + raw.count(b"{")
        if bound > 100:
            if nesting_depth(raw or raw_of(None)) > 100:
                view.problems.append(warn(number, "nesting deeper than 100: Ruby's JSON.parse raises NestingError"))
    return view


def _grown_from(old: Document, new: Document, count: int) -> bool:
    """Whether ``new`` holds ``old``'s first ``count`` records unchanged (lines appended to an unedited file)."""
    if old.edited or new.edited or len(new) < count or count == 0:
        return False
    a, b = old.source, new.source
    return a.starts[count - 1] == b.starts[count - 1] and a.span(count - 1) == b.span(count - 1)


def _timestamp(adapter: Adapter, value: Any) -> str | None:
    try:
        return adapter.timestamp_of(value)
    except Exception:  # an adapter must never take the app down
        return None


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def open_session(path: str | os.PathLike[str], cap: int = DEFAULT_CAP, digest: bool = True) -> Session:
    """Open a session file of any supported format. ``digest=False``: for reading only (see ``Document.load``)."""
    p = os.fspath(path)
    from sessionview.core import littleghost  # here: a JSONL session's first screen does not need it

    if littleghost.looks_like_store_document(p):
        return littleghost.LittleGhostSession.load(p)
    head = jsondoc.head_of(p)
    if jsondoc.looks_like_document(head) and _size(p) <= jsondoc.MAX_DOCUMENT:
        document = jsondoc.JsonDocumentSession.load(p)
        # a document that does not parse is still one when it starts like a pretty-printed one ("{" alone)
        if document.error is None or head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].strip() in (b"{", b"["):
            return document
    return JsonlSession.load(p, cap=cap, digest=digest)
