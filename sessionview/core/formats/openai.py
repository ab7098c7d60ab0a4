"""OpenAI chat-completions messages, one per line.

``{"role", "content": str | null | [parts], "name"?, "tool_calls"?: [{"id", "type": "function",
"function": {"name", "arguments": <JSON string>}}], "tool_call_id"?, "refusal"?}``. The arguments string is
kept verbatim in :attr:`ToolCall.raw_arguments` and parsed only for display (it may be invalid JSON).

This module also holds the small helpers the other wire-format adapters share.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from sessionview.core.formats.base import Adapter, Capabilities, warn
from sessionview.core.doc.model import Kind, Problem, ToolCall, ToolResult, View, block_text

# Constants are tuples, not sets: a membership test on a hostile (unhashable) value must not raise.
OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
#: block types that only Anthropic-style content has
ANTHROPIC_ONLY_TYPES = ("tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result", "document")


# -- shared helpers ---------------------------------------------------------------------------------


def as_str(v: Any) -> str | None:
    """A string, or None; other scalars are shown as text, containers are not ids."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    return None


def str_only(v: Any) -> str | None:
    """``v`` when it is a string (roles and types must really be strings), else None."""
    return v if isinstance(v, str) else None


def name_of(v: Any) -> str:
    s = as_str(v)
    return s if s is not None else ""


def compact(value: Any) -> str:
    """Compact JSON text of any value, for display. Never raises."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    except (ValueError, TypeError, RecursionError):
        return repr(value)


def text_of(content: Any) -> str:
    """Display text of a content value (string, list of parts, or anything else)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, dict)):
        try:
            return block_text(content)
        except Exception:
            return compact(content)
    return compact(content)


def parse_arguments(raw: Any) -> Any:
    """Arguments for display: a JSON string is parsed when valid, anything else is returned as is."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return raw
    return raw


def arguments_invalid(raw: Any) -> bool:
    if not isinstance(raw, str):
        return False
    try:
        json.loads(raw)
    except (ValueError, RecursionError):
        return True
    return False


def guarded(method: Callable[[Any, int, Any], View]) -> Callable[[Any, int, Any], View]:
    """Wrap an adapter's ``view`` so that a bug on hostile input yields an UNKNOWN view, never an exception."""

    def view(self: Any, number: int, value: Any) -> View:
        try:
            return method(self, number, value)
        except Exception as exc:  # noqa: BLE001 - a view must never raise
            v = View(number, Kind.UNKNOWN, label="unreadable", value=value)
            v.problems.append(warn(number, f"adapter error: {type(exc).__name__}: {exc}"))
            return v

    view.__doc__ = method.__doc__
    view.__name__ = method.__name__
    return view


def dicts(values: list[Any]) -> list[dict[str, Any]]:
    return [v for v in values if isinstance(v, dict)]


# -- the adapter ------------------------------------------------------------------------------------


def _openai_call(c: dict[str, Any]) -> ToolCall:
    fn = c.get("function")
    if isinstance(fn, dict):
        raw = fn.get("arguments")
        return ToolCall(
            as_str(c.get("id")),
            name_of(fn.get("name")),
            parse_arguments(raw),
            raw if isinstance(raw, str) else None,
        )
    raw = c.get("arguments")
    return ToolCall(as_str(c.get("id")), name_of(c.get("name")), parse_arguments(raw), raw if isinstance(raw, str) else None)


def _is_function_call(c: Any) -> bool:
    return isinstance(c, dict) and isinstance(c.get("function"), dict) and isinstance(c["function"].get("arguments"), str)


class OpenAIChatAdapter(Adapter):
    name = "openai"
    title = "OpenAI chat JSONL"
    capabilities = Capabilities(editable=True, compactable=True)

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        msgs = dicts(values)
        if not msgs or len(msgs) != len(values):
            return False
        signal = False
        for v in msgs:
            role = v.get("role")
            if not isinstance(role, str) or role not in OPENAI_ROLES:
                return False
            calls = v.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list):
                    return False
                for c in calls:
                    if not _is_function_call(c):
                        return False  # Brute's flat {id, name, arguments:{}} calls, or junk
                    signal = True
            if isinstance(v.get("function_call"), dict):
                signal = True
            if "refusal" in v:
                signal = True
            content = v.get("content")
            if isinstance(content, list):
                for part in content:
                    if not isinstance(part, dict):
                        continue
                    t = part.get("type")
                    if t in ANTHROPIC_ONLY_TYPES:
                        return False
                    if t in ("image_url", "input_audio", "refusal") or (t == "text" and role in ("system", "developer", "tool")):
                        signal = True
        return signal

    @guarded
    def view(self, number: int, value: Any) -> View:
        if not isinstance(value, dict):
            return super().view(number, value)
        role = str_only(value.get("role"))
        content = value.get("content")
        text = text_of(content)
        if isinstance(content, list):
            refusals = [p["refusal"] for p in content if isinstance(p, dict) and isinstance(p.get("refusal"), str)]
            if refusals:
                text = "\n".join([t for t in (text,) if t] + [f"[refusal] {r}" for r in refusals])
        refusal = value.get("refusal")
        if isinstance(refusal, str) and refusal:
            text = "\n".join(t for t in (text, f"[refusal] {refusal}") if t)
        calls: list[ToolCall] = []
        raw_calls = value.get("tool_calls")
        if isinstance(raw_calls, list):
            calls.extend(_openai_call(c) for c in raw_calls if isinstance(c, dict))
        fc = value.get("function_call")  # the legacy single function call (no id)
        if isinstance(fc, dict):
            calls.append(_openai_call(fc))
        results: tuple[ToolResult, ...] = ()
        if role == "tool" or "tool_call_id" in value:
            results = (ToolResult(as_str(value.get("tool_call_id")), text, name=as_str(value.get("name"))),)
        if role is None:
            return View(number, Kind.UNKNOWN, label="no role", text=text, value=value)
        return View(number, Kind.MESSAGE, role=role, text=text, tool_calls=tuple(calls), tool_results=results, value=value)

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        if not isinstance(value, dict):
            return [warn(number, "a message must be a JSON object")]
        out: list[Problem] = []
        role = value.get("role")
        if not isinstance(role, str):
            out.append(warn(number, "missing or non-string role"))
        elif role not in OPENAI_ROLES:
            out.append(warn(number, f"unknown role {role!r}"))
        calls = value.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            out.append(warn(number, "tool_calls must be a list"))
        elif isinstance(calls, list):
            for c in calls:
                fn = c.get("function") if isinstance(c, dict) else None
                if not isinstance(fn, dict):
                    out.append(warn(number, "a tool call needs a function object"))
                    continue
                if not isinstance(fn.get("arguments"), str):
                    out.append(warn(number, "function.arguments must be a JSON string"))
                elif arguments_invalid(fn["arguments"]):
                    out.append(warn(number, f"arguments of tool call {as_str(c.get('id'))} are not valid JSON"))
        if role == "tool" and not isinstance(value.get("tool_call_id"), str):
            out.append(warn(number, "a tool message needs a tool_call_id"))
        return out
