"""Questions before and after a write: a plain confirmation, the preview of a write, an integrity
refusal (with the key that widens the range), and a save conflict (with a diff and "apply again").

In every one of them ``y`` or Enter says yes and ``n`` or Escape says no; nothing is written here."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import ContentSwitcher, Static

from sessionview.core.edit.preview import PreviewRow
from sessionview.core.text import escape_control
from sessionview.ui.dialogs.modal import MODAL_CSS, SMALL_CSS, Dialog
from sessionview.ui.widgets.preview import DiffPane, PreviewPane

class ConfirmScreen(Dialog[bool]):
    """A yes/no question."""

    DEFAULT_CSS = "ConfirmScreen {" + SMALL_CSS + "}"

    BINDINGS = [
        Binding("y,enter", "reply(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "reply(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, message: str, keys: str = "y or enter: yes · n or esc: no") -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.keys = keys

    def compose_box(self) -> ComposeResult:
        yield Static(Content(self.title_text), classes="modal-title")
        yield Static(Content(self.message), classes="modal-body", id="confirm-message")
        yield Static(Content(self.keys), classes="modal-keys")


class PreviewScreen(Dialog[bool]):
    """The transcript as the change leaves it, and the diff of the file (``d`` switches)."""

    DEFAULT_CSS = "PreviewScreen {" + MODAL_CSS + """
        .modal-warning { color: $text-warning; height: auto; }
        ContentSwitcher { height: 1fr; border: tall $primary 30%; }
        PreviewPane, DiffPane { height: 1fr; }
    }"""

    BINDINGS = [
        Binding("y,enter", "reply(True)", "Write it", id="preview.confirm"),
        Binding("n,escape", "reply(False)", "Cancel", id="preview.cancel"),
        Binding("d", "toggle_diff", "Transcript ⇄ diff", id="preview.diff"),
    ]

    def __init__(
        self,
        title: str,
        summary: str,
        rows: list[PreviewRow],
        diff: str,
        *,
        warning: str = "",
        cancel_label: str = "cancel (nothing is written)",
        show_diff: bool = False,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.summary = summary
        self.rows = rows
        self.diff = diff
        self.warning = warning
        self.cancel_label = cancel_label
        self.initial = "preview-diff" if show_diff else "preview-rows"

    def compose_box(self) -> ComposeResult:
        yield Static(Content(self.title_text), classes="modal-title", id="preview-title")
        yield Static(Content(self.summary), classes="modal-hint", id="preview-summary")
        if self.warning:
            yield Static(Content("⚠ " + self.warning), classes="modal-warning", id="preview-warning")
        with ContentSwitcher(initial=self.initial):
            yield PreviewPane(self.rows, id="preview-rows")
            yield DiffPane(id="preview-diff")
        yield Static(id="preview-keys", classes="modal-hint")

    def on_mount(self) -> None:
        self.query_one(DiffPane).set_diff(self.diff)
        self._show_keys()
        self.query_one(f"#{self.initial}").focus()

    @property
    def showing(self) -> str:
        return "diff" if self.query_one(ContentSwitcher).current == "preview-diff" else "transcript"

    def _show_keys(self) -> None:
        other = "the transcript" if self.showing == "diff" else "the diff of the file"
        legend = "- removed  + new  (numbers as they will be)" if self.showing == "transcript" else "the file, line by line"
        self.query_one("#preview-keys", Static).update(
            Content(f"{legend} · y or enter: write it (a backup is kept) · n or esc: {self.cancel_label} · d: {other}")
        )

    def action_toggle_diff(self) -> None:
        switcher = self.query_one(ContentSwitcher)
        switcher.current = "preview-diff" if switcher.current == "preview-rows" else "preview-rows"
        self.query_one(f"#{switcher.current}").focus()
        self._show_keys()


class RefusalScreen(Dialog["str | None"]):
    """An integrity refusal: what it would break (the ids), ``w`` to widen to the nearest valid range, and
    ``f`` to do it anyway (after this warning, and a preview) when the core allows it when forced."""

    DEFAULT_CSS = "RefusalScreen {" + SMALL_CSS + """
        .modal-anyway { color: $text-warning; height: auto; margin-top: 1; }
    }"""

    BINDINGS = [
        Binding("w", "reply('widen')", "Widen the range", id="refusal.widen"),
        Binding("f", "reply('anyway')", "Do it anyway", id="refusal.anyway"),
        Binding("n,escape", "reply(None)", "Cancel", id="refusal.cancel"),
    ]

    def __init__(self, message: str, ids: tuple[str, ...], widen_label: str | None, *, anyway: bool = False) -> None:
        super().__init__()
        self.message = message
        self.ids = ids
        self.widen_label = widen_label
        self.anyway = anyway

    def compose_box(self) -> ComposeResult:
        title = "refused: this would break tool-call pairing" if self.ids else "refused: this could damage the session"
        yield Static(Content(title), classes="modal-title")
        yield Static(Content(escape_control(self.message)), classes="modal-body", id="refusal-message")
        if self.ids:
            ids = ", ".join(escape_control(i, one_line=True) for i in self.ids)
            yield Static(Content(f"tool call ids: {ids}"), classes="modal-ids", id="refusal-ids")
        if self.anyway:
            risk = (
                "a provider or the agent may reject the session when it is resumed (a tool call without its result, "
                "or a result without its call)"
                if self.ids
                else "the refusal above says what can go wrong"
            )
            yield Static(
                Content(f"⚠ f does it anyway: {risk}. A preview comes first, and a backup is kept (u undoes)."),
                classes="modal-anyway",
                id="refusal-anyway",
            )
        keys = f"w: {self.widen_label} and plan again · " if self.widen_label else ("" if self.anyway else "no valid range found nearby · ")
        if self.anyway:
            keys += "f: do it anyway · "
        yield Static(Content(keys + "n or esc: cancel (nothing is written)"), classes="modal-keys")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "reply" and parameters == ("widen",) and not self.widen_label:
            return False
        if action == "reply" and parameters == ("anyway",) and not self.anyway:
            return False
        return True


class ConflictScreen(Dialog["str | None"]):
    """The file changed on disk in a way a save cannot merge: the edit is kept, not written."""

    DEFAULT_CSS = "ConflictScreen {" + MODAL_CSS + """
        .modal-title { color: $text-error; }
        #conflict-message { height: auto; margin-bottom: 1; }
        DiffPane { height: 1fr; border: tall $primary 30%; display: none; }
        DiffPane.-shown { display: block; }
    }"""

    BINDINGS = [
        Binding("r", "reply('reapply')", "Reload & apply again", id="conflict.reapply"),
        Binding("d", "toggle_diff", "Show the diff", id="conflict.diff"),
        Binding("n,escape", "reply(None)", "Keep it for later", id="conflict.keep"),
    ]

    def __init__(self, message: str, description: str, diff: str) -> None:
        super().__init__()
        self.message = message
        self.description = description
        self.diff = diff

    def compose_box(self) -> ComposeResult:
        yield Static(Content(f"conflict: {self.description} was not written"), classes="modal-title")
        body = (
            f"{escape_control(self.message)}\n\nThe file changed on disk since it was loaded (an agent rewrote it?). "
            "Your edit is kept. r reloads the file and applies it again, with a new preview; d shows the diff "
            "of the edit; esc keeps it for later (a applies it again from the transcript)."
        )
        yield Static(Content(body), id="conflict-message")
        yield DiffPane(id="conflict-diff")

    def on_mount(self) -> None:
        self.query_one(DiffPane).set_diff(self.diff)

    @property
    def diff_shown(self) -> bool:
        return self.query_one(DiffPane).has_class("-shown")

    def action_toggle_diff(self) -> None:
        pane = self.query_one(DiffPane)
        pane.toggle_class("-shown")
        if pane.has_class("-shown"):
            pane.focus()

