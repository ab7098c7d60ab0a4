"""A change to a session's records: what it replaces, what it writes, its inverse and whether it does anything.

``N`` is always what ``show`` prints as ``#N``: the 1-based line number for JSONL, the 1-based message
index for a LittleGhost document. Nothing here reads or writes a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Protocol

from sessionview.core.doc.document import Document, Line
from sessionview.core.doc.model import View
from sessionview.core.doc.pairing import Pairing
from sessionview.core.doc.parse import Parsed
from sessionview.core.formats.base import Adapter, Capabilities
from sessionview.core.session import JsonlSession, open_session
from sessionview.core.session_base import Session
from sessionview.core.store.stamp import Digest, LoadStamp, adopt, deferred, digest_deferrable
from sessionview.core.text import plural


class Editable(Protocol):
    """A session as the editing code sees it (a :class:`~sessionview.core.session.JsonlSession` or a
    LittleGhost document): records in ``doc``, views, and what its format can do."""

    path: str | None
    adapter: Adapter
    read_only_reason: str | None

    @property
    def doc(self) -> Document: ...
    @property
    def capabilities(self) -> Capabilities: ...
    @property
    def format_title(self) -> str: ...
    @property
    def stamp(self) -> LoadStamp: ...
    def __len__(self) -> int: ...
    def view(self, number: int) -> View: ...
    def views(self, first: int = 1, last: int | None = None) -> Iterator[View]: ...
    def parsed(self, number: int) -> Parsed: ...
    def pairing(self) -> Pairing: ...
    def close(self) -> None: ...


def editable(session: Session) -> Editable:
    """``session`` as the editing code sees it: both kinds of session have records to edit."""
    from sessionview.core.littleghost import LittleGhostSession

    if isinstance(session, (JsonlSession, LittleGhostSession)):
        return session
    if session.read_only_reason:  # a whole document read for viewing only: refuse with its reason
        from sessionview.core.errors import Refused

        raise Refused(f"{session.path}: read-only: {session.read_only_reason}")
    raise TypeError(f"a {type(session).__name__} has no records to edit")


def open_editable(
    path: str,
    opener: "Callable[[str, bool], Session] | None" = None,
    *,
    scan_ids: bool = False,
    check_deferred: bool = False,
) -> Editable:
    """Open ``path`` for editing (any supported format; ``opener(path, digest)`` opens a session).

    A big JSONL file at rest is loaded without its hash (``digest=False``): a forked process started before
    the load hashes it while the load, the plan and the save's copy run, proven by the file's unchanged stat
    (:class:`~sessionview.core.store.stamp.Digest` with ``apart``), so this one keeps a single thread and its
    load scans on two cores. With ``scan_ids`` (the change will search tool ids: delete, truncate, compact)
    and a check before the commit, a thread finds the escapes the id search needs meanwhile
    (:class:`~.idscan.Escapes`), and the hash is taken in a thread too. A file that changed meanwhile is loaded
    again with its digest.

    ``check_deferred``: the change's integrity check will search the file while its new content is copied (a
    deferred check, :attr:`Change.unchecked`), escapes and all: no escape search now, and the hash forked."""
    from sessionview.core.edit import idscan

    open_ = opener if opener is not None else (lambda p, digest: open_session(p, digest=digest))
    if digest_deferrable(path):
        try:
            early: Digest | None = Digest(path, apart=check_deferred or not scan_ids)
        except (OSError, RuntimeError):  # not openable, or no thread to be had: hashed while loading
            early = None
        escapes = idscan.Escapes.start(path) if scan_ids and not check_deferred else None
        session = open_(path, False)
        if type(session) is not JsonlSession:
            return editable(session)
        doc = session.doc
        if deferred(doc):
            if early is not None:
                adopt(doc, early)
            if escapes is not None:
                idscan.adopt(doc.source, doc.loaded_stat, escapes)
            _ = session.stamp  # the hash of the file starts now, if the early one was not of this very file
            return editable(session)
        session.close()
        session.doc.close()  # the first load's descriptor: loaded again below with its hash
    return editable(open_(path, True))


@dataclass(frozen=True)
class Change:
    """Replace records ``first..last`` (1-based, inclusive; ``last = first - 1`` inserts) with ``lines``."""

    description: str
    first: int
    last: int
    lines: tuple[Line, ...]
    old_lines: tuple[Line, ...] = field(default=(), repr=False)
    values: tuple[Any, ...] = field(default=(), repr=False)  # parsed values of ``lines`` (LittleGhost)
    anchor: bytes | None = field(default=None, repr=False)  # raw of record ``first - 1`` when planned
    #: what the writer accepts but a person should know (a provider would reject it, a field is dropped...)
    warnings: tuple[str, ...] = field(default=(), repr=False)
    #: the tool-call integrity check is still to run (:mod:`.integrity`), with this ``widen`` for its refusal's
    #: suggestion: a planner asked to defer it (``defer=True``) leaves it to the commit, which runs it while the
    #: new file is written (:func:`~.writeback.commit`), or to the preview, which runs it first
    unchecked: str | None = field(default=None, compare=False, repr=False)

    def with_anchor(self, session: Editable) -> "Change":
        """This change with the record before it remembered, so it can be placed again later."""
        anchor = session.doc.record(self.first - 1).raw if 1 < self.first <= len(session) + 1 else None
        return replace(self, anchor=anchor)

    def apply(self, doc: Document) -> Document:
        return doc.splice(self.first, self.last, self.lines)

    @property
    def inverse(self) -> "Change":
        return Change(
            f"undo {self.description}",
            self.first,
            self.first + len(self.lines) - 1,
            self.old_lines,
            self.lines,
            anchor=self.anchor,
        )


def is_noop(change: Change) -> bool:
    """Whether writing ``change`` would leave the records as they are: the one answer to that question."""
    if change.last < change.first and not change.lines:
        return True
    return [(line.raw, line.terminator) for line in change.lines] == [
        (line.raw, line.terminator) for line in change.old_lines
    ]


def counts(change: Change) -> tuple[int, int]:
    """(records removed, records added) by ``change``."""
    return max(0, change.last - change.first + 1), len(change.lines)


def describe(change: Change) -> str:
    """``"2 records removed, 1 added"`` for ``change``."""
    removed, added = counts(change)
    if removed == added == 1:
        return "1 record replaced"
    parts = []
    if removed:
        parts.append(f"{plural(removed, 'record', grouped=True)} removed")
    if added:
        parts.append(f"{plural(added, 'record', grouped=True)} added" if not removed else f"{added:,} added")
    return ", ".join(parts) or "no change"


def number_after(change: Change, n: int) -> int:
    """Where record ``n`` of the file before ``change`` is once it is written (the nearest record when
    ``n`` itself is removed)."""
    removed, added = counts(change)
    if n < change.first:
        return n
    if n > change.last:
        return n + added - removed
    if added:
        return change.first + min(n - change.first, added - 1)
    return max(1, change.first - 1) if change.first > 1 else 1
