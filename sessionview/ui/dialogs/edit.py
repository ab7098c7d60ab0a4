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
from sessionview.ui.dialogs.modal import MODAL_CSS, Dialog

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
    """The core's message, without its command-line advice (``use --force``)."""
    from sessionview.ui.wording import app_advice

    return escape_control(app_advice(exc), one_line=False)


@dataclass
class EditorResult:
    mode: str  # "json" or "content"
    json_text: str
    content_text: str | None
    change: Change
    forced: bool = False  # done anyway: the integrity check refused it and the user chose ctrl+f


class EditorScreen(Dialog["EditorResult | None"]):
    """Edit one message. ``plan(mode, text, force)`` returns the change or raises InvalidEdit / Refused.

    A refusal that ``force`` would let through is shown with ``ctrl+f``: write it anyway (a preview comes
    first). Escape asks before it throws away a text that was changed."""

    DEFAULT_CSS = "EditorScreen {" + MODAL_CSS + "}"

    BINDINGS = [
        Binding("ctrl+s", "check", "Check & preview", id="editor.save"),
        Binding("ctrl+t", "toggle_mode", "JSON ⇄ text only", id="editor.mode"),
        Binding("ctrl+f", "check(True)", "Write it anyway", id="editor.anyway"),
        Binding("escape", "cancel", "Cancel", id="editor.cancel"),
    ]

    def __init__(
        self,
        title: str,
        json_text: str,
        content_text: str | None,
        plan: Callable[[str, str, bool], Change],
        *,
        mode: str = "json",
        error: str = "",
        original: tuple[str, str | None] | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.buffers: dict[str, str | None] = {"json": json_text, "content": content_text}
        #: the message as it is in the file (JSON, text): escape asks before throwing away anything else
        self.original = original or (json_text, content_text)
        self.forceable = False  # the last check was refused, and ctrl+f would write it anyway
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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "check" and parameters == (True,) and not self.forceable:
            return False
        return True

    @property
    def changed(self) -> bool:
        """Whether the text differs from the message in the file (in either mode)."""
        buffers = dict(self.buffers, **{self.mode: self.text})
        json_text, content = self.original
        return (buffers["json"] or "").strip() != json_text.strip() or (
            content is not None and buffers["content"] is not None and buffers["content"] != content
        )

    def action_cancel(self) -> None:
        if not self.changed:
            self.dismiss(None)
            return
        from sessionview.ui.dialogs.confirm import ConfirmScreen

        def answered(throw_away: bool | None) -> None:
            if throw_away:
                self.dismiss(None)
            else:
                self.text_area.focus()

        question = ConfirmScreen(
            "throw the edit away?",
            "The text was changed. Leave the editor without it (nothing is written)?",
            keys="y or enter: throw it away · n or esc: back to the editor",
        )
        self.app.push_screen(question, answered)

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

    def action_check(self, force: bool = False) -> None:
        if self.checking:
            return
        self.checking = True
        self.show_error("")
        self._check(self.mode, self.text, force)

    @work(exclusive=True, group="check", exit_on_error=False)
    async def _check(self, mode: str, text: str, force: bool = False) -> None:
        self.forceable = False
        try:
            try:
                change = await asyncio.to_thread(self.plan, mode, text, force)
            except Refused as exc:
                self.forceable = await self._would_pass_anyway(mode, text)
                anyway = " · ctrl+f writes it anyway (a preview comes first)" if self.forceable else ""
                self.show_error(refusal_text(exc) + anyway)
                return
            except (InvalidEdit, ValueError) as exc:
                self.show_error(refusal_text(exc))
                return
        finally:
            self.checking = False
            self.refresh_bindings()
        self.buffers[mode] = text
        self.dismiss(EditorResult(mode, self.buffers["json"] or "", self.buffers["content"], change, forced=force))

    async def _would_pass_anyway(self, mode: str, text: str) -> bool:
        try:
            await asyncio.to_thread(self.plan, mode, text, True)
        except (InvalidEdit, Refused, ValueError):
            return False
        return True



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
        if self.summarize is not None:
            name = escape_control(self.summarizer_name, one_line=True)
            how = f"Type the summary, or fill it in with the built-in digest (ctrl+g) or the summarizer (ctrl+r: {name}); edit it freely."
        else:
            how = (
                "Type the summary, or fill it in with the built-in digest (ctrl+g); edit it freely. "
                'No summarizer command is configured (summarizer = "…" in config.toml runs one).'
            )
        hint = f"{self.info}\n{how} ctrl+s checks it and shows a preview · esc cancels"
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
