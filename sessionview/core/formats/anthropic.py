"""Anthropic Messages API messages, one per line.

``{"role": "user"|"assistant", "content": str | [blocks]}`` with blocks ``text``, ``image``, ``document``,
``tool_use{id,name,input}``, ``tool_result{tool_use_id,content,is_error?}`` (in user messages),
``thinking{thinking,signature}``, ``redacted_thinking{data}``, ``server_tool_use`` and
``web_search_tool_result``. Thinking blocks must go back to the API unmodified: views only read them.

:func:`read_blocks` is shared with the Claude Code adapter, whose ``message`` objects are Anthropic
messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessionview.core.formats.base import Adapter, Capabilities, warn
from sessionview.core.formats.openai import as_str, dicts, guarded, name_of, str_only, text_of
from sessionview.core.doc.model import Kind, Problem, ToolCall, ToolResult, View

ROLES = ("user", "assistant")
CALL_TYPES = ("tool_use", "server_tool_use", "mcp_tool_use")
BLOCK_TYPES = (
    "text",
    "image",
    "document",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "search_result",
    "container_upload",
)


@dataclass
class Blocks:
    """What a list of content blocks holds, for display."""

    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)

    @property
    def joined_text(self) -> str:
        return "\n".join(t for t in self.text if t)

    @property
    def joined_reasoning(self) -> str | None:
        return "\n".join(self.reasoning) if self.reasoning else None


def is_result_type(t: Any) -> bool:
    return isinstance(t, str) and (t == "tool_result" or t.endswith("_tool_result"))


def read_blocks(content: Any) -> Blocks:
    """Text, tool calls, tool results and reasoning of an Anthropic ``content`` value. Never raises."""
    out = Blocks()
    if content is None:
        return out
    if isinstance(content, str):
        out.text.append(content)
        return out
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        out.text.append(text_of(content))
        return out
    for block in content:
        if isinstance(block, str):
            out.text.append(block)
            continue
        if not isinstance(block, dict):
            out.text.append(text_of(block))
            continue
        t = block.get("type")
        if t == "text":
            out.text.append(text_of(block.get("text")))
        elif t == "thinking":
            out.reasoning.append(text_of(block.get("thinking")))
        elif t == "redacted_thinking":
            out.reasoning.append("[redacted thinking]")
        elif t in CALL_TYPES:
            out.calls.append(ToolCall(as_str(block.get("id")), name_of(block.get("name")), block.get("input")))
        elif is_result_type(t):
            err = block.get("is_error")
            out.results.append(
                ToolResult(as_str(block.get("tool_use_id")), text_of(block.get("content")), err if isinstance(err, bool) else None)
            )
        elif t in ("image", "document"):
            title = block.get("title") if isinstance(block.get("title"), str) else None
            out.text.append(f"[{t}: {title}]" if title else f"[{t}]")
        elif isinstance(t, str):
            out.text.append(f"[{t}]")
        else:
            out.text.append(text_of(block))
    return out


class AnthropicAdapter(Adapter):
    name = "anthropic"
    title = "Anthropic Messages JSONL"
    capabilities = Capabilities(editable=True, compactable=True)

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        msgs = dicts(values)
        if not msgs or len(msgs) != len(values):
            return False
        blocks_seen = False
        for v in msgs:
            if v.get("role") not in ROLES or "tool_calls" in v or "tool_call_id" in v:
                return False
            content = v.get("content")
            if isinstance(content, list):
                for b in content:
                    if not isinstance(b, dict) or b.get("type") not in BLOCK_TYPES:
                        return False
                    blocks_seen = True
            elif not isinstance(content, str):
                return False
        return blocks_seen

    @guarded
    def view(self, number: int, value: Any) -> View:
        if not isinstance(value, dict):
            return super().view(number, value)
        role = str_only(value.get("role"))
        blocks = read_blocks(value.get("content"))
        if role is None:
            return View(number, Kind.UNKNOWN, label="no role", text=blocks.joined_text, value=value)
        return View(
            number,
            Kind.MESSAGE,
            role=role,
            text=blocks.joined_text,
            tool_calls=tuple(blocks.calls),
            tool_results=tuple(blocks.results),
            reasoning=blocks.joined_reasoning,
            value=value,
        )

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        if not isinstance(value, dict):
            return [warn(number, "a message must be a JSON object")]
        return content_problems(number, value.get("role"), value.get("content"))


def content_problems(number: int, role: Any, content: Any) -> list[Problem]:
    out: list[Problem] = []
    if role not in ROLES:
        out.append(warn(number, f"role must be user or assistant, not {role!r}"))
    if isinstance(content, list):
        for b in content:
            if not isinstance(b, dict):
                out.append(warn(number, "a content block must be an object"))
                continue
            t = b.get("type")
            if t not in BLOCK_TYPES:
                out.append(warn(number, f"unknown content block type {t!r}"))
            elif t == "tool_use" and not isinstance(b.get("input"), dict):
                out.append(warn(number, "tool_use input must be an object"))
            elif t == "tool_use" and role == "user":
                out.append(warn(number, "tool_use block in a user message"))
            elif t == "tool_result" and role == "assistant":
                out.append(warn(number, "tool_result block in an assistant message"))
    elif content is not None and not isinstance(content, str):
        out.append(warn(number, "content must be a string or a list of blocks"))
    return out
