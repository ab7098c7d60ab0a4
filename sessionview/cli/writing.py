"""The writing commands: edit, delete, truncate, compact, drop-result, undo, and the backups' history and prune.

Each calls :mod:`sessionview.core.ops` and says what happened on stderr (stdout carries only what was asked
to be seen: the --dry-run diff, the history). Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import TYPE_CHECKING, Callable

from sessionview.cli.commands import open_file
from sessionview.cli.output import CliError, Out, err, shown, status

if TYPE_CHECKING:
    from sessionview.core.edit.change import Change, Editable
    from sessionview.core.edit.writeback import Outcome
    from sessionview.core.errors import Refused

INPUT_CAP = 64 * 1024 * 1024  # --content-file / --summary-file


def read_input(path: str, what: str) -> str:
    """Text for ``--content-file``/``--summary-file``: a regular file or ``-`` (stdin), at most INPUT_CAP bytes."""
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise CliError(f"{what} -: stdin is closed")
        data = stream.read(INPUT_CAP + 1)
        name = "stdin"
    else:
        name = path
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            raise CliError(f"{what} {path}: {exc.strerror or exc}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                from sessionview.core.doc.document import describe_mode

                raise CliError(f"{what} {path}: not a regular file ({describe_mode(st.st_mode)}); use a file or -")
            if st.st_size > INPUT_CAP:
                raise CliError(f"{what} {path}: too large ({st.st_size:,} bytes; the limit is {INPUT_CAP:,})")
            chunks, size = [], 0
            while size <= INPUT_CAP:
                chunk = os.read(fd, min(1 << 20, INPUT_CAP + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            data = b"".join(chunks)
        except OSError as exc:
            raise CliError(f"{what} {path}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
    if len(data) > INPUT_CAP:
        raise CliError(f"{what} {name}: too large (more than {INPUT_CAP:,} bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CliError(f"{what} {name}: not UTF-8") from None


# --------------------------------------------------------------------------------------------------
# writing commands: edit, delete, truncate, compact, undo


def refusal(exc: BaseException) -> str:
    """A core refusal as the command line says it: its nearest valid range as the command's argument
    (``2:3``, ``--keep 6``), and ``--force`` where the same command with it would go through."""
    from sessionview.core.errors import AnotherWriter

    text = str(exc)
    suggestion = getattr(exc, "suggestion", None)
    if suggestion:
        first, last = suggestion
        if getattr(exc, "widen", None) == "down":
            text += f"; the nearest valid point is --keep {first - 1}"
        else:
            text += f"; the nearest valid range is {first}:{last}"
    if isinstance(exc, AnotherWriter):
        text += ". Stop it, or use --force to save anyway"
    elif getattr(exc, "forceable", False):
        text += ". Use --force to do it anyway"
    return text


def report(path: str, outcome: "Outcome") -> int:
    """Print the outcome of a save and every warning the core produced; 1 if another process's bytes were not carried."""
    from sessionview.core import ops

    if not outcome.changed:
        status(f"{path}: {outcome.description}: nothing to write")
        return 0
    said = ops.describe(outcome)
    extra = f"; {said.kept}" if said.kept else ""
    status(f"{path}: {outcome.description}: written (backup kept; 'sessionview undo' restores it){extra}")
    for w in said.warnings:
        status(f"warning: {path}: {w}")
    if said.missing:
        status(f"{path}: {said.missing}")
        return 1
    return 0


def _run_write(args: argparse.Namespace, plan: "Callable[[Editable], Change]", *, scan_ids: bool = False) -> int:
    """Plan and write ``args.file`` (or print the diff), starting over while another process rewrites it."""
    from sessionview.core import ops
    from sessionview.core.edit.change import open_editable
    from sessionview.core.edit.summary import SummarizerFailed
    from sessionview.core.errors import InvalidEdit, Refused, SaveError

    path = args.file

    def act(session: "Editable", change: "Change") -> int:
        def warn() -> None:  # once the change passed its integrity check (a deferred one: during the commit)
            for w in change.warnings:
                status(f"warning: {path}: {w}")

        if args.dry_run:  # planned with its check (see _defer)
            warn()
            out = Out()
            out.write(ops.diff(session, change, path))
            out.flush()
            return 0
        return report(path, ops.commit(session, change, force=args.force, on_checked=warn))

    expected = list(getattr(args, "expect", None) or [])
    deferred = scan_ids and _defer(args)  # the plan leaves its id search to the commit (see _defer)

    def load(p: str) -> "Editable":
        return open_editable(p, open_file, scan_ids=scan_ids, check_deferred=deferred)

    def guarded(session: "Editable") -> "Change":
        shown, mismatch = check_expected(session, expected, path)
        if mismatch is None:
            change = plan(session)
        elif _interactive(args):  # an editor or a summarizer: not run for a write that is refused anyway
            raise mismatch
        else:  # a record that does not exist, or one the change does not touch, is said so first
            try:
                change = plan(session)
            except Refused:
                raise mismatch from None
        check_covered(change, shown, path, mismatch)
        return change

    try:
        return ops.run_with_retry(path, guarded if expected else plan, act, load=load)
    except Refused as exc:
        raise CliError(refusal(exc), 1) from None
    except (InvalidEdit, ValueError) as exc:
        raise CliError(str(exc), 2) from None
    except SummarizerFailed as exc:
        raise CliError(f"compaction refused: {exc}; nothing was written", 1) from None
    except SaveError as exc:
        raise CliError(refusal(exc), exc.exit_code) from None


