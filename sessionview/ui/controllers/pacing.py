"""The pace at which following draws: what the follow thread reports is applied in batches, one frame each.

An agent that writes 20 messages a second, some of them torn in two writes, would otherwise cost a frame per
write: the whole transcript drawn again each time (it scrolls), the pending row of each torn piece included.
:class:`FollowPacer` queues the follow thread's events and applies them together (the model, the view's
position, the header: one frame):

* the first change after a quiet spell is applied at once (a lone append shows as soon as it is read);
* after that, at most one batch every ``FRAME_GAP`` seconds while appends stream in;
* a pending (unterminated) line waits ``PENDING_DELAY`` seconds before it is shown: when its newline comes
  first (a torn write is completed a few milliseconds later), only the complete record is drawn;
* anything but an append or a pending line (a rewrite, a truncation, a replacement, a deletion) is applied at
  once, after what was queued before it, in order.

Nothing the follow thread reports is dropped: it waits in the queue (at most ``FRAME_GAP``, a pending line
``PENDING_DELAY``), and :meth:`FollowPacer.flush` applies the queue at once (before a save, say). A quiet
file's tail latency is unchanged; while appends stream in, a new record shows up to ``FRAME_GAP`` later.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from sessionview.core.tail import Appended, Pending

FRAME_GAP = 0.1  # seconds between two batches while appends stream in (at most 10 frames a second)
PENDING_DELAY = 0.08  # seconds a new pending line waits for its newline before it is drawn


class FollowPacer:
    """Queues follow events of a generation and hands them to ``apply(generation, events)`` in batches.

    ``host`` gives the timers (``set_timer``); ``clock`` the time (monotonic seconds)."""

    def __init__(self, host: Any, apply: Callable[[int, list], None], clock: Callable[[], float] = time.monotonic) -> None:
        self._host = host
        self._apply = apply
        self._clock = clock
        self._queue: list = []
        self._generation: int | None = None
        self._timer: Any = None
        self._due = 0.0
        self._last = float("-inf")  # when the last batch was applied

    @property
    def queued(self) -> int:
        return len(self._queue)

    def add(self, generation: int, events: list) -> None:
        """Queue ``events`` (of ``generation``: a newer one drops what an older one queued)."""
        if generation != self._generation:
            self._queue.clear()
            self._generation = generation
        self._queue.extend(events)
        if any(not isinstance(e, (Appended, Pending)) for e in events):
            self.flush()
            return
        now = self._clock()
        wait = 0.0 if any(isinstance(e, Appended) for e in events) else PENDING_DELAY
        due = max(now + wait, self._last + FRAME_GAP)
        if due <= now:
            self.flush()
        elif self._timer is None or due < self._due:
            self._cancel()
            self._due = due
            self._timer = self._host.set_timer(due - now, self.flush)

    def flush(self) -> None:
        """Apply what is queued now."""
        self._cancel()
        if not self._queue or self._generation is None:
            return
        events, self._queue = self._queue, []
        self._last = self._clock()
        self._apply(self._generation, events)

    def drop(self) -> None:
        """Forget what is queued (the file is being opened again)."""
        self._cancel()
        self._queue.clear()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
