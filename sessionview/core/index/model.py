"""What the index holds and returns, and the interface every index store implements.

An index store (:class:`IndexBackend`) keeps, per file, its :class:`FileState` (what was indexed: identity,
size, how far, a hash of its first bytes and of the bytes just before where indexing stopped) and one
:class:`Doc` per record. It answers a parsed query with :class:`Candidate` rows, best first; the pure layer
(:mod:`.hits`) reads each candidate's record back from the file, checks it and makes the snippet.

The embedded store is :class:`sessionview.core.index.sqlite.SqliteBackend`. A shared server store (one
index for a fleet of hosts) implements the same methods, with a host on every row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ContextManager, Iterable, Iterator, Protocol, Sequence

from sessionview.core.index.query import Query


class IndexUnavailable(Exception):
    """The index cannot be used at all (e.g. its directory cannot be created). One line for the user."""


@dataclass(slots=True)
class FileState:
    """What the index knows of one file. ``end``: bytes indexed as complete lines (the whole size for a
    document); ``lines``: records up to ``end``; ``head``/``tail``: hashes of the first bytes and of the bytes
    just before ``end`` (see :func:`sessionview.core.index.indexer.fingerprint`)."""

    path: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    end: int
    lines: int
    head: bytes
    tail: bytes
    format: str
    kind: str = "lines"  # "lines" (JSONL) or "document" (one JSON document, indexed whole)
    partial: bool = False  # a last line without its newline is indexed (and replaced on the next update)
    id: int | None = None  # the store's id for the file

    @property
    def mtime(self) -> float:
        return self.mtime_ns / 1e9


@dataclass(slots=True)
class Doc:
    """One record's searchable text and where it is."""

    n: int  # #N, as ``show`` numbers it
    offset: int  # byte offset of the record (-1 for a message of a document)
    length: int  # its length in bytes (0 for a message of a document)
    role: str
    tool: str  # tool names the record calls or answers, comma-separated ("" when none)
    timestamp: str | None  # ISO 8601 where the format has one
    epoch: float | None  # the same as seconds since the epoch
    text: str
    calls: tuple[tuple[str, str], ...] = ()  # (call id, tool name) of the calls it makes


@dataclass(frozen=True, slots=True)
class Filters:
    """What limits a search besides its words. Times are seconds since the epoch; a record without a
    timestamp is taken as written at its file's modification time."""

    roles: frozenset[str] = frozenset()
    tools: frozenset[str] = frozenset()
    formats: frozenset[str] = frozenset()
    since: float | None = None
    until: float | None = None
    paths: tuple[str, ...] = ()  # only files that are one of these or lie under one of these directories


@dataclass(frozen=True, slots=True)
class Candidate:
    """A row the store found; not yet checked against the file."""

    path: str
    format: str
    kind: str
    n: int
    offset: int
    length: int
    role: str
    tool: str
    timestamp: str | None
    mtime: float
    score: float
    host: str = ""  # the host that indexed it (a shared store); "" for the embedded one
    text: str | None = None  # the record's text when the store keeps it and the file is on another host


@dataclass(frozen=True, slots=True)
class Hit:
    """A checked search result. ``parts`` is the snippet as (text, marked) pieces: raw, untrusted text that
    the front escapes piece by piece (marks stay where they belong)."""

    path: str
    n: int
    role: str
    tool: str
    timestamp: str | None
    format: str
    offset: int
    parts: tuple[tuple[str, bool], ...] = field(default=())
    mtime: float = 0.0
    host: str = ""  # the host the session is on (a shared store); "" for the embedded one
    remote: bool = False  # on another host than this one (its snippet came from the store's text)

    @property
    def snippet(self) -> str:
        return "".join(t for t, _ in self.parts)

    @property
    def marked(self) -> list[str]:
        return [t for t, m in self.parts if m]


class IndexBackend(Protocol):
    """An index store. Writes happen inside :meth:`transaction` (one writer at a time; others wait)."""

    #: what a front says when the store had to be rebuilt on open (corrupt, locked, older version), else None
    notice: str | None
    #: where the store is (for messages)
    path: str

    @property
    def has_grams(self) -> bool:
        """Whether the substring (trigram) index exists."""
        ...

    def enable_grams(self) -> None:
        """Create the substring index; it starts empty, so every file is indexed again."""
        ...

    def needs_rebuild(self) -> bool:
        """Whether the store wants to be built again from the files (e.g. too many dead rows)."""
        ...

    def reset(self, notice: str) -> None:
        """Empty the store; ``notice`` becomes :attr:`notice`."""
        ...

    def transaction(self) -> ContextManager[None]: ...

    def file_state(self, path: str) -> FileState | None: ...

    def files(self, under: Sequence[str] = ()) -> list[FileState]: ...

    def put_file(self, state: FileState) -> int:
        """Insert or update ``state`` (by path); returns the file's id."""
        ...

    def add_docs(self, file_id: int, docs: Iterable[Doc]) -> int:
        """Add records; returns how many."""
        ...

    def clear_docs(self, file_id: int, from_n: int = 1) -> None:
        """Remove the file's records numbered ``from_n`` and up (1: all of them)."""
        ...

    def delete_file(self, path: str) -> None: ...

    def call_names(self, file_id: int, ids: Iterable[str] | None) -> dict[str, str]:
        """Tool names of earlier calls by id (``None``: all of the file's), to name a later result's tool."""
        ...

    def search(self, query: Query, filters: Filters, substring: bool = False) -> Iterator[Candidate]:
        """Candidates best first (whole-word matches in recently changed files first)."""
        ...

    def close(self) -> None: ...


def backend_names(backend: IndexBackend, state: FileState) -> dict[str, str]:
    return backend.call_names(state.id or 0, None) if state.id is not None else {}


class Names(dict):
    """Tool names by call id, the earlier ones read from the store when first asked for (an append to a long
    session answers a few of its thousands of calls). Only for extraction in this process."""

    def __init__(self, backend: IndexBackend, file_id: int) -> None:
        super().__init__()
        self._backend = backend
        self._file_id = file_id

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        if key and key not in self:
            self.update(self._backend.call_names(self._file_id, [key]) or {key: ""})
        value = super().get(key, default)
        return default if value == "" and default is not None else value
