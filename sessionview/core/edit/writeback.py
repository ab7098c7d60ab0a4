"""Write a planned change back to disk: the glue between :mod:`.change` and :mod:`sessionview.core.store.save`.

The new file is the edited document followed by whatever was appended on disk since load (a rebase).
An appended tail can only be carried over while the record it continues is still last and untouched;
otherwise the save is refused as a conflict. A session written whole (a LittleGhost store document,
``capabilities.whole_document``) is refused on any change on disk since it was loaded.

A change whose integrity check the planner deferred (:attr:`Change.unchecked`: a delete, truncate or compact
on a big file) is checked in a thread while the new content is written to the temporary file: nothing is
backed up or renamed before the check passed, and when it refuses, the temporary file is removed and its
refusal raised, as the planner would have raised it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterator, Protocol

from sessionview.core.doc.document import Document
from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.edit.change import Change, Editable, is_noop
from sessionview.core.edit.integrity import Running, checked
from sessionview.core.errors import Conflict, Refused
from sessionview.core.store import save as _save
from sessionview.core.store.render import Piece
from sessionview.core.store.save import SaveResult
from sessionview.core.store.stamp import LoadStamp


@dataclass(frozen=True)
class Outcome:
    """What a commit did: ``changed`` is False when there was nothing to write (``result`` is then None
    unless the save layer found the content already on disk)."""

    changed: bool
    description: str
    result: SaveResult | None = None


class ChangedWhileChecked(Conflict):
    """The file changed on disk while a deferred integrity check ran (nothing was written): plan again."""


class WholeDocument(Editable, Protocol):
    """A session written back whole: its loaded bytes, the bytes with new messages, and the store's lock."""

    raw: bytes

    @property
    def lock_path(self) -> str | None: ...
    def with_messages(self, doc: Document) -> bytes: ...


def _tail_is_kept(old: Document, change: Change) -> bool:
    """Whether bytes appended after load can be appended to the edited document as they are."""
    n = len(old)
    if n == 0:
        return True
    return change.last < n or (change.first > n)


def render_jsonl(
    old: Document, new: Document, change: Change, path: str, stamp: LoadStamp | None = None
) -> Callable[[bytes], Iterator[Piece]]:
    """The new file: the records the change keeps as byte ranges of the loaded file (the save copies them in
    the kernel, as they are on disk), the changed ones as bytes, then whatever was appended since load.

    Byte ranges only when ``stamp`` is the stamp of the very file ``old`` was loaded from (same inode and
    size): otherwise every byte is written from the document."""
    st = old.loaded_stat
    spans = (
        stamp is not None
        and st is not None
        and new.source is old.source
        and (st.st_dev, st.st_ino, st.st_size) == (stamp.dev, stamp.ino, stamp.size)
        and old.source.size == stamp.size
    )

    def render(appended: bytes) -> Iterator[Piece]:
        if appended and not _tail_is_kept(old, change):
            raise Conflict(
                f"conflict: {path} changed on disk: lines were appended after the last record, which this edit "
                "changes; reload and apply the edit again",
                path,
            )
        yield from (new.layout() if spans else new.iter_bytes())
        if appended:
            yield appended

    return render


def _path(session: Editable) -> str:
    if session.path is None:
        raise ValueError("the session has no file to write to")
    return session.path


def commit(
    session: Editable, change: Change, *, root: str, force: bool = False, on_checked: Callable[[], None] | None = None
) -> Outcome:
    """Write ``change`` to ``session``'s file: a JSONL rebase, or a whole document. A no-op writes nothing.

    ``on_checked()`` is called once the change passed its integrity check (a front end tells the change's
    warnings then): at once, or for a deferred check once the save is over, whether it failed or not."""
    if change.unchecked is not None and (is_noop(change) or session.capabilities.whole_document):
        change = checked(session, change)
    if change.unchecked is None and on_checked is not None:
        on_checked()
    if is_noop(change):
        return Outcome(False, change.description)
    if session.capabilities.whole_document:
        whole: WholeDocument = session  # type: ignore[assignment]  # whole_document promises the protocol
        data = whole.with_messages(change.apply(whole.doc))
        return commit_bytes(whole, data, change.description, root=root, force=force, lock_path=whole.lock_path)
    return commit_jsonl(session, change, root=root, force=force, on_checked=on_checked)


def commit_jsonl(
    session: Editable, change: Change, *, root: str, force: bool = False, on_checked: Callable[[], None] | None = None
) -> Outcome:
    if change.unchecked is None:
        return _write_jsonl(session, change, root=root, force=force)
    running = Running(session, change)  # first: its outcome comes before anything the save may raise
    st = session.doc.loaded_stat

    def passed() -> None:
        """The check's refusal, or a conflict if the file changed before it ended (the caller plans again)."""
        running.wait()
        if st is not None and running.ended != (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
            raise ChangedWhileChecked(
                f"conflict: {session.path} changed on disk while the change was checked; nothing was written", session.path
            )

    try:
        outcome = _write_jsonl(session, change, root=root, force=force, gate=passed)
    except Exception:
        try:
            passed()  # the check's outcome comes first, as when it ran before the save
        except (Refused, Conflict, SourceChanged):
            raise
        except Exception:
            pass  # the check failed otherwise (an I/O error, say): the save's own error, which says so, stands
        if on_checked is not None:
            on_checked()
        raise
    if on_checked is not None:
        on_checked()
    return outcome


def _write_jsonl(
    session: Editable, change: Change, *, root: str, force: bool, gate: Callable[[], None] | None = None
) -> Outcome:
    old = session.doc
    new = change.apply(old)
    path = _path(session)
    stamp = session.stamp
    result = _save.save(path, render_jsonl(old, new, change, path, stamp), stamp, root=root, force=force, gate=gate)
    return Outcome(result.changed, change.description, result)


def commit_bytes(
    session: Editable, data: bytes, description: str, *, root: str, force: bool = False, lock_path: str | None = None
) -> Outcome:
    """Whole-file formats (a LittleGhost document): any change on disk since load is a conflict."""
    path = _path(session)

    def render(appended: bytes) -> Iterator[bytes]:
        if appended:
            raise Conflict(f"conflict: {path} changed on disk since it was loaded", path)
        yield data

    result = _save.save(path, render, session.stamp, root=root, force=force, lock_path=lock_path)
    return Outcome(result.changed, description, result)


# -- the file on disk --------------------------------------------------------------------------------


def is_current(session: Editable, path: str) -> bool:
    """Whether ``session`` still is the file at ``path`` (same inode, size and modification time)."""
    try:
        st = os.stat(path)
        stamp = session.stamp
    except Exception:
        return False
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (stamp.dev, stamp.ino, stamp.size, stamp.mtime_ns)


def modified_ago(path: str, now: float) -> float | None:
    """Seconds since ``path`` was last modified (None if it cannot be read)."""
    try:
        return now - os.stat(path).st_mtime
    except OSError:
        return None
