"""Search every session under the browser's directory, through the full-text index.

The index is brought current first, and kept current while the screen is open, by a thread worker that
follows the directory watcher (:mod:`sessionview.core.watch`). It runs at low priority: small batches with a
pause after each, so the interface keeps the interpreter most of the time, and on Linux the thread's own
nice value is raised (``setpriority`` on its thread id). Hits show as they arrive (the search runs in a thread
worker and posts them in batches): session, ``#N``, role, time and a snippet with the match marked. The
snippet is untrusted text: each piece is escaped (:func:`sessionview.core.text.escape_control`) and set as a
plain :class:`rich.text.Text` span, never as markup. Enter opens the session at that message, with the match
highlighted as in-session search does. On a shared PostgreSQL index (:mod:`.fleet_hits`) every host's hits
show, another host's as ``host:path``, and Enter there opens it here over SFTP at its ``#N``.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from sessionview.core.text import escape_control
from sessionview.ui.controllers import indexing

MAX_HITS = 500
POST_EVERY = 0.05  # seconds: hits go to the screen in batches
BATCH_BYTES = 1 << 20  # background indexing: bytes per transaction
PAUSE = 0.004  # seconds of sleep after each batch (the interface gets the interpreter)
MARK = "bold reverse"
WAIT_FOR_UPDATE = 1.0  # seconds a search waits for a running background update before it reads the index as it is


class Hits(Message):
    def __init__(self, generation: int, hits: list, done: bool, error: str | None = None, partial: bool = False) -> None:
        super().__init__()
        self.partial = partial  # the index was still being brought up to date
        self.generation = generation
        self.hits = hits
        self.done = done
        self.error = error


class IndexProgress(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


def _lower_priority() -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)  # Linux: this thread only
    except (AttributeError, OSError):
        pass


def hit_text(hit: Any, rel: str) -> Text:
    """One hit as two lines of plain text spans (every piece escaped; the match marked by style only)."""
    t = Text(no_wrap=False, overflow="fold")
    t.append(escape_control(rel, one_line=True), style="bold")
    t.append(f"  #{hit.n}  ", style="bold")
    t.append(escape_control(hit.role, one_line=True), style="italic")
    if hit.tool:
        t.append(f" [{escape_control(hit.tool, one_line=True)}]")
    if hit.timestamp:
        t.append(f"  {escape_control(hit.timestamp, one_line=True)}", style="dim")
    t.append("\n    ")
    for piece, marked in hit.parts:
        t.append(escape_control(piece, one_line=True), style=MARK if marked else "")
    return t


class SearchAllScreen(Screen):
    """See the module docstring. ``open_session(path, display, number, term)`` opens a hit."""

    DEFAULT_CSS = """
    SearchAllScreen { layout: vertical; background: $surface; }
    SearchAllScreen #search-all-header { height: 1; padding: 0 1; background: $panel; }
    SearchAllScreen #search-all-input { height: 1; border: none; padding: 0 1; &:focus { background: $boost; } }
    SearchAllScreen #search-all-status { height: 1; padding: 0 1; color: $text-muted; }
    SearchAllScreen #search-all-hits { height: 1fr; border: none; }
    """

    BINDINGS = [
        Binding("escape", "back", "Back", id="search-all.back"),
        Binding("ctrl+s", "toggle_substring", "Words/substring", id="search-all.substring"),
    ]

    def __init__(self, root: str, *, display: str | None = None, open_session: Callable[[str, str, int, str], None] | None = None,
                 watch: bool = True, index_path: str | None = None) -> None:
        super().__init__()
        self.root = os.path.abspath(root)
        self.display_root = display or self.root
        self.open_session = open_session
        self.watch = watch
        self.index_path = index_path
        self.substring = False
        self.generation = 0
        self.hits: list = []
        self.query_text = ""
        self.index_status = ""
        self.search_status = ""
        self._lock = indexing.LOCK  # one writer of the index in this process at a time (the list's background one too)
        self._stop = threading.Event()

    def compose(self) -> ComposeResult:
        yield Static(id="search-all-header")
        yield Input(placeholder='search every session: words, "phrases", prefix*, -exclude  (enter)', id="search-all-input")
        yield Static(id="search-all-status")
        yield OptionList(id="search-all-hits")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#search-all-input", Input).focus()
        self._header()
        self._keep_current()

    def on_unmount(self) -> None:
        self._stop.set()

    # -- the index ---------------------------------------------------------------------------------
    def _backend(self) -> Any:
        from sessionview.core.index import default_index_path
        from sessionview.core.index.sqlite import SqliteBackend
        from sessionview.ui.screens import fleet_hits

        url = fleet_hits.index_url(self.index_path)
        if url:
            return fleet_hits.open_backend(url)  # the fleet's index (this host's files are fed to it too)
        return SqliteBackend(self.index_path or default_index_path())

    def _update(self, backend: Any, paths: list[str], should_stop: Callable[[], bool], wait: bool = True) -> bool:
        """Bring ``paths`` current; False (and nothing done) when ``wait`` is false and the background
        update is still running after :data:`WAIT_FOR_UPDATE`: the search then reads the index as it is and
        says so."""
        from sessionview.core.index.indexer import Indexer

        last = [0.0]

        def progress(p: Any) -> None:
            now = time.monotonic()
            if now - last[0] > 0.2:
                last[0] = now
                pct = f" {p.done / p.total:.0%}" if p.total else ""
                self.post_message(IndexProgress(f"indexing{pct} · {p.done_files:,} of {p.files:,} files"))

        if not self._lock.acquire(timeout=-1 if wait else WAIT_FOR_UPDATE):
            return False
        try:
            Indexer(backend, progress=progress, batch=BATCH_BYTES, should_stop=should_stop, pause=PAUSE).update(paths)
        finally:
            self._lock.release()
        return True

    @work(thread=True, group="search-all-index", exit_on_error=False)
    def _keep_current(self) -> None:
        _lower_priority()
        worker = get_current_worker()
        stop = lambda: worker.is_cancelled or self._stop.is_set()  # noqa: E731
        try:
            backend = self._backend()
        except Exception as exc:
            self.post_message(IndexProgress(f"no index: {exc}"))
            return
        try:
            if backend.notice:
                self.post_message(IndexProgress(backend.notice))
            self._update(backend, [self.root], stop)
            self.post_message(IndexProgress("index current"))
            if self.watch and not stop():
                self._follow(backend, stop)
        except Exception as exc:  # the search still brings the index current itself
            self.post_message(IndexProgress(f"indexing stopped: {type(exc).__name__}: {exc}"))
        finally:
            backend.close()

    def _follow(self, backend: Any, stop: Callable[[], bool]) -> None:
        import asyncio

        from sessionview.core.watch import watch_sessions

        async def run() -> None:
            event = asyncio.Event()

            async def watch_stop() -> None:
                while not stop():
                    await asyncio.sleep(0.1)
                event.set()

            task = asyncio.ensure_future(watch_stop())
            async for batch in watch_sessions(self.root, stop_event=event):
                paths = sorted({p for _, p in batch})
                await asyncio.to_thread(self._update_low, backend, paths, stop)
                self.post_message(IndexProgress("index current"))
            task.cancel()

        asyncio.run(run())

    def _update_low(self, backend: Any, paths: list[str], stop: Callable[[], bool]) -> None:
        _lower_priority()
        self._update(backend, paths, stop)

    # -- searching ---------------------------------------------------------------------------------
    @on(Input.Submitted, "#search-all-input")
    def _submitted(self, event: Input.Submitted) -> None:
        self.start_search(event.value)

    def start_search(self, text: str) -> None:
        self.generation += 1
        self.query_text = text
        self.hits = []
        self.query_one("#search-all-hits", OptionList).clear_options()
        if not text.strip():
            self._status("")
            return
        self._status(f"searching “{escape_control(text, one_line=True)}”…")
        self._search(self.generation, text, self.substring)

    @work(thread=True, exclusive=True, group="search-all", exit_on_error=False)
    def _search(self, generation: int, text: str, substring: bool) -> None:
        from sessionview.core.index import hits as index_hits
        from sessionview.core.index.model import Filters
        from sessionview.core.index.query import QueryError, parse

        worker = get_current_worker()
        stop = lambda: worker.is_cancelled or generation != self.generation  # noqa: E731
        try:
            query = parse(text)
            backend = self._backend()
        except (QueryError, Exception) as exc:
            self.post_message(Hits(generation, [], True, str(exc)))
            return
        try:
            if substring and not backend.has_grams:
                self.post_message(IndexProgress("building the substring index…"))
                with self._lock:
                    backend.enable_grams()
            current = self._update(backend, [self.root], stop, wait=False)  # stat-based: quick when current
            if current:  # its progress lines are over: the header must not stay at "indexing · k of N files"
                self.post_message(IndexProgress("index current"))
            batch: list = []
            last = time.monotonic()
            count = 0
            filters = Filters() if hasattr(backend, "hosts") else Filters(paths=(self.root,))  # a fleet: every host
            for hit in index_hits.search(backend, query, filters, substring, should_stop=stop):
                batch.append(hit)
                count += 1
                now = time.monotonic()
                if count == 1 or now - last > POST_EVERY:
                    self.post_message(Hits(generation, batch, False))
                    batch, last = [], now
                if count >= MAX_HITS:
                    break
            if not stop():
                self.post_message(Hits(generation, batch, True, partial=not current))
        except Exception as exc:
            self.post_message(Hits(generation, [], True, f"{type(exc).__name__}: {exc}"))
        finally:
            backend.close()

    @on(Hits)
    def _hits(self, message: Hits) -> None:
        if message.generation != self.generation:
            return
        options = self.query_one("#search-all-hits", OptionList)
        for hit in message.hits:
            options.add_option(Option(hit_text(hit, self._label(hit)), id=f"hit-{len(self.hits)}"))
            self.hits.append(hit)
        if options.highlighted is None and self.hits:
            options.highlighted = 0
        q = escape_control(self.query_text, one_line=True)
        if message.error:
            self._status(f"search: {escape_control(message.error, one_line=True)}")
        elif message.done:
            n = len(self.hits)
            said = f"“{q}”: {n:,}{'+' if n >= MAX_HITS else ''} hit{'s' if n != 1 else ''}" if n else f"“{q}” not found"
            self._status(said + (" so far: the index is still being updated (enter searches again)" if message.partial else ""))
        else:
            self._status(f"“{q}”: {len(self.hits):,} hits so far…")

    @on(IndexProgress)
    def _index_progress(self, message: IndexProgress) -> None:
        self.index_status = message.text
        self._header()

    def _label(self, hit: Any) -> str:
        if getattr(hit, "remote", False):
            from sessionview.ui.screens.fleet_hits import address_of

            return address_of(hit)
        return self._rel(hit.path)

    def _rel(self, path: str) -> str:
        try:
            rel = os.path.relpath(path, self.root)
        except ValueError:
            return path
        return path if rel.startswith("..") else rel

    def _header(self) -> None:
        mode = "substring" if self.substring else "words"
        t = Text()
        t.append("search all sessions ", style="bold")
        t.append(escape_control(self.display_root, one_line=True))
        t.append(f"  · {mode}", style="dim")
        if self.index_status:
            t.append(f"  · {escape_control(self.index_status, one_line=True)}", style="dim")
        self.query_one("#search-all-header", Static).update(t)

    def _status(self, text: str) -> None:
        self.search_status = text
        self.query_one("#search-all-status", Static).update(Text(text))

    # -- actions -----------------------------------------------------------------------------------
    @on(OptionList.OptionSelected, "#search-all-hits")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.open_hit(event.option_index)

    def open_hit(self, index: int) -> None:
        if not 0 <= index < len(self.hits):
            return
        hit = self.hits[index]
        from sessionview.core.index.query import QueryError, parse

        try:
            term = parse(self.query_text).highlight()
        except QueryError:
            term = ""
        if getattr(hit, "remote", False):  # on another host: opened here, over SFTP
            from sessionview.ui.screens.fleet_hits import open_remote

            self._status(open_remote(self.app, hit, term, open_at))
            return
        display = os.path.join(self.display_root, self._rel(hit.path))
        if self.open_session is not None:
            self.open_session(hit.path, display, hit.n, term)

    def on_key(self, event: Any) -> None:
        inp = self.query_one("#search-all-input", Input)
        if inp.has_focus and event.key == "down" and self.hits:
            self.query_one("#search-all-hits", OptionList).focus()
            event.stop()

    def action_toggle_substring(self) -> None:
        self.substring = not self.substring
        self._header()
        if self.query_text:
            self.start_search(self.query_text)

    def action_back(self) -> None:
        self.app.pop_screen()


def open_at(app: Any, screen: Any, number: int, term: str, timeout: float = 30.0) -> None:
    """Push the session ``screen`` and, once its file is open, go to ``#number`` with ``term`` highlighted
    (as the in-session search does: the transcript marks the term, the status says where it is)."""
    app.push_screen(screen)
    started = time.monotonic()
    timer: list[Any] = []

    def check() -> None:
        if screen.model is None and time.monotonic() - started < timeout and screen.is_attached:
            return
        timer[0].stop()
        if screen.model is None:
            return
        screen.search.goto_line(number)
        if term:
            screen.term = term
            screen.transcript.set_term(term)
            screen.search.show_hit(number)  # "term at #N · k of M" once the matches are counted

    timer.append(screen.set_interval(0.02, check))
