"""Time in a session: when each record was written, relative to the start of the session, how long a tool
call took (its call's time to its result's), and the long gaps between consecutive records.

Pure functions over :attr:`View.timestamp` (ISO 8601, where the format records it). Relative times depend
only on the file, never on the clock or the time zone, so transcripts and snapshots stay the same.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sessionview.core.doc.model import View
from sessionview.core.values import Value

__all__ = [
    "GAP",
    "Timing",
    "parse_time",
    "relative",
    "duration",
    "absolute",
]

#: seconds between consecutive records from which the quiet is marked as a gap
GAP = 60.0


def parse_time(stamp: str | None) -> float | None:
    """Seconds since the epoch of an ISO 8601 time (a time without a zone is taken as UTC); None if none."""
    if not stamp:
        return None
    text = stamp.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def view_time(view: View) -> float | None:
    return parse_time(view.timestamp)


def relative(t: float, start: float) -> str:
    """``+0:00``, ``+12:03``, ``+1:02:03``, ``+2d 03:04:05`` (``-0:05`` for a time before the start)."""
    d = t - start
    sign = "-" if d < 0 else "+"
    s = int(abs(d))
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    minutes, seconds = divmod(s, 60)
    if days:
        return f"{sign}{days}d {hours:02d}:{minutes:02d}:{seconds:02d}"
    if hours:
        return f"{sign}{hours}:{minutes:02d}:{seconds:02d}"
    return f"{sign}{minutes}:{seconds:02d}"


def duration(seconds: float) -> str:
    """``0.4s``, ``12s``, ``3m 05s``, ``2h 04m``, ``3d 02h``."""
    s = max(0.0, seconds)
    if s < 10:
        return f"{s:.1f}s"
    if s < 60:
        return f"{int(s)}s"
    n = int(s)
    if n < 3600:
        return f"{n // 60}m {n % 60:02d}s"
    if n < 86400:
        return f"{n // 3600}h {(n % 3600) // 60:02d}m"
    return f"{n // 86400}d {(n % 86400) // 3600:02d}h"


def absolute(t: float, previous: float | None = None) -> str:
    """Local time: ``HH:MM:SS``, with the date in front when it differs from ``previous``'s (or there is none)."""
    dt = datetime.fromtimestamp(t).astimezone()
    if previous is not None and datetime.fromtimestamp(previous).astimezone().date() == dt.date():
        return dt.strftime("%H:%M:%S")
    return dt.strftime("%Y-%m-%d %H:%M:%S")


def absolute_full(t: float) -> str:
    """``2025-06-14 12:00:30 CEST`` (local time with its zone)."""
    return datetime.fromtimestamp(t).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z").rstrip()


