"""The writes of a remote session (:class:`~sessionview.ui.screens.remote.RemoteSessionScreen`), each run on
the host by its own ``sessionview`` (:mod:`sessionview.remote.writes`), next to the file:

- ``e``: the selected message's text, edited here (``sessionview edit PATH N --content-file -``);
- ``d``: the marked range or the selected message deleted (``sessionview delete PATH N:M``);
- ``t``: every record after the selected one dropped (``sessionview truncate PATH --keep N``);
- ``D``: the content of the tool results in the range dropped (``sessionview drop-result PATH N:M``);
- ``c``: the marked range replaced by one summary, typed here or the host's built-in digest
  (``sessionview compact PATH N:M [--summary-file -]``).

Each names the records it touches with ``--expect`` (their bytes as shown here: the host refuses if they
changed, or if the change would touch any other record, e.g. lines appended since a truncate's preview).
First the same command with ``--dry-run``: its diff, to confirm (or its refusal, as it came); then the write,
the follower stopped meanwhile (the host's atomic save replaces the file: not news), then the file shown as
it is now. The exit status and messages are shown unchanged (escaped for the terminal). Undo and the
backups' history stay with the CLI on the host (``sessionview undo``/``history``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static, TextArea

from sessionview.core.text import escape_control
from sessionview.remote import writes
from sessionview.ui.dialogs.confirm import PreviewScreen
from sessionview.ui.dialogs.edit import json_text_area
from sessionview.ui.dialogs.modal import MODAL_CSS, Dialog


class TextEditScreen(Dialog["str | None"]):
    """A text (a message's, a summary): ctrl+s writes it (a preview comes first), esc cancels."""

    DEFAULT_CSS = "TextEditScreen {" + MODAL_CSS + "}"
    BINDINGS = [
        Binding("ctrl+s", "done", "Preview", id="remote-edit.save"),
        Binding("escape", "reply(None)", "Cancel", id="remote-edit.cancel"),
    ]

    def __init__(self, title: str, text: str, hint: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.hint = hint or "ctrl+s: the host's preview, then write · esc: cancel (nothing is written)"

    def compose_box(self) -> ComposeResult:
        yield Static(Content(self.title_text), classes="modal-title")
        yield Static(Content(self.hint), classes="modal-hint")
        yield json_text_area(self.text, id="remote-edit-text", json=False)

    def on_mount(self) -> None:
        self.query_one("#remote-edit-text").focus()

    def action_done(self) -> None:
        self.dismiss(self.query_one("#remote-edit-text", TextArea).text)


class HostPreviewScreen(PreviewScreen):
    """The host's ``--dry-run`` diff of a write (the file line by line, as it will be): y writes it there."""

    def __init__(self, title: str, diff: str) -> None:
        super().__init__(title, "the host's own preview (sessionview … --dry-run), made next to the file", [], diff, show_diff=True)

    def action_toggle_diff(self) -> None:
        pass  # the host sent its diff only

    def _show_keys(self) -> None:
        self.query_one("#preview-keys", Static).update(
            Content("- removed  + new · y or enter: write it on the host (it keeps a backup there) · n or esc: cancel (nothing is written)"))


def _said(data: bytes) -> str:
    return escape_control(data.decode("utf-8", "replace").strip(), one_line=False)


def start(screen: Any, what: str, flow: Callable[[Any], Awaitable[None]]) -> None:
    """Run ``flow(screen)`` as the screen's one edit worker; an error is said, never taken down with."""
    if screen.busy:
        screen.notify(f"busy: {screen.busy}; wait for it to finish", markup=False)
        return
    screen.busy = what

    async def run() -> None:
        try:
            await flow(screen)
        except Exception as exc:  # never take the app down: say what happened
            screen.notify(escape_control(f"{type(exc).__name__}: {exc}", one_line=True), title=f"{what} failed",
                          severity="error", markup=False)
        finally:
            screen.busy = ""
            screen.refresh_bindings()

    screen.run_worker(run(), group="edit", exit_on_error=False)


async def on_host(screen: Any, what: str, args: list[str], stdin: bytes | None, target: int | None) -> bool:
    """``sessionview ARGS --dry-run`` on the host, its diff confirmed, then ``sessionview ARGS``; the file
    reopened with the cursor on line ``target``. Whether it was written."""
    host = screen.address.host_label
    conn = screen.access.connection
    code, out, err = await asyncio.to_thread(writes.run, conn, [*args, "--dry-run"], stdin)
    if code != 0:
        screen.edit_status = _said(err).splitlines()[-1] if err.strip() else f"the host's sessionview exited with {code}"
        screen.notify(_said(err) or f"exit status {code}", title=f"refused on {host}: exit status {code}", severity="warning", markup=False)
        return False
    preview = _said(out) or _said(err) or "(the host's preview is empty)"
    if not await screen.app.push_screen_wait(HostPreviewScreen(f"{what} on {host}?", preview)):
        screen.notify(f"{what} cancelled: nothing was written", markup=False)
        return False
    screen.follow.suspend()
    code, out, err = await asyncio.to_thread(writes.run, conn, args, stdin)
    said = _said(err) or _said(out) or f"exit status {code}"
    screen.edit_status = ("saved on the host: " if code == 0 else "") + said.splitlines()[-1]
    screen.notify(said, title=f"{host}: exit status {code}", severity="information" if code == 0 else "error", markup=False)
    screen.follow.reopen_after_save(target, code == 0)
    return code == 0


def _records(screen: Any, a: int, b: int) -> tuple[int, list[bytes]] | None:
    """The true number of record ``a`` and the raw bytes of records ``a`` to ``b`` as shown, or None if some
    are not known (read on the UI thread, as the transcript reads the model)."""
    model = screen.model
    line = model.line_number(a) if model is not None else None
    if line is None:
        return None
    raws = []
    for n in range(a, b + 1):
        rec = model.record(n)
        if rec is None:
            return None
        raws.append(rec.raw)
    return line, raws


async def _shown(screen: Any, a: int, b: int) -> tuple[int, list[bytes]] | None:
    got = _records(screen, a, b)
    if got is None:
        screen.notify("select a message first (the file may still be indexing)", markup=False)
    return got


def _selection(screen: Any) -> tuple[int, int] | None:
    t = screen.transcript
    a, b = t.marked_range if t.marked_range is not None else (t.cursor_number, t.cursor_number)
    if a is None or b is None:
        screen.notify("select a message first", markup=False)
        return None
    return min(a, b), max(a, b)


def _span(line: int, count: int) -> str:
    return str(line) if count == 1 else f"{line}:{line + count - 1}"


async def _range_write(screen: Any, command: str, what: str, numbers: tuple[int, int] | None = None) -> None:
    sel = numbers or _selection(screen)
    got = await _shown(screen, *sel) if sel is not None else None
    if got is None:
        return
    line, raws = got
    span = _span(line, len(raws))
    args = [command, screen.path, span, "--expect", writes.expect_arg(line, raws)]
    if await on_host(screen, f"{what} #{span.replace(':', '-#')}", args, None, line):
        screen.transcript.clear_range()


async def delete_flow(screen: Any) -> None:
    await _range_write(screen, "delete", "delete")


def drop_result_flow(number: int | None = None) -> Callable[[Any], Awaitable[None]]:
    async def flow(screen: Any) -> None:
        await _range_write(screen, "drop-result", "drop the tool results of", None if number is None else (number, number))

    return flow


async def truncate_flow(screen: Any) -> None:
    model, n = screen.model, screen.transcript.cursor_number
    if model is None or n is None:
        screen.notify("select a message first", markup=False)
        return
    if n >= len(model):
        screen.notify("this is the last record: nothing to truncate after it", markup=False)
        return
    got = await _shown(screen, n + 1, len(model))
    if got is None:
        return
    first, raws = got
    keep = first - 1
    args = ["truncate", screen.path, "--keep", str(keep), "--expect", writes.expect_arg(first, raws)]
    await on_host(screen, f"truncate after #{keep}", args, None, keep)


async def compact_flow(screen: Any) -> None:
    if screen.transcript.marked_range is None:
        screen.notify("mark the range to compact first: v at one end, then move to the other (or shift+↑↓)", markup=False)
        return
    sel = _selection(screen)
    got = await _shown(screen, *sel) if sel is not None else None
    if got is None:
        return
    line, raws = got
    span = _span(line, len(raws))
    host = screen.address.host_label
    text = await screen.app.push_screen_wait(TextEditScreen(
        f"compact #{span.replace(':', '-#')} on {host} · the summary", "",
        "the summary (empty: the host's built-in digest) · ctrl+s: the host's preview, then write · esc: cancel"))
    if text is None:
        screen.notify("compaction cancelled: nothing was written", markup=False)
        return
    args = ["compact", screen.path, f"{line}:{line + len(raws) - 1}", "--expect", writes.expect_arg(line, raws)]
    stdin = None
    if text.strip():
        args[3:3] = ["--summary-file", "-"]
        stdin = text.encode("utf-8", "surrogateescape")
    if await on_host(screen, f"compact #{span.replace(':', '-#')}", args, stdin, line):
        screen.transcript.clear_range()


async def edit_flow(screen: Any) -> None:
    from sessionview.core.edit import encode

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
    args = ["edit", screen.path, str(line), "--content-file", "-", "--expect", writes.expect_arg(line, [record.raw])]
    await on_host(screen, f"write #{line}", args, edited.encode("utf-8", "surrogateescape"), line)


#: the screen's write actions on a remote session, and their flows
FLOWS: dict[str, Callable[[Any], Awaitable[None]]] = {
    "edit": edit_flow, "delete": delete_flow, "truncate": truncate_flow, "compact": compact_flow, "drop_result": drop_result_flow(),
}
