"""The command line: the argparse parser, one function per command (help texts live here)."""

from __future__ import annotations

import argparse
import importlib
from typing import TYPE_CHECKING, Any, Callable

from sessionview.cli.output import PROG

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

DESCRIPTION = """\
Look inside, follow and repair LLM agent sessions without losing a byte.

sessionview reads Brute JSONL, LittleGhost Filesystem store documents, Claude Code, Codex rollouts, pi
sessions, Gemini CLI chats, OpenAI chat and Anthropic message logs. Lines nobody edited are always written
back byte for byte.

Run it with no command (or a PATH) to open the terminal app on a directory of sessions or on one file.
"""

EPILOG = """\
commands:
  sessionview [PATH] [--read-only]   open the app on a directory (default: .) or one session file
  sessionview ADDRESS [--on-host]    the app on host:path or ssh://host/path, here over SFTP (or on the host)
  sessionview demo                   open the app on bundled examples while an agent writes to one
  sessionview show FILE [--json]     print the transcript for a person (or as JSON lines)
  sessionview check FILE...          report every problem with its line number (exit 1 if any)
  sessionview edit FILE N ...        replace message #N (--content, --content-file, --json or $EDITOR)
  sessionview delete FILE N[:M]      remove records N to M
  sessionview truncate FILE --keep N keep records 1 to N
  sessionview compact FILE N:M       replace records N to M with one summary message
  sessionview drop-result FILE N[:M] replace the content of the tool results in N to M by a marker
  sessionview history FILE           list the backups of FILE, newest first
  sessionview undo FILE              restore the newest backup of FILE
  sessionview prune [FILE...]        remove old backups beyond the retention policy
  sessionview serve [PATH]           serve the app to a browser on 127.0.0.1 with a token
  sessionview export FILE --to md|html [-o OUT] [N:M]   write a transcript as Markdown or HTML
  sessionview fork FILE N [-o NEW]   write a new session holding records 1 to N
  sessionview index [PATH] [--watch] build or update the full-text index of sessions
  sessionview search QUERY [PATH...] search every session (words, "phrases", prefix*, -word)
  sessionview hosts [--app]          every [hosts] host's sessions at once (config.toml)

Any FILE may be a remote address, ssh://[user@]host[:port]/path or host:path: reading goes over SFTP,
writing runs the host's own sessionview (read-only without it).

Run 'sessionview COMMAND --help' for the options of a command.

exit status: 0 success (or nothing to do), 1 problems found, write refused, or bytes another process wrote
were not carried into the new file (kept aside and named), 2 usage or I/O error. Status lines go to stderr.

examples:
  sessionview ~/agents/sessions          browse and live-tail every session under a directory
  sessionview show tmp/session.jsonl | less -R
  sessionview check tmp/*.jsonl && echo clean
  sessionview compact tmp/session.jsonl 2:40 --dry-run
"""


def _cmd(module: str, name: str) -> Callable[[argparse.Namespace], Any]:
    """The command ``name`` of ``sessionview.cli.<module>``: a module is imported when a parser that runs one
    of its commands is built (``build_parser(only=...)`` builds one)."""
    func: Callable[[argparse.Namespace], Any] = getattr(importlib.import_module(f"sessionview.cli.{module}"), name)
    return func


def _size_arg(text: str) -> int:
    from sessionview.core.sizes import parse_size

    try:
        return parse_size(text, "SIZE")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def _writer(sub: Subparsers, name: str, help: str, description: str, epilog: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help, description=description, epilog=epilog, formatter_class=_formatter)
    p.add_argument("file", metavar="FILE", help="the session file")
    return p


EXPECT_EPILOG = r"""

--expect's SHA-256: a record's is over its bytes without the line ending (\n or \r\n; line 1 without
a UTF-8 BOM); a range's is the SHA-256 of the records' raw 32-byte SHA-256 digests, one after another.
For lines of s.jsonl (Python 3.9 or later):
  record 4:     sed -n 4p s.jsonl | python3 -c 'import sys,hashlib; print(hashlib.sha256(sys.stdin.buffer.read().removesuffix(b"\n").removesuffix(b"\r")).hexdigest())'
  records 2:4:  sed -n 2,4p s.jsonl | python3 -c 'import sys,hashlib; print(hashlib.sha256(b"".join(hashlib.sha256(l.removesuffix(b"\n").removesuffix(b"\r")).digest() for l in sys.stdin.buffer)).hexdigest())'"""


