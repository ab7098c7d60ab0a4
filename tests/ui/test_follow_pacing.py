"""The pace of following (:class:`~sessionview.ui.controllers.pacing.FollowPacer`): what the follow thread
reports is applied in batches, one frame each. With a fake clock and fake timers (fired by the test), so
every case is exact; the app's own following is in test_follow.py."""

from __future__ import annotations

from sessionview.core.tail import Appended, Deleted, Pending, Truncated
from sessionview.ui.controllers.pacing import FRAME_GAP, PENDING_DELAY, FollowPacer


class FakeTimer:
    def __init__(self, host: "Host", delay: float, callback) -> None:
        self.host, self.delay, self.callback, self.stopped = host, delay, callback, False
        self.due = host.now + delay

    def stop(self) -> None:
        self.stopped = True


class Host:
    """Timers and a clock the test moves by hand; the batches applied."""

    def __init__(self) -> None:
        self.now = 100.0
        self.timers: list[FakeTimer] = []
        self.batches: list[tuple[int, list]] = []
        self.applied_at: list[float] = []  # when each batch was applied
        self.pacer = FollowPacer(self, self._apply, clock=lambda: self.now)

    def _apply(self, generation: int, events: list) -> None:
        self.batches.append((generation, list(events)))
        self.applied_at.append(self.now)

    def set_timer(self, delay: float, callback) -> FakeTimer:
        timer = FakeTimer(self, delay, callback)
        self.timers.append(timer)
        return timer

    def live_timers(self) -> list[FakeTimer]:
        return [t for t in self.timers if not t.stopped]

    def advance(self, seconds: float) -> None:
        """Move the clock on, firing the timers that fall due (as Textual would)."""
        end = self.now + seconds
        while True:
            due = sorted((t for t in self.live_timers() if t.due <= end + 1e-9), key=lambda t: t.due)
            if not due:
                break
            timer = due[0]
            self.now = max(self.now, timer.due)
            timer.stopped = True
            timer.callback()
        self.now = end


def appended(start: int, end: int) -> Appended:
    return Appended((start,), end)


def test_a_lone_append_is_applied_at_once():
    h = Host()
    ev = appended(0, 10)
    h.pacer.add(1, [ev])
    assert h.batches == [(1, [ev])]
    assert h.live_timers() == []


def test_appends_that_stream_in_are_applied_together_at_most_once_a_frame_gap():
    h = Host()
    a, b, c = appended(0, 10), appended(10, 20), appended(20, 30)
    h.pacer.add(1, [a])
    h.advance(FRAME_GAP / 4)
    h.pacer.add(1, [b])
    h.advance(FRAME_GAP / 4)
    h.pacer.add(1, [c])
    assert h.batches == [(1, [a])]  # b and c wait for the next frame
    assert h.pacer.queued == 2
    h.advance(FRAME_GAP / 2 - 1e-6)
    assert len(h.batches) == 1
    h.advance(2e-6)
    assert h.batches == [(1, [a]), (1, [b, c])]  # one batch, in the order they came
    assert h.live_timers() == []
    h.advance(FRAME_GAP * 2)  # quiet again: the next one is applied at once
    d = appended(30, 40)
    h.pacer.add(1, [d])
    assert h.batches[-1] == (1, [d])


def test_a_torn_line_completed_within_the_delay_never_shows_its_pending_row_alone():
    h = Host()
    piece, rest = Pending(0, 5, b'{"rol'), appended(0, 12)
    h.pacer.add(1, [piece])
    assert h.batches == []  # the pending row waits for its newline
    h.advance(PENDING_DELAY / 2)
    h.pacer.add(1, [rest, Pending(12, 0)])
    assert h.batches == [(1, [piece, rest, Pending(12, 0)])]  # one batch: the complete record
    h.advance(PENDING_DELAY)
    assert len(h.batches) == 1 and h.live_timers() == []


def test_a_pending_line_without_its_newline_is_shown_after_the_delay():
    h = Host()
    piece = Pending(0, 5, b'{"rol')
    h.pacer.add(1, [piece])
    h.advance(PENDING_DELAY - 1e-6)
    assert h.batches == []
    h.advance(2e-6)
    assert h.batches == [(1, [piece])]
    # a pending line that keeps growing is drawn again at most every PENDING_DELAY (and FRAME_GAP), not at
    # every piece
    shown = h.applied_at[-1]
    more = [Pending(0, 5 + i, b'{"rol') for i in range(1, 6)]
    for p in more[:4]:
        h.pacer.add(1, [p])
        h.advance(PENDING_DELAY / 10)
    due = max(shown + PENDING_DELAY, shown + FRAME_GAP)
    h.advance(due - h.now - 1e-6)
    assert len(h.batches) == 1
    h.advance(2e-6)
    assert len(h.batches) == 2 and h.batches[1] == (1, more[:4])
    shown = h.applied_at[-1]
    h.pacer.add(1, [more[4]])
    due = max(shown + PENDING_DELAY, shown + FRAME_GAP)
    h.advance(due - h.now - 1e-6)
    assert len(h.batches) == 2
    h.advance(2e-6)
    assert h.batches[2] == (1, more[4:])


def test_anything_but_appends_is_applied_at_once_after_what_was_queued():
    h = Host()
    a, b = appended(0, 10), appended(10, 20)
    h.pacer.add(1, [a])
    h.pacer.add(1, [b])
    assert h.batches == [(1, [a])]
    cut = Truncated(5, "shrank")
    h.pacer.add(1, [cut])
    assert h.batches == [(1, [a]), (1, [b, cut])]
    assert h.live_timers() == []
    gone = Deleted()
    h.pacer.add(1, [gone])
    assert h.batches[-1] == (1, [gone])


def test_flush_applies_the_queue_now_and_drop_forgets_it():
    h = Host()
    a, b, c = appended(0, 10), appended(10, 20), appended(20, 30)
    h.pacer.add(1, [a])
    h.pacer.add(1, [b])
    h.pacer.flush()  # (before a save: the model has what was reported)
    assert h.batches == [(1, [a]), (1, [b])] and h.live_timers() == []
    h.pacer.add(1, [c])
    h.pacer.drop()  # (the file is opened again: it reads what c said)
    h.advance(FRAME_GAP * 2)
    assert h.batches == [(1, [a]), (1, [b])] and h.pacer.queued == 0
    h.pacer.flush()
    assert len(h.batches) == 2


def test_a_newer_generation_drops_what_an_older_one_queued():
    h = Host()
    a, b, c = appended(0, 10), appended(10, 20), appended(0, 5)
    h.pacer.add(1, [a])
    h.pacer.add(1, [b])
    h.pacer.add(2, [c])
    h.advance(FRAME_GAP)
    assert h.batches == [(1, [a]), (2, [c])]
