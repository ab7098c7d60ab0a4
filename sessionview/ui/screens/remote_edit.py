"""``e`` on a remote session (:class:`~sessionview.ui.screens.remote.RemoteSessionScreen`): the message's
text is edited here, and written on the host by its own ``sessionview`` (:mod:`sessionview.remote.writes`).

1. the text of the selected message (true line number ``N``, its bytes as shown) in an editor dialog;
2. ``sessionview edit PATH N --content-file - --expect N:SHA256 --dry-run`` on the host: its diff, to confirm
   (or its refusal: a conflict, an integrity refusal, a bad edit, shown as it came);
3. the same without ``--dry-run``, the follower stopped meanwhile (the host's atomic save replaces the file:
   not news), then the file shown as it is now, the cursor on ``N``. The exit status and messages are shown
   unchanged (escaped for the terminal).
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static, TextArea

from sessionview.core.text import escape_control
from sessionview.ui.dialogs.confirm import ConfirmScreen
from sessionview.ui.dialogs.edit import json_text_area
from sessionview.ui.dialogs.modal import MODAL_CSS, Dialog


class TextEditScreen(Dialog["str | None"]):
    """The text of one message: ctrl+s writes it (a preview comes first), esc cancels."""

    DEFAULT_CSS = "TextEditScreen {" + MODAL_CSS + "}"
    BINDINGS = [
        Binding("ctrl+s", "done", "Preview", id="remote-edit.save"),
        Binding("escape", "reply(None)", "Cancel", id="remote-edit.cancel"),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose_box(self) -> ComposeResult:
        yield Static(Content(self.title_text), classes="modal-title")
        yield Static(Content("ctrl+s: the host's preview, then write · esc: cancel (nothing is written)"), classes="modal-hint")
        yield json_text_area(self.text, id="remote-edit-text", json=False)

    def on_mount(self) -> None:
        self.query_one("#remote-edit-text").focus()

    def action_done(self) -> None:
        self.dismiss(self.query_one("#remote-edit-text", TextArea).text)


def _said(data: bytes) -> str:
    return escape_control(data.decode("utf-8", "replace").strip(), one_line=False)


async def remote_edit(screen: Any) -> None:
    try:
        await _flow(screen)
    except Exception as exc:  # never take the app down: say what happened
        screen.notify(escape_control(f"{type(exc).__name__}: {exc}", one_line=True), title="edit failed", severity="error", markup=False)
    finally:
        screen.busy = ""
        screen.refresh_bindings()


async def _flow(screen: Any) -> None:
    from sessionview.core.edit import encode
    from sessionview.remote import writes

    model, n = screen.model, screen.transcript.cursor_number
    line = model.line_number(n) if model is not None and n is not None else None
    record = model.record(n) if line is not None else None
    if record is None:
        screen.notify("select a message first (the file may still be indexing)", markup=False)
        return
    text = encode.content_text(model.session, n)
    if text is None:
        screen.notify(f"#{line} has no single text to edit here: sessionview edit {screen.address} {line} --json '…'", markup=False)
        return
    host = screen.address.host_label
    edited = await screen.app.push_screen_wait(TextEditScreen(f"edit #{line} on {host} · the message's text", text))
    if edited is None or edited == text:
        screen.notify("edit cancelled: nothing was written" if edited is None else f"edit #{line}: no change, nothing to write", markup=False)
        return
    args = ["edit", screen.path, str(line), "--content-file", "-", "--expect", f"{line}:{hashlib.sha256(record.raw).hexdigest()}"]
    conn, stdin = screen.access.connection, edited.encode("utf-8", "surrogateescape")
    code, out, err = await asyncio.to_thread(writes.run, conn, [*args, "--dry-run"], stdin)
    if code != 0:
        screen.edit_status = _said(err).splitlines()[-1] if err.strip() else f"the host's sessionview exited with {code}"
        screen.notify(_said(err) or f"exit status {code}", title=f"refused on {host}", severity="warning", markup=False)
        return
    if not await screen.app.push_screen_wait(ConfirmScreen(f"write #{line} on {host}? (its preview)", _said(out))):
        screen.notify("edit cancelled: nothing was written", markup=False)
        return
    screen.follow.suspend()
    code, out, err = await asyncio.to_thread(writes.run, conn, args, stdin)
    said = _said(err) or _said(out) or f"exit status {code}"
    screen.edit_status = ("saved on the host: " if code == 0 else "") + said.splitlines()[-1]
    screen.notify(said, title=f"{host}: exit status {code}", severity="information" if code == 0 else "error", markup=False)
    screen.follow.reopen_after_save(line, code == 0)