def _write_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", action="store_true", help="print a unified diff of the file and write nothing")
    p.add_argument("--force", action="store_true",
                   help="override integrity refusals and the check for another writer")
    p.add_argument("--expect", action="append", metavar="N[:M]:SHA256",
                   help="refuse (conflict, nothing written) unless record N's bytes have this SHA-256 (N:M: records N to "
                        "M, the SHA-256 of their SHA-256s in turn; see below), and unless the change touches only records "
                        "named so: what a front end showed (the app sends it with a remote write); repeatable")
    p.epilog = (p.epilog or "") + EXPECT_EPILOG


SAFETY = ("\n\nEvery write is atomic, keeps a byte-exact backup (see 'sessionview history'), and is refused\n"
          "with 'conflict' if the file changed on disk other than by appends since it was read.")


def _add_show(sub: Subparsers) -> None:
    p = sub.add_parser("show", help="print a session's transcript", formatter_class=_formatter,
                       description="Print the transcript of a session for a person to read.\n\n"
                       "One block per message, headed '#N role': N is the record's line number (for a\n"
                       "LittleGhost document, the message index). Tool calls show their id, name and\n"
                       "pretty-printed arguments; results show the id of the call they answer. Control\n"
                       "characters are shown escaped, never sent to the terminal. Records print as the\n"
                       "file is read; the count comes at the end. A subagent's lines are indented and\n"
                       "labelled [subagent], lines the harness put there [injected].",
                       epilog="examples:\n  sessionview show tmp/session.jsonl\n  sessionview show s.jsonl 120:140\n"
                       "  sessionview show --last 5 s.jsonl\n  sessionview show --json s.jsonl | jq .role")
    p.add_argument("file", help="the session file")
    p.add_argument("range", nargs="?", metavar="N:M", help="only records #N to #M (N: from #N on, :M up to #M, N alone)")
    p.add_argument("--last", type=int, metavar="N", help="only the last N records")
    p.add_argument("--json", action="store_true",
                   help="print one normalised JSON object per message instead (streamed blocks merged, as in the app)")
    p.add_argument("--width", type=int, default=0, help=argparse.SUPPRESS)
    p.set_defaults(func=_cmd("commands", "cmd_show"))


def _add_check(sub: Subparsers) -> None:
    p = sub.add_parser("check", help="report every problem in session files", formatter_class=_formatter,
                       description="Report every problem with its line number: invalid JSON, not UTF-8, oversized,\n"
                       "too deep, duplicate keys, partial last lines, schema warnings, dangling tool\n"
                       "calls, orphan tool results, duplicate call ids and digest mismatches; a binary file,\n"
                       "and a file with no messages of a known format. Past 20 problems of one kind the rest\n"
                       "are counted (--all lists them).\n\n"
                       "exit status: 0 clean, 1 problems found, 2 a file cannot be read.",
                       epilog="example:\n  sessionview check sessions/*.jsonl || echo 'needs a look'")
    p.add_argument("files", nargs="+", metavar="FILE", help="session files")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing for clean files")
    p.add_argument("--all", action="store_true", help="list every problem (by default a kind is listed 20 times, then counted)")
    p.set_defaults(func=_cmd("commands", "cmd_check"))


def _add_demo(sub: Subparsers) -> None:
    p = sub.add_parser("demo", help="open the app on bundled examples, with a live agent",
                       description="Copy bundled example sessions (one per format) to a temporary directory and open\n"
                       "the app on them while a simulated agent writes to one of them.",
                       formatter_class=_formatter)
    p.set_defaults(func=_cmd("commands", "cmd_demo"))


def _add_edit(sub: Subparsers) -> None:
    p = _writer(sub, "edit", "replace one message", "Replace the message in record N. Untouched records keep their bytes;\n"
               "the new line is what the format's writer (for Brute: Message#to_h) would produce.\n"
               "With no flag, $VISUAL or $EDITOR opens the message as pretty JSON." + SAFETY,
               "examples:\n  sessionview edit s.jsonl 4 --content 'Use the staging database.'\n"
               "  sessionview edit s.jsonl 7 --json '{\"role\":\"user\",\"content\":\"hi\"}'\n"
               "  EDITOR=vim sessionview edit s.jsonl 7")
    p.add_argument("n", type=int, metavar="N", help="the record number, as 'show' prints it (#N)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--content", metavar="TEXT", help="set the message's text")
    g.add_argument("--content-file", metavar="F", help="set the message's text from a file (- for stdin)")
    g.add_argument("--json", metavar="JSON", help="replace the whole message with this JSON object")
    _write_flags(p)
    p.set_defaults(func=_cmd("writing", "cmd_edit"))


