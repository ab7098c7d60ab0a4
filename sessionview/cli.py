"""The ``sessionview`` command: the TUI by default, and a headless CLI for scripts.

Heavy modules (textual, the UI) are imported only by the commands that need them, so ``--help``,
``show`` and ``check`` start fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Sequence

PROG = "sessionview"

DESCRIPTION = """\
Look inside, follow and repair LLM agent sessions without losing a byte.

sessionview reads Brute JSONL, LittleGhost Filesystem store documents, Claude Code, Codex rollouts,
OpenAI chat and Anthropic message logs. Lines nobody edited are always written back byte for byte.

Run it with no command (or a PATH) to open the terminal app on a directory of sessions or on one file.
"""

EPILOG = """\
commands:
  sessionview [PATH] [--read-only]   open the app on a directory (default: .) or one session file
  sessionview demo                   open the app on bundled examples while an agent writes to one
  sessionview show FILE [--json]     print the transcript for a person (or as JSON lines)
  sessionview check FILE...          report every problem with its line number (exit 1 if any)
  sessionview edit FILE N ...        replace message #N (--content, --content-file, --json or $EDITOR)
  sessionview delete FILE N[:M]      remove records N to M
  sessionview truncate FILE --keep N keep records 1 to N
  sessionview compact FILE N:M       replace records N to M with one summary message
  sessionview history FILE           list the backups of FILE, newest first
  sessionview undo FILE              restore the newest backup of FILE
  sessionview serve [PATH]           serve the app to a browser on 127.0.0.1 with a token

Run 'sessionview COMMAND --help' for the options of a command.

exit status: 0 success (or nothing to do), 1 problems found or write refused, 2 usage or I/O error.

