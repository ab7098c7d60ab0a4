"""This run's write operations on one session, with undo, redo and re-application.

Every operation, undo and redo is a new safe save (:func:`writeback.commit`). Between saves the file may
change under us: an agent appends, or Brute rewrites the whole file at the end of its turn. So changes
are never replayed by position alone: :func:`locate` finds where a change's lines are now, and
:func:`rebase` moves a change onto the file as it is, or refuses when it cannot be placed unambiguously.
The stacks are private and bounded (:data:`LIMIT` operations); the I/O goes through :mod:`.writeback`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from typing import Callable

from sessionview.core.edit import writeback
from sessionview.core.edit.change import Change, Editable, open_editable
from sessionview.core.edit.writeback import Outcome
from sessionview.core.errors import Refused
from sessionview.core.store.paths import default_root

LIMIT = 100  # operations kept for undo (and for redo); older ones are forgotten


def _raws(session: Editable, first: int, last: int) -> list[bytes]:
    return [r.raw for r in session.doc.records(first, last)]


def locate(session: Editable, raws: list[bytes], hint: int, anchor: bytes | None = None) -> int | None:
    """The record number where ``raws`` start in ``session`` now, searching outward from ``hint``.

    With no ``raws`` (a pure insertion point), the record just after ``anchor`` is returned; a missing
    anchor means the start of the file.
    """
    n = len(session)
    if not raws:
        if anchor is None:
            return 1
        found = locate(session, [anchor], hint - 1)
        return None if found is None else found + 1
    width = len(raws)
    first_raw = raws[0]
    for distance in range(0, n + 1):
        for start in {hint - distance, hint + distance}:
            if 1 <= start and start + width - 1 <= n and session.doc.record(start).raw == first_raw:
                if _raws(session, start, start + width - 1) == raws:
                    return start
        if hint - distance < 1 and hint + distance > n:
            break
    return None


def rebase(session: Editable, change: Change) -> Change:
    """``change`` moved onto ``session`` as it is now. Raises :class:`Refused` if its target is gone."""
    old = [line.raw for line in change.old_lines]
    start = locate(session, old, change.first, change.anchor)
    if start is None:
        raise Refused(
            f"cannot apply {change.description} again: the records it changes are no longer in the file"
        )
    return replace(change, first=start, last=start + len(old) - 1)


def still_applied(session: Editable, change: Change) -> bool:
    """Whether the file still holds the result of ``change`` (False once an agent overwrote it)."""
    new = [line.raw for line in change.lines]
    if new:
        return locate(session, new, change.first) is not None
    old = [line.raw for line in change.old_lines]
    return not old or locate(session, old, change.first, change.anchor) is None


def same_record(session: Editable, number: int, raw: bytes | None) -> bool:
    """Whether record ``number`` of ``session`` holds ``raw`` (None: not known, taken as yes)."""
    if raw is None:
        return True
    try:
        return 1 <= number <= len(session) and session.doc.record(number).raw == raw
    except Exception:
        return False


@dataclass(frozen=True)
class Done:
    change: Change  # as applied (its inverse undoes it)
    outcome: Outcome


class EditHistory:
    """Apply, undo and redo changes to one file, reloading the session after every save."""

    def __init__(
        self,
        path: str,
        root: str | None = None,
        *,
        loader: Callable[[str], Editable] = open_editable,
        force: bool = False,
        limit: int = LIMIT,
    ) -> None:
        self.path = path
        self.root = root if root is not None else default_root(path)
        self._loader = loader
        self.force = force
        self.session: Editable = loader(path)
        self._undo: deque[Done] = deque(maxlen=limit)
        self._redo: deque[Done] = deque(maxlen=limit)

    # -- the stacks ---------------------------------------------------------------------------------
    @property
    def done(self) -> tuple[Done, ...]:
        """The operations :meth:`undo` can undo, oldest first (the next one last)."""
        return tuple(self._undo)

    @property
    def undone(self) -> tuple[Done, ...]:
        """The operations :meth:`redo` can do again, the next one last."""
        return tuple(self._redo)

    def forget(self) -> None:
        """Drop every operation of this run (the file became another version) and reload."""
        self._undo.clear()
        self._redo.clear()
        self.reload()

    # -- I/O ------------------------------------------------------------------------------------------
    def reload(self) -> Editable:
        old = self.session
        self.session = self._loader(self.path)
        old.close()
        return self.session

    def _commit(self, change: Change, force: bool) -> Outcome:
        outcome = writeback.commit(self.session, change, root=self.root, force=force or self.force)
        self.reload()
        return outcome

    def apply(self, change: Change, *, force: bool = False) -> Done:
        """Save ``change`` (planned on the current session) and record it for undo."""
        outcome = self._commit(change, force)
        done = Done(change, outcome)
        self._undo.append(done)
        self._redo.clear()
        return done

    def undo(self, *, force: bool = False) -> Done:
        if not self._undo:
            raise Refused("nothing to undo in this run")
        done = self._undo[-1]
        inverse = rebase(self.session, done.change.inverse)
        outcome = self._commit(inverse, force)
        self._undo.pop()
        self._redo.append(Done(done.change, outcome))
        return Done(inverse, outcome)

    def redo(self, *, force: bool = False) -> Done:
        if not self._redo:
            raise Refused("nothing to redo")
        done = self._redo[-1]
        change = rebase(self.session, done.change)
        outcome = self._commit(change, force)
        self._redo.pop()
        self._undo.append(Done(change, outcome))
        return Done(change, outcome)

    def overwritten(self) -> Change | None:
        """The last change, if the file on disk no longer holds it (an agent rewrote the file)."""
        if not self._undo:
            return None
        self.reload()
        last = self._undo[-1].change
        return None if still_applied(self.session, last) else last

    def reapply(self, change: Change, *, force: bool = False) -> Done:
        """Apply ``change`` again onto the file as it is now (after a conflict or an overwrite)."""
        self.reload()
        return self.apply(rebase(self.session, change), force=force)

    def close(self) -> None:
        self.session.close()
