"""The one operation layer of the CLI and the app: plan → preview → commit → describe.

- **plan**: :func:`plan_edit`, :func:`plan_delete`, :func:`plan_truncate`, :func:`plan_drop_result`, :func:`plan_compact` (with the
  compaction's summary from one of its sources: :class:`SummarySource`), each returning a
  :class:`~sessionview.core.edit.change.Change` or raising :class:`Refused`/:class:`InvalidEdit`;
- **preview**: :func:`preview` (the transcript as the change leaves it) and :func:`diff` (a dry run);
- **commit**: :func:`commit` writes a change safely and returns an :class:`Outcome`; :func:`restore_newest`
  puts the newest backup back, :func:`restore_backup` a chosen one of :func:`backup_files`;
- **describe**: :func:`describe` says what a save did, in the words every front end uses.

:func:`run_with_retry` runs plan and commit while another process rewrites the file in place (Brute's
SessionLog truncates its session and writes it again at the end of a turn): it waits for a quiet moment,
checks after planning that the file did not change under it, and when it did (or the save reports a
conflict) starts over from a fresh load, a bounded number of times. A re-plan is only written if the
records named still hold the bytes they held the first time. The file is written once, or not at all.
A deferred integrity check (``plan_delete(defer=True)``...) runs during the commit: its refusal, and a change
on disk before it ended, are handled as if they had come from the plan.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, TypeVar

from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.edit import drop as _drop, plan as _plan, preview as _preview, summary as _summary, writeback
from sessionview.core.edit.change import Change, Editable, open_editable
from sessionview.core.edit.integrity import checked
from sessionview.core.edit.preview import PreviewRow
from sessionview.core.edit.writeback import ChangedWhileChecked, Outcome

if TYPE_CHECKING:
    import subprocess  # only the summarizer runs a process (imported there, when it does)
from sessionview.core.errors import AnotherWriter, Conflict, InvalidEdit, Refused
from sessionview.core.session import JsonlSession
from sessionview.core.store import backups, restore
from sessionview.core.store.backup_copy import verified_chunks
from sessionview.core.store.paths import default_root
from sessionview.core.store.stable import ATTEMPTS, wait_before_refusing, wait_quiet  # the retry rules (check uses them without this module)
from sessionview.core.text import plural

RECENT = 1.0  # a file modified less than this long ago is waited on before the first load

T = TypeVar("T")
Pin = tuple[int, tuple[bytes, ...], "bytes | None"]  # where a change starts, what it replaces, its anchor
Key = tuple[int, int, int, int]  # dev, inode, size, mtime of a file


class ReadOnly(Refused):
    """The session cannot be written (``session.read_only_reason``)."""


class StillRewriting(Refused):
    """Another process rewrote the file under every try; nothing was written."""


class TargetMoved(Refused):
    """A re-plan after a rewrite names records that no longer hold what they held; nothing was written."""


# -- plan ---------------------------------------------------------------------------------------------


def plan_edit(
    session: Editable, number: int, *, content: str | None = None, json_text: str | bytes | None = None, force: bool = False
) -> Change:
    """Replace message ``number``: its text alone (``content``) or the whole record (``json_text``)."""
    return _plan.plan_edit(session, number, content=content, json_text=json_text, force=force)


def plan_delete(session: Editable, first: int, last: int, *, force: bool = False, defer: bool = False) -> Change:
    """Delete records ``first..last``. ``defer``: the tool-call integrity check is left to :func:`commit`,
    which runs it while the new file is written (:attr:`Change.unchecked`; :func:`preview` and :func:`diff`
    run it first). It refuses as the planner would; only the moment differs."""
    return _plan.plan_delete(session, first, last, force=force, defer=defer)


def plan_truncate(session: Editable, keep: int, *, force: bool = False, defer: bool = False) -> Change:
    """Keep the first ``keep`` records (``defer``: as for :func:`plan_delete`)."""
    return _plan.plan_truncate(session, keep, force=force, defer=defer)


def plan_drop_result(session: Editable, first: int, last: int | None = None, *, force: bool = False) -> Change:
    """Drop the content of the tool results in records ``first..last`` (one record by default): each keeps
    its id, its content becomes Brute's ``[compacted:tool_results]`` marker (:mod:`~.edit.drop`)."""
    return _drop.plan_drop_results(session, first, last, force=force)


@dataclass(frozen=True)
class SummarySource:
    """Where a compaction's summary comes from: a typed ``text``, the stdout of a summarizer ``command``
    (given the records as JSONL on stdin), or by default the built-in digest."""

    text: str | None = None
    command: str | None = None
    timeout: float = _summary.DEFAULT_TIMEOUT


def compaction_summary(
    session: Editable,
    first: int,
    last: int,
    source: SummarySource,
    on_start: Callable[["subprocess.Popen[bytes]"], None] | None = None,
) -> str:
    """The summary text for records ``first..last``; :class:`~.summary.SummarizerFailed` if the command fails."""
    if source.text is not None:
        return source.text
    if source.command is not None:
        records = _summary.range_records(session, first, last)
        return _summary.run_summarizer(source.command, records, timeout=source.timeout, on_start=on_start).text
    return _summary.range_digest(session, first, last)