examples:
  sessionview ~/agents/sessions          browse and live-tail every session under a directory
  sessionview show tmp/session.jsonl | less -R
  sessionview check tmp/*.jsonl && echo clean
  sessionview compact tmp/session.jsonl 2:40 --dry-run
"""


class CliError(Exception):
    """A one-line error for stderr, with an exit code."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def _err(message: str) -> None:
    from sessionview.core.text import escape_control

    sys.stderr.write(f"{PROG}: {escape_control(message, one_line=True)}\n")
    sys.stderr.flush()


class _Out:
    """UTF-8 output to stdout's buffer that survives a closed pipe."""

    def __init__(self) -> None:
        self.buf = getattr(sys.stdout, "buffer", None)

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "backslashreplace")
        if self.buf is not None:
            self.buf.write(data)
        else:  # pragma: no cover - stdout replaced by a text-only stream
            sys.stdout.write(data.decode("utf-8"))

    def flush(self) -> None:
        (self.buf or sys.stdout).flush()


# --------------------------------------------------------------------------------------------------
# show


def cmd_show(args: argparse.Namespace) -> int:
    from sessionview.core.view import render

    session = _open(args.file, digest=False)  # read-only: no SHA-256 while indexing
    out = _Out()
    try:
        if args.json:
            for view in session.views():
                out.write(render.view_json(view) + "\n")
        else:
            pairing = session.pairing()
            out.write(render.header(session) + "\n")
            for view in session.messages():
                out.write("\n" + render.view_text(view, pairing, width=args.width) + "\n")
        out.flush()
    finally:
        session.close()
    return 0


# --------------------------------------------------------------------------------------------------
# check


def cmd_check(args: argparse.Namespace) -> int:
    from sessionview.core.text import escape_control

    out = _Out()
    worst = 0
    for path in args.files:
        try:
            session = _open(path, digest=False)  # read-only: no SHA-256 while indexing
        except CliError as exc:
            _err(str(exc))
            worst = max(worst, exc.code)
            continue
        try:
            problems = session.check()
        finally:
            session.close()
        name = escape_control(path, one_line=True)
        for p in problems:
            where = f"{name}:{p.number}" if p.number is not None else name
            ids = f" [{', '.join(escape_control(i, one_line=True) for i in p.ids)}]" if p.ids else ""
            out.write(f"{where}: {p.kind}{ids}: {escape_control(p.message, one_line=True)}\n")
        if problems:
            out.write(f"{name}: {len(problems)} problem{'s' if len(problems) != 1 else ''} ({session.format_title})\n")
            worst = max(worst, 1)
        elif not args.quiet:
            out.write(f"{name}: ok ({session.format_title}, {len(session)} records)\n")
    out.flush()
    return worst


# --------------------------------------------------------------------------------------------------
# writing commands: edit, delete, truncate, compact, undo, history


def _write(args: argparse.Namespace, session: Any, change: Any) -> int:
    from sessionview.core.edit import writeback
    from sessionview.core.store.save import default_root

    out = _Out()
    if args.dry_run:
        out.write(writeback.diff(session, change, args.file))
        out.flush()
        return 0
    if not change.lines and change.last < change.first:
        out.write(f"{args.file}: nothing to write ({change.description})\n")
        return 0
    outcome = writeback.commit(session, change, root=default_root(args.file), force=args.force)
    if outcome.changed:
        extra = ""
        appended = getattr(outcome.result, "rebased_bytes", 0)
        if appended:
            extra = f"; rebased onto {appended} bytes appended since load"
        out.write(f"{args.file}: {outcome.description}: written (backup kept; 'sessionview undo' restores it){extra}\n")
    else:
        out.write(f"{args.file}: {outcome.description}: nothing to write\n")
    out.flush()
    return 0


def _refusal(exc: Exception) -> CliError:
    return CliError(str(exc), getattr(exc, "exit_code", 1))


def _run_write(args: argparse.Namespace, plan: Callable[[Any], Any]) -> int:
    from sessionview.core.edit.plan import InvalidEdit, Refused
    from sessionview.core.errors import SaveError
    from sessionview.core.edit.summary import SummarizerFailed

    session = _open(args.file)
    try:
        if session.read_only_reason:
            raise CliError(f"{args.file}: read-only: {session.read_only_reason}", 1)
        try:
            change = plan(session)
            return _write(args, session, change)
        except Refused as exc:
            raise CliError(str(exc), 1) from None
        except InvalidEdit as exc:
            raise CliError(str(exc), 2) from None
        except SummarizerFailed as exc:
            raise CliError(f"compaction refused: {exc}; nothing was written", 1) from None
        except SaveError as exc:
            raise _refusal(exc) from None
        except ValueError as exc:  # e.g. a value Ruby's JSON.generate cannot write exactly
            raise CliError(str(exc), 2) from None
    finally:
        session.close()


def _edit_text_in_editor(initial: str, suffix: str = ".json") -> str:
    import shlex
    import subprocess
    import tempfile

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        raise CliError("no editor: set $VISUAL or $EDITOR, or pass --content, --content-file or --json")
    fd, tmp = tempfile.mkstemp(prefix="sessionview-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(initial)
        status = subprocess.call(f"{editor} {shlex.quote(tmp)}", shell=True)
        if status != 0:
            raise CliError(f"the editor exited with status {status}; nothing was written", 1)
        with open(tmp, encoding="utf-8", errors="surrogatepass") as f:
            return f.read()
    finally:
        os.unlink(tmp)


def cmd_edit(args: argparse.Namespace) -> int:
    from sessionview.core.edit import plan as edits

    def plan(session: Any) -> Any:
        if args.content is not None:
            return edits.plan_edit(session, args.n, content=args.content, force=args.force)
        if args.content_file is not None:
            text = sys.stdin.read() if args.content_file == "-" else _read_text(args.content_file)
            return edits.plan_edit(session, args.n, content=text, force=args.force)
        if args.json is not None:
            return edits.plan_edit(session, args.n, json_text=args.json, force=args.force)
        if not 1 <= args.n <= len(session):
            raise edits.InvalidEdit(f"#{args.n} is outside 1:{len(session)}")
        initial = edits.pretty_record(session, args.n)
        edited = _edit_text_in_editor(initial)
        if edited.strip() == initial.strip():
            return edits.Change(f"edit #{args.n} (no change)", args.n + 1, args.n, ())
        return edits.plan_edit(session, args.n, json_text=edited, force=args.force)

    return _run_write(args, plan)


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise CliError(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CliError(f"{path}: not UTF-8") from None


def cmd_delete(args: argparse.Namespace) -> int:
    from sessionview.core.edit import plan as edits

    def plan(session: Any) -> Any:
        first, last = edits.parse_range(args.range, len(session))
        return edits.plan_delete(session, first, last, force=args.force)

    return _run_write(args, plan)


def cmd_truncate(args: argparse.Namespace) -> int:
    from sessionview.core.edit import plan as edits

    return _run_write(args, lambda session: edits.plan_truncate(session, args.keep, force=args.force))


def cmd_compact(args: argparse.Namespace) -> int:
    from sessionview.core.edit import plan as edits, summary

    def plan(session: Any) -> Any:
        first, last = edits.parse_range(args.range, len(session))
        if args.summary is not None:
            text = args.summary
        elif args.summary_file is not None:
            text = sys.stdin.read() if args.summary_file == "-" else _read_text(args.summary_file)
        elif args.summarizer is not None:
            records = [session.doc.record(n).raw for n in range(first, last + 1)]
            text = summary.run_summarizer(args.summarizer, records, timeout=args.timeout).text
        else:
            views = list(session.views(first, last))
            size = sum(session.doc.record_size(n) for n in range(first, last + 1))
            text = summary.digest(views, size)
        return edits.plan_compact(session, first, last, text, force=args.force)

    return _run_write(args, plan)


def cmd_history(args: argparse.Namespace) -> int:
    from sessionview.core.store import backups
    from sessionview.core.text import escape_control

    out = _Out()
    found = backups.list_backups(args.file)
    if not found:
        out.write(f"{escape_control(args.file, one_line=True)}: no backups\n")
        return 0
    for i, b in enumerate(found, 1):
        when = b.created.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
        out.write(f"{i:>3}  {when}  {b.size:>12,} bytes  {escape_control(str(b.path), one_line=True)}\n")
    out.flush()
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    from sessionview.core.store import backups
    from sessionview.core.edit import writeback
    from sessionview.core.store.save import default_root
    from sessionview.core.errors import SaveError

    found = backups.list_backups(args.file)
    if not found:
        raise CliError(f"{args.file}: no backup to restore", 1)
    if args.dry_run:
        with open(found[0].path, "rb") as f:
            old = f.read()
        with open(args.file, "rb") as f:
            current = f.read()
        _Out().write(writeback.bytes_diff(current, old, args.file) or f"{args.file}: already matches the newest backup\n")
        return 0
    try:
        result = backups.restore(args.file, root=default_root(args.file), force=args.force)
    except SaveError as exc:
        raise _refusal(exc) from None
    changed = getattr(result, "changed", True)
    _Out().write(f"{args.file}: {'restored the newest backup' if changed else 'already matches the newest backup'}\n")
    return 0


# --------------------------------------------------------------------------------------------------
# helpers


def _open(path: str, digest: bool = True) -> Any:
    from sessionview.core.doc.document import NotRegularFile
    from sessionview.core.session import open_session

    try:
        return open_session(path, digest=digest)
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


# --------------------------------------------------------------------------------------------------
# parser

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, formatter_class=_formatter)
    from sessionview import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("show", help="print a session's transcript", formatter_class=_formatter,
                       description="Print the transcript of a session for a person to read.\n\n"
                       "One block per message, headed '#N role': N is the record's line number (for a\n"
                       "LittleGhost document, the message index). Tool calls show their id, name and\n"
                       "pretty-printed arguments; results show the id of the call they answer. Control\n"
                       "characters are shown escaped, never sent to the terminal.",
                       epilog="examples:\n  sessionview show tmp/session.jsonl\n  sessionview show --json s.jsonl | jq .role")
    p.add_argument("file", help="the session file")
    p.add_argument("--json", action="store_true", help="print one normalised JSON object per record instead")
    p.add_argument("--width", type=int, default=0, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("check", help="report every problem in session files", formatter_class=_formatter,
                       description="Report every problem with its line number: invalid JSON, not UTF-8, oversized,\n"
                       "too deep, duplicate keys, partial last lines, schema warnings, dangling tool\n"
                       "calls, orphan tool results, duplicate call ids and digest mismatches.\n\n"
                       "exit status: 0 clean, 1 problems found, 2 a file cannot be read.",
                       epilog="example:\n  sessionview check sessions/*.jsonl || echo 'needs a look'")
    p.add_argument("files", nargs="+", metavar="FILE", help="session files")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing for clean files")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("demo", help="open the app on bundled examples, with a live agent",
                       description="Copy bundled example sessions (one per format) to a temporary directory and open\n"
                       "the app on them while a simulated agent writes to one of them.",
                       formatter_class=_formatter)
    p.set_defaults(func=cmd_demo)

    def writer(name: str, help: str, description: str, epilog: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=description, epilog=epilog, formatter_class=_formatter)
        p.add_argument("file", metavar="FILE", help="the session file")
        return p

    def write_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("--dry-run", action="store_true", help="print a unified diff of the file and write nothing")
        p.add_argument("--force", action="store_true",
                       help="override integrity refusals and the check for another writer")

    safety = ("\n\nEvery write is atomic, keeps a byte-exact backup (see 'sessionview history'), and is refused\n"
              "with 'conflict' if the file changed on disk other than by appends since it was read.")
    p = writer("edit", "replace one message", "Replace the message in record N. Untouched records keep their bytes;\n"
               "the new line is what the format's writer (for Brute: Message#to_h) would produce.\n"
               "With no flag, $VISUAL or $EDITOR opens the message as pretty JSON." + safety,
               "examples:\n  sessionview edit s.jsonl 4 --content 'Use the staging database.'\n"
               "  sessionview edit s.jsonl 7 --json '{\"role\":\"user\",\"content\":\"hi\"}'\n"
               "  EDITOR=vim sessionview edit s.jsonl 7")
    p.add_argument("n", type=int, metavar="N", help="the record number, as 'show' prints it (#N)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--content", metavar="TEXT", help="set the message's text")
    g.add_argument("--content-file", metavar="F", help="set the message's text from a file (- for stdin)")
    g.add_argument("--json", metavar="JSON", help="replace the whole message with this JSON object")
    write_flags(p)
    p.set_defaults(func=cmd_edit)

    p = writer("delete", "remove records N to M", "Remove records N to M (inclusive). Refused if it would split a tool\n"
               "call from its result; the message names the ids and the nearest valid range." + safety,
               "examples:\n  sessionview delete s.jsonl 12\n  sessionview delete s.jsonl 12:20 --dry-run")
    p.add_argument("range", metavar="N[:M]", help="a record number or an inclusive range")
    write_flags(p)
    p.set_defaults(func=cmd_delete)

    p = writer("truncate", "keep records 1 to N", "Keep records 1 to N and drop the rest." + safety,
               "example:\n  sessionview truncate s.jsonl --keep 40")
    p.add_argument("--keep", type=int, required=True, metavar="N", help="how many records to keep")
    write_flags(p)
    p.set_defaults(func=cmd_truncate)

    p = writer("compact", "replace records N to M with one summary", "Replace records N to M with one summary message, written the way the\n"
               "format expects: for Brute, {\"role\":\"user\",\"content\":\"[compacted:summary] ...\"} where\n"
               "the first replaced message was.\n\n"
               "The summary is --summary TEXT, --summary-file F, the stdout of --summarizer CMD (run with\n"
               "sh -c, given the selected records as JSONL on stdin), or by default a built-in digest:\n"
               "who asked what, which tools ran, the last conclusion, and what it replaces." + safety,
               "examples:\n  sessionview compact s.jsonl 2:40 --dry-run\n"
               "  sessionview compact s.jsonl 2:40 --summary 'Set up the repo; tests pass.'\n"
               "  sessionview compact s.jsonl 2:40 --summarizer 'llm -s \"Summarise this agent session\"'")
    p.add_argument("range", metavar="N:M", help="the inclusive range of records to replace")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--summary", metavar="TEXT", help="the summary text")
    g.add_argument("--summary-file", metavar="F", help="read the summary from a file (- for stdin)")
    g.add_argument("--summarizer", metavar="CMD", help="a shell command that prints the summary")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="stop the summarizer after this long (default 120); nothing is written")
    write_flags(p)
    p.set_defaults(func=cmd_compact)

    p = writer("history", "list the backups of a file", "List the backups of FILE, newest first.\n"
               "Backups live under $XDG_STATE_HOME/sessionview/backups (default ~/.local/state/...),\n"
               "or under $SESSIONVIEW_STATE_DIR when it is set; never next to the session files.",
               "example:\n  sessionview history s.jsonl")
    p.set_defaults(func=cmd_history)

    p = writer("undo", "restore the newest backup", "Restore the newest backup of FILE, with the same conflict checks as\n"
               "any write. The restore keeps a backup too, so a second undo undoes the first.",
               "example:\n  sessionview undo s.jsonl")
    p.add_argument("--dry-run", action="store_true", help="print a unified diff of the file and write nothing")
    p.add_argument("--force", action="store_true", help="override the check for another writer")
    p.set_defaults(func=cmd_undo)

    p = sub.add_parser("serve", help="serve the app to a web browser", formatter_class=_formatter,
                       description="Serve the app to a web browser, safely by default:\n"
                       "- it binds 127.0.0.1 unless --host names another address (which needs --public);\n"
                       "- every run makes a random token, and prints the URL with it: a request without\n"
                       "  the token gets 403 and starts nothing;\n"
                       "- the websocket's Origin and the Host header must match the served address, so\n"
                       "  another web page cannot drive the app (cross-site websockets, DNS rebinding);\n"
                       "- at most --max-sessions app processes run at once;\n"
                       "- it is read-only unless --allow-write.",
                       epilog="examples:\n  sessionview serve ~/agents/sessions\n"
                       "  sessionview serve . --port 8765 --allow-write\n\n"
                       "from another machine, through an SSH tunnel (the server stays on loopback; use the\n"
                       "same port on both ends, because the server checks the Host header):\n"
                       "  ssh -t -L 8765:127.0.0.1:8765 me@agent-box 'sessionview serve ~/sessions --port 8765'\n"
                       "  then open the printed http://127.0.0.1:8765/?token=... URL locally")
    p.add_argument("path", nargs="?", default=".", help="a directory of sessions (default: .) or one session file")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port to bind (default 8765; 0 picks a free one)")
    p.add_argument("--public", action="store_true", help="allow binding a non-loopback --host (prints a warning)")
    p.add_argument("--allow-write", action="store_true", help="let the served app edit sessions")
    p.add_argument("--max-sessions", type=int, default=4, metavar="K", help="app processes at once (default 4)")
    p.set_defaults(func=cmd_serve)
    return parser


def _tui_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, formatter_class=_formatter)
    p.add_argument("path", nargs="?", help="a directory of sessions (default: .) or one session file")
    p.add_argument("--read-only", action="store_true", help="hide every action that writes")
    p.set_defaults(func=cmd_tui)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    known = set(parser._subparsers._group_actions[0].choices) if parser._subparsers else set()  # type: ignore[union-attr]
    first = next((a for a in argv if not a.startswith("-") or a == "--"), None)
    try:
        if argv and (argv[0] in known or argv[0] in ("-h", "--help", "--version")):
            args = parser.parse_args(argv)
        elif first is None or first not in known:
            args = _tui_parser().parse_args(argv)
        else:
            args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except CliError as exc:
        _err(str(exc))
        return exc.code
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        _err(f"{getattr(exc, 'filename', '') or ''}{': ' if getattr(exc, 'filename', None) else ''}{exc.strerror or exc}")
        return 2
    except Exception as exc:  # one clear line, never a traceback (SESSIONVIEW_DEBUG=1 shows it)
        if os.environ.get("SESSIONVIEW_DEBUG"):
            raise
        _err(f"internal error: {type(exc).__name__}: {exc} (set SESSIONVIEW_DEBUG=1 for a traceback)")
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