def _add_delete(sub: Subparsers) -> None:
    p = _writer(sub, "delete", "remove records N to M", "Remove records N to M (inclusive). Refused if it would split a tool\n"
               "call from its result; the message names the ids and the nearest valid range." + SAFETY,
               "examples:\n  sessionview delete s.jsonl 12\n  sessionview delete s.jsonl 12:20 --dry-run")
    p.add_argument("range", metavar="N[:M]", help="a record number or an inclusive range")
    _write_flags(p)
    p.set_defaults(func=_cmd("writing", "cmd_delete"))


def _add_truncate(sub: Subparsers) -> None:
    p = _writer(sub, "truncate", "keep records 1 to N", "Keep records 1 to N and drop the rest." + SAFETY,
               "example:\n  sessionview truncate s.jsonl --keep 40")
    p.add_argument("--keep", type=int, required=True, metavar="N", help="how many records to keep")
    _write_flags(p)
    p.set_defaults(func=_cmd("writing", "cmd_truncate"))


def _add_compact(sub: Subparsers) -> None:
    p = _writer(sub, "compact", "replace records N to M with one summary", "Replace records N to M with one summary message, written the way the\n"
               "format expects: for Brute, {\"role\":\"user\",\"content\":\"[compacted:summary] ...\"} where\n"
               "the first replaced message was.\n\n"
               "The summary is --summary TEXT, --summary-file F, the stdout of --summarizer CMD (run with\n"
               "sh -c, given the selected records as JSONL on stdin), or by default a built-in digest:\n"
               "who asked what, which tools ran, the last conclusion, and what it replaces." + SAFETY,
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
    _write_flags(p)
    p.set_defaults(func=_cmd("writing", "cmd_compact"))


def _add_drop_result(sub: Subparsers) -> None:
    p = _writer(sub, "drop-result", "drop the content of tool results", "Replace the content of every tool result in records N to M by Brute's marker,\n"
               "'[compacted:tool_results] Result dropped to free context. Call <tool> again if you still need it.'\n"
               "Each result keeps its tool call id, so every call keeps its answer; records without a result keep\n"
               "their bytes. Refused, with the reason, where the format keeps results where a marker cannot stand." + SAFETY,
               "examples:\n  sessionview drop-result s.jsonl 12\n  sessionview drop-result s.jsonl 2:40 --dry-run")
    p.add_argument("range", metavar="N[:M]", help="a record number or an inclusive range")
    _write_flags(p)
    p.set_defaults(func=_cmd("writing", "cmd_drop_result"))


def _add_history(sub: Subparsers) -> None:
    p = _writer(sub, "history", "list the backups of a file", "List the backups of FILE, newest first, and the retention policy.\n"
               "Backups live under $XDG_STATE_HOME/sessionview/backups (default ~/.local/state/...),\n"
               "or under $SESSIONVIEW_STATE_DIR when it is set; never next to the session files.",
               "example:\n  sessionview history s.jsonl")
    p.set_defaults(func=_cmd("writing", "cmd_history"))


def _add_undo(sub: Subparsers) -> None:
    p = _writer(sub, "undo", "restore the newest backup", "Restore the newest backup of FILE, with the same conflict checks as\n"
               "any write. The restore keeps a backup too, so a second undo undoes the first.",
               "example:\n  sessionview undo s.jsonl")
    p.add_argument("--dry-run", action="store_true", help="print a unified diff of the file and write nothing")
    p.add_argument("--force", action="store_true", help="override the check for another writer")
    p.set_defaults(func=_cmd("writing", "cmd_undo"))


def _add_prune(sub: Subparsers) -> None:
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
    p.set_defaults(func=_cmd("writing", "cmd_prune"))


def _add_serve(sub: Subparsers) -> None:
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
    p.set_defaults(func=_cmd("commands", "cmd_serve"))


class _Intermixed(argparse.ArgumentParser):
    """A command parser whose positionals may come after its options (argparse's intermixed parsing)."""

    _mixing = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def,override]
        if self._mixing:
            return super().parse_known_args(args, namespace)
        self._mixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._mixing = False


def _add_export(sub: Subparsers) -> None:
    p = sub.add_parser("export", help="write a session as Markdown or one HTML page", formatter_class=_formatter,
                       description="Write a session for people to read: Markdown, or one self-contained HTML page\n"
                       "(inline CSS, no script, nothing loaded from the network, links as text). Tool calls\n"
                       "and results are fenced blocks; timestamps, compaction markers and broken records are\n"
                       "shown. Everything from the session is escaped. Any size streams in bounded memory.",
                       epilog="examples:\n  sessionview export s.jsonl --to md > s.md\n"
                       "  sessionview export s.jsonl -o s.html 10:40")
    p.add_argument("file", metavar="FILE", help="the session file")
    p.add_argument("range", nargs="?", metavar="N:M", help="only records N to M (N, N:M or N:)")
    p.__class__ = _Intermixed  # "export FILE -o OUT N:M": the range may come after the options
    p.add_argument("--to", choices=("md", "html"), help="the format (default: from -o's extension)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write to OUT (atomically; replaced if it exists) instead of stdout")
    p.set_defaults(func=_cmd("commands", "cmd_export"))


