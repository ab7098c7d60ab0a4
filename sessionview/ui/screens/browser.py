"""The session browser: every session file under a directory, newest change first, kept current.

The listing comes from one ``os.scandir`` walk (name, size, mtime: no file is opened), then a thread
describes rows (format, record count, and a sketch from each file's head and tail: title, messages, tokens,
problems) in the order they are needed: visible rows first, then the most recent ones. ``watchfiles`` keeps
the list current: new files appear and deleted ones go. ``s`` cycles the sort column, a click on a column's
title sorts by it (again: the other way).

With ``hosts`` (the ``[hosts]`` of config.toml, or the one host of ``sessionview ssh://host/dir``), every
host's sessions are listed too, each host in the background (:class:`sessionview.ui.fleet.HostListing`), with
a host column; a host that is slow or down is named unreachable in the header and the rest still show.
With no ``root`` only the hosts are listed.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from typing import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, Static
from textual.worker import get_current_worker

from sessionview.core.catalog import LIVE_WINDOW, Catalog, describe_full
from sessionview.core.store.tmpfiles import cleanup_temp_files
from sessionview.core.text import escape_control
from sessionview.ui import fleet as msg_fleet, messages as msg
from sessionview.ui.controllers.indexing import BackgroundIndexing
from sessionview.ui.widgets.session_table import ColumnHeader, SessionTable

BACKGROUND_DESCRIBE = 200  # rows described without being asked for (the most recent ones)
FILTER_DEBOUNCE = 0.08  # seconds: a big list is filtered once typing pauses
REDESCRIBE_EVERY = 1.0
BATCH_EVERY = 0.1  # seconds: descriptions go to the screen in batches  # seconds: a file that keeps changing is described again at most this often
SORTS = ("mtime", "name", "size", "title", "messages", "tokens", "problems", "format")
SORT_LABELS = {
    "mtime": "last change", "name": "name", "size": "size", "title": "title", "messages": "messages",
    "tokens": "tokens", "problems": "problems", "format": "format", "host": "host",
}
#: sorts by what a description tells: the rows are sorted again as descriptions arrive
DESCRIBED_SORTS = frozenset({"title", "messages", "tokens", "problems", "format"})


class BrowserScreen(Screen):
    CSS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser.tcss")

    BINDINGS = [
        # priority: checked when the key arrives, so the keys typed right behind "/" already go to the filter
        Binding("slash", "focus_filter", "Filter by name", id="browser.filter", priority=True),
        Binding("s", "cycle_sort", "Sort", id="browser.sort"),
        Binding("r", "rescan", "Rescan", show=False, id="browser.rescan"),
        Binding("escape", "escape", "Clear filter", show=False, id="browser.clear"),
        Binding("ctrl+f", "search_all", "Search all", tooltip="search the text of every session (full-text index)", id="browser.search-all"),
        Binding("q", "quit", "Quit", id="browser.quit"),
    ]

    def __init__(
        self,
        root: str,
        *,
        display: str | None = None,
        clock: Callable[[], float] = time.time,
        watch: bool = True,
        poll_interval: float = 0.015,
        read_only: bool = False,
        hosts: dict[str, str] | None = None,
        host_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        self.local = root is not None  # a local directory is listed (else only hosts)
        self.root = os.path.abspath(root) if root is not None else ""
        self.display_root = display or self.root
        self.catalog = Catalog(self.root or os.sep)
        self.host_listing = msg_fleet.HostListing(self, hosts, host_timeout) if hosts else None
        self.clock = clock
        self.watch = watch
        self.poll_interval = poll_interval
        self.read_only = read_only
        self.filter_text = ""
        self.sort = "mtime"
        self.reverse = False
        self._described_version = 0  # bumped as descriptions arrive (for the sorts that use them)
        self.loaded = False
        self._want: "queue.Queue[tuple[int, str, int, float] | None]" = queue.Queue()
        self._described_at: dict[str, float] = {}
        self._stop = threading.Event()
        self._seq = 0
        self._sorted: list = []
        self._folded: list[str] = []
        self._sorted_key: tuple | None = None
        self._filter_timer = None
        self.indexing: BackgroundIndexing | None = None  # the full-text index kept current (with watch)

    def compose(self) -> ComposeResult:
        yield Static(id="browser-header")
        yield Input(placeholder="filter by name  ( / )", id="name-filter")
        yield ColumnHeader(id="columns")
        yield SessionTable(self.clock, id="sessions")
        yield Footer()

    @property
    def table(self) -> SessionTable:
        return self.query_one("#sessions", SessionTable)

    def on_mount(self) -> None:
        self.table.focus()
        if self.host_listing is not None:
            self.table.show_hosts(list(self.host_listing.hosts))
        self._refresh_header()
        if self.local:
            self._scan()
            threading.Thread(target=cleanup_temp_files, args=(self.root,), name="sv-tmp-cleanup", daemon=True).start()
        else:
            self.loaded = True
        self._describer(self._stop)
        if self.watch and self.local:
            self._watcher()
            self.indexing = BackgroundIndexing(self, self.root)
            self.indexing.start()
        if self.host_listing is not None:
            self.host_listing.start()
        self.set_interval(1.0, self._tick)

    def on_unmount(self) -> None:
        self._stop.set()
        self._want.put(None)
        if self.indexing is not None:
            self.indexing.stop()

    # -- listing ------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="scan", exit_on_error=False)
    def _scan(self) -> None:
        worker = get_current_worker()
        catalog = Catalog(self.root)
        catalog.entries = dict(self.catalog.entries)
        catalog.load(lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(msg.CatalogScanned(catalog))

    @on(msg.CatalogScanned)
    def _scanned(self, message: msg.CatalogScanned) -> None:
        remote = {p: e for p, e in self.catalog.entries.items() if e.host} if self.host_listing is not None else {}
        # the hosts' rows stay; with none, the scan's own dict (a copy of 50k entries is a peak of megabytes)
        self.catalog.entries = {**message.catalog.entries, **remote} if remote else message.catalog.entries
        self.catalog.version += 1
        self.loaded = True
        self._refresh_rows()
        self.post_message(msg.CatalogLoaded())

    def _refresh_rows(self, new_filter: bool = False) -> None:
        key = (self.catalog.version, self.sort, self.reverse, self._described_version if self.sort in DESCRIBED_SORTS else 0)
        if self._sorted_key != key:
            self._sorted = self.catalog.sorted("", self.sort, self.reverse)
            self._folded = [(f"{e.host}:{e.rel}" if e.host else e.rel).casefold() for e in self._sorted]
            self._sorted_key = key
            self._queue_background(self._sorted)
        needle = self.filter_text.casefold()
        rows = [e for e, f in zip(self._sorted, self._folded, strict=True) if needle in f] if needle else self._sorted
        self.table.set_rows(rows, else_first=new_filter)
        self._refresh_header()

    def _debounced_refresh(self) -> None:
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(FILTER_DEBOUNCE, lambda: self._refresh_rows(new_filter=True))

    def _refresh_header(self) -> None:
        n = len(self.catalog)
        now = self.clock()
        live = sum(1 for e in self.catalog.entries.values() if e.is_live(now, LIVE_WINDOW))
        shown = len(self.table.rows) if self.is_mounted else 0
        root = escape_control(self.display_root, one_line=True)
        room = max(8, (self.size.width or 80) - len("sessionview ") - 2)
        if len(root) > room:  # one line: the path's end (the directory's name) stays, the counts below too
            root = "…" + root[len(root) - room + 1 :]
        parts: list = [("sessionview ", "bold $text-accent"), (root, "bold")]
        line2: list = []
        if not self.loaded:
            line2.append(("scanning…", "$text-muted"))
        else:
            line2.append(f"{n:,} session{'s' if n != 1 else ''}")
            if self.filter_text:
                line2.append((f" · {shown:,} match “{escape_control(self.filter_text, one_line=True)}”", "$text-accent"))
            if live:
                line2.append((f" · ● {live} live", "bold $text-success"))
            if self.host_listing is not None:
                line2 += [(escape_control(t, one_line=True), style) for t, style in self.host_listing.header_parts()]
            line2.append((f" · sorted by {SORT_LABELS[self.sort]}{' (reversed)' if self.reverse else ''}", "$text-muted"))
        self.query_one("#browser-header", Static).update(Content("\n").join([Content.assemble(*parts), Content.assemble(*line2)]))
        width = self.table.scrollable_content_region.width or self.size.width
        self.query_one("#columns", ColumnHeader).show(self.table.columns(max(20, width)), self.sort, self.reverse)

    def on_resize(self) -> None:
        self._refresh_header()

    def _tick(self) -> None:
        now = self.clock()
        if any(now - e.mtime < 3600 for e in self.table.visible_rows()):
            self.table.refresh()
        if any(e.is_live(now + 1, LIVE_WINDOW + 1) for e in self.catalog.entries.values()):
            self._refresh_header()

    # -- describing ---------------------------------------------------------------------------------
    def _queue(self, priority: int, paths: list) -> None:
        for e in paths:
            if e.stale:
                last = self._described_at.get(e.path)
                if last is not None and time.monotonic() - last < REDESCRIBE_EVERY and priority > 0:
                    continue
                self._seq += 1
                self._want.put((priority, e.path, e.size, e.mtime))

    def _queue_background(self, rows: list) -> None:
        self._queue(2, rows[:BACKGROUND_DESCRIBE])

    @on(SessionTable.Scrolled)
    def _scrolled(self, message: SessionTable.Scrolled) -> None:
        self._queue(0, self.table.visible_rows())

    @work(thread=True, group="describe", exit_on_error=False)
    def _describer(self, stop: threading.Event) -> None:
        """Describe wanted rows, most urgent first (0: visible, 1: changed, 2: background)."""
        pending: dict[str, tuple[int, int, float]] = {}
        batch: list = []
        last_post = time.monotonic()
        while not stop.is_set():
            items = []
            try:
                items.append(self._want.get(timeout=0.5) if not pending else self._want.get_nowait())
            except queue.Empty:
                pass
            while True:
                try:
                    items.append(self._want.get_nowait())
                except queue.Empty:
                    break
            for item in items:
                if item is None:
                    return
                prio, path, size, mtime = item
                old = pending.get(path)
                if old is None or prio <= old[0]:
                    pending[path] = (prio, size, mtime)
            if not pending:
                continue
            path = min(pending, key=lambda p: pending[p][0])
            prio, size, mtime = pending.pop(path)
            remote = self.host_listing.describe(path, size) if self.host_listing is not None else None
            described = remote if remote is not None else describe_full(path, stop.is_set)
            if stop.is_set():
                return
            if prio >= 2:
                stop.wait(0.002)  # background work: leave the interpreter to the UI most of the time
            batch.append((path, size, mtime, described))
            now = time.monotonic()
            if not pending or now - last_post > BATCH_EVERY:
                self.post_message(msg.Described(batch))
                batch = []
                last_post = now
        if batch and not stop.is_set():
            self.post_message(msg.Described(batch))

    @on(msg.Described)
    def _described(self, message: msg.Described) -> None:
        again = []
        widened = False
        now = time.monotonic()
        for path, size, mtime, d in message.items:
            self._described_at[path] = now
            e = self.catalog.entries.get(path)
            if e is None:
                continue
            self.catalog.set_description(path, size, mtime, d.format, d.count, d.error, d.sketch)
            widened = self.table.saw_format(d.format) or widened
            if (e.size, e.mtime) != (size, mtime):
                e.described_at = None  # it changed while it was being read: describe it again
                again.append(e)
        if again:
            self._queue(1, again)
        if widened:
            self._refresh_header()  # the column titles move with the format column
        if self.sort in DESCRIBED_SORTS and message.items:
            self._described_version += 1
            self._refresh_rows()
        self.table.refresh()

    # -- watching -----------------------------------------------------------------------------------
    @work(exclusive=True, group="dir-watch", exit_on_error=False)
    async def _watcher(self) -> None:
        import asyncio

        from sessionview.core.watch import watch_sessions

        stop = asyncio.Event()
        self._watch_stop = stop
        try:
            async for batch in watch_sessions(self.root, debounce_ms=100, step_ms=50, stop_event=stop):
                changed = self.catalog.apply(batch)
                if self.indexing is not None:
                    self.indexing.changed(p for _, p in batch)
                if changed:
                    self._refresh_rows()
                    self._queue(1, [self.catalog.entries[p] for p in changed if p in self.catalog.entries])
                    self.post_message(msg.CatalogChanged(changed))
        except Exception as exc:  # watching is a convenience: the list still works without it
            self.notify(f"not watching the directory: {escape_control(str(exc), one_line=True)}", severity="warning", markup=False)

    # -- actions ------------------------------------------------------------------------------------
    @on(msg_fleet.HostListed)
    def _host_listed(self, message: msg_fleet.HostListed) -> None:
        assert self.host_listing is not None
        changed = self.host_listing.arrived(message.listing)
        if changed:
            self._refresh_rows()
            self._queue(1, [self.catalog.entries[p] for p in changed if p in self.catalog.entries])
            self.post_message(msg.CatalogChanged(changed))
        else:
            self._refresh_header()

    @on(SessionTable.Opened)
    def _open(self, message: SessionTable.Opened) -> None:
        from sessionview.ui.screens.session import SessionScreen

        if message.entry.host and self.host_listing is not None:
            address = self.host_listing.address(message.entry.path)
            if address is not None:
                from sessionview.ui.screens.remote import open_in_thread

                open_in_thread(self.app, address, f"{message.entry.host}:{message.entry.rel}")
            return

        self.app.push_screen(
            SessionScreen(
                message.entry.path,
                display=os.path.join(self.display_root, message.entry.rel),
                clock=self.clock,
                poll_interval=self.poll_interval,
                read_only=self.read_only,
            )
        )

    @on(Input.Changed, "#name-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        if len(self.catalog) > 2000:
            self._debounced_refresh()
        else:
            self._refresh_rows(new_filter=True)

    @on(Input.Submitted, "#name-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self._open_match()

    def _open_match(self) -> None:
        """Enter in the filter: the highlighted match opens (the list is brought up to date first)."""
        if self._filter_timer is not None:
            self._filter_timer.stop()
            self._filter_timer = None
            self._refresh_rows(new_filter=True)
        self.table.focus()
        self.table.action_open()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_filter" and isinstance(self.focused, Input):
            return False  # a "/" typed into the filter (or any input) is text: "src/app"
        return True

    def action_focus_filter(self) -> None:
        # at once, not by Widget.focus (a call_later): keys already queued behind "/" (typed fast, pasted, or sent
        # by a browser through `serve`) must go to the filter, not to the list's own bindings
        self.set_focus(self.query_one("#name-filter", Input))

    def action_escape(self) -> None:
        inp = self.query_one("#name-filter", Input)
        if inp.value:
            inp.value = ""
        self.table.focus()

    def action_cycle_sort(self) -> None:
        sorts = SORTS + (("host",) if self.host_listing is not None else ())
        self.sort = sorts[(sorts.index(self.sort) + 1) % len(sorts)]
        self.reverse = False
        self._refresh_rows()

    @on(ColumnHeader.SortBy)
    def _sort_by(self, message: ColumnHeader.SortBy) -> None:
        """A click on a column's title: sort by it, or the other way when it is the sort already."""
        if message.sort == self.sort:
            self.reverse = not self.reverse
        else:
            self.sort, self.reverse = message.sort, False
        self._refresh_rows()

    def action_search_all(self) -> None:
        from sessionview.ui.screens.search_all import SearchAllScreen, open_at
        from sessionview.ui.screens.session import SessionScreen

        if not self.local:
            self.notify("search all looks in local sessions; for every host's: sessionview search --index postgresql://…",
                        markup=False)
            return

        def open_hit(path: str, display: str, number: int, term: str) -> None:
            screen = SessionScreen(path, display=display, clock=self.clock, poll_interval=self.poll_interval, read_only=self.read_only)
            open_at(self.app, screen, number, term)

        self.app.push_screen(SearchAllScreen(self.root, display=self.display_root, open_session=open_hit, watch=self.watch))

    def action_rescan(self) -> None:
        if self.local:
            self._scan()
        if self.host_listing is not None:
            self.host_listing.list_again()

    def action_quit(self) -> None:
        self.app.exit(0)

    def on_key(self, event) -> None:
        inp = self.query_one("#name-filter", Input)
        if inp.has_focus and event.key == "down":
            self.table.focus()
            event.stop()
        elif inp.has_focus and event.key == "enter":
            event.stop()
            self._open_match()
