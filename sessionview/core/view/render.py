"""Plain-text and JSON renderings of views, for ``sessionview show`` and scripts.

Everything that comes from a file passes through :func:`escape_control`, so nothing in a session can
reach the terminal as a control sequence.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from sessionview.core.doc.branches import label as branch_label
from sessionview.core.doc.model import Kind, View
from sessionview.core.doc.pairing import Pairing
from sessionview.core.text import approx_tokens, decode_for_display, escape_control, plural
from sessionview.core.view.tools import generic

INDENT = "    "
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def header(session: Any, count: bool = True) -> str:
    """``path · format · N records``; without the count when printing as the file is read (``count=False``)."""
    path = escape_control(session.path or "-", one_line=True)
    text = f"{path} · {session.format_title}"
    if count:
        text += f" · {plural(len(session), 'record')}"
    if getattr(session, "read_only_reason", None):
        text += f"\nread-only: {escape_control(session.read_only_reason, one_line=True)}"
    return text


class RunningPairing(Pairing):
    """Pairing as a file is read front to back: a result knows its call; a call does not yet know its result."""

    partial = True
    #: set by a reader that starts after #1 (``show --last`` of a big file): a call before it is not known
    start: int | None = None

    def see(self, view: View) -> None:
        for call in view.tool_calls:
            if call.id is not None and call.id not in self.calls:
                self.calls[call.id] = view.number
                self.names[call.id] = call.name
        for result in view.tool_results:
            if result.call_id is not None and result.call_id in self.calls:
                self.results.setdefault(result.call_id, []).append(view.number)


def _unpaired(pairing: Pairing | None) -> str:
    """What a result without a known call says: no call anywhere, or none in what was read (a window)."""
    start = getattr(pairing, "start", None)
    if start is not None and start > 1:
        return f" (no call in #{start} on; not looked for before #{start})"
    return " (no matching call)"


def _indent(text: str, prefix: str = INDENT) -> str:
    """Each line of ``text`` after ``prefix``; an empty line gets the prefix without its trailing blanks."""
    out = prefix + text.replace("\n", "\n" + prefix)
    bare = prefix.rstrip()
    if bare == prefix:
        return out
    if "\n\n" in text:  # two passes: a run of empty lines shares its newlines between the matches
        empty, short = "\n" + prefix + "\n", "\n" + bare + "\n"
        out = out.replace(empty, short).replace(empty, short)
    if not text or text[0] == "\n":
        out = bare + out[len(prefix):]
    if text and text[-1] == "\n":
        out = out[: len(out) - len(prefix)] + bare
    return out


def pretty(value: Any) -> str:
    """Pretty JSON of a parsed value (big integers and NaN included), for display only."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = json.dumps(_finite(value), indent=2, ensure_ascii=False)
    return text


def arguments_text(value: Any) -> str:
    """A call's arguments as pretty JSON, except that a string with newlines is a block of text (each of its
    lines after ``| ``), not an escaped JSON string."""
    g = generic(value)
    text = "\n".join(" " * line.indent + (("| " + line.text if line.text else "|") if line.block else line.text) for line in g.lines)
    if g.more:
        text += f"\n… {plural(g.more, 'more line')}"
    return text


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _number_label(view: View) -> str:
    if len(view.numbers) > 1:
        return f"#{view.number} (lines {view.numbers[0]}–{view.numbers[-1]})"
    return f"#{view.number}"


def when(view: View) -> str:
    """The record's time for a header line (``  @ 2025-11-01T10:00:05.000Z``), or nothing."""
    return f"  @ {escape_control(view.timestamp, one_line=True)}" if view.timestamp else ""


def _marks(view: View, subagent_calls: dict[str, str] | None) -> str:
    """The labels of a subagent's view and of what the harness injected."""
    marks = ""
    if view.subagent is not None:
        agent = escape_control(view.subagent, one_line=True)
        call = (subagent_calls or {}).get(view.subagent or "")
        marks += f"  [subagent{' ' + agent if agent else ''}{' · Task call ' + escape_control(call, one_line=True) if call else ''}]"
    if view.injected:
        marks += "  [injected]"
    if view.branch is not None or view.branch_point:
        marks += f"  [{branch_label(view.branch, view.branch_point)}]"
    return marks


def view_text(view: View, pairing: Pairing | None = None, width: int = 0, subagent_calls: dict[str, str] | None = None) -> str:
    """A view as plain text. A subagent's view is indented and labelled (``subagent_calls``: agent id → the id
    of the call that started it); a view the harness injected is labelled ``[injected]``."""
    text = _view_text(view, pairing)
    marks = _marks(view, subagent_calls) + when(view)
    if marks:
        first, sep, rest = text.partition("\n")
        text = first + marks + sep + rest
    if view.subagent is not None:
        text = _indent(text, "  | ")
    return text


