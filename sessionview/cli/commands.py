"""The commands: each parses nothing and decides nothing itself, but calls :mod:`sessionview.core.ops` (or
the read-only core) and prints what it returns. Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import TYPE_CHECKING, Callable

from sessionview.cli.output import CliError, Out, err, shown

if TYPE_CHECKING:
    from sessionview.core.doc.model import Problem
    from sessionview.core.edit.change import Change, Editable
    from sessionview.core.edit.writeback import Outcome
    from sessionview.core.session_base import Session

INPUT_CAP = 64 * 1024 * 1024  # --content-file / --summary-file


# --------------------------------------------------------------------------------------------------
# reading


def open_file(path: str, digest: bool = True) -> "Session":
    """``open_session(path)``, its errors as one-line :class:`CliError`; a file rewritten while it was read
    raises ``SourceChanged`` (the caller reads it again)."""
    from sessionview.core.doc.document import NotRegularFile
    from sessionview.core.doc.linescan import SourceChanged
    from sessionview.core.session import open_session

    try:
        return open_session(path, digest=digest)
    except SourceChanged:
        raise  # rewritten while it was read: the caller waits and reads it again
    except NotRegularFile as exc:
        raise CliError(str(exc)) from None
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except PermissionError:
        raise CliError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise CliError(f"{path}: not a regular file (a directory)") from None
    except OSError as exc:
        raise CliError(f"{path}: {exc.strerror or exc}") from None


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
# show, check


#: files up to this size are paired first, so that a call shows where its result is (bigger ones stream)
SHOW_PAIR_FIRST = 16 * 1024 * 1024


def show_range(args: argparse.Namespace, total: int) -> tuple[int, int]:
    """The records ``show`` prints: a range ``N:M`` (either side may be left out), or the ``--last N``."""
    first, last = 1, total
    if args.range:
        a, sep, b = args.range.partition(":")
        try:
            first = int(a) if a else 1
            last = (int(b) if b else total) if sep else first
        except ValueError:
            raise CliError(f"{args.range}: a range is N:M (record numbers), N: or :M") from None
        if first < 1 or last < first:
            raise CliError(f"{args.range}: the range must run from #1 up, first to last")
    if args.last is not None:
        if args.last < 1:
            raise CliError("--last needs a count of 1 or more")
        first = max(first, last - args.last + 1)
    return first, min(last, total)


def cmd_show(args: argparse.Namespace) -> int:
    from sessionview.core.doc.model import iter_merged
    from sessionview.core.formats.claude_code import agent_id_of, parent_of, subagent_calls, subagent_files
    from sessionview.core.view import render

    session = open_file(args.file, digest=False)  # read-only: no SHA-256 while indexing
    out = Out()
    try:
        first, last = show_range(args, len(session))
        views = iter_merged(session.views(first, last))
        if args.json:
            for view in views:
                out.write(render.view_json(view) + "\n")
            out.flush()
            return 0
        size = os.path.getsize(args.file) if os.path.isfile(args.file) else 0
        whole = first == 1 and last == len(session)
        pairing = session.pairing() if size <= SHOW_PAIR_FIRST else render.RunningPairing()
        calls = subagent_calls(session.views()) if session.format == "claude-code" and size <= SHOW_PAIR_FIRST else {}
        out.write(render.header(session, count=False) + "\n")
        parent = parent_of(args.file)
        if parent is not None:
            out.write(f"subagent {escape(agent_id_of(args.file) or '')} of: {escape(parent)}\n")
        for sub in subagent_files(args.file):
            out.write(f"subagent file: {escape(sub)}\n")
        shown = messages = 0
        for view in views:
            if isinstance(pairing, render.RunningPairing):
                pairing.see(view)
            out.write("\n" + render.view_text(view, pairing, width=args.width, subagent_calls=calls) + "\n")
            shown += len(view.numbers)
            messages += 1
        total = render.plural(len(session), "record")
        where = total if whole else f"#{first}–#{last} of {total}"
        out.write(f"\n{where}" + ("" if messages == shown else f" · {render.plural(messages, 'message')}") + "\n")
        out.flush()
    finally:
        session.close()
    return 0


def escape(text: str) -> str:
    from sessionview.core.text import escape_control

    return escape_control(text, one_line=True)


#: problems of one kind listed before ``check`` sums up the rest (``--all`` lists every one)
CHECK_GROUP = 20


def cmd_check(args: argparse.Namespace) -> int:
    from sessionview.core.text import escape_control

    out = Out()
    worst = 0
    for path in args.files:
        try:
            session, problems = _checked(path)
        except CliError as exc:
            err(str(exc))
            worst = max(worst, exc.code)
            continue
        name = escape_control(path, one_line=True)
        per_kind: dict[str, int] = {}
        for p in problems:
            per_kind[p.kind] = per_kind.get(p.kind, 0) + 1
            if not args.all and per_kind[p.kind] > CHECK_GROUP:
                continue
            where = f"{name}:{p.number}" if p.number is not None else name
            ids = f" [{', '.join(escape_control(i, one_line=True) for i in p.ids)}]" if p.ids else ""
            out.write(f"{where}: {p.kind}{ids}: {escape_control(p.message, one_line=True)}\n")
        for kind, n in per_kind.items():
            if not args.all and n > CHECK_GROUP:
                out.write(f"{name}: {kind}: {n - CHECK_GROUP} more like these ({n} in all; --all lists every one)\n")
        if problems:
            out.write(f"{name}: {len(problems)} problem{'s' if len(problems) != 1 else ''} ({session.format_title})\n")
            worst = max(worst, 1)
        elif not args.quiet:
            out.write(f"{name}: ok ({session.format_title}, {len(session)} record{'' if len(session) == 1 else 's'})\n")
    out.flush()
    return worst


def _checked(path: str) -> "tuple[Session, list[Problem]]":
    """Open and check ``path``; a file rewritten in place meanwhile is read again once it is quiet."""
    from sessionview.core import ops
    from sessionview.core.doc.linescan import SourceChanged

    for attempt in range(ops.ATTEMPTS):
        if attempt:
            ops.wait_quiet(path)
        try:
            session = open_file(path, digest=False)  # read-only: no SHA-256 while indexing
            try:
                return session, session.check()
            finally:
                session.close()
        except SourceChanged:
            continue
    raise CliError(f"{path}: another process is rewriting the file; it changed under each of {ops.ATTEMPTS} reads", 1)


# --------------------------------------------------------------------------------------------------
# writing commands: edit, delete, truncate, compact, undo


def status(message: str) -> None:
    """A status line on stderr (escaped). Never raises: the work it reports is done."""
    err(message)


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


def _run_write(args: argparse.Namespace, plan: "Callable[[Editable], Change]") -> int:
    """Plan and write ``args.file`` (or print the diff), starting over while another process rewrites it."""
    from sessionview.core import ops
    from sessionview.core.edit.change import editable
    from sessionview.core.edit.summary import SummarizerFailed
    from sessionview.core.errors import InvalidEdit, Refused, SaveError

    path = args.file

    def act(session: "Editable", change: "Change") -> int:
        for w in change.warnings:
            status(f"warning: {path}: {w}")
        if args.dry_run:
            out = Out()
            out.write(ops.diff(session, change, path))
            out.flush()
            return 0
        return report(path, ops.commit(session, change, force=args.force))

    try:
        return ops.run_with_retry(path, plan, act, load=lambda p: editable(open_file(p)))
    except Refused as exc:
        raise CliError(str(exc), 1) from None
    except (InvalidEdit, ValueError) as exc:
        raise CliError(str(exc), 2) from None
    except SummarizerFailed as exc:
        raise CliError(f"compaction refused: {exc}; nothing was written", 1) from None
    except SaveError as exc:
        raise CliError(str(exc), exc.exit_code) from None


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
            raise InvalidEdit(f"#{args.n} is outside 1:{len(session)}")
        initial = pretty_record(session, args.n)
        edited = _edit_in_editor(initial)
        if edited.strip() == initial.strip():  # the person changed nothing: a no-op change
            return Change(f"edit #{args.n} (no change)", args.n + 1, args.n, ())
        return ops.plan_edit(session, args.n, json_text=edited, force=args.force)

    return _run_write(args, plan)


def cmd_delete(args: argparse.Namespace) -> int:
    from sessionview.core import ops
    from sessionview.core.edit.plan import parse_range

    def plan(session: "Editable") -> "Change":
        first, last = parse_range(args.range, len(session))
        return ops.plan_delete(session, first, last, force=args.force)

    return _run_write(args, plan)


def cmd_truncate(args: argparse.Namespace) -> int:
    from sessionview.core import ops

    return _run_write(args, lambda session: ops.plan_truncate(session, args.keep, force=args.force))


def cmd_compact(args: argparse.Namespace) -> int:
    from sessionview.core import ops
    from sessionview.core.edit.plan import parse_range

    def plan(session: "Editable") -> "Change":
        first, last = parse_range(args.range, len(session))
        text = args.summary
        if args.summary_file is not None:
            text = read_input(args.summary_file, "--summary-file")
        source = ops.SummarySource(text=text, command=args.summarizer, timeout=args.timeout)
        return ops.plan_compact(session, first, last, source, force=args.force)

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
        raise CliError(str(exc), 1) from None
    except SaveError as exc:
        raise CliError(str(exc), exc.exit_code) from None
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


# --------------------------------------------------------------------------------------------------
# export, fork


def cmd_export(args: argparse.Namespace) -> int:
    from sessionview.core import export
    from sessionview.core.edit.plan import parse_range
    from sessionview.core.errors import InvalidEdit

    out_path = None if args.output in (None, "-") else args.output
    fmt = args.to or (export.format_for(out_path) if out_path else None)
    if fmt is None:
        raise CliError("say which format: --to md or --to html (or -o a .md or .html file)")
    session = open_file(args.file, digest=False)
    try:
        first, last = 1, None
        if args.range:
            try:
                first, last = parse_range(args.range, len(session))
            except InvalidEdit as exc:
                raise CliError(str(exc)) from None
        if out_path is None:
            out = Out()
            export.write(session, fmt, out, first, last)
            out.flush()
            return 0
        try:
            warnings = export.write_file(session, fmt, out_path, first, last)
        except ValueError as exc:
            raise CliError(str(exc), 1) from None
        except OSError as exc:
            raise CliError(f"{out_path}: {exc.strerror or exc}") from None
    finally:
        session.close()
    for w in warnings:
        status(f"warning: {out_path}: {w}")
    status(f"{args.file}: exported to {out_path}")
    return 0


def cmd_fork(args: argparse.Namespace) -> int:
    from sessionview.core import export, ops
    from sessionview.core.doc.linescan import SourceChanged
    from sessionview.core.errors import Refused

    for attempt in range(ops.ATTEMPTS):
        if attempt:
            ops.wait_quiet(args.file)
        session = open_file(args.file)
        try:
            if not 1 <= args.n <= len(session):
                raise CliError(f"#{args.n} is outside 1:{len(session)}")
            forked = export.fork(session, args.n, args.output)
        except SourceChanged:
            continue
        except FileExistsError:
            raise CliError(f"{args.output}: already exists; fork never overwrites a file, nothing was written", 1) from None
        except Refused as exc:
            raise CliError(str(exc), 1) from None
        except ValueError as exc:
            raise CliError(str(exc), 1) from None
        finally:
            session.close()
        for w in forked.warnings:
            status(f"warning: {forked.path}: {w}")
        status(f"{args.file}: records 1 to {args.n} forked into {forked.path}")
        out = Out()
        out.write(shown(forked.path) + "\n")
        out.flush()
        return 0
    raise CliError(f"{args.file}: another process is rewriting the file; it changed under each of {ops.ATTEMPTS} reads", 1)


# --------------------------------------------------------------------------------------------------
# the app


def cmd_tui(args: argparse.Namespace) -> int:
    path = args.path or "."
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file or directory")
    from sessionview.ui.launch import run

    return run(path, read_only=args.read_only)


def cmd_serve(args: argparse.Namespace) -> int:
    if not os.path.exists(args.path):
        raise CliError(f"{args.path}: no such file or directory")
    from sessionview.serve import serve

    return serve(
        args.path,
        host=args.host,
        port=args.port,
        public=args.public,
        allow_write=args.allow_write,
        max_sessions=args.max_sessions,
    )


def cmd_demo(args: argparse.Namespace) -> int:
    from sessionview.ui.demo import run_demo

    return run_demo()