def _interactive(args: argparse.Namespace) -> bool:
    """Whether planning the write runs an editor or a summarizer."""
    if getattr(args, "summarizer", None) is not None:
        return True
    return getattr(args, "command", None) == "edit" and all(
        getattr(args, k, None) is None for k in ("content", "content_file", "json"))


def check_expected(session: "Editable", expected: list[str], path: str) -> "tuple[list[tuple[int, int]], Refused | None]":
    """``--expect N:SHA256`` (record N's bytes) and ``--expect N:M:SHA256`` (records N to M, the digest of
    :func:`sessionview.remote.writes.records_digest`): a conflict unless those records are the ones a front end
    showed (checked on each load the write is planned on, so against the very bytes the save checks in turn).
    The ranges named, for :func:`check_covered`, and the conflict of the first that does not match (or None)."""
    import hashlib

    from sessionview.core.errors import Refused
    from sessionview.remote.writes import records_digest

    shown: list[tuple[int, int]] = []
    mismatch: Refused | None = None
    for item in expected:
        parts = item.split(":")
        if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts[:-1]) or len(parts[-1]) != 64:
            raise CliError(f"--expect {item}: give N:SHA256 or N:M:SHA256 (record numbers and 64 hex digits)")
        first, last, digest = int(parts[0]), int(parts[-2]), parts[-1].lower()
        if first < 1 or last < first:
            raise CliError(f"--expect {item}: N:M must name records N to M, N at least 1 and M not below N")
        try:
            raws = (session.doc.record(n).raw for n in range(first, last + 1))
            if last > len(session):
                got = None
            else:
                got = hashlib.sha256(next(raws)).hexdigest() if len(parts) == 2 else records_digest(raws)
        except Exception:  # no such record, or it cannot be read: not what was shown
            got = None
        if got != digest and mismatch is None:
            which = f"#{first} is not the record that was" if len(parts) == 2 else f"#{first}-#{last} are not the records that were"
            mismatch = Refused(f"conflict: {path}: {which} shown (the file changed since); nothing was written")
        shown.append((first, last))
    return shown, mismatch


def _span(first: int, last: int) -> str:
    return f"#{first}" if first == last else f"#{first}-#{last}"


def check_covered(change: "Change", shown: list[tuple[int, int]], path: str, mismatch: "Refused | None" = None) -> None:
    """With ``--expect``, a change may touch only records it named: one that names none of them is a usage
    error; else the ``mismatch`` of :func:`check_expected`; else one that would touch records not named
    (appended since a truncate's preview, say) is a conflict."""
    from sessionview.core.errors import Refused

    touched = range(change.first, change.last + 1)
    unseen = [n for n in touched if not any(a <= n <= b for a, b in shown)]
    if unseen and len(unseen) == len(touched):
        named = ", ".join(_span(a, b) for a, b in shown)
        raise CliError(f"{path}: the change touches {_span(change.first, change.last)}, but --expect names {named}: "
                       "name the records the change touches; nothing was written")
    if mismatch is not None:
        raise mismatch
    if unseen:
        raise Refused(f"conflict: {path}: the change would touch {_span(unseen[0], unseen[-1])}, which was not shown "
                      "(written since?); nothing was written")


def _edit_in_editor(initial: str) -> str:
    from sessionview import editor

    try:
        return editor.edit_text(initial)
    except editor.NoEditor:
        raise CliError("no editor: set $VISUAL or $EDITOR, or pass --content, --content-file or --json") from None
    except editor.EditorExited as exc:
        raise CliError(f"the editor exited with status {exc.status}; nothing was written", 1) from None


def cmd_edit(args: argparse.Namespace) -> int:
    from sessionview.core import ops
    from sessionview.core.edit.change import Change
    from sessionview.core.edit.encode import pretty_record
    from sessionview.core.errors import InvalidEdit

    def plan(session: "Editable") -> Change:
        if args.content is not None:
            return ops.plan_edit(session, args.n, content=args.content, force=args.force)
        if args.content_file is not None:
            text = read_input(args.content_file, "--content-file")
            return ops.plan_edit(session, args.n, content=text, force=args.force)
        if args.json is not None:
            return ops.plan_edit(session, args.n, json_text=args.json, force=args.force)
        if not 1 <= args.n <= len(session):
            raise InvalidEdit(f"record {args.n} is outside 1:{len(session)}")
        initial = pretty_record(session, args.n)
        edited = _edit_in_editor(initial)
        if edited.strip() == initial.strip():  # the person changed nothing: a no-op change
            return Change(f"edit #{args.n} (no change)", args.n + 1, args.n, ())
        return ops.plan_edit(session, args.n, json_text=edited, force=args.force)

    return _run_write(args, plan)


