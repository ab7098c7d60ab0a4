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
  sessionview prune [FILE...]        remove old backups beyond the retention policy
  sessionview serve [PATH]           serve the app to a browser on 127.0.0.1 with a token

Run 'sessionview COMMAND --help' for the options of a command.

exit status: 0 success (or nothing to do), 1 problems found, write refused, or bytes another process wrote
were not carried into the new file (kept aside and named), 2 usage or I/O error. Status lines go to stderr.

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
    """One escaped line on stderr. Never raises: what it reports has already happened."""
    from sessionview.core.text import escape_control

    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(f"{PROG}: {escape_control(message, one_line=True)}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def shown(path: str) -> str:
    """A path as it may be printed: control characters, C1 bytes and bidi overrides escaped."""
    from sessionview.core.text import escape_control

    return escape_control(os.fspath(path), one_line=True)


class _Out:
    """UTF-8 output to stdout's buffer that survives a closed pipe."""

    def __init__(self) -> None:
        self.buf = getattr(sys.stdout, "buffer", None)

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "backslashreplace")
        if self.buf is not None:
            self.buf.write(data)
        elif sys.stdout is not None:  # pragma: no cover - stdout replaced by a text-only stream
            sys.stdout.write(data.decode("utf-8"))

    def flush(self) -> None:
        stream = self.buf or sys.stdout
        if stream is not None:
            stream.flush()


def _sanitize_std_fds() -> None:
    """Give a closed fd 0, 1 or 2 to /dev/null (as git does), so no file we open lands on it."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                null = os.open(os.devnull, os.O_RDWR)
            except OSError:
                return
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115


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
            session, problems = _checked(path)
        except CliError as exc:
            _err(str(exc))
            worst = max(worst, exc.code)
            continue
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


def _checked(path: str) -> tuple[Any, list[Any]]:
    """Open and check ``path``; a file rewritten in place meanwhile is read again once it is quiet."""
    from sessionview.cli.write import ATTEMPTS, wait_quiet
    from sessionview.core.doc.linescan import SourceChanged

    for attempt in range(ATTEMPTS):
        if attempt:
            wait_quiet(path)
        try:
            session = _open(path, digest=False)  # read-only: no SHA-256 while indexing
            try:
                return session, session.check()
            finally:
                session.close()
        except SourceChanged:
            continue
    raise CliError(f"{path}: another process is rewriting the file; it changed under each of {ATTEMPTS} reads", 1)


# --------------------------------------------------------------------------------------------------
# writing commands: edit, delete, truncate, compact, undo, history


def _run_write(args: argparse.Namespace, plan: Callable[[Any], Any]) -> int:
    from sessionview.cli.write import run_write

    return run_write(args, plan)


def _read_text(path: str, what: str) -> str:
    from sessionview.cli.write import read_input

    return read_input(path, what)


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
            text = _read_text(args.content_file, "--content-file")
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
            text = _read_text(args.summary_file, "--summary-file")
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
    from sessionview.config import ConfigError
    from sessionview.core.store import backups, retention

    found = backups.list_backups(args.file) + backups.list_unmerged(args.file)
    if not found:
        _err(f"{shown(args.file)}: no backups")
    out = _Out()
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
    from sessionview.config import ConfigError
    from sessionview.core.store import retention, sizes
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
    out = _Out()
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
    _err(f"{verb} {sizes.format_size(report.freed)}; {policy.describe()}; {report.used:,} bytes used")
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    from sessionview.core.store import backups, restore
    from sessionview.core.edit import writeback
    from sessionview.core.store.paths import default_root
    from sessionview.core.errors import SaveError

    found = backups.list_backups(args.file)
    if not found:
        raise CliError(f"{args.file}: no backup to restore", 1)
    if args.dry_run:
        try:
            fd = backups.open_backup(found[0], args.file)
        except SaveError as exc:
            raise CliError(str(exc), getattr(exc, "exit_code", 1)) from None
        with os.fdopen(fd, "rb") as f:
            old = f.read()
        with open(args.file, "rb") as f:
            current = f.read()
        text = writeback.bytes_diff(current, old, args.file)
        if not text:
            _err(f"{args.file}: already matches the newest backup")
        else:
            out = _Out()
            out.write(text)
            out.flush()
        return 0
    from types import SimpleNamespace

    from sessionview.cli.write import ATTEMPTS, rewriting_refusal, report, wait_quiet
    from sessionview.core.errors import Conflict

    for attempt in range(ATTEMPTS):  # a file rewritten in place meanwhile: wait and try again
        if attempt:
            wait_quiet(args.file)
        try:
            result = restore.restore(args.file, root=default_root(args.file), force=args.force, backup=found[0])
            break
        except Conflict:
            continue
        except SaveError as exc:
            raise CliError(str(exc), getattr(exc, "exit_code", 1)) from None
    else:
        raise rewriting_refusal(args.file)
    if not getattr(result, "changed", True):
        _err(f"{args.file}: already matches the newest backup")
        return 0
    return report(args.file, SimpleNamespace(changed=True, description="restored the newest backup", result=result))


# --------------------------------------------------------------------------------------------------
# helpers


def _open(path: str, digest: bool = True) -> Any:
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


def _size_arg(text: str) -> int:
    from sessionview.core.store.sizes import parse_size

    try:
        return parse_size(text, "SIZE")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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

    p = writer("history", "list the backups of a file", "List the backups of FILE, newest first, and the retention policy.\n"
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

    p = sub.add_parser("prune", help="remove old backups beyond the retention policy", formatter_class=_formatter,
                       description="Remove backups beyond the retention policy, oldest first: keep the last\n"
                       "backups_keep (default 20) of each file and at most backups_max_bytes (default 2GiB)\n"
                       "of all files' backups together (both set in config.toml). The newest backup of a\n"
                       "file is never removed. This also runs by itself after every save.\n\n"
                       "With FILE, only the backups of those files are removed (the size limit still counts\n"
                       "every file's). Unmerged-bytes files (bytes another program wrote that a save could\n"
                       "not merge) and backups another user owns or group/others can write are never\n"
                       "removed: they are listed for you to look at.",
                       epilog="examples:\n  sessionview prune --dry-run\n  sessionview prune s.jsonl --keep 5\n"
                       "  sessionview prune --max-bytes 500MiB")
    p.add_argument("files", nargs="*", metavar="FILE", help="session files whose backups to prune (default: all)")
    p.add_argument("--keep", type=int, metavar="N", help="backups to keep per file (default: backups_keep)")
    p.add_argument("--max-bytes", type=_size_arg, metavar="SIZE",
                   help="all backups together, e.g. 2GiB or 500MiB (default: backups_max_bytes)")
    p.add_argument("--dry-run", action="store_true", help="list what would be removed and remove nothing")
    p.set_defaults(func=cmd_prune)

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


def _source_changed() -> type[BaseException]:
    from sessionview.core.doc.linescan import SourceChanged

    return SourceChanged


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _sanitize_std_fds()
    parser = build_parser()
    known = set(parser._subparsers._group_actions[0].choices) if parser._subparsers else set()  # type: ignore[union-attr]
    first = next((a for a in argv if not a.startswith("-") or a == "--"), None)
    args = None
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
    except _source_changed() as exc:  # show: the file was rewritten while it was printed
        _err(f"{getattr(exc, 'filename', None) or getattr(args, 'file', '')}: changed while it was read (another "
             f"process is rewriting it; {exc}); try again")
        return 1
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
