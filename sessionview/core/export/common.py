"""What both export formats show of a session: its messages one at a time, with their links and labels.

Nothing here holds more than one message: :func:`entries` walks the session once for the tool pairing
(ids and numbers only) and once for the messages, yielding each as it is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Protocol

from sessionview.core.doc.model import Kind, View, iter_merged
from sessionview.core.doc.pairing import Pairing, pair
from sessionview.core.text import decode_for_display, escape_control
from sessionview.core.view.render import pretty


class TextOut(Protocol):
    """Where an export goes: anything with ``write(str)`` (an open text file, ``sys.stdout``...)."""

    def write(self, text: str, /) -> Any: ...


@dataclass(frozen=True)
class Call:
    name: str
    id: str
    link: str  # "result #N" or "no result"
    body: str  # pretty arguments


@dataclass(frozen=True)
class Result:
    id: str
    name: str
    link: str  # "call #N" or "no matching call"
    error: bool
    body: str


@dataclass(frozen=True)
class Entry:
    """One message as an export shows it; every string is already control-escaped (but not HTML/Markdown-escaped)."""

    number: str  # "#12" or "#12 (lines 12-14)"
    anchor: int
    kind: str  # "message", "compaction", "meta", "unknown", "invalid"
    role: str  # role, line label, or problem kind
    timestamp: str | None
    subagent: str | None
    compaction: str | None
    text: str
    reasoning: str | None
    calls: tuple[Call, ...]
    results: tuple[Result, ...]
    problems: tuple[str, ...]
    raw: str | None  # the record's bytes, for broken and unknown records


def esc(text: str) -> str:
    return escape_control(text, one_line=True)


def entries(session: Any, first: int = 1, last: int | None = None) -> Iterator[Entry]:
    """The messages ``first..last`` (record numbers, inclusive) of ``session``, one at a time."""
    pairing = pair(session.stream())
    for view in iter_merged(session.stream(first, last)):
        yield entry(view, pairing)


def entry(view: View, pairing: Pairing | None = None) -> Entry:
    number = f"#{view.number}"
    if len(view.numbers) > 1:
        number += f" (lines {view.numbers[0]}-{view.numbers[-1]})"
    problem = view.problems[0] if view.problems else None
    if view.kind is Kind.INVALID:
        role = problem.kind if problem else (view.label or "invalid")
    elif view.kind in (Kind.META, Kind.UNKNOWN):
        role = view.label or view.kind.value
    else:
        role = view.role or view.label or view.kind.value
    subagent = getattr(view, "subagent", None)  # set by adapters that mark subagent records
    raw = None
    if view.raw is not None and (view.kind is Kind.INVALID or (view.kind in (Kind.META, Kind.UNKNOWN) and not view.text)):
        raw = decode_for_display(view.raw)
    return Entry(
        number=number,
        anchor=view.number,
        kind=view.kind.value,
        role=esc(role),
        timestamp=esc(view.timestamp) if view.timestamp else None,
        subagent=esc(str(subagent)) if subagent not in (None, False, "") else None,
        compaction=esc(view.compaction or view.label or "summary") if view.kind is Kind.COMPACTION else
        (esc(view.compaction) if view.compaction else None),
        text="" if view.kind is Kind.INVALID or _is_result_text(view) else escape_control(view.text or ""),
        reasoning=escape_control(view.reasoning) if view.reasoning else None,
        calls=tuple(_call(c, pairing) for c in view.tool_calls),
        results=tuple(_result(r, pairing) for r in view.tool_results),
        problems=tuple(esc(f"{p.kind}: {p.message}") for p in view.problems),
        raw=raw,
    )


def _is_result_text(view: View) -> bool:
    """Whether the text is a tool result's content (shown with the result, fenced, not again as text)."""
    return bool(view.text) and any(r.content == view.text for r in view.tool_results)


def _call(call: Any, pairing: Pairing | None) -> Call:
    at = pairing.result_of(call.id) if (pairing and call.id) else None
    if call.arguments is None and call.raw_arguments is not None:
        body = call.raw_arguments
    else:
        body = pretty(call.arguments)
    return Call(esc(call.name), esc(call.id or "(no id)"), f"result #{at}" if at is not None else "no result",
                escape_control(body))


def _result(result: Any, pairing: Pairing | None) -> Result:
    at = pairing.call_of(result.call_id) if pairing else None
    name = result.name or (pairing.names.get(result.call_id or "", "") if pairing else "")
    body = result.content
    return Result(esc(result.call_id or "(no id)"), esc(name), f"call #{at}" if at is not None else "no matching call",
                  bool(result.is_error), escape_control(body))


_BACKTICKS = re.compile("`+")


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text`` (at least three), so it cannot close early."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)
