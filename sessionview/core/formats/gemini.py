"""Gemini CLI chat recordings (``~/.gemini/tmp/<project>/chats/session-<time>-<id>.json`` or ``.jsonl``).

Two layouts hold the same records. The older one is one JSON document, ``JSON.stringify(conversation,
null, 2)``, rewritten whole on every change: ``{sessionId, projectHash, startTime, lastUpdated, messages:[…]}``
(read by :class:`sessionview.core.jsondoc.JsonDocumentSession`, ``#N`` = message index). The newer one (gemini-cli
from 2026-04) is JSONL: a metadata line ``{sessionId, projectHash, startTime, lastUpdated, kind?}``, then one
line per message record (a record that changes is appended again with the same ``id``), ``{"$set": {…}}``
metadata updates and ``{"$rewindTo": id}`` lines.

A message record is ``{id, timestamp, type: "user"|"gemini"|"info"|"error"|"warning", content,
thoughts?:[{subject, description}], toolCalls?:[{id, name, args, result?, status, resultDisplay?}]}``. Thoughts
are the reasoning; a tool call carries its own result, so a gemini message has both calls and results.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sessionview.core.doc.model import Kind, Problem, ToolCall, ToolResult, View
from sessionview.core.formats.base import Adapter, Capabilities, warn
from sessionview.core.formats.openai import as_str, compact, dicts, guarded, text_of
from sessionview.core.text import plural

MESSAGE_TYPES = ("user", "gemini", "model", "info", "error", "warning")
#: the role shown for a record type (``gemini``, and the API's ``model``, are the model)
ROLE = {"gemini": "assistant", "model": "assistant"}


def is_metadata(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("sessionId"), str) and "projectHash" in value


def parts_text(content: Any) -> str:
    """The text of a PartListUnion: a string, a part or a list of parts (``{text}``, ``{functionCall}``...)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return text_of(content)
    out: list[str] = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                if part.get("thought") is not True:
                    out.append(part["text"])
            elif isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"].get("response")
                if isinstance(response, dict) and len(response) == 1 and isinstance(next(iter(response.values())), str):
                    out.append(next(iter(response.values())))
                else:
                    out.append(compact(response))
            elif part:
                out.append(f"[{next(iter(part))}]")
    return "\n".join(t for t in out if t)


def _thoughts(value: Any) -> str | None:
    lines = []
    for t in dicts(value if isinstance(value, list) else []):
        subject, description = as_str(t.get("subject")), as_str(t.get("description"))
        lines.append(f"{subject}: {description}" if subject and description else (subject or description or ""))
    text = "\n".join(s for s in lines if s)
    return text or None


def _calls(value: Any) -> tuple[list[ToolCall], list[ToolResult]]:
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for tc in dicts(value if isinstance(value, list) else []):
        cid = as_str(tc.get("id"))
        name = as_str(tc.get("name")) or "?"
        calls.append(ToolCall(cid, name, tc.get("args")))
        result = tc.get("result")
        status = as_str(tc.get("status"))
        if result is None and status not in ("success", "error", "cancelled"):
            continue  # still running: no result yet
        text = parts_text(result) if result is not None else text_of(tc.get("resultDisplay"))
        if not text and isinstance(tc.get("resultDisplay"), str):
            text = tc["resultDisplay"]
        results.append(ToolResult(cid, text, status in ("error", "cancelled") if status else None, name))
    return calls, results


def message_view(number: int, value: dict[str, Any]) -> View:
    """The view of one Gemini message record."""
    t = value.get("type")
    role = ROLE.get(t, t) if isinstance(t, str) else "unknown"
    calls, results = _calls(value.get("toolCalls"))
    return View(
        number,
        Kind.MESSAGE,
        role=role,
        text=parts_text(value["content"] if "content" in value else value.get("parts")),
        tool_calls=tuple(calls),
        tool_results=tuple(results),
        reasoning=_thoughts(value.get("thoughts")),
        value=value,
    )


def is_content(value: Any) -> bool:
    """A Gemini API ``Content`` (``{role, parts}``): the records of a ``/chat save`` checkpoint."""
    return isinstance(value, dict) and isinstance(value.get("role"), str) and isinstance(value.get("parts"), list)


