"""The frame every dialog shares: a box over the dimmed screen that called it, its keys in a footer, and
``reply(value)`` as the action of a key that closes it with an answer (``Binding("y", "reply(True)")``).

``MODAL_CSS`` is the large box (editors, previews, history), ``SMALL_CSS`` the small one (questions)."""

from __future__ import annotations

from typing import Any, TypeVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer

MODAL_CSS = """
    align: center middle;
    background: $background 60%;
    .modal-box {
        width: 96%;
        height: 92%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    .modal-title { text-style: bold; color: $text-accent; height: auto; }
    .modal-hint { color: $text-muted; height: auto; }
    .modal-error { color: $text-error; height: auto; max-height: 6; display: none; }
    .modal-error.-shown { display: block; }
    .modal-status { color: $text-muted; height: auto; }
    TextArea { height: 1fr; border: tall $primary 30%; }
    TextArea:focus { border: tall $accent; }
    Footer { dock: bottom; }
"""

SMALL_CSS = """
    align: center middle;
    background: $background 60%;
    .modal-box {
        width: 84;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    .modal-title { text-style: bold; color: $text-warning; height: auto; margin-bottom: 1; }
    .modal-body { height: auto; }
    .modal-ids { color: $text-accent; height: auto; margin-top: 1; }
    .modal-keys { color: $text-muted; height: auto; margin-top: 1; }
    Footer { dock: bottom; }
"""

ResultT = TypeVar("ResultT")


class Dialog(ModalScreen[ResultT]):
    """A modal box: :meth:`compose_box` yields what is in it."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal-box"):
            yield from self.compose_box()
        yield Footer()

    def compose_box(self) -> ComposeResult:
        yield from ()

    def action_reply(self, value: Any) -> None:
        self.dismiss(value)


class NoticeScreen(Dialog[None]):
    """Something the user must read once (mistakes in the configuration): enter or esc goes on."""

    DEFAULT_CSS = "NoticeScreen {" + SMALL_CSS + "}"

    BINDINGS = [Binding("enter,escape", "reply(None)", "Go on", id="notice.close")]

    def __init__(self, title: str, lines: list[str], keys: str = "enter or esc: go on") -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines
        self.keys = keys

    def compose_box(self) -> ComposeResult:
        from textual.content import Content
        from textual.widgets import Static

        yield Static(Content(self.title_text), classes="modal-title")
        yield Static(Content("\n".join(self.lines)), classes="modal-body", id="notice-lines")
        yield Static(Content(self.keys), classes="modal-keys")
