"""Counts over the records of a session, for the header and the filter prompt: roles, kinds, tools, tokens."""

from __future__ import annotations

from typing import Any

import orjson

from sessionview.core.doc.model import Kind, View
from sessionview.core.text import approx_tokens
from sessionview.core.values import Value
from sessionview.core.view.timing import Timing
from sessionview.core.view.usage import UsageTotals

__all__ = ["Stats", "view_tokens", "compact_json"]


class Stats(Value):
    """Counts over every record, for the header and the filter prompt (a
    :class:`~sessionview.core.values.Value`: no dataclass to build at import; a field left out is a new one)."""

    __slots__ = ("records", "roles", "kinds", "tools", "tokens", "invalid", "calls", "results", "names", "complete",
                 "errors", "timing", "usage")
    records: int
    roles: dict[str, int]
    kinds: dict[str, int]
    tools: dict[str, int]
    tokens: int
    invalid: int
    calls: dict[str, int]  # tool call id -> record number
    results: dict[str, int]  # tool call id -> record number of its result
    names: dict[str, str]  # tool call id -> tool name
    complete: bool
    errors: int  # tool results marked as errors
    timing: Timing  # start, end, durations and gaps (where times are recorded)
    usage: UsageTotals  # the usage the file records

    def __init__(
        self, records: int = 0, roles: dict[str, int] | None = None, kinds: dict[str, int] | None = None,
        tools: dict[str, int] | None = None, tokens: int = 0, invalid: int = 0, calls: dict[str, int] | None = None,
        results: dict[str, int] | None = None, names: dict[str, str] | None = None, complete: bool = False,
        errors: int = 0, timing: Timing | None = None, usage: UsageTotals | None = None,
    ) -> None:
        self.records = records
        self.roles = {} if roles is None else roles
        self.kinds = {} if kinds is None else kinds
        self.tools = {} if tools is None else tools
        self.tokens = tokens
        self.invalid = invalid
        self.calls = {} if calls is None else calls
        self.results = {} if results is None else results
        self.names = {} if names is None else names
        self.complete = complete
        self.errors = errors
        self.timing = Timing() if timing is None else timing
        self.usage = UsageTotals() if usage is None else usage

    @property
    def tool_calls(self) -> int:
        return sum(self.tools.values())

    def add(self, view: View) -> None:
        self.records += 1
        self.timing.add(view)
        self.usage.add(view)
        self.kinds[view.kind.value] = self.kinds.get(view.kind.value, 0) + 1
        if view.kind is Kind.INVALID:
            self.invalid += 1
            return
        if view.role:
            self.roles[view.role] = self.roles.get(view.role, 0) + 1
        self.tokens += view_tokens(view)
        for call in view.tool_calls:
            self.tools[call.name] = self.tools.get(call.name, 0) + 1
            if call.id is not None and call.id not in self.calls:
                self.calls[call.id] = view.number
                self.names[call.id] = call.name
        for result in view.tool_results:
            if result.is_error:
                self.errors += 1
            if result.call_id is not None and result.call_id not in self.results:
                self.results[result.call_id] = view.number

    def merge(self, other: "Stats") -> None:
        """Add ``other``'s counts (records that came after the ones counted here)."""
        self.records += other.records
        self.tokens += other.tokens
        self.invalid += other.invalid
        self.errors += other.errors
        self.timing.merge(other.timing)
        self.usage.merge(other.usage)
        for mine, theirs in ((self.roles, other.roles), (self.kinds, other.kinds), (self.tools, other.tools)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        for cid, number in other.calls.items():
            self.calls.setdefault(cid, number)
        for cid, number in other.results.items():
            self.results.setdefault(cid, number)
        for cid, name in other.names.items():
            self.names.setdefault(cid, name)

    def shifted(self, base: int) -> "Stats":
        """The same stats with record numbers moved by ``base``."""
        out = Stats(self.records, dict(self.roles), dict(self.kinds), dict(self.tools), self.tokens, self.invalid)
        out.calls = {k: v + base for k, v in self.calls.items()}
        out.results = {k: v + base for k, v in self.results.items()}
        out.names = dict(self.names)
        out.complete = self.complete
        out.errors = self.errors
        out.timing = self.timing.shifted(base)
        out.usage = self.usage
        return out


def view_tokens(view: View) -> int:
    """Approximate tokens of what a record says: text, reasoning, tool arguments and results."""
    n = approx_tokens(view.text or "") + approx_tokens(view.reasoning or "")
    for call in view.tool_calls:
        args = call.raw_arguments if call.raw_arguments is not None else compact_json(call.arguments)
        n += approx_tokens(call.name) + approx_tokens(args)
    for result in view.tool_results:
        if result.content != view.text:
            n += approx_tokens(result.content or "")
    return n


def compact_json(value: Any) -> str:
    """``value`` as compact JSON (its ``repr`` when it is not JSON)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)