class Timing(Value):
    """Start, end, call durations and long gaps over records seen in order (fed by :meth:`add`).

    Call times are kept only until their result comes (or at most ``open_limit`` of them), so a big session
    costs little memory; ``durations`` keeps the longest ``keep`` tool calls. (A
    :class:`~sessionview.core.values.Value`: no dataclass to build at import.)"""

    __slots__ = ("start", "end", "timed", "gaps", "longest_gap", "calls_timed", "call_seconds", "longest_call",
                 "_last", "_first", "_open", "open_limit", "keep_gaps")
    start: float | None
    end: float | None
    timed: int  # records with a time
    gaps: list[tuple[int, float]]  # (record number after the gap, seconds)
    longest_gap: float
    calls_timed: int
    call_seconds: float  # sum over the calls whose duration is known
    longest_call: tuple[float, int] | None  # (seconds, record number of the result)
    _last: float | None
    _first: tuple[float, int] | None  # the first time seen and its record
    _open: dict[str, float]
    open_limit: int
    keep_gaps: int

    def __init__(
        self, start: float | None = None, end: float | None = None, timed: int = 0,
        gaps: list[tuple[int, float]] | None = None, longest_gap: float = 0.0, calls_timed: int = 0,
        call_seconds: float = 0.0, longest_call: tuple[float, int] | None = None, _last: float | None = None,
        _first: tuple[float, int] | None = None, _open: dict[str, float] | None = None, open_limit: int = 10000,
        keep_gaps: int = 1000,
    ) -> None:
        self.start = start
        self.end = end
        self.timed = timed
        self.gaps = [] if gaps is None else gaps
        self.longest_gap = longest_gap
        self.calls_timed = calls_timed
        self.call_seconds = call_seconds
        self.longest_call = longest_call
        self._last = _last
        self._first = _first
        self._open = {} if _open is None else _open
        self.open_limit = open_limit
        self.keep_gaps = keep_gaps

    def add(self, view: View) -> None:
        t = view_time(view)
        if t is None:
            return
        self.timed += 1
        if self._first is None:
            self._first = (t, view.number)
        if self.start is None or t < self.start:
            self.start = t
        if self.end is None or t > self.end:
            self.end = t
        if self._last is not None and t - self._last >= GAP:
            self.longest_gap = max(self.longest_gap, t - self._last)
            if len(self.gaps) < self.keep_gaps:
                self.gaps.append((view.number, t - self._last))
        self._last = t
        for call in view.tool_calls:
            if call.id is not None and len(self._open) < self.open_limit:
                self._open.setdefault(call.id, t)
        for result in view.tool_results:
            began = self._open.pop(result.call_id, None) if result.call_id is not None else None
            if began is not None:
                took = max(0.0, t - began)
                self.calls_timed += 1
                self.call_seconds += took
                if self.longest_call is None or took > self.longest_call[0]:
                    self.longest_call = (took, view.number)

    @property
    def duration(self) -> float | None:
        if self.start is None or self.end is None:
            return None
        return self.end - self.start

    def merge(self, other: "Timing") -> None:
        """Add ``other`` (records that came after the ones seen here)."""
        if self._last is not None and other._first is not None and other._first[0] - self._last >= GAP:
            seconds = other._first[0] - self._last
            self.longest_gap = max(self.longest_gap, seconds)
            if len(self.gaps) < self.keep_gaps:
                self.gaps.append((other._first[1], seconds))
        if self._first is None:
            self._first = other._first
        for number, seconds in other.gaps:
            if len(self.gaps) < self.keep_gaps:
                self.gaps.append((number, seconds))
        self.longest_gap = max(self.longest_gap, other.longest_gap)
        if other.start is not None:
            self.start = other.start if self.start is None else min(self.start, other.start)
        if other.end is not None:
            self.end = other.end if self.end is None else max(self.end, other.end)
        self.timed += other.timed
        self.calls_timed += other.calls_timed
        self.call_seconds += other.call_seconds
        if other.longest_call is not None and (self.longest_call is None or other.longest_call[0] > self.longest_call[0]):
            self.longest_call = other.longest_call
        if other._last is not None:
            self._last = other._last
        for cid, t in other._open.items():
            self._open.setdefault(cid, t)

    def shifted(self, base: int) -> "Timing":
        out = Timing(self.start, self.end, self.timed, [(n + base, s) for n, s in self.gaps], self.longest_gap)
        out.calls_timed, out.call_seconds = self.calls_timed, self.call_seconds
        out.longest_call = (self.longest_call[0], self.longest_call[1] + base) if self.longest_call else None
        out._last, out._open = self._last, dict(self._open)
        out._first = (self._first[0], self._first[1] + base) if self._first else None
        return out


def gap_before(view: View, previous: View | None) -> float | None:
    """Seconds of quiet before ``view`` when they reach :data:`GAP` (``previous``: the record before it)."""
    if previous is None:
        return None
    t, p = view_time(view), view_time(previous)
    if t is None or p is None or t - p < GAP:
        return None
    return t - p


def call_duration(result: View, call: View) -> float | None:
    """Seconds from the call's record to its result's (None where either has no time)."""
    t, c = view_time(result), view_time(call)
    if t is None or c is None:
        return None
    return max(0.0, t - c)


def note(model: Any, n: int, view: View) -> str:
    """What the transcript says of record ``n``'s time (``model``: a
    :class:`~sessionview.core.view.transcript.TranscriptModel`): ``+12:03`` from the session's start, the
    quiet before it when long (``⏸ 5m 00s``), and on a tool result how long its call took."""
    t = view_time(view)
    if t is None:
        return ""
    parts: list[str] = []
    took = call_seconds(model, view)
    if took is not None:
        parts.append(f"took {duration(took)}")
    elif n > 1:  # a result's wait is its call's duration, said above
        gap = gap_before(view, model.view(n - 1))
        if gap is not None:
            parts.append(f"⏸ {duration(gap)}")
    start = model.start_time()
    if start is not None:
        parts.append(relative(t, start))
    return " · ".join(parts)


def call_seconds(model: Any, view: View) -> float | None:
    """For a tool result: seconds from its call's record to it, where both are timed and the model's
    stats know the call."""
    for result in view.tool_results:
        if result.call_id is None:
            continue
        for s in (model.stats, model.appended_stats):
            m = s.calls.get(result.call_id) if s is not None else None
            if m is not None and m != view.number and 1 <= m <= len(model):
                return call_duration(view, model.view(m))
    return None
