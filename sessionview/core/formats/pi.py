"""pi coding agent session JSONL (``~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl``).

Line 1 is a header ``{"type": "session", "version", "id", "timestamp", "cwd"}`` (v2, v3). Version 1 headers,
which pi still migrates, have no ``version``: ``{"type": "session", "id", "timestamp", "cwd"}``, and the oldest
add ``provider``, ``modelId``, ``thinkingLevel`` and ``branchedFrom``; their entries have no ``id``/``parentId``
and their compactions name ``firstKeptEntryIndex`` instead of ``firstKeptEntryId``. From v2 on, every other
line is an entry with ``type``, ``id``, ``parentId`` and ``timestamp`` (entries form a tree). ``message`` entries hold
``{"message": {"role": user|assistant|toolResult|bashExecution|custom|branchSummary|compactionSummary, ...}}``;
assistant content mixes ``text``, ``thinking`` and ``toolCall{id,name,arguments}`` blocks; a ``toolResult``
carries ``toolCallId``, ``toolName``, ``content`` and ``isError``. ``compaction`` and ``branch_summary``
entries (and the matching summary roles) are compaction dividers; ``model_change``,
``thinking_level_change``, ``label``, ``session_info`` and ``custom`` entries are META.
"""

from __future__ import annotations

from typing import Any

from sessionview.core.formats.base import Adapter, Capabilities, warn
from sessionview.core.formats.openai import as_str, compact, guarded, name_of, str_only, text_of
from sessionview.core.doc.model import Kind, Problem, ToolCall, ToolResult, View

META_TYPES = ("session", "model_change", "thinking_level_change", "label", "session_info", "custom")
ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary")


def is_header(value: Any) -> bool:
    """Whether ``value`` is a pi session header, of any layout pi still migrates (v1 has no ``version``)."""
    if not isinstance(value, dict) or value.get("type") != "session":
        return False
    if "version" in value:
        return True
    return isinstance(value.get("id"), str) and isinstance(value.get("timestamp"), str) and "cwd" in value


def _blocks(content: Any) -> tuple[str, list[ToolCall], str | None]:
    """Text, tool calls and thinking of a pi ``content`` value."""
    if isinstance(content, str):
        return content, [], None
    if not isinstance(content, list):
        return text_of(content), [], None
    text: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[str] = []
    for b in content:
        if isinstance(b, str):
            text.append(b)
            continue
        if not isinstance(b, dict):
            text.append(text_of(b))
            continue
        t = b.get("type")
        if t == "text":
            text.append(text_of(b.get("text")))
        elif t == "thinking":
            thinking.append(text_of(b.get("thinking")))
        elif t == "toolCall":
            calls.append(ToolCall(as_str(b.get("id")), name_of(b.get("name")), b.get("arguments")))
        elif t == "image":
            text.append("[image]")
        else:
            text.append(f"[{t}]" if isinstance(t, str) else text_of(b))
    return "\n".join(t for t in text if t), calls, ("\n".join(thinking) if thinking else None)


class PiAdapter(Adapter):
    name = "pi"
    title = "pi session JSONL"
    capabilities = Capabilities(editable=True)
    tree = True

    def content_holder(self, value: Any) -> tuple[dict[str, Any], str] | None:
        """The content of the envelope's ``message``."""
        msg = value.get("message") if isinstance(value, dict) else None
        return (msg, "content") if isinstance(msg, dict) and "content" in msg else None

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        if not values:
            return False
        return is_header(values[0])

    @guarded
    def view(self, number: int, value: Any) -> View:
        if not isinstance(value, dict):
            return View(number, Kind.UNKNOWN, label=type(value).__name__, value=value)
        t = value.get("type")
        if t == "message":
            m = value.get("message")
            if isinstance(m, dict):
                return self._message(number, m, value)
            return View(number, Kind.UNKNOWN, label="message", value=value)
        if t == "compaction":
            text = text_of(value.get("summary"))
            return View(number, Kind.COMPACTION, text=text, compaction="compaction", label="compaction", value=value)
        if t == "branch_summary":
            text = text_of(value.get("summary"))
            return View(number, Kind.COMPACTION, text=text, compaction="branch_summary", label="branch_summary", value=value)
        if t == "custom_message":
            return View(number, Kind.MESSAGE, role="custom", text=_blocks(value.get("content"))[0], value=value)
        if t in META_TYPES:
            return View(number, Kind.META, text=self._meta_text(t, value), label=t, value=value)
        return View(number, Kind.UNKNOWN, label=t if isinstance(t, str) else "no type", value=value)

    @staticmethod
    def _meta_text(t: str, v: dict[str, Any]) -> str:
        if t == "session":
            parts = [f"{k}: {v[k]}" for k in ("cwd", "version") if isinstance(v.get(k), (str, int))]
            if "version" not in v:
                parts.append("version: 1 (no version field)")
            model = "/".join(s for s in (as_str(v.get("provider")), as_str(v.get("modelId"))) if s)
            if model:
                parts.append(f"model: {model}")
            return ", ".join(parts)
        if t == "model_change":
            return "/".join(s for s in (as_str(v.get("provider")), as_str(v.get("modelId"))) if s)
        if t == "thinking_level_change":
            return name_of(v.get("thinkingLevel"))
        if t == "label":
            label = as_str(v.get("label"))
            target = as_str(v.get("targetId"))
            return f"{label} → {target}" if label and target else (label or "")
        if t == "session_info":
            return name_of(v.get("name"))
        return ""

    def _message(self, number: int, m: dict[str, Any], value: dict[str, Any]) -> View:
        role = str_only(m.get("role")) or "unknown"
        if role == "toolResult":
            text, _, _ = _blocks(m.get("content"))
            err = m.get("isError")
            result = ToolResult(as_str(m.get("toolCallId")), text, err if isinstance(err, bool) else None, as_str(m.get("toolName")))
            return View(number, Kind.MESSAGE, role=role, text=text, tool_results=(result,), value=value)
        if role == "bashExecution":
            command = as_str(m.get("command")) or ""
            output = text_of(m.get("output"))
            text = "\n".join(s for s in (f"$ {command}" if command else "", output) if s)
            return View(number, Kind.MESSAGE, role=role, text=text, value=value)
        if role in ("compactionSummary", "branchSummary"):
            marker = "summary" if role == "compactionSummary" else "branch_summary"
            return View(number, Kind.COMPACTION, role=role, text=text_of(m.get("summary")), compaction=marker, value=value)
        text, calls, thinking = _blocks(m.get("content"))
        if role == "assistant" and isinstance(m.get("errorMessage"), str) and not text:
            text = f"[error] {m['errorMessage']}"
        return View(number, Kind.MESSAGE, role=role, text=text, tool_calls=tuple(calls), reasoning=thinking, value=value)

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        if not isinstance(value, dict):
            return [warn(number, "an entry must be a JSON object")]
        if value.get("type") != "message":
            return []
        m = value.get("message")
        if not isinstance(m, dict):
            return [warn(number, "a message entry needs a message object")]
        out: list[Problem] = []
        role = m.get("role")
        if role not in ROLES:
            out.append(warn(number, f"unknown message role {compact(role)}"))
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "toolCall" and not isinstance(b.get("arguments"), dict):
                    out.append(warn(number, "toolCall arguments must be an object"))
        return out
