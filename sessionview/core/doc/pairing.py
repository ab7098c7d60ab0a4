"""Tool-call pairing: link each result to its call, and find dangling calls, orphan results and
duplicate call ids."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

from sessionview.core.doc.model import Problem, View


@dataclass
class Pairing:
    calls: dict[str, int] = field(default_factory=dict)  # call id -> #N of the (first) call
    results: dict[str, list[int]] = field(default_factory=dict)  # call id -> #N of its results
    names: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    duplicate_calls: dict[str, list[int]] = field(default_factory=dict)
    orphans: list[tuple[str | None, int]] = field(default_factory=list)

    def result_of(self, call_id: str) -> int | None:
        found = self.results.get(call_id)
        return found[0] if found else None

    def call_of(self, call_id: str | None) -> int | None:
        return self.calls.get(call_id) if call_id is not None else None

    @property
    def dangling(self) -> list[tuple[str, int]]:
        return [(cid, n) for cid, n in self.calls.items() if cid not in self.results]

    def problems(self) -> list[Problem]:
        out: list[Problem] = []
        for cid, n in self.dangling:
            name = self.names.get(cid, "")
            out.append(Problem("dangling tool call", f"tool call {cid} ({name}) has no result", n, (cid,)))
        for rid, n in self.orphans:
            label = rid if rid is not None else "(no id)"
            out.append(Problem("orphan tool result", f"tool result for {label} answers no tool call", n, (label,)))
        for cid, numbers in self.duplicate_calls.items():
            where = ", ".join(f"#{n}" for n in numbers)
            out.append(Problem("duplicate tool call id", f"tool call id {cid} is used by {where}", numbers[0], (cid,)))
        out.sort(key=lambda p: (p.number or 0, p.kind))
        return out


def pair(views: Iterable[View]) -> Pairing:
    p = Pairing()
    pending: list[tuple[str | None, int]] = []
    for v in views:
        for call in v.tool_calls:
            if call.id is None:
                continue
            if call.id in p.calls:
                if p.calls[call.id] != v.number:
                    p.duplicate_calls.setdefault(call.id, [p.calls[call.id]]).append(v.number)
                else:
                    p.duplicate_calls.setdefault(call.id, [v.number, v.number])
            else:
                p.calls[call.id] = v.number
                p.names[call.id] = call.name
        for result in v.tool_results:
            cid = result.call_id
            if cid is not None and cid in p.calls:
                p.results.setdefault(cid, []).append(v.number)
            else:
                pending.append((cid, v.number))
    # A result may precede its call only in a broken file; still link it rather than call it an orphan.
    for cid, n in pending:
        if cid is not None and cid in p.calls:
            p.results.setdefault(cid, []).append(n)
        else:
            p.orphans.append((cid, n))
    return p


class CallLedger:
    """:func:`pair`'s problems from the tool calls and results fed one record at a time, in record order,
    keeping per call id only an int (its record and whether it was answered) and its tool name (``check`` of a
    huge file: no list of results, no views)."""

    def __init__(self) -> None:
        self.calls: dict[Any, int] = {}  # call id -> #N << 1 | answered
        self.names: dict[Any, str] = {}
        self.duplicate_calls: dict[Any, list[int]] = {}
        self.pending: list[tuple[Any, int]] = []  # results before (or without) their call

    def feed(self, number: int, calls: Iterable[tuple[Any, str]], results: Iterable[Any]) -> None:
        known = self.calls
        for cid, name in calls:
            if cid is None:
                continue
            seen = known.get(cid)
            if seen is not None:
                if seen >> 1 != number:
                    self.duplicate_calls.setdefault(cid, [seen >> 1]).append(number)
                else:
                    self.duplicate_calls.setdefault(cid, [number, number])
            else:
                known[cid] = number << 1
                self.names[cid] = sys.intern(name) if type(name) is str else name
        for cid in results:
            seen = known.get(cid) if cid is not None else None
            if seen is not None:
                known[cid] = seen | 1
            else:
                self.pending.append((cid, number))

    def problems(self) -> list[Problem]:
        """What ``pair(views).problems()`` gives for the same records."""
        known = self.calls
        orphans = []
        for cid, n in self.pending:
            seen = known.get(cid) if cid is not None else None
            if seen is not None:
                known[cid] = seen | 1
            else:
                orphans.append((cid, n))
        self.pending = []
        p = Pairing(duplicate_calls=self.duplicate_calls, orphans=orphans)
        out: list[Problem] = []
        for cid, v in known.items():
            if not v & 1:
                name = self.names.get(cid, "")
                out.append(Problem("dangling tool call", f"tool call {cid} ({name}) has no result", v >> 1, (cid,)))
        rest = p.problems()  # orphans and duplicates: no calls in ``p``, so nothing dangles there
        out.extend(rest)
        out.sort(key=lambda q: (q.number or 0, q.kind))
        return out
