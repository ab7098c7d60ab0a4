"""The ``sessionview`` command: the TUI by default, and a headless CLI for scripts.

:mod:`.parser` builds the argparse parser (every help text), :mod:`.commands` holds the thin commands over
:mod:`sessionview.core.ops`, :mod:`.output` what they print. Heavy modules (textual, the UI) are imported
only by the commands that need them, and ``sessionview COMMAND ...`` builds only that command's parser, so
``--help``, ``show``, ``check`` and ``search`` start fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from sessionview.cli.output import CliError, err, sanitize_std_fds
from sessionview.cli.parser import COMMANDS, build_parser, tui_parser

__all__ = ["CliError", "build_parser", "main"]


def _source_changed() -> type[BaseException]:
    from sessionview.core.doc.linescan import SourceChanged

    return SourceChanged


def _named_paths(args: argparse.Namespace) -> list[str]:
    """The words a command takes as paths (the ones :func:`.remote.route` reads)."""
    out = [getattr(args, name, None) for name in ("path", "file")]
    for name in ("paths", "files"):
        out.extend(getattr(args, name, None) or [])
    return [p for p in out if isinstance(p, str)]


def _names_remote(args: argparse.Namespace) -> bool:
    """Whether a path the command names could be a remote address (``host:path``, ``ssh://``): only then is
    :mod:`.remote` imported (a record range such as ``12:20`` is no path, and costs no import)."""
    return any(":" in p for p in _named_paths(args))


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    return None if action is None else action.choices.get(name)


def parse_command(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse ``COMMAND ARGS``, positionals after options too: argparse leaves a command's list of paths
    (``search QUERY [PATH...]``, ``check FILE...``) unparsed after an option (``search q --limit 1 PATH``), so
    those are appended to the command's list; anything else is an error in the command's own usage."""
    args, extra = parser.parse_known_args(argv)
    if not extra:
        return args
    sub = _subparser(parser, getattr(args, "command", None) or "")
    if sub is None:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    lists = [a for a in sub._actions if not a.option_strings and a.nargs in ("*", "+")]
    if lists and all(a == "-" or not a.startswith("-") for a in extra):
        dest = lists[-1].dest
        setattr(args, dest, [*(getattr(args, dest, None) or []), *extra])
        return args
    sub.error(f"unrecognized arguments: {' '.join(extra)}")
    raise AssertionError("unreachable")  # pragma: no cover - error() exits


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    sanitize_std_fds()
    known = set(COMMANDS)
    first = next((a for a in argv if not a.startswith("-") or a == "--"), None)
    # "sessionview COMMAND ...": a parser of that command alone (its help and errors are the same; building
    # every command's parser and importing every command's module is most of a cold start); "sessionview
    # [PATH]" (the app) builds none of them
    args = parser = None
    try:
        if (first is not None and first in known) or (argv and argv[0] in ("-h", "--help", "--version")):
            parser = build_parser(argv[0] if argv[0] in known else None)
            args = parse_command(parser, argv)
        else:
            args = tui_parser().parse_args(argv)
        if not getattr(args, "func", None):
            (parser or build_parser()).print_help()
            return 2
        if _names_remote(args):  # a remote address (ssh://host/path or host:path)?
            from sessionview.cli.remote import route

            routed = route(args, argv)
            if routed is not None:
                return routed
        if parser is None:  # the app: no cyclic garbage collection until its first frame (sessionview.ui.startup)
            from sessionview.ui.startup import hold_collector

            hold_collector()
        return int(args.func(args) or 0)
    except CliError as exc:
        err(str(exc))
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
        err(f"{getattr(exc, 'filename', None) or getattr(args, 'file', '')}: changed while it was read (another "
             f"process is rewriting it; {exc}); try again")
        return 1
    except OSError as exc:
        err(f"{getattr(exc, 'filename', '') or ''}{': ' if getattr(exc, 'filename', None) else ''}{exc.strerror or exc}")
        return 2
    except Exception as exc:  # one clear line, never a traceback (SESSIONVIEW_DEBUG=1 shows it)
        if os.environ.get("SESSIONVIEW_DEBUG"):
            raise
        err(f"internal error: {type(exc).__name__}: {exc} (set SESSIONVIEW_DEBUG=1 for a traceback)")
        return 2
    finally:
        if parser is None:
            from sessionview.ui.startup import release_collector

            release_collector()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
