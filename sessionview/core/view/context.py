"""Where a session's context goes: tokens per record, the context's size over the session, the largest
records, and totals by role and by tool. Built in one pass over the views (:meth:`ContextProfile.add`).

Two kinds of numbers, never mixed up: the usage the file *records* (:mod:`sessionview.core.view.usage`),
and *estimates* from the text (:func:`~sessionview.core.view.stats.view_tokens`, about 4 characters a token),
which front ends mark with ``~``. A record's own size is always an estimate (no format records it per
message); the context's size over the session is the recorded one where the file records usage, else the
estimated running sum since the last compaction.
"""

from __future__ import annotations

import heapq
from array import array
from dataclasses import dataclass, field

from sessionview.core.doc.model import Kind, View
from sessionview.core.text import approx_tokens
from sessionview.core.view.stats import compact_json, view_tokens
from sessionview.core.view.usage import UsageTotals

TOP = 200  # records kept in the ranking


@dataclass
class Share:
    """A group's part: how many records (or calls) and their estimated tokens."""

    count: int = 0
    tokens: int = 0


@dataclass
class ContextProfile:
    tokens: array = field(default_factory=lambda: array("q"))  # estimated tokens of record n at [n - 1]
    estimated: array = field(default_factory=lambda: array("q"))  # the estimated context after record n
    recorded: array = field(default_factory=lambda: array("q"))  # the last recorded context at record n (0: none yet)
    usage: UsageTotals = field(default_factory=UsageTotals)
    by_role: dict[str, Share] = field(default_factory=dict)
    by_tool: dict[str, Share] = field(default_factory=dict)
    results: int = 0  # records holding a tool result
    _top: list[tuple[int, int]] = field(default_factory=list)  # heap of (tokens, -number)
    _names: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    _running: int = 0
    complete: bool = False

    def __len__(self) -> int:
        return len(self.tokens)

    def add(self, view: View) -> None:
        """Count record ``view.number``; records must come in order from 1."""
        n = view_tokens(view) if view.kind is not Kind.INVALID else approx_tokens((view.raw or b"").decode("utf-8", "replace"))
        self.tokens.append(n)
        if view.kind is Kind.COMPACTION:
            self._running = n
        else:
            self._running += n
        self.estimated.append(self._running)
        self.usage.add(view)
        self.recorded.append(self.usage.last_context)
        role = view.role or view.label or view.kind.value
        share = self.by_role.setdefault(role, Share())
        share.count += 1
        share.tokens += n
        for call in view.tool_calls:
            if call.id is not None:
                self._names[call.id] = call.name
            args = call.raw_arguments if call.raw_arguments is not None else compact_json(call.arguments)
            tool = self.by_tool.setdefault(call.name or "?", Share())
            tool.count += 1
            tool.tokens += approx_tokens(call.name) + approx_tokens(args)
        if view.tool_results:
            self.results += 1
        for result in view.tool_results:
            name = result.name or self._names.get(result.call_id or "") or "?"
            self.by_tool.setdefault(name, Share()).tokens += approx_tokens(result.content or "")
        item = (n, -view.number)
        if len(self._top) < TOP:
            heapq.heappush(self._top, item)
        elif item > self._top[0]:
            heapq.heapreplace(self._top, item)

    @property
    def real(self) -> bool:
        """Whether the context's size comes from usage the file records."""
        return self.usage.recorded and any(self.recorded)

    @property
    def total(self) -> int:
        """Estimated tokens of every record."""
        return sum(self.tokens)

    def largest(self, k: int = TOP) -> list[tuple[int, int]]:
        """``(record number, estimated tokens)``, largest first (ties: the earlier record first)."""
        return [(-neg, n) for n, neg in sorted(self._top, reverse=True)][:k]

    def context_series(self) -> array:
        """The context's size after each record: recorded where the file records usage, else estimated."""
        return self.recorded if self.real else self.estimated

    def series(self, points: int) -> list[float]:
        """:meth:`context_series` in at most ``points`` buckets (each its largest value), for a sparkline."""
        data = self.context_series()
        if not data or points <= 0:
            return []
        if len(data) <= points:
            return [float(v) for v in data]
        out: list[float] = []
        for i in range(points):
            a = i * len(data) // points
            b = max(a + 1, (i + 1) * len(data) // points)
            out.append(float(max(data[a:b])))
        return out

    def peak(self) -> int:
        data = self.context_series()
        return max(data) if data else 0

    def last(self) -> int:
        data = self.context_series()
        return data[-1] if data else 0