def plan_compact(
    session: Editable, first: int, last: int, source: SummarySource, *, force: bool = False, defer: bool = False
) -> Change:
    """Replace records ``first..last`` with one summary message (``defer``: as for :func:`plan_delete`)."""
    summary = compaction_summary(session, first, last, source)
    return _plan.plan_compact(session, first, last, summary, force=force, defer=defer)


# -- preview ------------------------------------------------------------------------------------------


def preview(session: Editable, change: Change) -> list[PreviewRow]:
    return _preview.preview(session, checked(session, change))


def diff(session: Editable, change: Change, path: str) -> str:
    return _preview.diff(session, checked(session, change), path)


# -- commit -------------------------------------------------------------------------------------------


def commit(
    session: Editable,
    change: Change,
    *,
    root: str | None = None,
    force: bool = False,
    on_checked: Callable[[], None] | None = None,
) -> Outcome:
    """Write ``change`` to ``session``'s file (``root``: the directory it must stay inside; by default the
    directory holding the path as given). A deferred integrity check runs while the new file is written;
    ``on_checked()`` is called once the change passed it (at once for a change checked when planned)."""
    if root is None:
        root = default_root(session.path or ".")
    return writeback.commit(session, change, root=root, force=force, on_checked=on_checked)


def restore_newest(path: str, *, force: bool = False) -> Outcome:
    """Put the newest backup of ``path`` back (a new safe save), waiting while another process rewrites it."""
    found = backups.list_backups(path)
    if not found:
        raise backups.NoBackup(f"{path}: no backup to restore", path)
    for attempt in range(ATTEMPTS):
        if attempt:
            wait_quiet(path)
        try:
            result = restore.restore(path, root=default_root(path), force=force, backup=found[0])
        except Conflict:
            continue
        return Outcome(result.changed, "restored the newest backup", result)
    raise StillRewriting(_still_rewriting(path))


def backup_files(path: str) -> list[backups.Backup]:
    """The backups of ``path``, newest first, then the files holding bytes a save could not merge
    (``kind == "unmerged"``, newest first); untrusted ones are listed, marked (``untrusted``)."""
    return [*backups.list_backups(path), *backups.list_unmerged(path)]


def restore_backup(path: str, backup: backups.Backup, *, root: str | None = None, force: bool = False) -> Outcome:
    """Put ``backup`` back in place of ``path`` (a new safe save that backs up the current content first).
    An untrusted backup or an unmerged-bytes file is refused (:class:`Refused`)."""
    if backup.kind != "backup":
        raise Refused(f"{path}: refused: {backup.path} holds bytes a save could not merge, not a backup of the file")
    result = restore.restore(path, root=root if root is not None else default_root(path), force=force, backup=backup)
    return Outcome(result.changed, "restored a backup", result)


def newest_backup_diff(path: str) -> str:
    """The diff that :func:`restore_newest` would make ("" when the file already matches)."""
    found = backups.list_backups(path)
    if not found:
        raise backups.NoBackup(f"{path}: no backup to restore", path)
    fd = backups.open_backup(found[0], path)
    try:
        old = b"".join(verified_chunks(found[0].path, fd, path))
    finally:
        os.close(fd)
    with open(path, "rb") as f:
        current = f.read()
    return _preview.bytes_diff(current, old, path)


# -- describe -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Description:
    """What a save did, phrased once for every front end."""

    written: bool  # False: nothing to write
    kept: str  # bytes appended meanwhile that are in the new file ("" if none)
    partial: str  # an unfinished last line kept aside ("" if none)
    warnings: tuple[str, ...]  # what the save layer reported
    missing: str  # bytes another process wrote that are NOT in the new file, and where they are ("" if none)

    @property
    def extra(self) -> str:
        """One line of what the save did beyond the edit (for a notification)."""
        return "; ".join(p for p in (self.kept, self.partial, *self.warnings) if p)


def describe(outcome: Outcome) -> Description:
    r = outcome.result
    if r is None:
        return Description(outcome.changed, "", "", (), "")
    appended = r.rebased_bytes + r.carried_bytes
    kept = f"{plural(appended, 'byte', grouped=True)} appended meanwhile kept" if appended else ""
    partial = f"an unfinished last line of {plural(r.lost_partial_bytes, 'byte', grouped=True)} was kept aside" if r.lost_partial_bytes else ""
    missing = ""
    lost = r.not_carried_bytes or r.lost_partial_bytes
    if lost:
        where = f"they are kept in {', '.join(r.kept_paths)}" if r.kept_paths else "they could not be kept anywhere"
        missing = f"{plural(lost, 'byte')} another process wrote during the save {'is' if lost == 1 else 'are'} not in the new file; {where}"
    return Description(outcome.changed, kept, partial, tuple(r.warnings or ()), missing)


