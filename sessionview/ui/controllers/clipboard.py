"""Copy the selected record out of the app: ``y`` its text, ``Y`` its raw JSON.

Textual's :meth:`App.copy_to_clipboard` sends the text to the terminal as an OSC 52 sequence (so it
works over SSH, in tmux with ``set-clipboard on``, and in ``serve``'s browser page) and keeps it in
``app.clipboard``. A notification says what was copied and how many bytes. The record is the transcript's
selected one, which is also the one the detail pane shows: the keys work from either.
"""

from __future__ import annotations

from typing import Any, Protocol

from sessionview.core.doc.model import View
from sessionview.core.view.humanize import human_size
from sessionview.core.view.render import pretty
from sessionview.core.view.stats import compact_json

#: over this many bytes a terminal may drop the clipboard sequence: say so
LARGE = 1 << 20


class ClipboardHost(Protocol):
    model: Any
    app: Any

    @property
    def transcript(self) -> Any: ...

    def notify(self, message: str, **kw: Any) -> None: ...


def message_text(view: View) -> tuple[str, str]:
    """``(what, text)``: the text of a message; for a record without text, its tool results' content or
    its tool calls' arguments."""
    if view.text:
        return "text", view.text
    results = [r.content for r in view.tool_results if r.content]
    if results:
        return "tool result", "\n\n".join(results)
    calls = []
    for c in view.tool_calls:
        args = c.raw_arguments if c.raw_arguments is not None else pretty(c.arguments)
        calls.append(f"{c.name}\n{args}")
    if calls:
        return "tool call", "\n\n".join(calls)
    if view.reasoning:
        return "reasoning", view.reasoning
    return "text", ""


def raw_text(model: Any, number: int) -> str:
    """The record's raw line, decoded (UTF-8; bytes that are not are replaced), without its line break. A
    record of a whole document (no line of its own) is its JSON."""
    record = model.record(number)
    if record is not None:
        raw = record.raw
        for end in (b"\r\n", b"\n"):
            if raw.endswith(end):
                raw = raw[: -len(end)]
                break
        return raw.decode("utf-8", "replace")
    view = model.view(number)
    if view.value is not None:
        return compact_json(view.value)
    return (view.raw or b"").decode("utf-8", "replace")


class Clipboard:
    def __init__(self, host: ClipboardHost) -> None:
        self.host = host

    def _selected(self) -> int | None:
        host = self.host
        n = host.transcript.cursor_number
        if host.model is None or n is None:
            host.notify("nothing selected to copy", markup=False)
            return None
        return n

    def copy_text(self) -> None:
        n = self._selected()
        if n is None:
            return
        what, text = message_text(self.host.model.view(n))
        if not text:
            self.host.notify("this record has no text to copy (Y copies its raw JSON)", markup=False)
            return
        self._copy(text, f"the {what} of #{self._line(n)}")

    def copy_raw(self) -> None:
        n = self._selected()
        if n is None:
            return
        self._copy(raw_text(self.host.model, n), f"the raw JSON of #{self._line(n)}")

    def _line(self, n: int) -> str:
        line = self.host.model.line_number(n)
        return f"{line:,}" if line is not None else "…"

    def _copy(self, text: str, what: str) -> None:
        data = text.encode("utf-8", "replace")  # a lone surrogate (JSON "\\ud800") becomes "?"
        text = data.decode("utf-8")
        size = len(data)
        self.host.app.copy_to_clipboard(text)
        message = f"copied {what}: {size:,} bytes" + (f" ({human_size(size)})" if size >= 1024 else "")
        if size > LARGE:
            message += "; some terminals drop a clipboard this big"
        self.host.notify(message, title="copied", markup=False)
