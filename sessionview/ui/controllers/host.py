"""What the controllers see of the session screen that owns them (:class:`SessionHost`).

The screen's displayed state (``state``, ``notice``, ``busy``…) is reactive: a controller sets it and the
header and status redraw themselves. ``revision`` is bumped when the model changed inside (records
appended, stats or an index arrived)."""

from __future__ import annotations

from typing import Any, Callable, Protocol

from textual.message import Message
from textual.timer import Timer
from textual.worker import Worker

from sessionview.core.view.transcript import TranscriptModel
from sessionview.ui.widgets.transcript import TranscriptView


class SessionHost(Protocol):
    path: str
    display_path: str
    read_only: bool
    clock: Callable[[], float]
    poll_interval: float
    model: TranscriptModel | None
    state: str  # opening, idle, live, deleted, error
    notice: str  # the last file event worth saying: truncated, compacted, replaced, deleted
    notice_detail: str  # what the notice says in full, when REASONS is not enough (compacted)
    index_progress: float | None
    search_status: str
    busy: str  # what an edit flow is doing ("" when none runs)
    edit_status: str  # the last edit event: "saved: …", "conflict: …", "overwritten: …"
    revision: int
    position: int  # bumped when the cursor, range or follow state moved
    term: str

    @property
    def transcript(self) -> TranscriptView: ...

    @property
    def app(self) -> Any: ...

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None, markup: bool = True) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def run_worker(self, work: Any, name: str | None = "", group: str = "default", description: str = "", exit_on_error: bool = True, start: bool = True, exclusive: bool = False, thread: bool = False) -> Worker[Any]: ...

    def set_timer(self, delay: float, callback: Any = None, *, name: str | None = None, pause: bool = False) -> Timer: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def refresh_bindings(self) -> None: ...

    def cancel_workers(self, group: str) -> None: ...

    def workers_running(self, group: str) -> bool: ...

    def update_detail(self) -> None: ...
