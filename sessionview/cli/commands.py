"""The commands: each parses nothing and decides nothing itself, but calls :mod:`sessionview.core.ops` (or
the read-only core) and prints what it returns. Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import argparse
import errno
import os
from typing import TYPE_CHECKING, Any

from sessionview.cli.output import CliError, Out, err, shown, status

if TYPE_CHECKING:
    from typing import Callable, TypeVar

    T = TypeVar("T")

    from sessionview.core.doc.model import Problem
    from sessionview.core.session_base import Session


# --------------------------------------------------------------------------------------------------
# reading


def open_file(path: str, digest: bool = True) -> "Session":
    """``open_session(path)``, its errors as one-line :class:`CliError`; a file rewritten while it was read
    raises ``SourceChanged`` (the caller reads it again)."""
    from sessionview.core.session import open_session

    return _opening(path, lambda: open_session(path, digest=digest))


def _opening(path: str, fn: "Callable[[], T]") -> "T":
    """``fn()``, which opens ``path``: its errors as one-line :class:`CliError` (``SourceChanged`` passes)."""
    from sessionview.core.doc.document import NotRegularFile
    from sessionview.core.doc.linescan import SourceChanged

    try:
        return fn()
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


# --------------------------------------------------------------------------------------------------
# show, check


#: files up to this size are paired first, so that a call shows where its result is (bigger ones stream)
SHOW_PAIR_FIRST = 16 * 1024 * 1024
SHOW_WRITE = 1 << 20  # characters of records joined into one write


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
    from sessionview.core.formats.claude_code import subagent_calls
    from sessionview.core.view import render

    opener = getattr(args, "open_session", None) or open_file  # cli.remote: a file on another host
    out = Out()
    stream = _show_stream(args) if opener is open_file else None
    if stream is not None:
        return _show_streamed(args, stream, out)
    session: Any = opener(args.file, digest=False)  # read-only: no hash
    try:
        first, last = show_range(args, len(session))
        views = iter_merged(session.views(first, last))
        if args.json:
            for view in views:
                out.write(render.view_json(view) + "\n")
            out.flush()
            return 0
        size = os.path.getsize(args.file) if os.path.isfile(args.file) else 0
        small = size <= SHOW_PAIR_FIRST
        pairing = session.pairing() if small else render.RunningPairing()
        calls = subagent_calls(session.views()) if session.format == "claude-code" and small else {}
        _show_head(args, session, out)
        shown = messages = held = 0
        running = isinstance(pairing, render.RunningPairing)
        if running and first > 1:
            pairing.start = first  # a result whose call came earlier says it was not looked for there
        parts: list[str] = []
        for view in views:
            if running:
                pairing.see(view)
            text = render.view_text(view, pairing, width=args.width, subagent_calls=calls)
            parts.append(text)
            held += len(text)
            shown += len(view.numbers)
            messages += 1
            if held > SHOW_WRITE or messages == 1:  # the first record at once, the rest in big writes
                out.write("\n" + "\n\n".join(parts) + "\n")
                if messages == 1:
                    out.flush()
                parts, held = [], 0
        if parts:
            out.write("\n" + "\n\n".join(parts) + "\n")
        _show_tail(out, len(session), first, last, messages, shown)
    finally:
        session.close()
    return 0


def _show_head(args: argparse.Namespace, session: Any, out: Out) -> None:
    from sessionview.core.formats.claude_code import agent_id_of, parent_of, subagent_files
    from sessionview.core.view import render

    out.write(render.header(session, count=False) + "\n")
    parent = parent_of(args.file)
    if parent is not None:
        out.write(f"subagent {escape(agent_id_of(args.file) or '')} of: {escape(parent)}\n")
    for sub in subagent_files(args.file):
        out.write(f"subagent file: {escape(sub)}\n")


def _show_tail(out: Out, count: int, first: int, last: int, messages: int, shown: int) -> None:
    from sessionview.core.text import plural

    total = plural(count, "record")
    where = total if first == 1 and last == count else f"#{first}–#{last} of {total}"
    out.write(f"\n{where}" + ("" if messages == shown else f" · {plural(messages, 'message')}") + "\n")
    out.flush()


def _show_streamed(args: argparse.Namespace, stream: Any, out: Out) -> int:
    """``show`` of a whole big file, printed as it is read (:class:`~sessionview.core.view.showstream.ShowStream`)."""
    import gc

    from sessionview.core.view.showstream import ShowStream

    # What the start made stays to the end: without this every older-generation collection while the records
    # are printed (orjson's dicts and lists count) walks it again, about 3% of the CPU.
    gc.freeze()
    printer = ShowStream(stream, json=args.json, width=args.width)
    try:
        if not args.json:
            _show_head(args, stream, out)
        for i, block in enumerate(printer.pieces()):
            if type(block) is bytes:
                out.write_bytes(block)
            else:
                _copy_span(out, *block)
            if i < 2 and not args.json:  # the first records at once
                out.flush()
        if not args.json:
            _show_tail(out, printer.count, 1, printer.count, printer.messages, printer.shown)
        out.flush()
    finally:
        printer.close()
        stream.close()
        gc.unfreeze()  # (the command runs in a longer-lived process too: tests, a script calling main())
    return 0


def _copy_span(out: Out, fd: int, size: int, offset: int) -> None:
    """``size`` bytes of ``fd`` from ``offset`` on to the output: by ``sendfile`` to stdout's descriptor (after
    what is buffered), else (a terminal, an output without one) read and written."""
    fileno = getattr(out.buf, "fileno", None)
    try:
        target = fileno() if fileno is not None else -1
    except (OSError, ValueError):  # io.UnsupportedOperation: a stream without a descriptor
        target = -1
    if target >= 0 and size:
        out.flush()
        while size:
            try:
                sent = os.sendfile(target, fd, offset, size)
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV, errno.EBADF):
                    raise  # a closed pipe, a full disk: as a write would
                break
            if not sent:
                break
            offset += sent
            size -= sent
    while size:
        data = os.pread(fd, min(size, 1 << 20), offset)
        if not data:
            raise OSError(f"the temporary file of the second half ended early at byte {offset}")
        out.write_bytes(data)
        offset += len(data)
        size -= len(data)


def _show_stream(args: argparse.Namespace) -> Any:
    """For ``show`` of a whole big JSONL file: the file to read once, printing as it is read (None: index it)."""
    if args.range or args.last is not None:
        return None
    try:
        if not os.path.isfile(args.file) or os.path.getsize(args.file) <= SHOW_PAIR_FIRST:
            return None
    except OSError:
        return None
    from sessionview.core.streamview import open_stream

    return _opening(args.file, lambda: open_stream(args.file))


def escape(text: str) -> str:
    from sessionview.core.text import escape_control

    return escape_control(text, one_line=True)


#: problems of one kind listed before ``check`` sums up the rest (``--all`` lists every one)
CHECK_GROUP = 20


def cmd_check(args: argparse.Namespace) -> int:
    from sessionview.core.text import escape_control, plural

    out = Out()
    worst = 0
    for path in args.files:
        try:
            session, problems = _checked(path, getattr(args, "open_session", None) or open_file)
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
                out.write(f"{name}: {kind}: {n - CHECK_GROUP} more like {'this' if n - CHECK_GROUP == 1 else 'these'} ({n} in all; --all lists every one)\n")
        if problems:
            out.write(f"{name}: {plural(len(problems), 'problem')} ({session.format_title})\n")
            worst = max(worst, 1)
        elif not args.quiet:
            out.write(f"{name}: ok ({session.format_title}, {len(session)} record{'' if len(session) == 1 else 's'})\n")
    out.flush()
    return worst


def _checked(path: str, opener: "Callable[..., Session]" = open_file) -> "tuple[Session, list[Problem]]":
    """Open and check ``path``; a file rewritten in place meanwhile is read again once it is quiet."""
    from sessionview.core import checkpar
    from sessionview.core.doc.linescan import SourceChanged
    from sessionview.core.session import JsonlSession
    from sessionview.core.store import stable  # not core.ops: check loads none of the editing and saving code

    wait_quiet = getattr(opener, "wait_quiet", stable.wait_quiet)  # cli.remote: over SFTP for a remote file
    for attempt in range(stable.ATTEMPTS):
        if attempt:
            wait_quiet(path)
        try:
            session = opener(path, digest=False)  # read-only: no hash while indexing
            try:
                return session, checkpar.check(session) if isinstance(session, JsonlSession) else session.check()
            finally:
                session.close()
        except SourceChanged:
            continue
    raise CliError(f"{path}: another process is rewriting the file; it changed under each of {stable.ATTEMPTS} reads", 1)


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
    session = (getattr(args, "open_session", None) or open_file)(args.file, digest=False)  # cli.remote: over SFTP
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
    if getattr(args, "on_host", False):  # a remote address was routed before: this is a local path
        raise CliError(f"--on-host needs a remote address (ssh://host/path or host:path), not the local path {shown(path)}")
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file or directory")
    from sessionview.ui.launch import run

    return run(path, read_only=args.read_only)


def cmd_serve(args: argparse.Namespace) -> int:
    if not os.path.exists(args.path):
        raise CliError(f"{args.path}: no such file or directory")
    from sessionview.serve import ServeOptions, serve

    return serve(ServeOptions(args.path, args.host, args.port, args.public, args.allow_write, args.max_sessions))


def cmd_demo(args: argparse.Namespace) -> int:
    from sessionview.ui.demo import run_demo

    return run_demo()
