"""The context view of a session (``C`` on the session screen): where the tokens go.

A sparkline of the context's size over the session, the largest records ranked with a token bar each
(``enter`` jumps to the record in the session screen, ``D`` drops a tool result's content, through the same
preview, safe save and undo as every edit), and totals by role and by tool. Numbers the file records are
shown as they are; estimates carry ``~``. The profile is counted in a thread; the screen counts again when
the session's file changes (a save, an append).
"""

from __future__ import annotations

from typing import Any, Protocol

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Sparkline, Static
from textual.worker import get_current_worker

from sessionview.core.text import escape_control
from sessionview.core.view.context import ContextProfile
from sessionview.core.view.humanize import human_count
from sessionview.core.view.transcript import TranscriptModel
from sessionview.ui.wording import plural



class SessionLike(Protocol):
    """What the context view asks of the session screen under it."""

    model: TranscriptModel | None
    display_path: str
    read_only: bool
    state: str

    def show_record(self, n: int) -> None: ...
    def drop_result_of(self, n: int) -> None: ...

BAR = 12  # cells of a token bar
SHOWN = 100  # records in the ranking
INLINE_LIMIT = 2000  # appended records counted on the UI thread at most


def bar(value: int, top: int, width: int = BAR) -> str:
    """``█████▍      ``: ``value`` of ``top`` in ``width`` cells (eighths)."""
    if top <= 0 or value <= 0:
        return " " * width
    eighths = max(1, round(value / top * width * 8))
    full, part = divmod(min(eighths, width * 8), 8)
    return ("█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")).ljust(width)


def what_of(view: Any) -> str:
    """One line saying what a record is: its tool calls, the tool it answers, or its first words."""
    if view.tool_calls:
        return "→ " + ", ".join(c.name for c in view.tool_calls)
    if view.tool_results:
        return "← " + ", ".join(r.name or r.call_id or "result" for r in view.tool_results)
    text = (view.text or view.reasoning or view.label or "").strip().replace("\n", " ")
    return text[:80]


def compute_profile(model: TranscriptModel, should_stop: Any = lambda: False) -> ContextProfile | None:
    profile = ContextProfile()
    for view in model.scanner().quick_views(1, len(model), should_stop):
        profile.add(view)
    if should_stop():
        return None
    profile.complete = True
    return profile


