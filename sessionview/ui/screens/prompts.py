"""The jump list of the user's prompts (``P``): one line per prompt, newest at the bottom; Enter jumps to it.

What is a prompt is :func:`sessionview.core.view.outline.is_prompt` (no tool results, nothing the harness
injected, no subagent's lines). Typing filters the list. The list comes from the same scan as the outline
(:class:`~sessionview.ui.screens.outline.Overview`)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from sessionview.core.view.outline import Node
from sessionview.ui.dialogs.modal import MODAL_CSS, Dialog


def prompt_line(node: Node, line: int | None) -> Content:
    """``#N  HH:MM  text``: plain text, never markup."""
    where = f"#{line:,}" if line is not None else f"#{node.number}"
    when = ""
    if node.timestamp and len(node.timestamp) >= 16 and node.timestamp[10:11] == "T":
        when = node.timestamp[11:16] + "  "
    return Content.assemble((f"{where:>8}  ", "$text-muted"), (when, "$text-muted"), node.label)


class PromptsScreen(Dialog[int | None]):
    """Returns the record number of the chosen prompt, or None."""

    DEFAULT_CSS = "PromptsScreen {" + MODAL_CSS + """
        #prompts-filter { height: 3; border: tall $primary 30%; }
        OptionList { height: 1fr; }
    }"""

    BINDINGS = [
        Binding("escape", "reply(None)", "Close", id="prompts.close"),
        Binding("down", "move(1)", "Next", show=False, id="prompts.down"),
        Binding("up", "move(-1)", "Previous", show=False, id="prompts.up"),
    ]

    def __init__(self, prompts: list[Node], lines: list[int | None], current: int | None = None) -> None:
        super().__init__()
        self.prompts = prompts
        self.lines = lines
        self.current = current  # the record the cursor is on: the prompt it belongs to is highlighted

    def compose_box(self) -> ComposeResult:
        n = len(self.prompts)
        yield Static(Content(f"{n} prompt{'s' if n != 1 else ''} of the user · enter jumps to one · type to filter"), classes="modal-title")
        yield Input(placeholder="filter the prompts", id="prompts-filter")
        yield OptionList(id="prompts-list")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one(Input).focus()

    def _fill(self, term: str) -> None:
        ol = self.query_one(OptionList)
        ol.clear_options()
        term = term.lower()
        best = None
        for i, (node, line) in enumerate(zip(self.prompts, self.lines, strict=True)):
            if term and term not in node.label.lower():
                continue
            ol.add_option(Option(prompt_line(node, line), id=str(i)))
            if self.current is None or node.number is None or node.number <= self.current:
                best = ol.option_count - 1
        if ol.option_count:
            ol.highlighted = best if best is not None and not term else (0 if term else ol.option_count - 1)

    @on(Input.Changed)
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self._choose()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._choose()

    def action_move(self, delta: int) -> None:
        ol = self.query_one(OptionList)
        if ol.option_count:
            ol.highlighted = max(0, min(ol.option_count - 1, (ol.highlighted or 0) + delta))

    def _choose(self) -> None:
        ol = self.query_one(OptionList)
        if ol.highlighted is None or not ol.option_count:
            return
        option = ol.get_option_at_index(ol.highlighted)
        self.dismiss(self.prompts[int(option.id or 0)].number)
