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
    """Open the app on a directory or a single session file (local, or a remote address). Returns the exit code."""
    address = None
    if path and ":" in path:  # every remote address has one (sessionview.remote.address): a local path imports none of it
        from sessionview.remote.address import parse

        address = parse(path)
    if address is not None:
        return run_remote(path, address, read_only=read_only)
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


# -- the app on a remote address ---------------------------------------------------------------------
class RemoteTarget:
    """What ``sessionview ssh://host/path`` opened: a directory or a file on a host (its path absolute
    there), and the app's connections (the first one already open)."""

    def __init__(self, address: Any, is_dir: bool, hosts: Any) -> None:
        self.address = address
        self.is_dir = is_dir
        self.hosts = hosts

    def mount(self, app: Any) -> None:
        app.remote_hosts = self.hosts
        if self.is_dir:
            from sessionview.ui.screens.browser import BrowserScreen

            label = self.address.host_label
            app.push_screen(BrowserScreen(None, display=str(self.address), clock=app.clock, watch=app.watch,
                                          poll_interval=app.poll_interval, read_only=True,
                                          hosts={label: str(self.address)}, host_timeout=app.host_timeout))
            return
        from sessionview.ui.screens.remote import session_screen

        screen = session_screen(app, self.address, self.hosts.access(self.address))
        screen.standalone = True
        app.push_screen(screen)


def open_remote(text: str, address: Any, timeout: float = 10.0) -> "RemoteTarget | str":
    """Connect to the host and look at the path: a :class:`RemoteTarget`, or the one line that says why not."""
    import stat

    from sessionview.core.doc.document import describe_mode
    from sessionview.remote.connection import RemoteError
    from sessionview.ui.fleet import RemoteHosts

    hosts = RemoteHosts(timeout)
    try:
        access = hosts.access(address)
        real = access.realpath(address.path or ".")
        st = access.stat(real)
    except FileNotFoundError:
        hosts.close()
        return f"{text}: no such file or directory"
    except PermissionError:
        hosts.close()
        return f"{text}: permission denied"
    except RemoteError as exc:
        hosts.close()
        return str(exc)
    except OSError as exc:
        hosts.close()
        return f"{text}: {exc.strerror or exc}"
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        hosts.close()
        return f"{text}: not a regular file ({describe_mode(st.st_mode)})"
    return RemoteTarget(address.with_path(real), stat.S_ISDIR(st.st_mode), hosts)


def run_remote(text: str, address: Any, *, read_only: bool = False) -> int:
    """The app here on a remote directory or file, reading over SFTP (remote sessions are read-only in it)."""
    target = open_remote(text, address)
    if isinstance(target, str):
        print(f"sessionview: {_escape(target)}", file=sys.stderr)
        return 2
    _trust_the_terminal_size()
    from sessionview.ui.app import SessionViewApp

    app = SessionViewApp(".", read_only=read_only, remote=target)
    try:
        result = app.run()
    finally:
        target.hosts.close()
    if app.return_code not in (None, 0):
        return app.return_code or 1
    return int(result or 0)


def run_hosts_app(hosts: dict[str, str], *, timeout: float = 10.0, read_only: bool = False) -> int:
    """``sessionview hosts --app``: the session list with every host of ``hosts`` (no local directory)."""
    from sessionview.ui.app import SessionViewApp

    _trust_the_terminal_size()
    app = SessionViewApp(".", read_only=read_only, hosts=hosts, local=False, host_timeout=timeout)
    return int(app.run() or 0)
