"""A one-line prompt docked at the bottom (search, go to line, filter), with a hint line above it."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Label, Static


class PromptBar(Vertical):
    DEFAULT_CSS = """
    PromptBar {
        height: auto;
        display: none;
        background: $panel;
        &.-open { display: block; }
        #prompt-hint { color: $text-muted; padding: 0 1; height: auto; max-height: 3; }
        Horizontal { height: 1; }
        #prompt-label { width: auto; padding: 0 1; color: $accent; text-style: bold; }
        Input { border: none; height: 1; padding: 0; width: 1fr; background: $panel; }
        Input:focus { border: none; }
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]

    @dataclass
    class Submitted(Message):
        bar: "PromptBar"
        kind: str
        value: str

        @property
        def control(self) -> "PromptBar":
            return self.bar

    @dataclass
    class Cancelled(Message):
        bar: "PromptBar"
        kind: str

        @property
        def control(self) -> "PromptBar":
            return self.bar

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kind = ""

    def compose(self) -> ComposeResult:
        yield Static("", id="prompt-hint")
        with Horizontal():
            yield Label("", id="prompt-label")
            yield Input(id="prompt-input", select_on_focus=False)

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self, kind: str, label: str, value: str = "", hint: str = "", placeholder: str = "") -> None:
        self.kind = kind
        self.query_one("#prompt-label", Label).update(Content(label))
        hint_widget = self.query_one("#prompt-hint", Static)
        hint_widget.update(Content(hint))
        hint_widget.display = bool(hint)
        inp = self.query_one(Input)
        inp.placeholder = placeholder
        inp.value = value
        inp.cursor_position = len(value)
        self.add_class("-open")
        inp.focus()

    def close(self) -> None:
        self.remove_class("-open")

    def action_cancel(self) -> None:
        kind = self.kind
        self.close()
        self.post_message(self.Cancelled(self, kind))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        kind = self.kind
        self.close()
        self.post_message(self.Submitted(self, kind, event.value))
