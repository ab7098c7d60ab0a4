"""Tool-call integrity of a change: which calls it would leave without a result (dangling) or which results
without their call (orphans), and the nearest range that splits no pair.

A planner may leave the check to the commit (:attr:`~.change.Change.unchecked`): :class:`Running` runs it
in a thread while the new file is written, and :func:`checked` runs it at once (a preview, a dry run).
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from typing import Iterable

from sessionview.core.doc.document import Line
from sessionview.core.doc.model import Kind, View
from sessionview.core.doc.pairing import Pairing
from sessionview.core.doc.parse import Status, parse_record
from sessionview.core.edit.change import Change, Editable
from sessionview.core.edit.idscan import IdPairing
from sessionview.core.errors import Refused


def _views_of_lines(session: Editable, lines: Iterable[Line], first: int) -> list[View]:
    out = []
    for i, line in enumerate(lines):
        p = parse_record(line.raw, terminated=bool(line.terminator))
        if p.status in (Status.OK, Status.DUPLICATE_KEYS):
            out.append(session.adapter.view(first + i, p.value))
    return out


def _ids(session: Editable, change: Change) -> tuple[set[str], set[str], set[str], set[str]]:
    removed = [v for v in session.views(change.first, change.last) if v.kind is not Kind.INVALID]
    added = _views_of_lines(session, change.lines, change.first)
    calls_removed = {c.id for v in removed for c in v.tool_calls if c.id}
    results_removed = {r.call_id for v in removed for r in v.tool_results if r.call_id}
    calls_added = {c.id for v in added for c in v.tool_calls if c.id}
    results_added = {r.call_id for v in added for r in v.tool_results if r.call_id}
    return calls_removed, results_removed, calls_added, results_added


def broken_ids(
    session: Editable, change: Change, pairing: Pairing | IdPairing | None = None
) -> tuple[list[str], list[str]]:
    """Ids that the change would turn into (dangling calls, orphan results).

    Only the ids whose calls or results the change removes or adds are looked up, in ``pairing`` (the
    whole session's) or, by default, by a byte search for them (:class:`~.idscan.IdPairing`): an edit that
    keeps its record's ids reads nothing else."""
    calls_removed, results_removed, calls_added, results_added = _ids(session, change)
    lost_calls, lost_results = calls_removed - calls_added, results_removed - results_added
    new_calls, new_results = calls_added - calls_removed, results_added - results_removed
    if isinstance(pairing, Pairing):
        p = pairing
    else:
        lookup = pairing if pairing is not None else IdPairing(session)
        p = lookup.cover(lost_calls | lost_results | new_calls | new_results)
    lo, hi = change.first, change.last

    def inside(n: int) -> bool:
        return lo <= n <= hi

    dangling: list[str] = []
    orphans: list[str] = []
    for cid in sorted(lost_calls):
        outside = [n for n in p.results.get(cid, []) if not inside(n)]
        if outside or cid in results_added:
            orphans.append(cid)
    for cid in sorted(lost_results):
        call_at = p.calls.get(cid)
        if call_at is None or inside(call_at):
            continue
        remaining = [n for n in p.results.get(cid, []) if not inside(n)]
        if not remaining:
            dangling.append(cid)
    for cid in sorted(new_calls):
        if cid not in p.results and cid not in results_added:
            dangling.append(cid)
    for cid in sorted(new_results):
        call_at = p.calls.get(cid)
        if (call_at is None or inside(call_at)) and cid not in calls_added:
            orphans.append(cid)
    return dangling, orphans


def nearest_valid_range(
    session: Editable, first: int, last: int, widen: str, pairing: Pairing | IdPairing | None = None
) -> tuple[int, int] | None:
    """Widen ``first..last`` until no tool call or result is split from its partner."""
    n = len(session)
    lookup = pairing if pairing is not None else IdPairing(session)
    for _ in range(64):
        change = Change("probe", first, last, ())
        dangling, orphans = broken_ids(session, change, lookup)
        if not dangling and not orphans:
            return first, last
        p = lookup if isinstance(lookup, Pairing) else lookup.cover(dangling + orphans)
        partners: list[int] = []
        for cid in dangling + orphans:
            if cid in p.calls:
                partners.append(p.calls[cid])
            partners.extend(p.results.get(cid, []))
        new_first = min([first, *partners])
        new_last = max([last, *partners]) if widen == "both" else last
        if widen == "down":
            new_last = n
        if (new_first, new_last) == (first, last):
            return None
        first, last = max(1, new_first), min(n, new_last)
    return None


def unlinked_result_warnings(session: Editable, number: int, old: object, new: object) -> tuple[str, ...]:
    """Why the message ``new`` (replacing ``old`` at #``number``) would be a tool result that answers no call
    because it names none (a role set to ``tool`` without a ``tool_call_id``): a warning, not a refusal."""
    try:
        before = session.adapter.view(number, old)
        after = session.adapter.view(number, new)
    except Exception:
        return ()
    unnamed_before = sum(r.call_id is None for r in before.tool_results)
    unnamed_after = sum(r.call_id is None for r in after.tool_results)
    if unnamed_after <= unnamed_before:
        return ()
    return (
        f"#{number} becomes a tool result that names no tool call (no tool_call_id): it answers no call (an orphan "
        "result), and a provider would reject it",
    )


def check_integrity(session: Editable, change: Change, *, force: bool = False, widen: str | None = None) -> None:
    if force:
        return
    pairing = IdPairing(session)
    dangling, orphans = broken_ids(session, change, pairing)
    if not dangling and not orphans:
        return
    parts = []
    if dangling:
        parts.append(f"leave tool call{'s' if len(dangling) > 1 else ''} {', '.join(dangling)} without a result (dangling)")
    if orphans:
        parts.append(f"leave tool result{'s' if len(orphans) > 1 else ''} for {', '.join(orphans)} without its call (orphan)")
    suggestion = nearest_valid_range(session, change.first, change.last, widen, pairing) if widen else None
    raise Refused(
        f"refused: {change.description} would {' and '.join(parts)}",
        ids=dangling + orphans,
        suggestion=suggestion,
        forceable=True,
        widen=widen if suggestion else None,
    )


def checked(session: Editable, change: Change) -> Change:
    """``change`` with its deferred integrity check (:attr:`~.change.Change.unchecked`) run now: it raises
    the refusal the planner would have raised."""
    if change.unchecked is None:
        return change
    check_integrity(session, change, widen=change.unchecked)
    return replace(change, unchecked=None)


Key = tuple[int, int, int, int]  # dev, inode, size, mtime of a file


def _key(path: str | None) -> Key | None:
    try:
        st = os.stat(path) if path is not None else None
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) if st is not None else None


class Running:
    """The deferred integrity check of ``change`` (:attr:`~.change.Change.unchecked`), run in a thread while
    the commit writes the new file, and the file's stat right when it ended (:attr:`ended`), as a planner's
    caller takes it right after planning. :meth:`wait` raises whatever the check raised."""

    def __init__(self, session: Editable, change: Change) -> None:
        self._error: BaseException | None = None
        self.ended: Key | None = None
        self._thread: threading.Thread | None = threading.Thread(
            target=self._run, args=(session, change), name="sv-integrity", daemon=True
        )
        try:
            self._thread.start()
        except RuntimeError:  # no thread to be had: checked here and now
            self._thread = None
            self._run(session, change)

    def _run(self, session: Editable, change: Change) -> None:
        try:
            check_integrity(session, change, widen=change.unchecked)
        except BaseException as exc:  # raised by wait(), in the committing thread
            self._error = exc
        finally:
            self.ended = _key(session.path)

    def wait(self) -> None:
        """Wait for the check; raise its refusal (or whatever else it raised)."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
