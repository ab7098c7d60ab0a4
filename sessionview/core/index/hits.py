"""A search: the store's candidates, each checked against its session file and given a snippet.

The embedded index keeps no text. Each candidate's record is read back from the file at its byte offset (a
document's message from the document), its text extracted as when it was indexed, and the query checked
against it: phrases, prefixes, substrings and exclusions exactly, and a record that changed since it was
indexed (a race with a writer) is dropped rather than shown wrong. A shared store's candidate on another host brings its
text along (:attr:`Candidate.text`), checked and cut the same way. The snippet is the text around the
first match, whitespace folded, with every match marked; it is raw, untrusted text (fronts escape it).
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from typing import Any, Callable, Iterable, Iterator, Sequence

from sessionview.core import formats
from sessionview.core.index.extract import line_doc, view_doc
from sessionview.core.index.model import Candidate, Filters, Hit, IndexBackend
from sessionview.core.index.query import Finder, Query

SNIPPET = 160  # characters of context in a snippet
WINDOW = 40  # hits reordered at a time so that whole-word matches come first
_SPACE = re.compile(r"\s+")


class _Reader:
    """Open session files for reading records back (a few at a time)."""

    def __init__(self, keep: int = 16) -> None:
        self._fds: OrderedDict[str, int] = OrderedDict()
        self._docs: OrderedDict[str, Any] = OrderedDict()
        self.keep = keep

    def _fd(self, path: str) -> int | None:
        fd = self._fds.get(path)
        if fd is not None:
            self._fds.move_to_end(path)
            return fd
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        self._fds[path] = fd
        if len(self._fds) > self.keep:
            _, old = self._fds.popitem(last=False)
            os.close(old)
        return fd

    def text(self, c: Candidate) -> str | None:
        if c.kind == "document":
            return self._document_text(c)
        fd = self._fd(c.path)
        if fd is None:
            return None
        try:
            raw = os.pread(fd, c.length, c.offset)
        except OSError:
            return None
        if len(raw) != c.length:
            return None
        adapter = formats.BY_NAME.get(c.format, formats.BY_NAME["jsonl"])()
        doc = line_doc(adapter, c.n, raw, c.offset, {}, terminated=True)
        return None if doc is None else doc.text

    def _document_text(self, c: Candidate) -> str | None:
        session = self._docs.get(c.path)
        if session is None:
            from sessionview.core.session import open_session

            try:
                session = open_session(c.path)
            except Exception:
                return None
            self._docs[c.path] = session
            if len(self._docs) > 4:
                self._docs.popitem(last=False)[1].close()
        if not 1 <= c.n <= len(session):
            return None
        try:
            return view_doc(session.view(c.n), -1, 0, {}).text
        except Exception:
            return None

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        for s in self._docs.values():
            s.close()
        self._docs.clear()


def snippet(text: str, patterns: Sequence[Finder | re.Pattern[str]], width: int = SNIPPET) -> tuple[tuple[str, bool], ...]:
    """The text around the first match, whitespace folded, as (text, marked) pieces."""
    first = None
    for p in patterns:
        m = p.search(text)
        if m is not None and (first is None or m.start() < first.start()):
            first = m
    if first is None:
        return ((_SPACE.sub(" ", text[:width]).strip(), False),)
    lo = max(0, first.start() - width // 3)
    hi = min(len(text), max(first.end(), lo + width) + 1)
    window = _SPACE.sub(" ", text[lo:hi])
    spans: list[tuple[int, int]] = []
    for p in patterns:
        spans.extend((m.start(), m.end()) for m in p.finditer(window) if m.end() > m.start())
    spans.sort()
    parts: list[tuple[str, bool]] = []
    pos = 0
    if lo > 0:
        parts.append(("…", False))
    for a, b in spans:
        if a < pos:
            a = pos
        if a >= b:
            continue
        if a > pos:
            parts.append((window[pos:a], False))
        parts.append((window[a:b], True))
        pos = b
    if pos < len(window):
        parts.append((window[pos:], False))
    if hi < len(text):
        parts.append(("…", False))
    return tuple(parts)


def check(text: str, query: Query, substring: bool) -> tuple[bool, bool, list[Finder]]:
    """``(matches, whole_words, finders)`` for ``text``."""
    patterns = [t.finder(substring) for t in query.positive]
    if not all(p.search(text) for p in patterns):
        return False, False, patterns
    if any(t.finder(substring).search(text) for t in query.negative):
        return False, False, patterns
    ranked = substring or any(t.prefix for t in query.positive)  # else every word match is a whole-word one
    whole = not ranked or all(t.finder(whole=True).search(text) for t in query.positive)
    return True, whole, patterns


def search(backend: IndexBackend, query: Query, filters: Filters | None = None, substring: bool = False,
           should_stop: Callable[[], bool] = lambda: False, window: int = WINDOW) -> Iterator[Hit]:
    """Checked hits, best first. In substring mode, and for a ``prefix*`` term, whole-word matches go ahead
    within each run of ``window`` hits; otherwise the store's order (bm25 and the file's age) is kept."""
    reorder = substring or any(t.prefix for t in query.positive)
    return _ranked(_checked(backend, query, filters or Filters(), substring, should_stop), window if reorder else 1)


def _checked(backend: IndexBackend, query: Query, filters: Filters, substring: bool,
             should_stop: Callable[[], bool]) -> Iterator[tuple[bool, Hit]]:
    reader = _Reader()
    try:
        for c in backend.search(query, filters, substring):
            if should_stop():
                return
            text = c.text if c.text is not None else reader.text(c)  # another host's record: the store's text
            if text is None:
                continue
            ok, whole, patterns = check(text, query, substring)
            if not ok:
                continue
            yield whole, Hit(c.path, c.n, c.role, c.tool, c.timestamp, c.format, c.offset, snippet(text, patterns), c.mtime,
                             c.host, c.text is not None)
    finally:
        reader.close()


def _ranked(items: Iterable[tuple[bool, Hit]], window: int) -> Iterator[Hit]:
    """Whole-word hits first, within each run of ``window`` (the first hit is never held back long)."""
    if window <= 1:
        for _, hit in items:
            yield hit
        return
    pending: list[tuple[bool, Hit]] = []
    for item in items:
        if item[0] and not pending:
            yield item[1]  # a whole-word hit with nothing ahead of it: at once
            continue
        pending.append(item)
        if len(pending) >= window:
            pending.sort(key=lambda wh: not wh[0])
            for _, hit in pending:
                yield hit
            pending = []
    pending.sort(key=lambda wh: not wh[0])
    for _, hit in pending:
        yield hit
