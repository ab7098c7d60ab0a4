"""The session screen: header, transcript, record detail, prompt, status; and the workers behind them.

Workers (all post messages back, tagged with the opening's ``generation``):

* open (thread): open the file end first, so the last page shows at once;
* index (thread): build the full line index, then line numbers are known;
* stats (thread): counts, tokens and tool-call pairing over every record;
* follow (thread): poll the file with a :class:`~sessionview.core.tail.Follower` every few milliseconds;
* search / filter (thread): scan every record, cancellable, with progress.

Editing (edit, delete, truncate, compact, undo, redo, restore) lives in :mod:`.session_edit`.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from sessionview.core.doc.model import View
from sessionview.core.doc.document import open_regular
from sessionview.core.tail import Appended, Compacted, Deleted, Follower, Pending, Renamed, Replaced, Truncated, full_index
from sessionview.core.text import escape_control
from sessionview.ui import messages as msg
from sessionview.core.view.transcript import Filter, Stats, TranscriptModel
from sessionview.core.view.search import filter_rows, find
from sessionview.ui.widgets.blocks import Links
from sessionview.ui.widgets.detail import DetailPane
from sessionview.ui.widgets.header import REASONS, compaction_text, header_content, status_content
from sessionview.ui.widgets.prompt import PromptBar
from sessionview.ui.screens.session_edit import EDIT_BINDING_IDS, EditingMixin
from sessionview.ui.widgets.transcript import TranscriptView

LIVE_WINDOW = 5.0
STATS_AUTO_LIMIT = 256 << 20  # files up to this size get their stats computed at once
INLINE_APPEND_LIMIT = 2000  # appended records looked at on the UI thread at most


class SessionScreen(EditingMixin, Screen):
    CSS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "session.tcss")

    BINDINGS = [
        Binding("slash", "search", "Search", id="session.search"),
        Binding("n", "search_next", "Next match", show=False, id="session.search-next"),
        Binding("N", "search_prev", "Prev match", show=False, id="session.search-prev"),
        Binding("f", "filter", "Filter", id="session.filter"),
        Binding("colon", "goto", "Go to line", show=False, id="session.goto"),
        Binding("p", "partner", "Call↔result", show=False, id="session.partner"),
        Binding("i", "toggle_detail", "Detail", id="session.detail"),
        Binding("escape", "clear", "Clear range/search/filter", show=False, id="session.clear"),
        Binding("R", "reload", "Reload", show=False, id="session.reload"),
        Binding("q", "back", "Back", id="session.back"),
        # editing (ids as documented in sessionview/config.py; the user keymap can rebind each one)
        Binding("e", "edit", "Edit", id="edit"),
        Binding("E", "edit_external", "Edit in $EDITOR", show=False, id="edit_external"),
        Binding("d,delete", "delete", "Delete", id="delete"),
        Binding("t", "truncate", "Truncate after", show=False, id="truncate"),
        Binding("v", "mark_range", "Mark range", id="mark_range"),
        Binding("shift+up", "extend_range(-1)", "Extend range up", show=False, id="extend_range_up"),
        Binding("shift+down", "extend_range(1)", "Extend range down", show=False, id="extend_range_down"),
        Binding("c", "compact", "Compact", id="compact"),
        Binding("u", "undo", "Undo", id="undo"),
        Binding("ctrl+r", "redo", "Redo", show=False, id="redo"),
        Binding("a", "reapply", "Apply again", id="reapply"),
        Binding("H", "history", "History & backups", show=False, id="history"),
    ]

    #: binding id -> group title in the help screen (others go under the screen's name)
    HELP_GROUPS = {binding_id: "Editing" for binding_id in EDIT_BINDING_IDS}

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
    ) -> None:
        super().__init__()
        self._prefetch = prefetch  # a Future of the model, opened before Textual was imported
        self.path = os.path.abspath(path)
        self.display_path = display or self.path
        self.standalone = standalone
        self.clock = clock
        self.poll_interval = poll_interval
        self.read_only = read_only
        self.model: TranscriptModel | None = None
        self.generation = 0
        self.state = "opening"  # opening, idle, live, deleted, error
        self.last_change: float | None = None
        self.notice = ""  # the last file event worth saying: truncated, compacted, replaced, deleted
        self.notice_detail = ""  # what the notice says in full, when REASONS is not enough (compacted)
        self._compaction: tuple[Compacted, int | None] | None = None  # the event and the count before it
        self.term = ""
        self.search_status = ""
        self.index_progress: float | None = None
        self.pending_goto: int | None = None
        self._stop_follow: threading.Event | None = None
        self._live_timer = None
        self._reload_timer = None
        self._init_editing()

    # -- layout -------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # The detail pane and the prompt are mounted when first used: fewer widgets, a faster first frame.
        yield Static(id="header")
        with Horizontal(id="body"):
            yield TranscriptView(id="transcript")
        yield Static(id="status")
        yield Footer(compact=True)

    @property
    def transcript(self) -> TranscriptView:
        return self.query_one("#transcript", TranscriptView)

    @property
    def detail(self) -> DetailPane:
        """The detail pane (once it has been opened)."""
        return self.query_one("#detail", DetailPane)

    @property
    def detail_shown(self) -> bool:
        found = self.query("#detail")
        return bool(found) and found.first().display

    async def _prompt(self) -> PromptBar:
        found = self.query("#prompt")
        if found:
            return found.first(PromptBar)
        bar = PromptBar(id="prompt")
        await self.mount(bar, after="#status")
        return bar

    def on_mount(self) -> None:
        self.transcript.links = self._links
        self.transcript.focus()
        self._refresh_header()
        self._refresh_status()
        self._start_open("")

    def on_unmount(self) -> None:
        self._stop_following()
        self._close_editing()
        if self.model is not None:
            self.model.close()
            self.model = None

    # -- opening ------------------------------------------------------------------------------------
    def _start_open(self, reason: str) -> None:
        self.generation += 1
        self._stop_following()
        self.workers.cancel_group(self, "index")
        self.workers.cancel_group(self, "stats")
        self.workers.cancel_group(self, "search")
        self.workers.cancel_group(self, "filter")
        prefetch, self._prefetch = self._prefetch, None
        if prefetch is not None and prefetch.done() and prefetch.exception() is None:
            self._opened(msg.Opened(self.generation, prefetch.result(), reason))
            return
        self._open_worker(self.generation, reason, prefetch)

    @work(thread=True, exclusive=True, group="open", exit_on_error=False)
    def _open_worker(self, generation: int, reason: str, prefetch: Any = None) -> None:
        try:
            model = prefetch.result() if prefetch is not None else TranscriptModel.open(self.path)
        except Exception as exc:
            self.post_message(msg.OpenFailed(generation, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(msg.Opened(generation, model, reason))

    @on(msg.OpenFailed)
    def _open_failed(self, message: msg.OpenFailed) -> None:
        if message.generation != self.generation:
            return
        self.state = "error"
        self.notice = message.error
        self._refresh_header()
        self._refresh_status()
        self.notify(escape_control(message.error, one_line=True), title="cannot open", severity="error", markup=False)
        # keep watching: the file may appear or become readable
        self._start_following(None)

    @on(msg.Opened)
    def _opened(self, message: msg.Opened) -> None:
        if message.generation != self.generation:
            message.model.close()
            return
        old = self.model
        model: TranscriptModel = message.model
        if old is not None and old.filter.active:
            model.filter = old.filter  # kept across a reload; its rows come from the filter worker
        self.model = model
        if self.term:
            self.transcript.term = self.term
        self.transcript.set_model(model)
        if old is not None:
            old.close()
        self.index_progress = None if model.indexed else 0.0
        if message.reason == "saved":
            # our own save replaced the file: no alarm, and it does not make the session live
            self.notice = ""
        else:
            if message.reason:
                self.notice = message.reason
                self.notice_detail = self._compaction_detail(model) if message.reason == "compacted" else ""
                if self.edit_status.startswith("saved"):
                    self.edit_status = ""  # older news than this
                if self.notice_detail:
                    self.notify(f"{message.reason} {self.notice_detail}", title="file changed", markup=False)
                else:
                    self.notify(f"{message.reason}: {REASONS.get(message.reason, '')}", title="file changed", markup=False)
            try:
                st = os.stat(self.path)
                recent = self.clock() - st.st_mtime <= LIVE_WINDOW
            except OSError:
                recent = False
            if message.reason or recent:
                self.last_change = self.clock()
        self.state = "live" if self._is_live() else "idle"
        self._arm_live_timer()
        self._start_following(model)
        if not model.indexed:
            # after the first frame: the scan would compete with it for the interpreter
            generation = self.generation
            self.call_after_refresh(lambda: generation == self.generation and self._index_worker(generation, model))
        else:
            self._maybe_stats()
            self._after_index()
            if model.filter.active:
                self._filter_worker(self.generation, model, model.filter)
        self._refresh_header()
        self._refresh_status()
        self._update_detail()

    # -- index and stats ----------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _index_worker(self, generation: int, model: TranscriptModel) -> None:
        worker = get_current_worker()
        assert model.tail is not None
        end = model.tail.end
        last = [0.0]

        def progress(pos: int) -> None:
            if worker.is_cancelled:
                raise InterruptedError
            now = time.monotonic()
            if now - last[0] > 0.1:
                last[0] = now
                self.post_message(msg.IndexProgress(generation, pos / max(1, end)))

        try:
            source = full_index(model.tail.fd, end, progress)
        except InterruptedError:
            return
        except OSError:
            # the file changed under the scan (a rewrite): the follower reports it, and we reopen then
            return
        self.post_message(msg.IndexBuilt(generation, source))

    @on(msg.IndexProgress)
    def _index_progress(self, message: msg.IndexProgress) -> None:
        if message.generation == self.generation:
            self.index_progress = message.fraction
            self._refresh_status()

    @on(msg.IndexBuilt)
    def _index_built(self, message: msg.IndexBuilt) -> None:
        model = self.model
        if message.generation != self.generation or model is None:
            return
        filtered = model.rows is not None
        shift = model.attach_index(message.source)
        self.index_progress = None
        t = self.transcript
        t.expanded = {n + shift for n in t.expanded}
        if t.range_anchor is not None:
            t.range_anchor += shift
        t.remap(lambda row: row if filtered else row + shift)
        self._maybe_stats()
        self._after_index()
        if model.filter.active:
            self._filter_worker(self.generation, model, model.filter)
        self._refresh_header()
        self._refresh_status()
        self._update_detail()

    def _after_index(self) -> None:
        if self.pending_goto is not None:
            line = self.pending_goto
            self.pending_goto = None
            self._goto_line(line)

    def _maybe_stats(self, force: bool = False) -> None:
        model = self.model
        if model is None or not model.indexed:
            return
        if force or not model.lines or model.size <= STATS_AUTO_LIMIT:
            model.appended_stats = Stats()
            self._stats_worker(self.generation, model)

    @work(thread=True, exclusive=True, group="stats", exit_on_error=False)
    def _stats_worker(self, generation: int, model: TranscriptModel) -> None:
        worker = get_current_worker()
        stats = model.compute_stats(lambda: worker.is_cancelled)
        if stats is not None:
            self.post_message(msg.StatsReady(generation, stats))

    @on(msg.StatsReady)
    def _stats_ready(self, message: msg.StatsReady) -> None:
        model = self.model
        if message.generation != self.generation or model is None:
            return
        stats: Stats = message.stats
        stats.merge(model.appended_stats)
        model.stats = stats
        model.appended_stats = Stats()
        self.transcript.invalidate()
        self._refresh_header()

    def _links(self, view: View) -> Links:
        model = self.model
        if model is None or (not view.tool_calls and not view.tool_results):
            return Links()
        known = [s for s in (model.stats, model.appended_stats) if s is not None]
        results: dict[str, int | None] = {}
        calls: dict[str, int | None] = {}
        names: dict[str, str] = {}
        for c in view.tool_calls:
            if c.id is not None:
                found = next((s.results[c.id] for s in known if c.id in s.results), None)
                results[c.id] = model.line_number(found) if found is not None else None
        for r in view.tool_results:
            if r.call_id is not None:
                found = next((s.calls[r.call_id] for s in known if r.call_id in s.calls), None)
                calls[r.call_id] = model.line_number(found) if found is not None else None
                name = next((s.names[r.call_id] for s in known if r.call_id in s.names), None)
                if name:
                    names[r.call_id] = name
        if model.stats is None:  # not known yet: do not claim "no result"
            results = {k: v for k, v in results.items() if v is not None}
            calls = {k: v for k, v in calls.items() if v is not None}
        return Links(results, calls, names)

    # -- following ----------------------------------------------------------------------------------
    def _start_following(self, model: TranscriptModel | None) -> None:
        self._stop_following()
        stop = threading.Event()
        self._stop_follow = stop
        fd = None
        offset = 0
        if model is not None and model.tail is not None:
            fd = os.dup(model.tail.fd)
            offset = model.end
        elif model is not None:
            offset = -1  # a whole document: any change reloads it
        self._follow_worker(self.generation, stop, fd, offset)

    def _stop_following(self) -> None:
        if self._stop_follow is not None:
            self._stop_follow.set()
            self._stop_follow = None

    @work(thread=True, group="follow", exit_on_error=False)
    def _follow_worker(self, generation: int, stop: threading.Event, fd: int | None, offset: int) -> None:
        follower: Follower | None = None
        try:
            while not stop.is_set():
                if follower is None:
                    try:
                        if fd is not None:
                            follower = Follower(self.path, fd=fd, offset=offset)
                            fd = None
                        else:
                            follower = Follower(self.path)
                            if offset == -1:
                                follower.poll()  # a document: only changes after this matter
                            else:
                                # the file could not be opened before: now it can
                                self.post_message(msg.FollowEvents(generation, [Replaced("the file appeared")]))
                                return
                    except OSError:
                        stop.wait(0.25)
                        continue
                events = follower.poll()
                if events:
                    self.post_message(msg.FollowEvents(generation, events))
                stop.wait(self.poll_interval)
        finally:
            if follower is not None:
                follower.close()
            if fd is not None:
                os.close(fd)

    @on(msg.FollowEvents)
    def _follow_events(self, message: msg.FollowEvents) -> None:
        if message.generation != self.generation:
            return
        model = self.model
        if model is None:
            if any(isinstance(e, Replaced) for e in message.events):
                self._start_open("replaced")
            return
        if not model.lines:
            self._schedule_reload(message.events)
            return
        added_rows = 0
        changed = False
        for ev in message.events:
            if isinstance(ev, Appended):
                added_rows += self._append(model, ev)
                changed = True
                if ev.rewritten:
                    self._maybe_check_overwritten()  # a rewrite that kept what we saw: our edit may still be gone
            elif isinstance(ev, Pending):
                model.set_pending(ev)
                changed = True
            elif isinstance(ev, Renamed):
                # a temp file renamed over the path that kept what we show (another sessionview's save)
                if not self._adopt(model, ev.ident):
                    self._start_open("replaced")
                    self._maybe_check_overwritten()
                    return
            elif isinstance(ev, Compacted):
                self._compaction = (ev, ev.before if ev.before is not None else (len(model) if model.indexed else None))
                self._start_open("compacted")
                self._maybe_check_overwritten()
                return
            elif isinstance(ev, Truncated):
                self._start_open("truncated")
                self._maybe_check_overwritten()
                return
            elif isinstance(ev, Replaced):
                self._start_open("replaced")
                self._maybe_check_overwritten()
                return
            elif isinstance(ev, Deleted):
                self.state = "deleted"
                self.notice = "deleted"
                self.notify("deleted: the file was removed; what it had stays on screen", title="file changed", markup=False)
                self._refresh_header()
                self._refresh_status()
        if changed:
            self.last_change = self.clock()
            self.state = "live"
            self.notice = "" if self.notice == "deleted" else self.notice
            self._arm_live_timer()
            self.transcript.rows_changed(added_rows)
            self._refresh_header()
            self._refresh_status()

    def _adopt(self, model: TranscriptModel, ident: tuple[int, int]) -> bool:
        """Read the new file the follower follows now (``ident``); False if the path holds another one."""
        try:
            fd = open_regular(self.path)
        except OSError:
            return False
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != ident or model.tail is None:
            os.close(fd)
            return False
        model.adopt(fd)
        return True

    def _compaction_detail(self, model: TranscriptModel) -> str:
        if self._compaction is None:
            return ""
        ev, before = self._compaction
        self._compaction = None
        after = ev.after if ev.after is not None else (len(model) if model.indexed else None)
        return compaction_text(ev.markers, before, after, ev.replaced)

    def _append(self, model: TranscriptModel, ev: Appended) -> int:
        first, last = model.append(ev)
        stats = model.current_stats()
        if last - first + 1 > INLINE_APPEND_LIMIT:
            # a burst too big to look at here: recount in the background
            self._maybe_stats(force=True)
            if model.filter.active:
                self._filter_worker(self.generation, model, model.filter)
            return 0 if model.filter.active else last - first + 1
        added = 0
        filtering = model.filter.active and model.rows is not None
        names = model.names() if filtering else {}
        relink = False
        for n in range(first, last + 1):
            view = model.view(n)
            stats.add(view)
            relink = relink or bool(view.tool_results)
            if filtering:
                for c in view.tool_calls:
                    if c.id is not None:
                        names[c.id] = c.name
                if model.filter.matches(view, names):
                    model.rows.append(n)  # type: ignore[union-attr]
                    added += 1
            else:
                added += 1
        if relink:
            self.transcript.invalidate()  # calls drawn before their result arrived show their link now
        return added

    def _schedule_reload(self, events: list) -> None:
        if any(isinstance(e, Deleted) for e in events):
            self.state = "deleted"
            self.notice = "deleted"
            self._refresh_header()
            self._refresh_status()
            return
        if self._reload_timer is not None:
            self._reload_timer.stop()
        reason = "replaced" if any(isinstance(e, Replaced) for e in events) else "changed"
        self._reload_timer = self.set_timer(0.1, lambda: self._start_open(reason))
        self._maybe_check_overwritten()

    # -- our own saves ------------------------------------------------------------------------------
    def _suspend_follow(self) -> None:
        """Before a save: stop following; late events of this opening are ignored (our own replacement
        of the file is not news)."""
        self.generation += 1
        self._stop_following()
        if self._reload_timer is not None:
            self._reload_timer.stop()
            self._reload_timer = None

    def _reopen_after_save(self, target: int | None, saved: bool) -> None:
        """After a save (or a failed one): show the file as it is, the cursor at ``target`` (a line number)
        or where it was."""
        t = self.transcript
        if target is None and self.model is not None and not t.follow:
            target = self.model.line_number(t.cursor_number) if t.cursor_number is not None else None
        if target is not None:
            self.pending_goto = max(1, target)
        self._start_open("saved" if saved else "")

    def _is_live(self) -> bool:
        return self.last_change is not None and self.clock() - self.last_change <= LIVE_WINDOW

    def _arm_live_timer(self) -> None:
        if self._live_timer is not None:
            self._live_timer.stop()
            self._live_timer = None
        if self.state == "live":
            self._live_timer = self.set_timer(LIVE_WINDOW + 0.1, self._live_expired)

    def _live_expired(self) -> None:
        self._live_timer = None
        if self.state == "live" and not self._is_live():
            self.state = "idle"
            self._refresh_header()
        elif self.state == "live":
            self._arm_live_timer()

    # -- header and status --------------------------------------------------------------------------
    def _refresh_header(self) -> None:
        width = max(20, self.size.width - 2)
        self.query_one("#header", Static).update(header_content(self, width, STATS_AUTO_LIMIT))

    def _refresh_status(self) -> None:
        width = max(20, self.size.width - 2)
        self.query_one("#status", Static).update(status_content(self, width))

    def on_resize(self) -> None:
        self._refresh_header()
        self._refresh_status()

    @on(TranscriptView.CursorMoved)
    def _cursor_moved(self, message: TranscriptView.CursorMoved) -> None:
        self._refresh_status()
        self._update_detail()

    @on(TranscriptView.FollowChanged)
    def _follow_changed(self, message: TranscriptView.FollowChanged) -> None:
        self._refresh_status()

    def _update_detail(self) -> None:
        if self.detail_shown and self.model is not None:
            self.detail.show(self.model, self.transcript.cursor_number)

    # -- actions ------------------------------------------------------------------------------------
    async def action_toggle_detail(self) -> None:
        if not self.query("#detail"):
            await self.query_one("#body").mount(DetailPane(id="detail"))
            self._update_detail()
            return
        d = self.detail
        d.display = not d.display
        if d.display:
            self._update_detail()

    def action_back(self) -> None:
        if self.standalone:
            self.app.exit(0)
        else:
            self.app.pop_screen()

    def action_reload(self) -> None:
        self._start_open("")

    def action_clear(self) -> None:
        if self.transcript.range_anchor is not None:
            self.transcript.clear_range()
            self._refresh_status()
            return
        if self.workers_running("search"):
            self.workers.cancel_group(self, "search")
            self.search_status = "search cancelled"
            self._refresh_status()
            return
        if self.term:
            self.term = ""
            self.search_status = ""
            self.transcript.set_term("")
            self._refresh_status()
            return
        if self.model is not None and self.model.filter.active:
            self._apply_filter(Filter())
            return
        if self.detail_shown:
            self.detail.display = False
            return
        self.action_back()

    def workers_running(self, group: str) -> bool:
        return any(w.group == group and w.is_running for w in self.workers)

    # search
    async def action_search(self) -> None:
        (await self._prompt()).open("search", "/", self.term, placeholder="text to find (case-insensitive)")

    def action_search_next(self) -> None:
        self._search(forward=True)

    def action_search_prev(self) -> None:
        self._search(forward=False)

    def _search(self, forward: bool) -> None:
        model = self.model
        if model is None or not self.term:
            if not self.term:
                self.run_worker(self.action_search())
            return
        start = self.transcript.cursor_number
        if start is None:
            start = len(model) if forward else len(model) + 1
        self.search_status = f"searching “{escape_control(self.term, one_line=True)}”…"
        self._refresh_status()
        self._search_worker(self.generation, model, self.term, start, forward)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search_worker(self, generation: int, model: TranscriptModel, term: str, start: int, forward: bool) -> None:
        worker = get_current_worker()
        last = [0.0]

        def progress(f: float) -> None:
            now = time.monotonic()
            if now - last[0] > 0.1:
                last[0] = now
                self.post_message(msg.SearchProgress(generation, f))

        accept = model.row_visible if model.rows is not None else None
        found = find(model.scanner(), term, start, len(model), forward, True, lambda: worker.is_cancelled, progress, accept)
        if not worker.is_cancelled:
            self.post_message(msg.SearchDone(generation, term, found, forward, start))

    @on(msg.SearchProgress)
    def _search_progress(self, message: msg.SearchProgress) -> None:
        if message.generation == self.generation and self.workers_running("search"):
            self.search_status = f"searching “{escape_control(self.term, one_line=True)}” {message.fraction:.0%} · esc cancels"
            self._refresh_status()

    @on(msg.SearchDone)
    def _search_done(self, message: msg.SearchDone) -> None:
        model = self.model
        if message.generation != self.generation or model is None or message.term != self.term:
            return
        term = escape_control(message.term, one_line=True)
        if message.number is None:
            self.search_status = f"“{term}” not found"
        else:
            wrapped = (message.number <= message.from_number) if message.forward else (message.number >= message.from_number)
            line = model.line_number(message.number)
            where = f"#{line:,}" if line is not None else "#…"
            self.search_status = f"“{term}” at {where}" + (" (wrapped)" if wrapped else "")
            self.transcript.move_cursor_to(model.row_of(message.number), center=True)
        self._refresh_status()

    # go to line
    async def action_goto(self) -> None:
        (await self._prompt()).open("goto", ":", "", placeholder="line number (g first, G last)")

    def _goto_line(self, line: int) -> None:
        model = self.model
        if model is None:
            return
        n = model.record_of_line(line)
        if n is None:
            self.pending_goto = line
            self.search_status = f"line {line:,}: waiting for the index…"
            self._refresh_status()
            return
        self.transcript.move_cursor_to(model.row_of(n), center=True)

    # filter
    async def action_filter(self) -> None:
        model = self.model
        if model is None:
            return
        hint = "roles and tools, e.g.  assistant tool:shell   (empty: show all)"
        stats = model.stats
        if stats is not None:
            roles = "  ".join(f"{escape_control(r, one_line=True)} ({n:,})" for r, n in sorted(stats.roles.items(), key=lambda kv: -kv[1])[:8])
            tools = "  ".join(f"tool:{escape_control(r, one_line=True)} ({n:,})" for r, n in sorted(stats.tools.items(), key=lambda kv: -kv[1])[:8])
            hint = f"roles: {roles or '-'}\ntools: {tools or '-'}"
        elif model.indexed and model.lines and model.size > STATS_AUTO_LIMIT:
            self._maybe_stats(force=True)
        (await self._prompt()).open("filter", "filter:", model.filter.describe(), hint=hint, placeholder="user assistant tool:NAME")

    def _apply_filter(self, flt: Filter) -> None:
        model = self.model
        if model is None:
            return
        if not flt.active:
            keep = self.transcript.cursor_number
            model.rows = None
            model.filter = flt
            self.transcript.set_model(model, keep_position=True)
            if keep is not None and not self.transcript.follow:
                self.transcript.move_cursor_to(model.row_of(keep), center=True)
            self._refresh_status()
            return
        self.search_status = "filtering…"
        self._refresh_status()
        self._filter_worker(self.generation, model, flt)

    @work(thread=True, exclusive=True, group="filter", exit_on_error=False)
    def _filter_worker(self, generation: int, model: TranscriptModel, flt: Filter) -> None:
        worker = get_current_worker()
        count = len(model)
        rows = filter_rows(model.scanner(), flt, model.names(), count, lambda: worker.is_cancelled)
        if rows is not None:
            self.post_message(msg.FilterDone(generation, flt, rows, count))

    @on(msg.FilterDone)
    def _filter_done(self, message: msg.FilterDone) -> None:
        model = self.model
        if message.generation != self.generation or model is None:
            return
        keep = self.transcript.cursor_number
        following = self.transcript.follow
        rows = message.rows
        names = model.names()
        for n in range(message.count + 1, len(model) + 1):  # records appended while the filter ran
            if message.filter.matches(model.view(n), names):
                rows.append(n)
        model.rows = rows
        model.filter = message.filter
        self.search_status = f"{len(rows):,} records match" if len(rows) else "no record matches the filter"
        self.transcript.set_model(model, keep_position=True)
        if following or keep is None:
            self.transcript.resume_follow()
        else:
            self.transcript.move_cursor_to(model.row_of(keep), center=True)
        self._refresh_status()

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
    @on(PromptBar.Submitted)
    def _prompt_submitted(self, message: PromptBar.Submitted) -> None:
        self.transcript.focus()
        value = message.value
        if message.kind == "search":
            self.term = value
            self.transcript.set_term(value)
            if value:
                self._search(forward=True)
            else:
                self.search_status = ""
                self._refresh_status()
        elif message.kind == "goto":
            text = value.strip().lstrip("#:").replace(",", "").replace("_", "")
            if text.isdigit():
                self._goto_line(int(text))
            elif text:
                self.notify("type a line number", markup=False)
        elif message.kind == "filter":
            self._apply_filter(Filter.parse(value))

    @on(PromptBar.Cancelled)
    def _prompt_cancelled(self, message: PromptBar.Cancelled) -> None:
        self.transcript.focus()
