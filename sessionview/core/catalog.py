"""The sessions under a directory: a cheap listing first, then format, record count and a sketch on demand.

:func:`scan` walks the tree with ``os.scandir`` and yields an :class:`Entry` (path, size, mtime) for every
session file, without opening JSONL files. :func:`describe_full` reads one file's head to detect its format
and to sketch it (title, messages, tokens, problems: :mod:`sessionview.core.sketch`, head and tail only), and
counts its lines; callers run it lazily, in a thread, for the rows that are on screen first.
:class:`Catalog` holds the entries, sorts them by any column (:data:`SORT_KEYS`) and applies change notices
(see :mod:`sessionview.core.watch`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from sessionview.core import formats

if TYPE_CHECKING:
    from sessionview.core.sketch import Sketch

# jsondoc (documents, sessions) and the sketch are imported by the functions that use them, so that a
# listing (scan, stat_entry: the index's walk before a search) does not load them

SESSION_SUFFIXES = (".jsonl", ".ndjson", ".json")
#: directories never entered (version control, dependencies, caches)
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".cache", "site-packages"}
)
COUNT_CHUNK = 1 << 20
LIVE_WINDOW = 5.0  # seconds: a session changed this recently is being written now


def is_session_name(name: str) -> bool:
    """Whether a file name looks like a session file (JSONL, or a JSON store document)."""
    return name.lower().endswith(SESSION_SUFFIXES) and not name.startswith(".#")


#: keys one of which a listed multi-line ``.json`` document names in its first bytes
DOCUMENT_KEYS = (b'"sessionId"', b'"messages"', b'"history"')


def looks_like_json_document(head: bytes) -> bool:
    """A ``.json`` file is listed only when it looks like a session document: a LittleGhost store document, or
    a multi-line JSON document naming a session's keys in its first bytes (Gemini CLI, ``/chat save``...)."""
    from sessionview.core import jsondoc

    h = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if h.startswith(b'{"version"') or h.startswith(b'{"snapshot"') or h.startswith(b'{"messages"'):
        return True
    if h.startswith(b"[") and jsondoc.looks_like_document(head):
        return True
    return jsondoc.looks_like_document(head) and any(k in head for k in DOCUMENT_KEYS)


@dataclass(slots=True)
class Entry:
    path: str
    rel: str  # path relative to the catalog root, for display and filtering
    size: int
    mtime: float  # seconds since the epoch
    format: str | None = None  # the format's title, once described
    count: int | None = None  # records (lines, or messages of a document), once described
    error: str | None = None
    described_at: tuple[int, float] | None = None  # (size, mtime) the description is for
    sketch: Sketch | None = None  # title, messages, tokens, problems, once described
    host: str = ""  # the [hosts] name of the host it is on ("" for a local file; its path is then an address)

    def described_like(self, old: "Entry") -> None:
        """Take ``old``'s description (the same file, described before)."""
        self.format, self.count, self.error, self.described_at, self.sketch = old.format, old.count, old.error, old.described_at, old.sketch

    @property
    def stale(self) -> bool:
        """Whether format and count are missing or out of date."""
        return self.described_at != (self.size, self.mtime)

    def is_live(self, now: float, window: float = LIVE_WINDOW) -> bool:
        return now - self.mtime <= window


def _rel(root: str, path: str) -> str:
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _json_ok(path: str) -> bool:
    from sessionview.core import jsondoc

    try:
        with open(path, "rb") as f:
            return looks_like_json_document(f.read(jsondoc.HEAD_BYTES))
    except OSError:
        return False


def scan(root: str, should_stop: Callable[[], bool] | None = None) -> Iterator[Entry]:
    """Every session file under ``root`` (recursive; symlinked directories are not followed)."""
    root = os.path.abspath(root)
    stack = [root]
    while stack:
        if should_stop is not None and should_stop():
            return
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        if e.name not in SKIP_DIRS:
                            stack.append(e.path)
                        continue
                    if not is_session_name(e.name):
                        continue
                    st = e.stat()
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    if e.name.lower().endswith(".json") and not _json_ok(e.path):
                        continue
                except OSError:
                    continue
                yield Entry(e.path, _rel(root, e.path), st.st_size, st.st_mtime)


