"""The session screen: header, transcript, record detail, prompt, status, and the keys that drive them.

What happens behind it is owned by objects the screen creates (:mod:`sessionview.ui.controllers`):
:class:`~.follow.Follow` opens, indexes, counts and follows the file; :class:`~.search.Search` searches,
filters and goes to lines; :class:`~.editing.Editing` runs the edit flows with a :class:`~.writer.Writer`.
Their workers post messages to the screen, which hands each one to its owner. What the header and the
status line show are the screen's reactive attributes, bound to those widgets (``data_bind``).
"""

from __future__ import annotations

import importlib
import os
import time
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen

from sessionview.core.text import escape_control
from sessionview.core.view.transcript import Filter, TranscriptModel
from sessionview.ui import messages as msg
from sessionview.ui.controllers.actions import EDIT_BINDING_IDS, WRITE_ACTIONS, may_edit
from sessionview.ui.controllers.follow import STATS_AUTO_LIMIT, Follow
from sessionview.ui.screens.lifetimes import StatusLifetimes
from sessionview.ui.widgets.header import SessionHeader, SessionStatus
from sessionview.ui.widgets.transcript import TranscriptView

if TYPE_CHECKING:  # what the first screen does not need is imported when it is first used
    from sessionview.core.edit.change import Change
    from sessionview.core.edit.history import EditHistory
    from sessionview.ui.widgets.detail import DetailPane
    from sessionview.ui.widgets.prompt import PromptBar


def _controller(module: str, name: str, *needs: str) -> Any:
    """A controller of the screen, made from ``module`` when first used, with the screen and its ``needs``."""

    def make(screen: Any) -> Any:
        return getattr(importlib.import_module(module), name)(screen, *(getattr(screen, n) for n in needs))

    return cached_property(make)


