"""LittleGhost messages, one ``Message#to_h`` per line **[inference]**: no such file ships with LittleGhost.

A message is ``{"role", "content": [typed blocks], "metadata": {}}`` with role one of system, developer,
user, assistant, tool. Blocks: ``text{text}``, ``image``/``document`` (base64 ``data``), ``tool_use{id,
name, input:{}}`` in assistant messages, ``tool_result{tool_use_id, content, status}`` in a ``tool`` message
(one block per call of a step), and ``reasoning{text, signature?, data?, details?}``. The same adapter
reads the messages of a LittleGhost Filesystem store document (:mod:`sessionview.core.littleghost`).
"""

from __future__ import annotations

from typing import Any

from sessionview.core.errors import InvalidEdit
from sessionview.core.formats.base import Adapter, Capabilities, Encoded, generate, warn
from sessionview.core.formats.openai import as_str, compact, dicts, guarded, name_of, str_only, text_of
from sessionview.core.doc.model import Kind, Problem, ToolCall, ToolResult, View

KEYS = ("role", "content", "metadata")
ROLES = ("system", "developer", "user", "assistant", "tool")
BLOCK_TYPES = ("text", "image", "document", "tool_use", "tool_result", "reasoning")


def _blocks(content: Any) -> list[Any]:
    """LittleGhost normalises content: nil → [], an Array as is, anything else → [it]."""
    if content is None:
        return []
    if isinstance(content, list):
        return content
    return [content]


def result_text(content: Any) -> str:
    """A tool result's content: a string, an array of blocks, or any JSON value."""
    if isinstance(content, list) and all(isinstance(b, dict) and "type" in b for b in content):
        return text_of(content)
    if isinstance(content, str):
        return content
    return compact(content)


class LittleGhostJsonlAdapter(Adapter):
    name = "littleghost-jsonl"
    title = "LittleGhost messages JSONL (inferred)"
    capabilities = Capabilities(editable=True, compactable=True)

    def encode(self, value: Any) -> Encoded:
        """``LittleGhost::Message#to_h``: role, content as typed blocks, metadata. Refuses what coerce rejects."""
        if not isinstance(value, dict):
            raise InvalidEdit("a LittleGhost message must be a JSON object")
        content = value.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        elif isinstance(content, dict):
            content = [content]
        elif isinstance(content, list):
            content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in content]
        out = {"role": value.get("role"), "content": content, "metadata": value.get("metadata", {})}
        for k in value:
            if k not in out:
                out[k] = value[k]
        problems = self.schema_problems(0, out)
        if problems:
            raise InvalidEdit(f"LittleGhost would reject this message: {problems[0].message}")
        return Encoded(generate(out), out)

    def summary_value(self, text: str) -> Any:
        return {"role": "user", "content": [{"type": "text", "text": text}], "metadata": {}}

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        msgs = dicts(values)
        if not msgs or len(msgs) != len(values):
            return False
        for v in msgs:
            if set(v) != set(KEYS):
                return False
            content = v.get("content")
            if not isinstance(content, list) or not isinstance(v.get("metadata"), dict):
                return False
            if not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content):
                return False
        return True

    @guarded
    def view(self, number: int, value: Any) -> View:
        if not isinstance(value, dict):
            return View(number, Kind.UNKNOWN, label=type(value).__name__, value=value)
        role = str_only(value.get("role"))
        text: list[str] = []
        calls: list[ToolCall] = []
        results: list[ToolResult] = []
        reasoning: list[str] = []
        for b in _blocks(value.get("content")):
            if isinstance(b, str):
                text.append(b)
                continue
            if not isinstance(b, dict):
                text.append(text_of(b))
                continue
            t = b.get("type")
            if t == "text":
                text.append(text_of(b.get("text")))
            elif t == "tool_use":
                calls.append(ToolCall(as_str(b.get("id")), name_of(b.get("name")), b.get("input")))
            elif t == "tool_result":
                status = b.get("status")
                is_error = {"success": False, "error": True}.get(status) if isinstance(status, str) else None
                results.append(ToolResult(as_str(b.get("tool_use_id")), result_text(b.get("content")), is_error))
            elif t == "reasoning":
                r = b.get("text")
                if isinstance(r, str) and r:
                    reasoning.append(r)
                elif b.get("data") is not None:
                    reasoning.append("[redacted reasoning]")
            elif t in ("image", "document"):
                name = b.get("name")
                text.append(f"[{t}: {name}]" if isinstance(name, str) else f"[{t}]")
            else:
                text.append(f"[{t}]" if isinstance(t, str) else text_of(b))
        if role is None:
            return View(number, Kind.UNKNOWN, label="no role", text="\n".join(text), value=value)
        return View(
            number,
            Kind.MESSAGE,
            role=role,
            text="\n".join(t for t in text if t),
            tool_calls=tuple(calls),
            tool_results=tuple(results),
            reasoning="\n".join(reasoning) if reasoning else None,
            value=value,
        )

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        """What ``LittleGhost::Message.coerce`` would reject (it raises ArgumentError)."""
        if not isinstance(value, dict):
            return [warn(number, "a message must be a JSON object")]
        out: list[Problem] = []
        extra = [k for k in value if k not in KEYS]
        if extra:
            out.append(warn(number, f"unknown key(s) {', '.join(map(repr, extra))}: LittleGhost raises ArgumentError"))
        if "role" not in value or "content" not in value:
            out.append(warn(number, "a message needs role and content"))
        role = value.get("role")
        if not isinstance(role, str) or role not in ROLES:
            out.append(warn(number, f"unsupported role {compact(role)}: LittleGhost raises ArgumentError"))
        metadata = value.get("metadata", {})
        if not isinstance(metadata, dict):
            out.append(warn(number, "metadata must be an object"))
        for b in _blocks(value.get("content")):
            if isinstance(b, str):
                continue
            if not isinstance(b, dict):
                out.append(warn(number, f"unsupported content block {compact(b)}"))
                continue
            t = b.get("type")
            if t not in BLOCK_TYPES:
                out.append(warn(number, f"unsupported content type {compact(t)}"))
            elif t == "tool_use":
                if not isinstance(b.get("id"), str) or not b["id"] or not isinstance(b.get("name"), str) or not b["name"]:
                    out.append(warn(number, "a tool_use block needs a non-empty id and name"))
                if not isinstance(b.get("input"), dict):
                    out.append(warn(number, "tool_use input must be an object"))
            elif t == "tool_result":
                if not isinstance(b.get("tool_use_id"), str) or not b["tool_use_id"]:
                    out.append(warn(number, "a tool_result block needs a tool_use_id"))
                if b.get("status") not in ("success", "error"):
                    out.append(warn(number, "tool_result status must be success or error"))
        return out
