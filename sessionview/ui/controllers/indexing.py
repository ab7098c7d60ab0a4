"""The app keeps the full-text index current in the background, from the session list.

When the session list mounts (and watches its directory), a low-priority thread brings the index current
for the list's directory, then indexes each change the directory watcher reports (the browser hands them
over with :meth:`BackgroundIndexing.changed`). Progress shows on a line above the footer ("indexing 42% · 3
of 20 files", then "index current"). Low priority: on Linux the thread's nice value is raised (its own
thread id), the indexer writes small transactions and sleeps a little after each, so the interface keeps
the interpreter most of the time. The setting ``index_in_background = false`` in the config file turns it
off (the search screen then brings the index current itself while it is open).

In one process one indexer writes at a time (:data:`LOCK`, shared with the search screen).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from typing import Any, Callable, Iterable

from rich.text import Text
from textual.widgets import Footer, Static

from sessionview.core.text import escape_control

LOCK = threading.Lock()  # one writer of the index in this process at a time
BATCH_BYTES = 1 << 20  # bytes per batch (and per transaction)
PAUSE = 0.004  # seconds of sleep after each transaction
PROGRESS_EVERY = 0.25  # seconds between progress updates on screen
STATUS_ID = "index-status"


def enabled_in_config() -> bool:
    """``index_in_background`` from the config file (on when unset; a broken file is reported elsewhere)."""
    from sessionview.core.config import ConfigError, load_config

    try:
        return load_config().index_in_background
    except ConfigError:
        return True


def lower_priority() -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)  # Linux: this thread only
    except (AttributeError, OSError):
        pass


class BackgroundIndexing:
    """Keeps the index current for ``root`` while ``screen`` is mounted. ``enabled`` None reads the config."""

    def __init__(self, screen: Any, root: str, *, enabled: bool | None = None, index_path: str | None = None,
                 batch: int = BATCH_BYTES, pause: float = PAUSE) -> None:
        self.screen = screen
        self.root = os.path.abspath(root)
        self.enabled = enabled
        self.index_path = index_path
        self.batch = batch
        self.pause = pause
        self.status = ""
        self.updates = 0  # updates finished (for tests)
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> bool:
        """Start (False when the config turns it off)."""
        if self.enabled is None:
            self.enabled = enabled_in_config()
        if not self.enabled or self.running:
            return False
        try:
            footer = self.screen.query_one(Footer)
        except Exception:
            footer = None
        line = Static(id=STATUS_ID)
        line.styles.height = 1
        line.styles.padding = (0, 1)
        self.screen.mount(line, before=footer) if footer is not None else self.screen.mount(line)
        self._queue.put(self.root)
        self._thread = threading.Thread(target=self._run, name="sv-index-background", daemon=True)
        self._thread.start()
        return True

    def changed(self, paths: Iterable[str]) -> None:
        """Paths the watcher saw change: indexed next (a deleted one leaves the index)."""
        if self.running:
            for p in paths:
                self._queue.put(p)

    def stop(self) -> None:
        self._stop.set()
        self._queue.put(None)

    # -- the thread ---------------------------------------------------------------------------------
    def _show(self, text: str) -> None:
        self.status = text
        try:
            self.screen.app.call_from_thread(self._paint, text)
        except Exception:  # the app is gone
            self._stop.set()

    def _paint(self, text: str) -> None:
        try:
            self.screen.query_one(f"#{STATUS_ID}", Static).update(Text(escape_control(text, one_line=True), style="dim"))
        except Exception:
            pass

    def _take(self) -> list[str]:
        """The next paths to index (waits for one, then takes every one queued meanwhile)."""
        try:
            first = self._queue.get(timeout=0.5)
        except queue.Empty:
            return []
        paths = {first}
        while True:
            try:
                paths.add(self._queue.get_nowait())
            except queue.Empty:
                break
        if None in paths:
            self._stop.set()
        return sorted(p for p in paths if p is not None)

    def _run(self) -> None:
        from sessionview.core.index import default_index_path
        from sessionview.core.index.sqlite import SqliteBackend

        lower_priority()
        try:
            backend = SqliteBackend(self.index_path or default_index_path())
        except Exception as exc:
            self._show(f"no full-text index: {exc}")
            return
        try:
            if backend.notice:
                self._show(backend.notice)
            while not self._stop.is_set():
                paths = self._take()
                if paths and not self._stop.is_set():
                    self._update(backend, paths)
        except Exception as exc:  # the list works without the index; the search screen tries again
            self._show(f"indexing stopped: {type(exc).__name__}: {exc}")
        finally:
            backend.close()

    def _update(self, backend: Any, paths: list[str]) -> None:
        from sessionview.core.index.indexer import Indexer

        last = [0.0]
        stop: Callable[[], bool] = self._stop.is_set

        def progress(p: Any) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EVERY:
                last[0] = now
                pct = f" {p.done / p.total:.0%}" if p.total else ""
                self._show(f"indexing{pct} · {p.done_files:,} of {p.files:,} files")

        with LOCK:
            summary = Indexer(backend, progress=progress, batch=self.batch, should_stop=stop, pause=self.pause,
                              tx_bytes=self.batch, fork=False).update(paths)
        self.updates += 1
        if not stop():
            docs = backend.count_docs() if hasattr(backend, "count_docs") else None
            self._show("index current" + (f" · {docs:,} records" if docs is not None else "")
                       + (f" · {len(summary.skipped)} skipped" if summary.skipped else ""))
