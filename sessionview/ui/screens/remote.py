"""The session screen on a remote file, read over SFTP (:mod:`sessionview.ui.fleet` keeps the connections).

:func:`session_screen` makes it (read-only, with its reason once the host was asked); :func:`open_in_thread`
connects in a worker thread (the connection is usually there already) and then pushes it.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from sessionview.core.text import escape_control
from sessionview.remote.address import Address
from sessionview.ui.fleet import hosts_of, read_only_reason
from sessionview.ui.screens.session import SessionScreen


def session_screen(app: Any, address: Address, access: Any, *, display: str | None = None) -> SessionScreen:
    """A session screen on the remote file ``address`` (its path absolute on the host), read through
    ``access`` (an SftpAccess); read-only, with its reason filled in once the host was asked (in a thread)."""
    hosts = hosts_of(app)
    known = hosts.known_capability(address)
    screen = SessionScreen(
        address.path,
        display=display or str(address),
        access=access,
        read_only_reason=read_only_reason(address, known),
        poll_interval=getattr(app, "poll_interval", 0.015),
        clock=getattr(app, "clock", None) or time.time,
    )
    if known is None:

        def ask() -> None:
            reason = read_only_reason(address, hosts.capability(address))
            try:
                app.call_from_thread(_set_reason, screen, reason)
            except RuntimeError:  # the app has ended
                pass

        threading.Thread(target=ask, name="sessionview-probe", daemon=True).start()
    return screen


def _set_reason(screen: SessionScreen, reason: str) -> None:
    if screen.edit_status == screen.read_only_reason:
        screen.edit_status = reason
    screen.read_only_reason = reason


def open_in_thread(app: Any, address: Address, display: str, then: Callable[[SessionScreen], None] | None = None) -> None:
    """Connect to ``address``'s host in a thread, then (on the UI thread) push its session screen, or hand
    it to ``then``. A host that cannot be reached is said in a notification."""

    def work() -> None:
        try:
            access = hosts_of(app).access(address)
        except OSError as exc:
            said = escape_control(str(exc), one_line=True)
            _later(app, lambda: app.notify(said, title="cannot open", severity="error", markup=False))
            return

        def push() -> None:
            screen = session_screen(app, address, access, display=display)
            if then is not None:
                then(screen)
            else:
                app.push_screen(screen)

        _later(app, push)

    threading.Thread(target=work, name="sessionview-open-remote", daemon=True).start()


def _later(app: Any, fn: Callable[[], None]) -> None:
    try:
        app.call_from_thread(fn)
    except RuntimeError:  # the app has ended
        pass
