"""The ``sessionview`` command: the TUI by default, and a headless CLI for scripts.

:mod:`.parser` builds the argparse parser (every help text), :mod:`.commands` holds the thin commands over
:mod:`sessionview.core.ops`, :mod:`.output` what they print. Heavy modules (textual, the UI) are imported
only by the commands that need them, and ``sessionview COMMAND ...`` builds only that command's parser, so
``--help``, ``show``, ``check`` and ``search`` start fast.
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

from sessionview.cli.output import CliError, err, sanitize_std_fds
from sessionview.cli.parser import COMMANDS, build_parser, tui_parser

__all__ = ["CliError", "build_parser", "main"]


def _source_changed() -> type[BaseException]:
    from sessionview.core.doc.linescan import SourceChanged

    return SourceChanged


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    sanitize_std_fds()
    known = set(COMMANDS)
    first = next((a for a in argv if not a.startswith("-") or a == "--"), None)
    # "sessionview COMMAND ...": a parser of that command alone (its help and errors are the same; building
    # every command's parser and importing every command's module is most of a cold start)
    parser = build_parser(argv[0] if argv and argv[0] in known else None)
    args = None
    try:
        if argv and (argv[0] in known or argv[0] in ("-h", "--help", "--version")):
            args = parser.parse_args(argv)
        elif first is None or first not in known:
            args = tui_parser().parse_args(argv)
        else:
            args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        if any(":" in a for a in argv):  # a remote address (ssh://host/path or host:path)?
            from sessionview.cli.remote import route

            routed = route(args, argv)
            if routed is not None:
                return routed
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


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