# -- plan and commit while another process rewrites the file --------------------------------------------


class _Retry(Exception):
    """The file changed under a read or a save: wait for it to settle and start over (with this pin)."""

    def __init__(self, pin: Pin | None) -> None:
        super().__init__()
        self.pin = pin


def _still_rewriting(path: str) -> str:
    return (
        f"{path}: refused: another process is rewriting the file (it changed under each of {ATTEMPTS} tries); "
        "nothing was written. Try again when it is idle"
    )


def _now_key(path: str) -> Key | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _loaded_key(session: Editable) -> Key | None:
    st: os.stat_result | None = getattr(session, "_stat", None)  # a LittleGhost document (its .doc may raise)
    if st is None:
        st = getattr(getattr(session, "doc", None), "loaded_stat", None)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) if st is not None else None


def _mid_write(session: Editable) -> bool:
    """Whether a freshly loaded JSONL file looks like a rewrite in place caught midway: empty, or its last
    byte not a newline (Brute ends every line with one). Other formats: no (a LittleGhost store's ``doc`` is
    built from its parsed messages, never cut)."""
    if not isinstance(session, JsonlSession):
        return False
    source = session.doc.source
    try:
        return source.size == 0 or source.read(source.size - 1, 1) != b"\n"
    except (OSError, ValueError, SourceChanged):
        return True


def _pin(change: Change) -> Pin:
    return (change.first, tuple(line.data for line in change.old_lines), change.anchor)


def _same_target(pin: Pin, change: Change) -> bool:
    first, old, anchor = pin
    now = tuple(line.data for line in change.old_lines)
    # truncate --keep N drops what was appended since too: the records it named must still lead
    return change.first == first and now[: len(old)] == old and change.anchor == anchor


def run_with_retry(
    path: str,
    plan: Callable[[Editable], Change],
    act: Callable[[Editable, Change], T],
    *,
    load: Callable[[str], Editable] = open_editable,
) -> T:
    """Load ``path``, ``plan`` a change on it and ``act`` on it (commit it, or show its diff), starting over
    from a fresh load while another process rewrites the file. Raises :class:`StillRewriting` after
    :data:`ATTEMPTS` tries, :class:`TargetMoved` when a re-plan names other bytes, :class:`ReadOnly`,
    and whatever plan or act raise otherwise (:class:`Refused`, :class:`InvalidEdit`, save errors...)."""
    pin: Pin | None = None
    sizes: list[int] = []
    try:
        if time.time() - os.stat(path).st_mtime < RECENT:
            wait_quiet(path)  # modified just now: wait for a quiet moment before the first load
    except OSError:
        pass
    for attempt in range(ATTEMPTS):
        if attempt:
            wait_quiet(path)
        try:
            return _attempt(path, plan, act, load, pin, sizes)
        except _Retry as again:
            if again.pin is not None:
                pin = again.pin
    raise StillRewriting(_still_rewriting(path))


def _attempt(
    path: str,
    plan: Callable[[Editable], Change],
    act: Callable[[Editable, Change], T],
    load: Callable[[str], Editable],
    pin: Pin | None,
    sizes: list[int],
) -> T:
    try:
        session = load(path)
    except SourceChanged:
        raise _Retry(None) from None
    loaded = _loaded_key(session)

    def changed() -> bool:
        return loaded is not None and _now_key(path) != loaded

    def shrank() -> bool:
        return bool(sizes) and loaded is not None and loaded[2] < max(sizes)

    try:
        if session.read_only_reason:
            raise ReadOnly(f"{path}: read-only: {session.read_only_reason}")
        this_pin = pin
        try:
            change = plan(session)
            if changed():
                raise _Retry(pin)
            if pin is not None and not _same_target(pin, change):
                raise TargetMoved(
                    f"{path}: refused: another process rewrote the file and the records this command names "
                    "no longer hold what they held when it started; nothing was written"
                )
            this_pin = pin if pin is not None else _pin(change)
            return act(session, change)
        except (_Retry, TargetMoved):
            raise
        except SourceChanged:
            raise _Retry(pin) from None
        except (Refused, InvalidEdit, ValueError):
            if changed() or shrank():
                raise _Retry(pin) from None
            # a file caught just after an in-place truncation looks valid but empty: believe a refusal
            # only once the file stayed as loaded through a quiet moment (a longer one when it was empty)
            wait_before_refusing(path, _mid_write(session))
            if changed():
                raise _Retry(pin) from None
            raise
        except ChangedWhileChecked:  # during a deferred check: as if the file changed during the plan
            raise _Retry(pin) from None
        except Conflict:
            raise _Retry(this_pin) from None  # the re-plan must name the same records
        except AnotherWriter:
            if changed():
                raise _Retry(pin) from None
            raise
    finally:
        if loaded is not None:
            sizes.append(loaded[2])
        session.close()