def _add_fork(sub: Subparsers) -> None:
    p = sub.add_parser("fork", help="start a new session from records 1 to N", formatter_class=_formatter,
                       description="Write a new session file holding records 1 to N of FILE, byte for byte (BOM,\n"
                       "CRLF and broken lines kept), next to it as NAME.fork-N.EXT (NAME.fork-N-2.EXT if\n"
                       "taken), with FILE's mode. FILE is not changed. Nothing is ever overwritten: an\n"
                       "existing -o NEW is refused. A LittleGhost store document forks into a new document\n"
                       "with its first N messages and a recomputed digest. The new path is printed.",
                       epilog="examples:\n  sessionview fork s.jsonl 40\n  sessionview fork s.jsonl 40 -o retry.jsonl")
    p.add_argument("file", metavar="FILE", help="the session file")
    p.add_argument("n", type=int, metavar="N", help="the last record to keep, as 'show' prints it (#N)")
    p.add_argument("-o", "--output", metavar="NEW", help="the new file's name (refused if it exists)")
    p.set_defaults(func=_cmd("commands", "cmd_fork"))


def _add_hosts(sub: Subparsers) -> None:
    p = sub.add_parser("hosts", help="list the sessions of every host in config.toml's [hosts]", formatter_class=_formatter,
                       description="List the session files of every host named in the [hosts] table of config.toml\n"
                       "(name = \"ssh://[user@]host[:port]/path\" or \"host:path\"), over SSH, all hosts at once: host,\n"
                       "last change, size and path, newest first. A host that is down, slow (--timeout) or\n"
                       "whose key is not in known_hosts is named on stderr as unreachable; the others still\n"
                       "show. Exit status: 0, or 1 when a host was unreachable. --app shows the same list in the\n"
                       "app, rows arriving as each host answers.",
                       epilog="examples:\n  sessionview hosts\n  sessionview hosts web1 gpu --timeout 5\n  sessionview hosts --app")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these hosts (default: all)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="give up on a host after this long (default 10)")
    p.add_argument("--app", action="store_true", help="show them in the app's session list (a host column; Enter opens one here, over SFTP)")
    p.add_argument("--read-only", action="store_true", help="with --app: open sessions read-only")
    p.set_defaults(func=_cmd_hosts)


def _cmd_hosts(args: argparse.Namespace) -> int:
    from sessionview.cli.remote import cmd_hosts

    return cmd_hosts(args)


def _add_index_search(sub: Subparsers) -> None:
    from sessionview.cli import searching

    searching.add_commands(sub, _formatter)


#: every command, in the order of the help, and what adds its parser (index and search are added together)
ADDERS: dict[str, Callable[[Subparsers], None]] = {
    "show": _add_show, "check": _add_check, "demo": _add_demo, "edit": _add_edit, "delete": _add_delete,
    "truncate": _add_truncate, "compact": _add_compact, "drop-result": _add_drop_result, "history": _add_history,
    "undo": _add_undo, "prune": _add_prune, "serve": _add_serve, "export": _add_export, "fork": _add_fork,
    "hosts": _add_hosts, "index": _add_index_search, "search": _add_index_search,
}
COMMANDS = tuple(ADDERS)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only`` (one of :data:`COMMANDS`), a parser that knows only that command,
    for a fast start: it parses that command's arguments and prints its help and errors exactly as the whole
    parser does."""
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, formatter_class=_formatter)
    from sessionview import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    adders = [ADDERS[only]] if only is not None else list(dict.fromkeys(ADDERS.values()))
    for add in adders:
        add(sub)
    return parser


def tui_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, formatter_class=_formatter)
    p.add_argument("path", nargs="?", help="a directory of sessions (default: .) or one session file")
    p.add_argument("--read-only", action="store_true", help="hide every action that writes")
    p.add_argument("--on-host", action="store_true",
                   help="with a remote address: run the app on the host, in this terminal (ssh -t; it needs sessionview "
                        "there, and edits there); by default the app runs here and reads over SFTP")
    p.set_defaults(func=_cmd("commands", "cmd_tui"))
    return p
