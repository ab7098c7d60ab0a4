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
    from sessionview.core import render

    session = _open(args.file)
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
            session = _open(path)
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
# helpers


def _open(path: str) -> Any:
    from sessionview.core.document import NotRegularFile
    from sessionview.core.session import open_session

    try:
        return open_session(path)
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
    from sessionview.ui.app import run

    return run(path, read_only=args.read_only)


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

    for register in _EXTRA_COMMANDS:
        register(sub)
    return parser


_EXTRA_COMMANDS: list[Callable[[Any], None]] = []


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


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