def stat_entry(root: str, path: str) -> Entry | None:
    """An entry for one path, or None if it is not (or no longer) a session file."""
    name = os.path.basename(path)
    if not is_session_name(name):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    if name.lower().endswith(".json") and not _json_ok(path):
        return None
    return Entry(path, _rel(os.path.abspath(root), path), st.st_size, st.st_mtime)


def count_lines(path: str, should_stop: Callable[[], bool] | None = None) -> int | None:
    """Lines in a file (an unterminated last line counts). None if stopped or unreadable."""
    try:
        with open(path, "rb", buffering=0) as f:
            n = 0
            last = b""
            while True:
                if should_stop is not None and should_stop():
                    return None
                chunk = f.read(COUNT_CHUNK)
                if not chunk:
                    break
                n += chunk.count(b"\n")
                last = chunk[-1:]
            if last and last != b"\n":
                n += 1
            return n
    except OSError:
        return None


def detect_format(head: bytes) -> str:
    """The format title for a JSONL file whose first bytes are ``head`` (``?`` when nothing parses)."""
    if not head.strip():
        return "?"
    return formats.detect_head(head).title


@dataclass(frozen=True, slots=True)
class Description:
    format: str
    count: int | None
    error: str | None
    sketch: Sketch | None = None


def describe(path: str, should_stop: Callable[[], bool] | None = None) -> tuple[str, int | None, str | None]:
    """``(format title, record count, error)`` for one session file."""
    d = describe_full(path, should_stop, sketch=False)
    return d.format, d.count, d.error


def describe_full(path: str, should_stop: Callable[[], bool] | None = None, *, sketch: bool = True) -> Description:
    """Format title, record count, error and (with ``sketch``) the :class:`~sessionview.core.sketch.Sketch`
    of one session file: its head and tail are read, and its lines counted in one pass."""
    from sessionview.core import jsondoc
    from sessionview.core.sketch import sketch_lines

    try:
        with open(path, "rb") as f:
            head = f.read(formats.HEAD_BYTES)
            size = os.fstat(f.fileno()).st_size
    except OSError as exc:
        return Description("?", None, exc.strerror or type(exc).__name__)
    if path.lower().endswith(".json") and looks_like_json_document(head[: jsondoc.HEAD_BYTES]):
        return _describe_document(path, sketch)
    if jsondoc.looks_like_document(head[: jsondoc.HEAD_BYTES]):
        return _describe_document(path, sketch)  # one JSON document in a .jsonl file: never count its lines as records
    count = count_lines(path, should_stop)
    if not head.strip():
        return Description("?", count, None)
    adapter = formats.detect_head(head)
    found = None
    if sketch and not (should_stop is not None and should_stop()):
        try:
            found = sketch_lines(path, head, size, count, adapter)
        except Exception:  # a sketch is a convenience: the row is still listed
            found = None
    return Description(adapter.title, count, None, found)


def _describe_document(path: str, sketch: bool = False) -> Description:
    try:
        from sessionview.core.session import open_session
        from sessionview.core.sketch import sketch_session

        session = open_session(path)
        try:
            return Description(session.format_title, len(session), None, sketch_session(session) if sketch else None)
        finally:
            session.close()
    except Exception as exc:  # a broken document is still listed
        return Description("JSON document", None, f"{type(exc).__name__}: {exc}")