def _defer(args: argparse.Namespace) -> bool:
    """Whether the write's integrity check may run while the new file is written (``ops.plan_delete(defer=)``):
    not for a dry run (its diff checks first) nor with ``--expect`` (its mismatch is told before a refusal)."""
    return not args.dry_run and not getattr(args, "expect", None)


def cmd_delete(args: argparse.Namespace) -> int:
    from sessionview.core import ops
    from sessionview.core.edit.plan import parse_range

    def plan(session: "Editable") -> "Change":
        first, last = parse_range(args.range, len(session))
        return ops.plan_delete(session, first, last, force=args.force, defer=_defer(args))

    return _run_write(args, plan, scan_ids=True)


def cmd_truncate(args: argparse.Namespace) -> int:
    from sessionview.core import ops

    return _run_write(
        args, lambda session: ops.plan_truncate(session, args.keep, force=args.force, defer=_defer(args)), scan_ids=True
    )


def cmd_compact(args: argparse.Namespace) -> int:
    from sessionview.core import ops
    from sessionview.core.edit.plan import parse_range

    def plan(session: "Editable") -> "Change":
        first, last = parse_range(args.range, len(session))
        text = args.summary
        if args.summary_file is not None:
            text = read_input(args.summary_file, "--summary-file")
        source = ops.SummarySource(text=text, command=args.summarizer, timeout=args.timeout)
        return ops.plan_compact(session, first, last, source, force=args.force, defer=_defer(args))

    return _run_write(args, plan, scan_ids=True)


def cmd_drop_result(args: argparse.Namespace) -> int:
    from sessionview.core import ops
    from sessionview.core.edit.plan import parse_range

    def plan(session: "Editable") -> "Change":
        first, last = parse_range(args.range, len(session))
        return ops.plan_drop_result(session, first, last, force=args.force)

    return _run_write(args, plan)


def cmd_undo(args: argparse.Namespace) -> int:
    from sessionview.core import ops
    from sessionview.core.errors import Refused, SaveError

    try:
        if args.dry_run:
            text = ops.newest_backup_diff(args.file)
            if not text:
                err(f"{args.file}: already matches the newest backup")
            else:
                out = Out()
                out.write(text)
                out.flush()
            return 0
        outcome = ops.restore_newest(args.file, force=args.force)
    except Refused as exc:
        raise CliError(refusal(exc), 1) from None
    except SaveError as exc:
        raise CliError(refusal(exc), exc.exit_code) from None
    if not outcome.changed:
        err(f"{args.file}: already matches the newest backup")
        return 0
    return report(args.file, outcome)


# --------------------------------------------------------------------------------------------------
# backups: history, prune


def cmd_history(args: argparse.Namespace) -> int:
    from sessionview.core.config import ConfigError
    from sessionview.core.store import backups, retention

    found = backups.list_backups(args.file) + backups.list_unmerged(args.file)
    if not found:
        err(f"{shown(args.file)}: no backups")
    out = Out()
    for i, b in enumerate(found, 1):
        when = b.created.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
        mark = "" if b.kind == "backup" else "  [unmerged bytes: never pruned; look, then delete by hand]"
        mark += f"  [UNTRUSTED: {b.untrusted}; never restored]" if b.untrusted else ""
        out.write(f"{i:>3}  {when}  {b.size:>12,} bytes  {shown(str(b.path))}{shown(mark)}\n")
    try:
        policy = retention.current_retention().describe()
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    out.write(f"{policy}; {retention.usage():,} bytes used\n")
    out.flush()
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from sessionview.core.config import ConfigError
    from sessionview.core import sizes
    from sessionview.core.store import retention
    from sessionview.core.errors import SaveError
    from sessionview.core.text import escape_control

    try:
        base = retention.current_retention()
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    try:
        policy = retention.Retention(args.keep if args.keep is not None else base.keep,
                                     args.max_bytes if args.max_bytes is not None else base.max_bytes)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        report = retention.prune(args.files or None, retention=policy, dry_run=args.dry_run)
    except SaveError as exc:
        raise CliError(str(exc), getattr(exc, "exit_code", 1)) from None
    out = Out()
    for b in report.removed:
        out.write(f"{'would remove' if args.dry_run else 'removed':<12}  {b.size:>12,} bytes  {escape_control(b.path, one_line=True)}\n")
    for b in report.unmerged:
        out.write(f"{'unmerged':<12}  {b.size:>12,} bytes  {escape_control(b.path, one_line=True)}  "
                  "(never pruned: bytes a save could not merge; look, then delete by hand)\n")
    for b in report.untrusted:
        out.write(f"{'untrusted':<12}  {b.size:>12,} bytes  {escape_control(b.path, one_line=True)}  "
                  f"({escape_control(b.untrusted, one_line=True)}; left alone)\n")
    out.flush()
    n = len(report.removed)
    verb = f"would prune {n} backup{'s' if n != 1 else ''}, freeing" if args.dry_run else \
        f"pruned {n} backup{'s' if n != 1 else ''}, freed"
    err(f"{verb} {sizes.format_size(report.freed)}; {policy.describe()}; {report.used:,} bytes used")
    return 0
