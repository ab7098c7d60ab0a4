"""Tool-call pairing: link each result to its call, and find dangling calls, orphan results, duplicate call
ids and user messages placed between a call and its result (provider APIs reject a request like that)."""

from __future__ import annotations

import sys
from typing import Any, Iterable

from sessionview.core.doc.model import Kind, Problem, View
from sessionview.core.values import Value


class Pairing(Value):
    """Which record calls and which answers each tool call id (a :class:`~sessionview.core.values.Value`: no
    dataclass to build at import; each field left out is a new empty one)."""

    __slots__ = ("calls", "results", "names", "duplicate_calls", "orphans", "interrupted")
    calls: dict[str, int]  # call id -> #N of the (first) call
    results: dict[str, list[int]]  # call id -> #N of its results
    names: dict[str, str]  # call id -> tool name
    duplicate_calls: dict[str, list[int]]
    orphans: list[tuple[str | None, int]]
    #: (#N of a user message, ids of the calls made before it whose results come after it)
    interrupted: list[tuple[int, tuple[str, ...]]]

    def __init__(
        self,
        calls: dict[str, int] | None = None,
        results: dict[str, list[int]] | None = None,
        names: dict[str, str] | None = None,
        duplicate_calls: dict[str, list[int]] | None = None,
        orphans: list[tuple[str | None, int]] | None = None,
        interrupted: list[tuple[int, tuple[str, ...]]] | None = None,
    ) -> None:
        self.calls = {} if calls is None else calls
        self.results = {} if results is None else results
        self.names = {} if names is None else names
        self.duplicate_calls = {} if duplicate_calls is None else duplicate_calls
        self.orphans = [] if orphans is None else orphans
        self.interrupted = [] if interrupted is None else interrupted

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
        for n, ids in self.interrupted:
            shown = ", ".join(f"{cid} ({self.names.get(cid, '')}) at #{self.calls[cid]}" for cid in ids[:3])
            more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
            result_at = min(self.results[cid][0] for cid in ids)
            out.append(Problem(
                INTERRUPTED,
                f"user message #{n} comes between tool call {shown}{more} and its result at #{result_at}: "
                "provider APIs reject a user message before every call is answered",
                n,
                ids,
            ))
        out.sort(key=lambda p: (p.number or 0, p.kind))
        return out


#: the problem kind of a user message between a tool call and its result
INTERRUPTED = "user message before tool result"


def is_user_words(v: View) -> bool:
    """A user's own message in the main conversation: not a tool result, nor the harness's, nor a subagent's."""
    return (
        v.kind is Kind.MESSAGE and v.role == "user" and not v.tool_results and not v.tool_calls
        and not v.injected and v.subagent is None
    )


def pair(views: Iterable[View]) -> Pairing:
    p = Pairing()
    pending: list[tuple[str | None, int]] = []
    unanswered: dict[str, None] = {}  # calls not answered yet and not followed by a user message, in order
    user_after: dict[str, int] = {}  # call id -> #N of the first user message after it (while it was open)
    for v in views:
        if unanswered and is_user_words(v):
            for open_id in unanswered:
                user_after[open_id] = v.number
            unanswered.clear()
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
                if v.subagent is None:
                    unanswered[call.id] = None
        for result in v.tool_results:
            cid = result.call_id
            if cid is not None and cid in p.calls:
                p.results.setdefault(cid, []).append(v.number)
                unanswered.pop(cid, None)
            else:
                pending.append((cid, v.number))
    # A result may precede its call only in a broken file; still link it rather than call it an orphan.
    for cid, n in pending:
        if cid is not None and cid in p.calls:
            p.results.setdefault(cid, []).append(n)
        else:
            p.orphans.append((cid, n))
    # a call never answered is a dangling call already: only calls answered after the user message count
    interrupted: dict[int, list[str]] = {}
    for open_id, n in user_after.items():
        if any(r > n for r in p.results.get(open_id, ())):
            interrupted.setdefault(n, []).append(open_id)
    p.interrupted = [(n, tuple(ids)) for n, ids in sorted(interrupted.items())]
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
        self.unanswered: dict[Any, int] = {}  # main-chain calls open and not yet followed by a user message -> order
        self.user_after: dict[Any, tuple[int, int]] = {}  # call id -> (#N of the user message after it, its order)
        self.interrupted: dict[int, list[tuple[int, Any, int]]] = {}  # #N of the user message -> (order, id, result #N)
        self._order = 0

    def user(self, number: int) -> None:
        """A user's own message (see :func:`is_user_words`): the calls still open were interrupted by it."""
        if self.unanswered:
            for cid, order in self.unanswered.items():
                self.user_after[cid] = (number, order)
            self.unanswered.clear()

    def feed(self, number: int, calls: Iterable[tuple[Any, str]], results: Iterable[Any], sub: bool = False) -> None:
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
                if not sub:
                    self._order += 1
                    self.unanswered[cid] = self._order
        for cid in results:
            seen = known.get(cid) if cid is not None else None
            if seen is not None:
                if not seen & 1:
                    self.unanswered.pop(cid, None)
                    after = self.user_after.pop(cid, None)
                    if after is not None:  # its first result, after a user message that came after the call
                        self.interrupted.setdefault(after[0], []).append((after[1], cid, number))
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
        for n, found in sorted(self.interrupted.items()):  # as pair() words it (the calls in their order)
            found.sort()
            for _, cid, result_at in found:
                p.calls[cid], p.names[cid] = known[cid] >> 1, self.names.get(cid, "")
                p.results.setdefault(cid, []).append(result_at)
            p.interrupted.append((n, tuple(cid for _, cid, _ in found)))
        out: list[Problem] = []
        for cid, v in known.items():
            if not v & 1:
                name = self.names.get(cid, "")
                out.append(Problem("dangling tool call", f"tool call {cid} ({name}) has no result", v >> 1, (cid,)))
        rest = p.problems()  # orphans, duplicates, interruptions: ``p`` holds only answered calls, so nothing dangles
        out.extend(rest)
        out.sort(key=lambda q: (q.number or 0, q.kind))
        return out