class Catalog:
    """The session files under ``root``, kept current by :meth:`apply`."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self.entries: dict[str, Entry] = {}
        self.version = 0  # bumped on every change, so views know to re-sort

    def load(self, should_stop: Callable[[], bool] | None = None) -> None:
        entries = {}
        for e in scan(self.root, should_stop):
            old = self.entries.get(e.path)
            if old is not None and old.described_at == (e.size, e.mtime):
                e.described_like(old)
            entries[e.path] = e
        self.entries = entries
        self.version += 1

    def __len__(self) -> int:
        return len(self.entries)

    def apply(self, changes: Iterable[tuple[str, str]]) -> set[str]:
        """Apply ``(kind, path)`` notices (kind: added, modified, deleted). Returns the paths that changed.

        A notice about a directory rescans (added) or prunes (deleted) everything below it.
        """
        changed: set[str] = set()
        for kind, path in changes:
            path = os.path.abspath(path)
            if not is_session_name(os.path.basename(path)) or kind == "deleted" and path not in self.entries:
                self._directory_change(path, changed)
                continue
            entry = stat_entry(self.root, path)
            if entry is None:
                if self.entries.pop(path, None) is not None:
                    changed.add(path)
                continue
            old = self.entries.get(path)
            if old is not None:
                if (old.size, old.mtime) == (entry.size, entry.mtime):
                    continue
                entry.described_like(old)
            self.entries[path] = entry
            changed.add(path)
        if changed:
            self.version += 1
        return changed

    def _directory_change(self, path: str, changed: set[str]) -> None:
        prefix = path.rstrip(os.sep) + os.sep
        if os.path.isdir(path) and not os.path.islink(path):
            for e in scan(path):
                e.rel = _rel(self.root, e.path)
                old = self.entries.get(e.path)
                if old is None or (old.size, old.mtime) != (e.size, e.mtime):
                    if old is not None:
                        e.described_like(old)
                    self.entries[e.path] = e
                    changed.add(e.path)
            return
        for p in [p for p in self.entries if p.startswith(prefix)]:
            if not os.path.exists(p):
                del self.entries[p]
                changed.add(p)

    def set_description(
        self, path: str, size: int, mtime: float, fmt: str, count: int | None, error: str | None, sketch: Sketch | None = None
    ) -> bool:
        """Record a description made for ``(size, mtime)``; ignored if the entry changed meanwhile."""
        e = self.entries.get(path)
        if e is None:
            return False
        e.format, e.count, e.error, e.sketch = fmt, count, error, sketch
        e.described_at = (size, mtime)
        return True

    def sorted(self, text: str = "", key: str = "mtime", reverse: bool = False) -> list[Entry]:
        """Entries whose relative path contains ``text`` (case-insensitive), in the order of :data:`SORT_KEYS`
        ``key`` (``reverse``: the other way). Entries not described yet come last in either order."""
        needle = text.casefold()
        items: Iterable[Entry] = self.entries.values()
        if needle:
            items = [e for e in items if needle in e.rel.casefold()]
        value = SORT_KEYS[key]
        known: list[tuple[Any, Entry]] = []
        unknown: list[Entry] = []
        for e in items:
            v = value(e)
            if v is None:
                unknown.append(e)
            else:
                known.append((v, e))
        known.sort(key=lambda t: (t[0], t[1].rel), reverse=reverse)
        unknown.sort(key=lambda e: e.rel)
        return [e for _, e in known] + unknown


def _sketched(field: str) -> Callable[[Entry], Any]:
    def value(e: Entry) -> Any:
        got = getattr(e.sketch, field) if e.sketch is not None else None
        return -got if isinstance(got, (int, float)) else got  # the biggest first

    return value


#: how each column sorts, in its natural order (newest, biggest, A to Z first); None: not known yet
SORT_KEYS: dict[str, Callable[[Entry], Any]] = {
    "mtime": lambda e: -e.mtime,
    "name": lambda e: e.rel.casefold(),
    "size": lambda e: -e.size,
    "format": lambda e: e.format.casefold() if e.format else None,
    "records": lambda e: -e.count if e.count is not None else None,
    "title": lambda e: e.sketch.title.casefold() if e.sketch is not None and e.sketch.title else None,
    "messages": _sketched("messages"),
    "tokens": _sketched("tokens"),
    "problems": _sketched("problems"),
    "host": lambda e: e.host.casefold(),
}
