"""Modal editors: a message (as pretty JSON or its text alone) and a compaction summary.

Neither writes anything. Each checks what was typed with the same core planner the CLI uses (in a thread,
as it looks at every record for tool-call pairing) and shows any error in place, keeping the text; only a
valid :class:`~sessionview.core.edit.plan.Change` leaves the modal, to be previewed and confirmed.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import LoadingIndicator, Static, TextArea
from textual.worker import Worker, WorkerState

from sessionview.core.edit.change import Change
from sessionview.core.errors import InvalidEdit, Refused
from sessionview.core.text import escape_control
from sessionview.ui.screens.modal import MODAL_CSS, Dialog

def json_text_area(text: str, *, id: str, json: bool = True) -> TextArea:
    """A TextArea, highlighting JSON when tree-sitter and its JSON grammar are installed (plain otherwise)."""
    if json:
        try:
            return TextArea(text, language="json", id=id, soft_wrap=True, show_line_numbers=True, tab_behavior="focus")
        except Exception:  # LanguageDoesNotExist and friends: no highlighting, same editor
            pass
    return TextArea(text, id=id, soft_wrap=True, show_line_numbers=json, tab_behavior="focus")


def set_json(ta: TextArea, json: bool) -> None:
    """Switch a TextArea between JSON (highlighted where possible, line numbers) and plain text."""
    try:
        ta.language = "json" if json else None
    except Exception:
        ta.language = None
    ta.show_line_numbers = json


def refusal_text(exc: BaseException) -> str:
    return escape_control(str(exc), one_line=False)


@dataclass
class EditorResult:
    mode: str  # "json" or "content"
    json_text: str
    content_text: str | None
    change: Change


class EditorScreen(Dialog["EditorResult | None"]):
    """Edit one message. ``plan(mode, text)`` returns the change or raises InvalidEdit / Refused."""

    DEFAULT_CSS = "EditorScreen {" + MODAL_CSS + "}"

    BINDINGS = [
        Binding("ctrl+s", "check", "Check & preview", id="editor.save"),
        Binding("ctrl+t", "toggle_mode", "JSON ⇄ text only", id="editor.mode"),
        Binding("escape", "reply(None)", "Cancel", id="editor.cancel"),
    ]

    def __init__(
        self,
        title: str,
        json_text: str,
        content_text: str | None,
        plan: Callable[[str, str], Change],
        *,
        mode: str = "json",
        error: str = "",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.buffers: dict[str, str | None] = {"json": json_text, "content": content_text}
        self.mode = mode if content_text is not None or mode == "json" else "json"
        self.plan = plan
        self.error = error
        self.checking = False

    def compose_box(self) -> ComposeResult:
        yield Static(id="editor-title", classes="modal-title")
        yield Static(id="editor-hint", classes="modal-hint")
        yield json_text_area(self.buffers[self.mode] or "", id="editor-text", json=self.mode == "json")
        yield Static(id="editor-error", classes="modal-error")

    def on_mount(self) -> None:
        self._show_mode()
        self.show_error(self.error)
        self.text_area.focus()

    @property
    def text_area(self) -> TextArea:
        return self.query_one("#editor-text", TextArea)

    @property
    def text(self) -> str:
        return self.text_area.text

    def _show_mode(self) -> None:
        what = "the message as JSON" if self.mode == "json" else "the message's text only (the rest is kept as it is)"
        self.query_one("#editor-title", Static).update(Content(f"{self.title_text} · {what}"))
        hint = "ctrl+s checks it and shows a preview · ctrl+t switches JSON ⇄ text only · esc cancels (nothing is written)"
        self.query_one("#editor-hint", Static).update(Content(hint))

    def show_error(self, message: str) -> None:
        self.error = message
        err = self.query_one("#editor-error", Static)
        err.update(Content(("✗ " + message) if message else ""))
        err.set_class(bool(message), "-shown")

    def action_toggle_mode(self) -> None:
        other = "content" if self.mode == "json" else "json"
        if self.buffers[other] is None:
            self.show_error("this message has no single text to edit alone (several blocks, or not text): edit its JSON")
            return
        self.buffers[self.mode] = self.text
        self.mode = other
        ta = self.text_area
        set_json(ta, other == "json")
        ta.load_text(self.buffers[other] or "")
        ta.focus()
        self._show_mode()
        self.show_error("")

    def action_check(self) -> None:
        if self.checking:
            return
        self.checking = True
        self.show_error("")
        self._check(self.mode, self.text)

    @work(exclusive=True, group="check", exit_on_error=False)
    async def _check(self, mode: str, text: str) -> None:
        try:
            change = await asyncio.to_thread(self.plan, mode, text)
        except (InvalidEdit, Refused) as exc:
            self.show_error(refusal_text(exc))
            return
        except ValueError as exc:
            self.show_error(refusal_text(exc))
            return
        finally:
            self.checking = False
        self.buffers[mode] = text
        self.dismiss(EditorResult(mode, self.buffers["json"] or "", self.buffers["content"], change))



@dataclass
class CompactResult:
    text: str
    change: Change


class CompactScreen(Dialog["CompactResult | None"]):
    """Write or make the summary that replaces records ``first..last``.

    ``digest()`` gives the built-in digest; ``summarize(on_start)`` runs the configured summarizer command
    (both blocking: run in threads); ``plan(text)`` checks the result."""

    DEFAULT_CSS = "CompactScreen {" + MODAL_CSS + """
        #compact-busy { height: 1; display: none; }
        #compact-busy.-shown { display: block; }
        #compact-busy LoadingIndicator { width: 8; height: 1; }
        #compact-busy Static { width: 1fr; color: $text-accent; }
    }"""

    BINDINGS = [
        Binding("ctrl+s", "check", "Check & preview", id="compact.save"),
        Binding("ctrl+g", "digest", "Built-in digest", id="compact.digest"),
        Binding("ctrl+r", "summarize", "Run summarizer", id="compact.summarizer"),
        Binding("escape", "cancel", "Cancel", id="compact.cancel"),
    ]

    def __init__(
        self,
        title: str,
        info: str,
        plan: Callable[[str], Change],
        digest: Callable[[], str],
        summarize: Callable[[Callable[[Any], None]], str] | None,
        *,
        summarizer_name: str = "",
        text: str = "",
        error: str = "",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.info = info
        self.plan = plan
        self.digest = digest
        self.summarize = summarize
        self.summarizer_name = summarizer_name
        self.initial = text
        self.error = error
        self.status = ""
        self.checking = False
        self._proc: Any = None
        self._proc_lock = threading.Lock()
        self._cancelled = False

    def compose_box(self) -> ComposeResult:
        yield Static(Content(self.title_text), id="compact-title", classes="modal-title")
        yield Static(id="compact-hint", classes="modal-hint")
        yield json_text_area(self.initial, id="compact-text", json=False)
        with Horizontal(id="compact-busy"):
            yield LoadingIndicator()
            yield Static(id="compact-busy-label")
        yield Static(id="compact-status", classes="modal-status")
        yield Static(id="compact-error", classes="modal-error")

    def on_mount(self) -> None:
        summ = (
            f"ctrl+r runs the summarizer ({escape_control(self.summarizer_name, one_line=True)})"
            if self.summarize is not None
            else "no summarizer command is configured (summarizer = \"…\" in config.toml)"
        )
        hint = f"{self.info}\nType the summary, or ctrl+g fills in the built-in digest, or {summ}; edit it freely. ctrl+s checks it and shows a preview · esc cancels"
        self.query_one("#compact-hint", Static).update(Content(hint))
        self.show_error(self.error)
        self.text_area.focus()

    @property
    def text_area(self) -> TextArea:
        return self.query_one("#compact-text", TextArea)

    @property
    def text(self) -> str:
        return self.text_area.text

    @property
    def running(self) -> bool:
        return any(w.group == "summarizer" and w.is_running for w in self.workers)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "summarize" and self.summarize is None:
            return False
        if action in ("check", "digest", "summarize") and self.running:
            return None
        return True

    def show_error(self, message: str) -> None:
        self.error = message
        err = self.query_one("#compact-error", Static)
        err.update(Content(("✗ " + message) if message else ""))
        err.set_class(bool(message), "-shown")

    def set_status(self, message: str) -> None:
        self.status = message
        self.query_one("#compact-status", Static).update(Content(message))

    def _busy(self, label: str) -> None:
        box = self.query_one("#compact-busy")
        box.set_class(bool(label), "-shown")
        self.query_one("#compact-busy-label", Static).update(Content(label))
        self.text_area.read_only = bool(label)
        self.refresh_bindings()

    # digest
    def action_digest(self) -> None:
        self._fill_digest()

    @work(exclusive=True, group="digest", exit_on_error=False)
    async def _fill_digest(self) -> None:
        try:
            text = await asyncio.to_thread(self.digest)
        except Exception as exc:
            self.show_error(f"the digest failed: {escape_control(str(exc), one_line=True)}")
            return
        self.text_area.load_text(text)
        self.show_error("")
        self.set_status("filled in with the built-in digest: edit it as you like")

    # summarizer
    def action_summarize(self) -> None:
        if self.summarize is None or self.running:
            return
        self._cancelled = False
        self.show_error("")
        self.set_status("")
        self._busy(f"running the summarizer ({escape_control(self.summarizer_name, one_line=True)})… esc cancels")
        self.run_worker(self._run_summarizer, thread=True, group="summarizer", exit_on_error=False)

    def _started(self, proc: Any) -> None:
        with self._proc_lock:
            self._proc = proc
            cancelled = self._cancelled
        if cancelled:
            self._stop_proc()

    def _run_summarizer(self) -> str:
        assert self.summarize is not None
        return self.summarize(self._started)

    def _stop_proc(self) -> None:
        from sessionview.core.edit.summary import stop

        with self._proc_lock:
            proc = self._proc
        if proc is not None:
            stop(proc)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "summarizer" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        with self._proc_lock:
            self._proc = None
        self._busy("")
        if self._cancelled:
            self.set_status("summarizer cancelled (stopped); nothing changed")
            return
        if event.state is WorkerState.SUCCESS:
            self.text_area.load_text(str(worker.result))
            self.set_status("filled in by the summarizer: edit it as you like")
        elif event.state is WorkerState.ERROR:
            self.show_error(f"summarizer failed: {escape_control(str(worker.error), one_line=True)}; your text is kept")

    # check and leave
    def action_check(self) -> None:
        if self.checking or self.running:
            return
        self.checking = True
        self.show_error("")
        self._check(self.text)

    @work(exclusive=True, group="check", exit_on_error=False)
    async def _check(self, text: str) -> None:
        try:
            change = await asyncio.to_thread(self.plan, text)
        except (InvalidEdit, Refused, ValueError) as exc:
            self.show_error(refusal_text(exc))
            return
        finally:
            self.checking = False
        self.dismiss(CompactResult(text, change))

    def action_cancel(self) -> None:
        if self.running:
            with self._proc_lock:
                self._cancelled = True
            self._stop_proc()
            for w in self.workers:
                if w.group == "summarizer":
                    w.cancel()
            return
        self.dismiss(None)
