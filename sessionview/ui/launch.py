"""The entry point of the user interface: ``run(path)`` (the App itself is :mod:`sessionview.ui.app`).

This module imports no Textual at import time: ``run`` first starts opening the session file in a thread,
then imports Textual (the slowest part of starting), so the last page is ready when the screen is.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["run"]


def _escape(text: str) -> str:
    from sessionview.core.text import escape_control

    return escape_control(text, one_line=True)


def run(path: str, *, read_only: bool = False) -> int:
    """Open the app on a directory or a single session file. Returns the exit code."""
    p = os.path.abspath(path or ".")
    if not os.path.exists(p):
        print(f"sessionview: {_escape(path)}: no such file or directory", file=sys.stderr)
        return 2
    if not os.path.isdir(p):
        import stat

        from sessionview.core.doc.document import describe_mode

        mode = os.stat(p).st_mode
        if not stat.S_ISREG(mode):  # a FIFO, a socket, a device: as `show` says it, before any app starts
            print(f"sessionview: {_escape(path)}: not a regular file ({describe_mode(mode)})", file=sys.stderr)
            return 2
        if not os.access(p, os.R_OK):
            print(f"sessionview: {_escape(path)}: not readable", file=sys.stderr)
            return 2
    _trust_the_terminal_size()
    prefetch = None if os.path.isdir(p) else _prefetch(p)
    from sessionview.ui.app import SessionViewApp

    app = SessionViewApp(path or ".", read_only=read_only, prefetch=prefetch)  # shown as given
    result = app.run()
    if app.return_code not in (None, 0):
        return app.return_code or 1
    return int(result or 0)


def _trust_the_terminal_size() -> None:
    """Textual sizes itself with ``shutil.get_terminal_size``, which believes COLUMNS and LINES first. A
    stale exported value (a shell or harness that exported them, then the terminal was resized) would
    give the app the wrong size, so when a real terminal is attached, its own size wins."""
    try:
        if sys.__stdout__ is not None and os.isatty(sys.__stdout__.fileno()):
            os.environ.pop("COLUMNS", None)
            os.environ.pop("LINES", None)
    except (OSError, ValueError):
        pass


def _prefetch(path: str) -> Any:
    """Open ``path`` end first in a thread; a Future of the model (or of the error)."""
    from concurrent.futures import Future
    import threading

    future: Future = Future()

    def work() -> None:
        try:
            from sessionview.core.view.transcript import TranscriptModel

            future.set_result(TranscriptModel.open(path))
        except BaseException as exc:  # the screen reports it
            future.set_exception(exc)

    threading.Thread(target=work, name="sessionview-prefetch", daemon=True).start()
    return future