def _view_text(view: View, pairing: Pairing | None) -> str:
    lines: list[str] = []
    esc = escape_control
    if view.kind is Kind.INVALID:
        problem = view.problems[0] if view.problems else None
        what = f"{problem.kind}: {problem.message}" if problem else (view.label or "invalid")
        lines.append(f"{_number_label(view)} !! {esc(what, one_line=True)}")
        if view.raw is not None:
            lines.append(_indent(decode_for_display(view.raw)))
        return "\n".join(lines)
    head = f"{_number_label(view)} {esc(view.role or view.label or view.kind.value, one_line=True)}"
    if view.kind is Kind.COMPACTION:
        head = f"{_number_label(view)} ── compaction: {esc(view.compaction or view.label or 'summary', one_line=True)} ── {esc(view.role or '', one_line=True)}".rstrip()
    elif view.kind in (Kind.META, Kind.UNKNOWN):
        head = f"{_number_label(view)} [{esc(view.label or view.kind.value, one_line=True)}]"
    if view.kind is Kind.MESSAGE and view.compaction:
        head += f"  [compacted:{esc(view.compaction, one_line=True)}]"
    if view.text or view.reasoning:
        head += f"  (~{plural(approx_tokens((view.text or '') + (view.reasoning or '')), 'token')})"
    lines.append(head)
    for result in view.tool_results:
        cid = esc(result.call_id or "(no id)", one_line=True)
        call_at = pairing.call_of(result.call_id) if pairing else None
        name = pairing.names.get(result.call_id or "", "") if pairing else ""
        name = result.name or name
        link = f" from #{call_at}" if call_at is not None else _unpaired(pairing)
        err = " ERROR" if result.is_error else ""
        lines.append(f"{INDENT}<- result of {cid}{' ' + esc(name, one_line=True) if name else ''}{link}{err}")
        if result.content and result.content != view.text:
            lines.append(_indent(esc(result.content), INDENT * 2))
    if view.reasoning:
        lines.append(f"{INDENT}(reasoning)")
        lines.append(_indent(esc(view.reasoning), INDENT + "| "))
    if view.text:
        lines.append(_indent(esc(view.text)))
    elif view.kind in (Kind.META, Kind.UNKNOWN) and view.raw is not None:
        lines.append(_indent(decode_for_display(view.raw)))
    for call in view.tool_calls:
        cid = esc(call.id or "(no id)", one_line=True)
        result_at = pairing.result_of(call.id) if (pairing and call.id) else None
        if result_at is not None:
            link = f" -> result #{result_at}"
        else:
            link = "" if getattr(pairing, "partial", False) else " (no result)"
        lines.append(f"{INDENT}-> tool call {esc(call.name, one_line=True)} [{cid}]{link}")
        args = call.arguments
        if args is None and call.raw_arguments is not None:
            lines.append(_indent(esc(call.raw_arguments), INDENT * 2))
        else:
            lines.append(_indent(esc(arguments_text(args)), INDENT * 2))
    for p in view.problems:
        lines.append(f"{INDENT}!! {esc(p.kind, one_line=True)}: {esc(p.message, one_line=True)}")
    return "\n".join(lines)


def view_dict(view: View) -> dict[str, Any]:
    out: dict[str, Any] = {"n": view.number, "kind": view.kind.value}
    out["timestamp"] = view.timestamp  # ISO 8601, or None where the format records no time
    if len(view.numbers) > 1:
        out["numbers"] = list(view.numbers)
    if view.subagent is not None:
        out["subagent"] = view.subagent
    if view.injected:
        out["injected"] = True
    if view.branch is not None:
        out["branch"] = {"point": view.branch.point, "index": view.branch.index, "count": view.branch.count}
    if view.branch_point:
        out["branch_point"] = view.branch_point
    if view.role is not None:
        out["role"] = view.role
    if view.label is not None:
        out["label"] = view.label
    out["text"] = view.text
    if view.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments if c.arguments is not None else c.raw_arguments}
            for c in view.tool_calls
        ]
    if view.tool_results:
        out["tool_results"] = [
            {"call_id": r.call_id, "content": r.content, "is_error": r.is_error} for r in view.tool_results
        ]
    if view.reasoning is not None:
        out["reasoning"] = view.reasoning
    if view.compaction is not None:
        out["compaction"] = view.compaction
    if view.problems:
        out["problems"] = [{"kind": p.kind, "message": p.message} for p in view.problems]
    if view.raw is not None and view.kind is Kind.INVALID:
        out["raw"] = view.raw.decode("utf-8", "backslashreplace")
    return out


def view_json(view: View) -> str:
    """One normalised JSON object, safe for a terminal (C1, bidi, DEL escaped as \\uXXXX)."""
    d = view_dict(view)
    try:
        text = orjson.dumps(d, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = json.dumps(_finite(d), ensure_ascii=False, separators=(",", ":"))
        # lone surrogates cannot be UTF-8: escape them as JSON does
        text = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
