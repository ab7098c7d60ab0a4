"""Brute JSONL: one ``Message#to_h`` per line (the native format)."""

from __future__ import annotations

from typing import Any

from sessionview.core.formats import brute_message as brute
from sessionview.core.errors import InvalidEdit
from sessionview.core.formats.base import Adapter, Capabilities, Encoded, generate, warn
from sessionview.core.doc.model import Kind, Problem, ToolCall, ToolResult, View, block_text


class BruteAdapter(Adapter):
    name = "brute"
    title = "Brute JSONL"
    capabilities = Capabilities(editable=True, compactable=True)
    _last: "tuple[Any, brute.Message | brute.BruteSchemaError] | None" = None  # see _loaded

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        """Most values are role-keyed objects with only Brute's keys, and nothing is of another format
        (OpenAI ``function`` tool calls, string arguments, block-list content)."""
        msgs = [v for v in values if isinstance(v, dict)]
        if not msgs or not all("role" in v for v in msgs):
            return False
        brute_like = 0
        for v in msgs:
            calls = v.get("tool_calls")
            if isinstance(calls, list):
                for c in calls:
                    if isinstance(c, dict) and ("function" in c or isinstance(c.get("arguments"), str)):
                        return False
            if isinstance(v.get("content"), list):
                return False
            if all(k in brute.KEYS for k in v):
                brute_like += 1
        return brute_like * 2 >= len(msgs)

    def view(self, number: int, value: Any) -> View:
        if not isinstance(value, dict) or not isinstance(value.get("role"), str):
            return super().view(number, value)
        content = value.get("content")
        text = content if isinstance(content, str) else block_text(content)
        calls: list[ToolCall] = []
        raw_calls = value.get("tool_calls")
        if isinstance(raw_calls, dict):  # the RubyLLM variant: tool calls keyed by id
            raw_calls = [dict(c, id=c.get("id", k)) if isinstance(c, dict) else c for k, c in raw_calls.items()]
        if isinstance(raw_calls, list):
            for c in raw_calls:
                if isinstance(c, dict):
                    calls.append(ToolCall(_str(c.get("id")), str(c.get("name", "")), c.get("arguments", {})))
        results: tuple[ToolResult, ...] = ()
        role = value["role"]
        if role == "tool":
            results = (ToolResult(_str(value.get("tool_call_id")), text),)
        marker = brute.compaction_marker(content)
        # the reasoning of what Brute loads (None without one: no need to load it here)
        reasoning = None
        if value.get("reasoning") is not None:
            msg = self._loaded(value)
            reasoning = msg.reasoning_text() if isinstance(msg, brute.Message) else None
        kind = Kind.COMPACTION if marker in ("summary", "sliding_window") else Kind.MESSAGE
        return View(
            number,
            kind,
            role=role,
            text=text,
            tool_calls=tuple(calls),
            tool_results=results,
            reasoning=reasoning,
            compaction=marker,
            value=value,
        )

    def plain_view(self, number: int, value: Any) -> View | None:
        """:meth:`view` of a line that Brute loads without a word: only Brute's keys, a string (or no) role
        and content, no reasoning, tool calls a list of objects with only ``id``, ``name`` (a string) and
        ``arguments`` (an object, or null). Nothing else to check (:func:`brute.load` raises on none of them)."""
        if type(value) is not dict:
            return None
        role = value.get("role")
        if type(role) is not str or not value.keys() <= _KEYS:
            return None
        content = value.get("content")
        if content is None:
            text = ""
        elif type(content) is str:
            text = content
        else:
            return None
        if value.get("reasoning") is not None:
            return None
        calls: tuple[ToolCall, ...] = ()
        raw_calls = value.get("tool_calls")
        if raw_calls is not None:
            if type(raw_calls) is not list:
                return None
            found = []
            for c in raw_calls:
                if type(c) is not dict or "id" not in c or not c.keys() <= _CALL_KEYS:
                    return None
                name = c.get("name")
                args = c.get("arguments", _NO_ARGS)
                if type(name) is not str or (args is not None and type(args) is not dict):
                    return None
                cid = c["id"]
                if cid is not None and type(cid) is not str:
                    cid = str(cid)
                found.append(ToolCall(cid, name, {} if args is _NO_ARGS else args))
            calls = tuple(found)
        if role == "tool":
            rid = value.get("tool_call_id")
            if rid is not None and type(rid) is not str:
                rid = str(rid)
            results: tuple[ToolResult, ...] = (ToolResult(rid, text),)
        else:
            results = ()
        marker = brute.compaction_marker(content) if text.startswith("[compacted:") else None
        # by position (number, kind, role, text, tool_calls, tool_results, reasoning, compaction, label, problems,
        # numbers, group, value): half the cost of keywords, once per record
        return View(
            number, _COMPACTION if marker in _COMPACTIONS else _MESSAGE, role, text, calls, results, None, marker,
            None, [], (number,), None, value,
        )

    def _loaded(self, value: Any) -> "brute.Message | brute.BruteSchemaError":
        """``brute.load(value, exact=False)`` or why it raised; the last value's is kept (view, then schema)."""
        last = self._last
        if last is not None and last[0] is value:
            return last[1]
        try:
            got: brute.Message | brute.BruteSchemaError = brute.load(value, exact=False)
        except brute.BruteSchemaError as exc:
            got = exc
        self._last = (value, got)
        return got

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        """A line ``Brute::Message.new`` raises on: Brute cannot load the session at all while it is there."""
        loaded = self._loaded(value)
        exc = loaded if isinstance(loaded, brute.BruteSchemaError) else None
        return [warn(number, f"Brute would refuse this line: {exc}")] if exc else []

    def encode(self, value: Any) -> Encoded:
        """``Brute::Message.new(**value).to_h``, as Brute writes it; refused where Brute would raise."""
        try:
            msg = brute.load(value)
        except brute.BruteSchemaError as exc:
            raise InvalidEdit(f"Brute would reject this message: {exc}") from None
        except brute.NotReproducible as exc:
            raise InvalidEdit(f"cannot write this value exactly: {exc}") from None
        value = msg.to_h()
        warnings = (*msg.notes, *msg.provider_warnings())
        return Encoded(generate(value), value, warnings)

    def write_refusal(self, value: Any) -> str | None:
        if isinstance(value, dict) and value.get("role") == "system":
            return (
                "refused: Brute's SessionLog drops system messages when it rewrites the session at the end of a turn, "
                "so this message would vanish after the agent's next turn"
            )
        return None


_KEYS = frozenset(brute.KEYS)
_CALL_KEYS = frozenset(brute.TOOL_CALL_KEYS)
_NO_ARGS: dict[str, Any] = {}
_COMPACTIONS = ("summary", "sliding_window")  # the markers whose line is a compaction, not a message
_MESSAGE, _COMPACTION = Kind.MESSAGE, Kind.COMPACTION


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else (None if v is None else str(v))