def content_view(number: int, value: dict[str, Any]) -> View:
    """The view of one API ``Content``: text parts, ``functionCall`` parts as calls, ``functionResponse`` as results."""
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    reasoning: list[str] = []
    for part in dicts(value.get("parts") or []):
        call, response = part.get("functionCall"), part.get("functionResponse")
        if isinstance(call, dict):
            calls.append(ToolCall(as_str(call.get("id")) or as_str(call.get("name")), as_str(call.get("name")) or "?", call.get("args")))
        elif isinstance(response, dict):
            cid = as_str(response.get("id")) or as_str(response.get("name"))
            results.append(ToolResult(cid, parts_text(part), None, as_str(response.get("name"))))
        elif part.get("thought") is True and isinstance(part.get("text"), str):
            reasoning.append(part["text"])
    text = parts_text([p for p in value["parts"] if not (isinstance(p, dict) and "functionResponse" in p)])
    role = ROLE.get(value["role"], value["role"])
    return View(number, Kind.MESSAGE, role=role, text=text, tool_calls=tuple(calls), tool_results=tuple(results),
                reasoning="\n".join(reasoning) or None, value=value)


class GeminiAdapter(Adapter):
    """The JSONL layout; its message records are also the messages of the older whole document."""

    name = "gemini"
    title = "Gemini CLI chat JSONL"
    capabilities = Capabilities(
        editable=False,
        not_compactable="Gemini CLI appends a changed message again under the same id, so a summary line is not what it would write",
    )
    updates_by_id = True
    #: why sessions of this format are read-only (see :attr:`Session.read_only_reason`)
    read_only: ClassVar[str | None] = (
        "Gemini CLI appends a changed message again under the same id and keeps the last copy, "
        "so editing or deleting one line may not change what it reads; editing is not supported"
    )

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        return bool(values) and is_metadata(values[0]) and "messages" not in values[0]

    @guarded
    def view(self, number: int, value: Any) -> View:
        if not isinstance(value, dict):
            return View(number, Kind.UNKNOWN, label=type(value).__name__, value=value)
        if isinstance(value.get("type"), str) and "id" in value and ("content" in value or "toolCalls" in value):
            return message_view(number, value)
        if is_metadata(value):
            return View(number, Kind.META, text=f"session {value['sessionId']}", label="session", value=value)
        if "$set" in value:
            update = value["$set"]
            keys = ", ".join(str(k) for k in update) if isinstance(update, dict) else compact(update)
            if isinstance(update, dict) and isinstance(update.get("messages"), list):
                return View(number, Kind.META, text=f"checkpoint: {plural(len(update['messages']), 'message')} replace all before", label="$set", value=value)
            return View(number, Kind.META, text=f"set {keys}", label="$set", value=value)
        if "$rewindTo" in value:
            return View(number, Kind.META, text=f"rewind: drop {compact(value['$rewindTo'])} and everything after it", label="$rewindTo", value=value)
        return View(number, Kind.UNKNOWN, label=as_str(value.get("type")) or "no type", value=value)

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        if isinstance(value, dict) and "id" in value and "type" in value and value.get("type") not in MESSAGE_TYPES:
            return [warn(number, f"unknown message type {compact(value.get('type'))}")]
        return []


class GeminiDocumentAdapter(GeminiAdapter):
    """The older whole-document layout (its records are the document's messages)."""

    title = "Gemini CLI chat document"

    @guarded
    def view(self, number: int, value: Any) -> View:
        return message_view(number, value) if isinstance(value, dict) else super().view(number, value)

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        return False  # chosen by the document reader, never for JSONL lines


class GeminiCheckpointAdapter(GeminiDocumentAdapter):
    """A list of API ``Content`` records (``/chat save`` checkpoints, ``history`` arrays)."""

    title = "Gemini chat history (API contents)"

    @guarded
    def view(self, number: int, value: Any) -> View:
        return content_view(number, value) if is_content(value) else super().view(number, value)

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        return []
