"""The session screen on a remote file, read over SFTP (:mod:`sessionview.ui.fleet` keeps the connections).

:func:`session_screen` makes a :class:`RemoteSessionScreen` (read-only, with its reason once the host was
asked); :func:`open_in_thread` connects in a worker thread (the connection is usually there already) and
then pushes it.

When the host has a ``sessionview`` (not older than this one), the editing keys write there, next to the
file, with every check a local save makes (:mod:`sessionview.ui.screens.remote_edit`): ``e`` a message's
text, ``d`` delete, ``t`` truncate, ``c`` compact a marked range (``v``), ``D`` drop a tool result. Each runs
``sessionview COMMAND PATH … --expect …`` there (every argument quoted for the login shell, a text on stdin,
``--expect`` refusing unless the records it touches are the bytes shown here). The host's own ``--dry-run``
diff is shown first; its exit status and messages come back as they are. Undo, redo and the backups'
history are not offered here: they are the CLI's on the host (``sessionview undo host:path``).
"""

from __future__ import annotations

import shlex
import threading
import time
from typing import Any, Callable

from textual import events

from sessionview.core.text import escape_control
from sessionview.remote.address import Address
from sessionview.ui.controllers.actions import WRITE_ACTIONS
from sessionview.ui.fleet import hosts_of, read_only_reason
from sessionview.ui.screens.session import SessionScreen


#: the actions that write on the host (the others that write: undo, redo, apply again, stay the CLI's)
REMOTE_ACTIONS = frozenset({"edit", "delete", "truncate", "compact", "drop_result", "mark_range", "extend_range"})


class RemoteSessionScreen(SessionScreen):
    """A session on another host: read over SFTP; its edits written by the host's ``sessionview``."""

    def __init__(self, path: str, *, address: Address, **kw: Any) -> None:
        super().__init__(path, **kw)
        self.address = address
        self.capability: Any = None  # the host's (sessionview.remote.writes.Capability), once asked
        self.started_read_only = False  # the app was started with --read-only: never an edit

    def on_mount(self) -> None:
        self._host_error: str | None = None
        self.set_interval(1.0, self._check_host)

    def _check_host(self) -> None:
        """Say once when the host stops answering (the follower keeps trying), and when it answers again."""
        error = getattr(self.access, "error", None)
        if error == self._host_error:
            return
        self._host_error = error
        if error:
            self.notify(escape_control(f"{error}; still trying (what was read stays on screen)", one_line=True),
                        title="host not answering", severity="warning", markup=False)
        else:
            self.notify(f"{escape_control(self.address.host_label, one_line=True)} answers again", markup=False)

    @property
    def remote_writable(self) -> bool:
        return self.capability is not None and self.capability.writable and not self.started_read_only

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in REMOTE_ACTIONS and self.remote_writable:
            return self.state != "error"
        return super().check_action(action, parameters)

    def on_key(self, event: events.Key) -> None:
        actions = {b.action.split("(")[0] for b in self._bindings.key_to_bindings.get(event.key, ())}
        if not self.remote_writable or not actions & WRITE_ACTIONS:
            return  # the session screen's own handler says "read-only" (and why) where it is
        event.prevent_default()  # not a read-only key here: the write runs on the host
        if not actions & REMOTE_ACTIONS:
            event.stop()
            self._not_here()

    def _not_here(self) -> None:
        self.notify(escape_control(f"undo, redo and the backups' history of a remote session are the CLI's, on the host: "
                                   f"sessionview undo {shlex.quote(str(self.address))} (or history)", one_line=True),
                    title="remote", severity="warning", markup=False)

    def action_history(self) -> None:
        self._not_here()

    def _on_host(self, action: str, flow: Any = None) -> bool:
        """Run ``action``'s flow on the host (True), or leave it to the local screen (False: read-only)."""
        if not self.remote_writable:
            return False
        from sessionview.ui.screens import remote_edit

        remote_edit.start(self, action.replace("_", " "), flow or remote_edit.FLOWS[action])
        return True

    def action_edit(self) -> None:
        if not self._on_host("edit"):
            super().action_edit()

    def action_delete(self) -> None:
        if not self._on_host("delete"):
            super().action_delete()

    def action_truncate(self) -> None:
        if not self._on_host("truncate"):
            super().action_truncate()

    def action_compact(self) -> None:
        if not self._on_host("compact"):
            super().action_compact()

    def action_drop_result(self) -> None:
        if not self._on_host("drop_result"):
            super().action_drop_result()

    def drop_result_of(self, n: int) -> None:
        from sessionview.ui.screens.remote_edit import drop_result_flow

        if not self._on_host("drop_result", drop_result_flow(n)):
            super().drop_result_of(n)


def session_screen(app: Any, address: Address, access: Any, *, display: str | None = None) -> RemoteSessionScreen:
    """A session screen on the remote file ``address`` (its path absolute on the host), read through
    ``access`` (an SftpAccess); read-only, with its reason filled in once the host was asked (in a thread)."""
    hosts = hosts_of(app)
    if getattr(app, "read_only", False):
        screen = RemoteSessionScreen(address.path, address=address, display=display or str(address), access=access,
                                     read_only_reason="read-only: this app was started with --read-only",
                                     poll_interval=getattr(app, "poll_interval", 0.015), clock=getattr(app, "clock", None) or time.time)
        screen.started_read_only = True
        return screen
    known = hosts.known_capability(address)
    screen = RemoteSessionScreen(
        address.path,
        address=address,
        display=display or str(address),
        access=access,
        read_only_reason=read_only_reason(address, known),
        poll_interval=getattr(app, "poll_interval", 0.015),
        clock=getattr(app, "clock", None) or time.time,
    )
    screen.capability = known
    if known is None:

        def ask() -> None:
            capability = hosts.capability(address)
            if not app.is_running:
                return
            try:
                app.call_from_thread(_set_reason, screen, read_only_reason(address, capability), capability)
            except RuntimeError:  # the app has ended
                pass

        threading.Thread(target=ask, name="sessionview-probe", daemon=True).start()
    return screen


def _set_reason(screen: RemoteSessionScreen, reason: str, capability: Any) -> None:
    if screen.edit_status == screen.read_only_reason:
        screen.edit_status = reason
    screen.read_only_reason = reason
    screen.capability = capability
    screen.refresh_bindings()


def open_in_thread(app: Any, address: Address, display: str, then: Callable[[RemoteSessionScreen], None] | None = None) -> None:
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
    if not getattr(app, "is_running", True):
        return
    try:
        app.call_from_thread(fn)
    except RuntimeError:  # the app has ended
        pass