class SessionScreen(Screen):
    CSS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "session.tcss")

    BINDINGS = [
        Binding("slash", "search", "Search", tooltip="find text in every record, from the cursor (n and N: next and previous)", id="session.search"),
        Binding("n", "search_next", "Next match", show=False, id="session.search-next"),
        Binding("N", "search_prev", "Prev match", show=False, id="session.search-prev"),
        Binding("f", "filter", "Filter", tooltip="show only some roles or tools, e.g. assistant tool:shell", id="session.filter"),
        Binding("colon", "goto", "Go to line", show=False, id="session.goto"),
        Binding("p", "partner", "Call↔result", show=False, id="session.partner"),
        Binding("i", "toggle_detail", "Detail", tooltip="the selected record: its fields and its raw line", id="session.detail"),
        Binding("escape", "clear", "Clear range/search/filter", show=False, id="session.clear"),
        Binding("R", "reload", "Reload", show=False, id="session.reload"),
        Binding("q", "back", "Back", tooltip="back to the list of sessions (or quit)", id="session.back"),
        # editing (ids as documented in sessionview/core/config.py; the user keymap can rebind each one)
        Binding("e", "edit", "Edit", tooltip="edit the selected message; a preview comes before anything is written", id="edit"),
        Binding("E", "edit_external", "Edit in $EDITOR", show=False, id="edit_external"),
        Binding("d,delete", "delete", "Delete", tooltip="delete the selected message or the marked range, with a preview first", id="delete"),
        Binding("t", "truncate", "Truncate after", show=False, id="truncate"),
        Binding("v", "mark_range", "Mark range", tooltip="start a range here; move to extend it, then d deletes it or c compacts it", id="mark_range"),
        Binding("shift+up", "extend_range(-1)", "Extend range up", show=False, id="extend_range_up"),
        Binding("shift+down", "extend_range(1)", "Extend range down", show=False, id="extend_range_down"),
        Binding("c", "compact", "Compact", tooltip="replace the marked range by one summary message, with a preview first", id="compact"),
        Binding("u", "undo", "Undo", tooltip="undo the last edit of this run, with a preview first", id="undo"),
        Binding("ctrl+r", "redo", "Redo", show=False, id="redo"),
        Binding("a", "reapply", "Apply again", tooltip="apply again the edit that a conflict or an agent left out of the file", id="reapply"),
        Binding("H", "history", "History & backups", show=False, id="history"),
        # the context view and dropping a tool result's content (sessionview.ui.screens.context)
        Binding("C", "context", "Context", show=False, tooltip="where the tokens go: context over the session, largest records, totals", id="session.context"),
        Binding("D", "drop_result", "Drop result", show=False, tooltip="replace the selected tool result's content by a marker (preview first)", id="drop_result"),
        # the run's overview and getting things out (sessionview.ui.screens.outline, ui.controllers.clipboard)
        Binding("P", "prompts", "Prompts", show=False, tooltip="a list of the user's prompts; enter jumps to one", id="session.prompts"),
        Binding("T", "outline", "Outline", show=False, tooltip="the run as a tree: turns, tool calls, subagents", id="session.outline"),
        Binding("y", "copy_text", "Copy text", show=False, id="session.copy-text"),
        Binding("Y", "copy_raw", "Copy raw JSON", show=False, id="session.copy-raw"),
        Binding("X", "export('md')", "Export/fork", show=False, tooltip="export to Markdown or HTML, or fork at the selected record, into a new file", id="session.export"),
    ]

    COMMANDS = {lambda: importlib.import_module("sessionview.ui.commands").SessionCommands}

    #: seconds a status-line message stays (file events, search results, "saved"); what is still going on
    #: (searching…, a conflict, a deleted file, an error) stays until it is over
    STATUS_LIFETIME = 10.0

    #: binding id -> group title in the help screen (others go under the screen's name)
    HELP_GROUPS = {binding_id: "Editing" for binding_id in EDIT_BINDING_IDS}

    @property
    def help_groups(self) -> dict[str, str]:
        """The help screen's groups: no "Editing" group when nothing can be edited (H stays, as Session)."""
        return {} if self.read_only else self.HELP_GROUPS

    # what the header and the status line show (bound to them in compose)
    model: reactive[TranscriptModel | None] = reactive(None, always_update=True, repaint=False)
    state: reactive[str] = reactive("opening", repaint=False)  # opening, idle, live, deleted, error
    notice: reactive[str] = reactive("", repaint=False)  # the last file event worth saying
    notice_detail: reactive[str] = reactive("", repaint=False)  # the notice in full (compacted)
    index_progress: reactive[float | None] = reactive(None, repaint=False)
    search_status: reactive[str] = reactive("", repaint=False)
    busy: reactive[str] = reactive("", repaint=False)  # what an edit flow is doing ("" when none runs)
    edit_status: reactive[str] = reactive("", repaint=False)  # "saved: …", "conflict: …", "overwritten: …"
    revision: reactive[int] = reactive(0, repaint=False)  # bumped when the model changed inside
    position: reactive[int] = reactive(0, repaint=False)  # bumped when the cursor, range or follow state moved

    def __init__(
        self,
        path: str,
        *,
        display: str | None = None,
        standalone: bool = False,
        clock: Callable[[], float] = time.time,
        poll_interval: float = 0.015,
        read_only: bool = False,
        prefetch: Any = None,
        access: Any = None,
        read_only_reason: str | None = None,
    ) -> None:
        super().__init__()
        self.access = access  # a FileAccess (another host over SFTP: path is the host's), or None for a local file
        self.path = path if access is not None else os.path.abspath(path)
        self.read_only_reason = read_only_reason  # why, besides --read-only (a remote session: ui.fleet)
        self.display_path = display or self.path
        self.standalone = standalone
        self.clock = clock
        self.poll_interval = poll_interval
        self.read_only = read_only or read_only_reason is not None
        self.term = ""
        self.follow = Follow(self, prefetch=prefetch, goto_line=self._goto_line, refilter=self._refilter, rewritten=self._rewritten)
        self._expiry: dict[str, Any] = {}  # the status line's timers, by attribute
        self.lifetimes = StatusLifetimes(self, self._expiry)
        self._said_read_only = False

    # -- the controllers the first screen does not need: made (and imported) when first used ----------
    search = _controller("sessionview.ui.controllers.search", "Search", "follow")
    writer = _controller("sessionview.ui.controllers.writer", "Writer", "follow")
    editing = _controller("sessionview.ui.controllers.editing", "Editing", "writer")
    overview = _controller("sessionview.ui.screens.outline", "Overview")
    clipboard = _controller("sessionview.ui.controllers.clipboard", "Clipboard")
    exporter = _controller("sessionview.ui.dialogs.export", "ExportFlow")

    # -- layout -------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # The detail pane and the prompt are mounted when first used: fewer widgets, a faster first frame.
        transcript = TranscriptView(id="transcript")
        s = SessionScreen
        yield SessionHeader(self.display_path, self.read_only, STATS_AUTO_LIMIT, id="header").data_bind(s.model, s.state, s.revision)
        with Horizontal(id="body"):
            yield transcript
        yield SessionStatus(transcript, id="status").data_bind(
            s.model, s.notice, s.notice_detail, s.index_progress, s.search_status, s.busy, s.edit_status, s.revision, s.position
        )
        yield Horizontal(id="footer-space")  # the footer's row until the first frame is out (on_mount)

    @property
    def transcript(self) -> TranscriptView:
        return self.query_one("#transcript", TranscriptView)

    @property
    def detail(self) -> DetailPane:
        """The detail pane (once it has been opened)."""
        from sessionview.ui.widgets.detail import DetailPane

        return self.query_one("#detail", DetailPane)

    @property
    def detail_shown(self) -> bool:
        found = self.query("#detail")
        return bool(found) and found.first().display

    @property
    def generation(self) -> int:
        """The opening of the file shown (late messages of an earlier one are ignored)."""
        return self.follow.generation

    @property
    def history(self) -> EditHistory | None:
        return self.writer.history if "writer" in self.__dict__ else None

    @property
    def pending_change(self) -> Change | None:
        """An edit that is not in the file (a conflict or an overwrite): ``a`` applies it again."""
        return self.writer.pending_change if "writer" in self.__dict__ else None

    async def _prompt(self) -> PromptBar:
        from sessionview.ui.widgets.prompt import PromptBar

        found = self.query("#prompt")
        if found:
            return found.first(PromptBar)
        bar = PromptBar(id="prompt")
        await self.mount(bar, after="#status")
        return bar

    def on_mount(self) -> None:
        self.transcript.links = self.follow.links
        self.transcript.call_after_first_frame(  # the footer once the first frame is out (widgets.footer)
            lambda: importlib.import_module("sessionview.ui.widgets.footer").mount_in(self.query_one("#footer-space")))
        self.transcript.focus()
        self.edit_status = self.read_only_reason or ""  # it stays on the status line: why nothing can be edited
        self.follow.start_open("")

    def on_unmount(self) -> None:
        self.follow.close()
        if "writer" in self.__dict__:
            self.writer.close()
        self.set_reactive(SessionScreen.model, None)

    # -- for the controllers ------------------------------------------------------------------------
    def cancel_workers(self, group: str) -> None:
        self.workers.cancel_group(self, group)

    def workers_running(self, group: str) -> bool:
        return any(w.group == group and w.is_running for w in self.workers)

    def update_detail(self) -> None:
        if self.detail_shown and self.model is not None:
            self.detail.show(self.model, self.transcript.cursor_number)

    def _goto_line(self, line: int) -> None:
        self.search.goto_line(line)

    def _refilter(self, model: TranscriptModel) -> None:
        self.search.refilter(model)

    def _rewritten(self) -> None:
        if "writer" in self.__dict__:  # else no edit of this run can have been overwritten
            self.writer.maybe_check_overwritten()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return may_edit(action, self.read_only, self.state, self.pending_change)

    def on_key(self, event: events.Key) -> None:
        """A key that would edit, in read-only mode (its binding is off, so nothing else took it): say
        why, once, instead of doing nothing in silence."""
        if not self.read_only or self._said_read_only:
            return
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if binding.action.split("(")[0] in WRITE_ACTIONS:
                self._said_read_only = True
                event.stop()
                self.notify(
                    escape_control(self.read_only_reason, one_line=True) if self.read_only_reason else
                    "read-only: editing is off (started with --read-only, or served without --allow-write)",
                    title="read-only",
                    severity="warning",
                    markup=False,
                )
                return

    def watch_state(self, value: str) -> None:
        self.refresh_bindings()  # the edit keys are off while nothing could be opened

    # the status line's lifetimes (sessionview.ui.screens.lifetimes)
    def watch_notice(self, value: str) -> None:
        self.lifetimes.notice(value)

    def watch_search_status(self, value: str) -> None:
        self.lifetimes.search_status(value)

    def watch_edit_status(self, value: str) -> None:
        self.lifetimes.edit_status(value)

    # -- messages from the workers ------------------------------------------------------------------
    @on(msg.Opened)
    def _opened(self, message: msg.Opened) -> None:
        self.follow.opened(message)

    @on(msg.OpenFailed)
    def _open_failed(self, message: msg.OpenFailed) -> None:
        self.follow.open_failed(message)

    @on(msg.IndexProgress)
    def _index_progress(self, message: msg.IndexProgress) -> None:
        self.follow.index_progress(message)

    @on(msg.IndexBuilt)
    def _index_built(self, message: msg.IndexBuilt) -> None:
        self.follow.index_built(message)

    @on(msg.StatsReady)
    def _stats_ready(self, message: msg.StatsReady) -> None:
        self.follow.stats_ready(message)

    @on(msg.FollowEvents)
    def _follow_events(self, message: msg.FollowEvents) -> None:
        self.follow.follow_events(message)

    @on(msg.SearchProgress)
    def _search_progress(self, message: msg.SearchProgress) -> None:
        self.search.progress(message)

    @on(msg.SearchDone)
    def _search_done(self, message: msg.SearchDone) -> None:
        self.search.done(message)

    @on(msg.FilterDone)
    def _filter_done(self, message: msg.FilterDone) -> None:
        self.search.filter_done(message)

    @on(TranscriptView.CursorMoved)
    def _cursor_moved(self, message: TranscriptView.CursorMoved) -> None:
        self.position += 1
        self.update_detail()

    @on(TranscriptView.FollowChanged)
    def _follow_changed(self, message: TranscriptView.FollowChanged) -> None:
        self.position += 1

    # -- actions ------------------------------------------------------------------------------------
    async def action_toggle_detail(self) -> None:
        if not self.query("#detail"):
            from sessionview.ui.widgets.detail import DetailPane

            await self.query_one("#body").mount(DetailPane(id="detail"))
            self.update_detail()
            return
        d = self.detail
        d.display = not d.display
        if d.display:
            self.update_detail()

    def action_back(self) -> None:
        if self.standalone:
            self.app.exit(0)
        else:
            self.app.pop_screen()

    def action_reload(self) -> None:
        self.follow.start_open("")

    def action_clear(self) -> None:
        if self.transcript.range_anchor is not None:
            self.transcript.clear_range()
            return
        if self.workers_running("search"):
            self.cancel_workers("search")
            self.search_status = "search cancelled"
            return
        if self.term:
            self.term = ""
            self.search_status = ""
            self.transcript.set_term("")
            return
        if self.model is not None and self.model.filter.active:
            self.search.apply_filter(Filter())
            return
        if self.detail_shown:
            self.detail.display = False
            return
        self.action_back()

    def action_follow_end(self) -> None:
        self.transcript.resume_follow()

    def action_clear_filter(self) -> None:
        self.search.apply_filter(Filter())

    # search, go to line, filter
    async def action_search(self) -> None:
        (await self._prompt()).open("search", "/", self.term, placeholder="text to find (case-insensitive)")

    async def action_search_next(self) -> None:
        if not self.search.search(forward=True):
            await self.action_search()

    async def action_search_prev(self) -> None:
        if not self.search.search(forward=False):
            await self.action_search()

    async def action_goto(self) -> None:
        (await self._prompt()).open("goto", ":", "", placeholder="line number (g first, G last)")

    async def action_filter(self) -> None:
        model = self.model
        if model is None:
            return
        hint = self.search.filter_hint(model)
        (await self._prompt()).open("filter", "filter:", model.filter.describe(), hint=hint, placeholder="user assistant tool:NAME")

    # editing (the flows are in sessionview.ui.controllers.editing)
    def action_edit(self) -> None:
        self.editing.edit()

    def action_edit_external(self) -> None:
        self.editing.edit_external()

    def action_delete(self) -> None:
        self.editing.delete()

    def action_truncate(self) -> None:
        self.editing.truncate()

    def action_mark_range(self) -> None:
        self.editing.mark_range()

    def action_extend_range(self, delta: int) -> None:
        self.editing.extend_range(delta)

    def action_compact(self) -> None:
        self.editing.compact()

    def action_undo(self) -> None:
        self.editing.undo()

    def action_redo(self) -> None:
        self.editing.redo()

    def action_reapply(self) -> None:
        self.editing.reapply()

    def action_history(self) -> None:
        self.editing.show_history()

    # the context view; dropping a tool result's content (from here or from the context view)
    def action_context(self) -> None:
        from sessionview.ui.screens.context import ContextScreen

        if self.model is None:
            return
        self.app.push_screen(ContextScreen(self))

    def action_drop_result(self) -> None:
        self.editing.drop_result()

    def drop_result_of(self, n: int) -> None:
        """Drop the content of record ``n``'s tool results (the context view's ``D``)."""
        self.editing.drop_result(n)

    def show_record(self, n: int) -> None:
        """Put the cursor on record ``n`` (the context view's jump)."""
        model = self.model
        if model is None:
            return
        if not model.row_visible(n):
            self.notify("that record is hidden by the filter (esc clears it)", markup=False)
            return
        self.transcript.move_cursor_to(model.row_of(n), center=True)

    # the run's overview, copy (sessionview.ui.screens.outline, sessionview.ui.controllers.clipboard)
    async def action_prompts(self) -> None:
        await self.overview.show_prompts()

    async def action_outline(self) -> None:
        await self.overview.show_outline()

    def action_copy_text(self) -> None:
        self.clipboard.copy_text()

    def action_copy_raw(self) -> None:
        self.clipboard.copy_raw()

    def action_export(self, kind: str) -> None:
        self.exporter.start(kind)

    # call <-> result
    def action_partner(self) -> None:
        model = self.model
        n = self.transcript.cursor_number
        if model is None or n is None:
            return
        view = model.view(n)
        if not view.tool_calls and not view.tool_results:
            self.notify("this record has no tool call or result", markup=False)
            return
        m = model.partner(n, view)
        if m is None:
            what = "result" if view.tool_calls else "call"
            self.notify(f"no matching tool {what} found", markup=False)
            return
        if not model.row_visible(m):
            self.notify("its partner is hidden by the filter", markup=False)
            return
        self.transcript.move_cursor_to(model.row_of(m), center=True)

    # prompt
    def on_prompt_bar_submitted(self, message: PromptBar.Submitted) -> None:
        self.transcript.focus()
        value = message.value
        if message.kind == "search":
            self.search.set_term(value)
        elif message.kind == "goto":
            text = value.strip().lstrip("#:").replace(",", "").replace("_", "")
            if text.isdigit():
                self._goto_line(int(text))
            elif text:
                self.notify("type a line number", markup=False)
        elif message.kind == "filter":
            self.search.apply_filter(Filter.parse(value))

    def on_prompt_bar_cancelled(self, message: PromptBar.Cancelled) -> None:
        self.transcript.focus()
