"""Brute's message model: ``Brute::Message#to_h`` as it lands in a session JSONL line.

Keys in the order role, content, tool_calls, tool_call_id, reasoning; top-level nil keys dropped;
``content`` a String; a tool call is ``{id, name, arguments}`` with ``arguments`` an object. A tool result
is role ``tool`` with ``tool_call_id``. Brute raises on any other key, so :meth:`Message.to_h` never adds
one, and :meth:`Message.from_h` refuses unknown keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

KEYS = ("role", "content", "tool_calls", "tool_call_id", "reasoning")
TOOL_CALL_KEYS = ("id", "name", "arguments")
MARK = re.compile(r"\A\[compacted:([a-z_]+)\]")
MARKERS = ("summary", "tool_results", "sliding_window")
RUBY_MAX_NESTING = 100

_MISSING: Any = object()


class BruteSchemaError(ValueError):
    """A hash that ``Brute::Message.new(**hash)`` would reject."""


def compaction_marker(content: Any) -> str | None:
    """``summary``, ``tool_results`` or ``sliding_window`` when content starts with Brute's marker."""
    if isinstance(content, str):
        m = MARK.match(content)
        if m:
            return m.group(1)
    return None


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: Any
    name: Any
    arguments: Any = _MISSING

    @classmethod
    def from_h(cls, h: Any) -> "ToolCall":
        if not isinstance(h, dict):
            raise BruteSchemaError(f"a tool call must be an object, not {type(h).__name__}")
        unknown = [k for k in h if k not in TOOL_CALL_KEYS]
        if unknown:
            raise BruteSchemaError(f"unknown tool call key(s) {', '.join(map(repr, unknown))}")
        if "id" not in h or "name" not in h:
            raise BruteSchemaError("a tool call needs id and name")
        args = h.get("arguments", _MISSING)
        if args is not _MISSING and not isinstance(args, dict):
            raise BruteSchemaError("tool call arguments must be an object")
        return cls(h["id"], h["name"], args)

    def to_h(self) -> dict[str, Any]:
        out = {"id": self.id, "name": self.name}
        if self.arguments is not _MISSING:
            out["arguments"] = self.arguments
        return out


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    content: Any = None
    tool_calls: tuple[ToolCall, ...] | None = None
    tool_call_id: Any = None
    reasoning: Any = None

    @classmethod
    def from_h(cls, h: Any) -> "Message":
        """Build a message from a parsed line, with Brute's own rules. Raises :class:`BruteSchemaError`."""
        if not isinstance(h, dict):
            raise BruteSchemaError(f"a message must be an object, not {type(h).__name__}")
        unknown = [k for k in h if k not in KEYS]
        if unknown:
            raise BruteSchemaError(f"unknown key(s) {', '.join(map(repr, unknown))}: Brute raises ArgumentError")
        if "role" not in h or h["role"] is None:
            raise BruteSchemaError("missing role: Brute raises ArgumentError")
        if not isinstance(h["role"], str):
            raise BruteSchemaError("role must be a string")
        content = h.get("content")
        if content is not None and not isinstance(content, str):
            raise BruteSchemaError("content must be a string")
        calls = h.get("tool_calls")
        tool_calls: tuple[ToolCall, ...] | None = None
        if calls is not None:
            if not isinstance(calls, list):
                raise BruteSchemaError("tool_calls must be a list")
            tool_calls = tuple(ToolCall.from_h(c) for c in calls)
        reasoning = h.get("reasoning")
        if reasoning is not None and not isinstance(reasoning, (dict, str)):
            raise BruteSchemaError("reasoning must be an object or a string")
        return cls(h["role"], content, tool_calls, h.get("tool_call_id"), reasoning)

    def to_h(self) -> dict[str, Any]:
        """The hash Brute writes: keys in Brute's order, nil top-level keys dropped."""
        out: dict[str, Any] = {"role": self.role}
        if self.content is not None:
            out["content"] = self.content
        if self.tool_calls is not None:
            out["tool_calls"] = [c.to_h() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        return out

    @property
    def marker(self) -> str | None:
        return compaction_marker(self.content)

    def reasoning_text(self) -> str | None:
        r = self.reasoning
        if isinstance(r, str):
            return r
        if isinstance(r, dict):
            blocks = r.get("blocks")
            if isinstance(blocks, list):
                texts = [b.get("text") for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
                kinds = [b.get("type") for b in blocks if isinstance(b, dict)]
                if texts:
                    return "\n".join(texts)
                if kinds:
                    return f"[{', '.join(str(k) for k in kinds)} reasoning]"
            if isinstance(r.get("text"), str):
                return r["text"]
        return None