class ContextScreen(Screen):
    """Where the session's context goes; pushed over ``session`` (a :class:`SessionScreen`)."""

    CSS = """
    ContextScreen { layout: vertical; background: $surface; }
    ContextScreen #context-title { height: 2; padding: 0 1; background: $panel; }
    ContextScreen #context-spark-label { height: 1; padding: 0 1; color: $text-muted; }
    ContextScreen #context-spark { height: 4; margin: 0 1; }
    ContextScreen #context-body { height: 1fr; }
    ContextScreen #context-largest { width: 1fr; }
    ContextScreen #context-totals { width: 44; padding: 0 1; border-left: vkey $primary 40%; }
    """

    BINDINGS = [
        Binding("enter", "jump", "Go to record", tooltip="show the selected record in the transcript", id="context.jump"),
        Binding("D", "drop_result", "Drop result", tooltip="replace the selected tool result's content by a marker (preview first)", id="context.drop_result"),
        Binding("escape,q,C", "back", "Back", id="context.back"),
    ]

    class Counted(Message):
        def __init__(self, profile: ContextProfile, generation: int, model: TranscriptModel) -> None:
            super().__init__()
            self.profile = profile
            self.generation = generation
            self.model = model

    def __init__(self, session: Any) -> None:  # a SessionScreen (SessionLike)
        super().__init__()
        self.session: SessionLike = session
        self.profile: ContextProfile | None = None
        self.rows: list[int] = []  # record numbers of the table's rows
        self._generation = 0
        self._counted_model: TranscriptModel | None = None  # the model the profile counts

    def compose(self) -> ComposeResult:
        yield Static(id="context-title")
        yield Static("context over the session: counting…", id="context-spark-label")
        yield Sparkline([], id="context-spark")
        with Horizontal(id="context-body"):
            table: DataTable[Any] = DataTable(id="context-largest", cursor_type="row", zebra_stripes=False)
            yield table
            with Vertical(id="context-totals"):
                yield Static(id="context-totals-text")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#context-largest", DataTable)
        table.add_columns("tokens", "", "#", "role", "what")
        table.focus()
        self._title()
        self.watch(self.session, "model", self._model_changed, init=False)
        self.watch(self.session, "revision", self._model_changed, init=False)
        self.recount()

    # -- counting -------------------------------------------------------------------------------------
    def recount(self) -> None:
        model = self.session.model
        if model is None or not model.indexed:
            self.query_one("#context-spark-label", Static).update("context over the session: waiting for the index…")
            return
        self._generation += 1
        self._count(model, self._generation)

    def _model_changed(self, _value: object = None) -> None:
        """The session's model changed (a reload, a save) or grew (an append): count again, or only what
        was appended when that is little."""
        model, profile = self.session.model, self.profile
        if model is None or not model.indexed:
            return
        if profile is None or model is not self._counted_model or len(model) < len(profile):
            if not self.workers_running():
                self.recount()
            return
        added = len(model) - len(profile)
        if 0 < added <= INLINE_LIMIT:
            for view in model.scanner().quick_views(len(profile) + 1, len(model)):
                profile.add(view)
            self._show(profile)
        elif added:
            self.recount()

    def workers_running(self) -> bool:
        return any(w.group == "context" and w.is_running for w in self.workers)

    @work(thread=True, exclusive=True, group="context", exit_on_error=False)
    def _count(self, model: TranscriptModel, generation: int) -> None:
        worker = get_current_worker()
        profile = compute_profile(model, lambda: worker.is_cancelled)
        if profile is not None:
            self.post_message(self.Counted(profile, generation, model))

    @on(Counted)
    def _counted(self, message: Counted) -> None:
        if message.generation != self._generation:
            return
        self.profile = message.profile
        self._counted_model = message.model
        self._show(message.profile)

    # -- what is shown ------------------------------------------------------------------------------
    def _title(self) -> None:
        model = self.session.model
        path = escape_control(self.session.display_path, one_line=True)
        line1 = Content.assemble(("context ", "bold $text-accent"), (path, "bold"))
        line2 = Content.assemble(("counting…", "$text-muted"))
        if self.profile is not None and model is not None:
            line2 = Content.assemble(*summary_parts(self.profile))
        self.query_one("#context-title", Static).update(Content("\n").join([line1, line2]))

    def _show(self, profile: ContextProfile) -> None:
        self._title()
        model = self.session.model
        spark = self.query_one("#context-spark", Sparkline)
        spark.data = profile.series(max(10, self.size.width - 2))
        tilde = "" if profile.real else "~"
        how = "recorded usage" if profile.real else "estimated from the text, reset at each compaction"
        label = f"context over the session ({how}): peak {tilde}{human_count(profile.peak())} · now {tilde}{human_count(profile.last())}"
        self.query_one("#context-spark-label", Static).update(Content(label))
        table = self.query_one("#context-largest", DataTable)
        keep = table.cursor_row if table.row_count else 0
        table.clear()
        self.rows = []
        largest = profile.largest(SHOWN)
        top = largest[0][1] if largest else 0
        for number, tokens in largest:
            if model is None or number > len(model):
                continue
            view = model.view(number)
            line = model.line_number(number)
            table.add_row(
                Text(f"~{human_count(tokens)}", justify="right"),
                Text(bar(tokens, top), style="bold"),
                Text(f"#{line:,}" if line is not None else "#…"),
                Text(escape_control(view.role or view.label or view.kind.value, one_line=True)[:20]),
                Text(escape_control(what_of(view), one_line=True)),
            )
            self.rows.append(number)
        if self.rows:
            table.move_cursor(row=min(keep, len(self.rows) - 1))
        self.query_one("#context-totals-text", Static).update(totals_content(profile))

    # -- actions --------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "drop_result" and (self.session.read_only or self.session.state == "error"):
            return False  # read-only: nothing may be written
        return True

    @property
    def selected(self) -> int | None:
        """The record number of the selected row."""
        table = self.query_one("#context-largest", DataTable)
        if not self.rows or not 0 <= table.cursor_row < len(self.rows):
            return None
        return self.rows[table.cursor_row]

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_jump()

    def action_jump(self) -> None:
        n = self.selected
        if n is None:
            return
        self.app.pop_screen()
        self.session.show_record(n)

    def action_drop_result(self) -> None:
        n = self.selected
        if n is None:
            return
        self.session.drop_result_of(n)

    def action_back(self) -> None:
        self.app.pop_screen()


def summary_parts(profile: ContextProfile) -> list[tuple[str, str] | str]:
    """The recorded usage in full (or that there is none), then the estimate of what the records hold."""
    parts: list[tuple[str, str] | str] = []
    u = profile.usage
    if u.recorded:
        s = u.sum
        parts.append(("recorded: ", "$text-muted"))
        parts.append((f"{human_count(s.input)} in · {human_count(s.output)} out · {human_count(s.cache_read)} cache read · "
                      f"{human_count(s.cache_write)} cache write", "bold"))
        parts.append((f" · {plural(u.records, 'response')}", "$text-muted"))
    else:
        parts.append(("no usage recorded in this file", "$text-muted"))
    parts.append((f"   records hold ~{human_count(profile.total)} tok (estimated) · {plural(len(profile), 'record')}", "$text-muted"))
    return parts


def totals_content(profile: ContextProfile) -> Content:
    """Totals by role and by tool, each with its bar (estimated tokens)."""
    lines: list[Content] = [Content.styled("by role (~tokens)", "bold")]
    roles = sorted(profile.by_role.items(), key=lambda kv: (-kv[1].tokens, kv[0]))
    top = roles[0][1].tokens if roles else 0
    for role, share in roles[:12]:
        name = escape_control(role, one_line=True)[:12].ljust(12)
        lines.append(Content.assemble(f"{name} ", (bar(share.tokens, top, 10), "$text-accent"), f" ~{human_count(share.tokens):>6} · {share.count:,}"))
    lines.append(Content(""))
    lines.append(Content.styled("by tool (~tokens: calls and results)", "bold"))
    tools = sorted(profile.by_tool.items(), key=lambda kv: (-kv[1].tokens, kv[0]))
    top = tools[0][1].tokens if tools else 0
    if not tools:
        lines.append(Content.styled("no tool calls", "$text-muted"))
    for tool, share in tools[:16]:
        name = escape_control(tool, one_line=True)[:12].ljust(12)
        lines.append(Content.assemble(f"{name} ", (bar(share.tokens, top, 10), "$text-warning"), f" ~{human_count(share.tokens):>6} · {share.count:,}×"))
    return Content("\n").join(lines)


__all__ = ["ContextScreen", "bar", "compute_profile"]
