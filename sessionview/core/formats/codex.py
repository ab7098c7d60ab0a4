"""OpenAI Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Current files: every line is ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta``,
``response_item`` (a Responses API item), ``event_msg`` (UI events), ``turn_context`` and ``compacted``.
Legacy files (2025, until about September) start with a bare ``{"id", "timestamp", "instructions"}`` line,
followed by bare response items and ``{"record_type": "state"}`` markers.

Response items: ``message`` (role and ``input_text``/``output_text`` parts), ``reasoning`` (summary parts,
maybe encrypted content), ``function_call`` (``arguments`` is a JSON *string*, kept verbatim in
:attr:`ToolCall.raw_arguments`), ``function_call_output`` (linked by ``call_id``), ``custom_tool_call`` and
its ``_output``, ``local_shell_call`` (answered by a ``function_call_output``), ``web_search_call``,
``ghost_snapshot`` and ``compaction``. ``compacted`` lines are compaction dividers; ``session_meta``,
``turn_context`` and ``event_msg`` lines are META (the events repeat what the response items say). The
``collab_*_end`` events and a ``CollabAgentToolCall``'s ``item_completed`` answer a ``spawn_agent``,
``wait_agent``... call by its ``call_id`` (codex-rs protocol, ``legacy_events.rs``), so they carry a result.
"""

from __future__ import annotations

import json
from typing import Any

from sessionview.core.formats.base import Adapter, Capabilities, warn
from sessionview.core.formats.openai import arguments_invalid, as_str, compact, dicts, guarded, name_of, parse_arguments, str_only, text_of
from sessionview.core.doc.model import Kind, Problem, ToolCall, ToolResult, View
from sessionview.core.text import plural

ENVELOPE_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")


def is_envelope(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("type"), str) and "timestamp" in v and "payload" in v


#: ``event_msg`` types that end a collaboration call (spawn_agent, wait_agent, send_input, close, resume)
COLLAB_END = ("collab_agent_spawn_end", "collab_waiting_end", "collab_agent_interaction_end", "collab_close_end", "collab_resume_end")


def _event_answer(p: dict[str, Any]) -> tuple[ToolResult, ...]:
    """The answer an ``event_msg`` gives a call: the ``collab_*_end`` events, and ``item_completed`` of a
    ``CollabAgentToolCall`` (whose ``item.id`` is the call id), answer ``spawn_agent``/``wait_agent``... calls."""
    sub = p.get("type")
    if sub in COLLAB_END and isinstance(p.get("call_id"), str):
        status = p.get("status")
        return (ToolResult(p["call_id"], compact(status) if status is not None else str(sub), None),)
    item = p.get("item")
    if sub == "item_completed" and isinstance(item, dict) and item.get("type") == "CollabAgentToolCall" and isinstance(item.get("id"), str):
        return (ToolResult(item["id"], as_str(item.get("status")) or "", item.get("status") == "failed"),)
    return ()


def is_legacy_header(v: Any) -> bool:
    return isinstance(v, dict) and "id" in v and "timestamp" in v and "instructions" in v and "type" not in v and "role" not in v


def output_text(output: Any) -> tuple[str, bool | None]:
    """Display text and error flag of a ``function_call_output`` ``output``.

    The output is usually a string, often itself JSON like ``{"output": ..., "metadata": {"exit_code": 0}}``
    (then the inner output is shown and a non-zero exit code marks an error); newer versions write an array
    of content items.
    """
    if isinstance(output, str):
        if output.startswith("{"):
            try:
                inner = json.loads(output)
            except (ValueError, RecursionError):
                return output, None
            if isinstance(inner, dict) and isinstance(inner.get("output"), str):
                meta = inner.get("metadata")
                code = meta.get("exit_code") if isinstance(meta, dict) else None
                if isinstance(code, int) and not isinstance(code, bool):
                    return inner["output"], code != 0
                return inner["output"], None
        return output, None
    if isinstance(output, dict):  # {"content": ..., "success": bool} in some versions
        ok = output.get("success")
        body = output.get("content", output.get("output"))
        return text_of(body) if body is not None else compact(output), (not ok) if isinstance(ok, bool) else None
    return text_of(output), None


def _reasoning_text(p: dict[str, Any]) -> str:
    parts: list[str] = []
    for key in ("summary", "content"):
        items = p.get(key)
        if isinstance(items, list):
            for it in items:
                if isinstance(it, dict) and isinstance(it.get("text"), str):
                    parts.append(it["text"])
                elif isinstance(it, str):
                    parts.append(it)
        elif isinstance(items, str):
            parts.append(items)
    if not parts and p.get("encrypted_content"):
        return "[encrypted reasoning]"
    return "\n".join(parts)


class CodexAdapter(Adapter):
    name = "codex"
    title = "Codex rollout JSONL"
    capabilities = Capabilities(editable=True)

    def content_holder(self, value: Any) -> tuple[dict[str, Any], str] | None:
        """The ``payload``'s content (or its ``message`` text), else a legacy record's own content."""
        if not isinstance(value, dict):
            return None
        payload = value.get("payload")
        if isinstance(payload, dict) and "content" in payload:
            return payload, "content"
        if isinstance(payload, dict) and isinstance(payload.get("message"), str):
            return payload, "message"
        return (value, "content") if "content" in value else None

    def drop_results(self, value: Any, view: View, marker: Any) -> Any:
        """A ``function_call_output``'s (or ``custom_tool_call_output``'s) ``output`` becomes the marker."""
        item = value.get("payload") if is_envelope(value) else value
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            out = dict(value) if item is value else {**value, "payload": dict(item)}
            target = out if item is value else out["payload"]
            cid = item.get("call_id")
            text = marker(cid if isinstance(cid, str) else None)
            target["output"] = [{"type": "input_text", "text": text}] if isinstance(item.get("output"), list) else text
            return out
        return super().drop_results(value, view, marker)

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        ds = dicts(values)
        if not ds:
            return False
        if any(is_envelope(v) and v["type"] in ENVELOPE_TYPES for v in ds):
            return True
        if is_legacy_header(ds[0]):
            return True
        return any("record_type" in v and "role" not in v for v in ds)

    @guarded
    def view(self, number: int, value: Any) -> View:
        if not isinstance(value, dict):
            return View(number, Kind.UNKNOWN, label=type(value).__name__, value=value)
        if is_envelope(value):
            return self._envelope(number, value)
        # legacy files: bare header, bare response items, state markers
        if "record_type" in value:
            return View(number, Kind.META, label=name_of(value.get("record_type")) or "record", value=value)
        if is_legacy_header(value):
            return View(number, Kind.META, text=text_of(value.get("instructions")), label="session_meta", value=value)
        if isinstance(value.get("type"), str):
            return self._item(number, value, value)
        return View(number, Kind.UNKNOWN, label="unknown", value=value)

    def _envelope(self, number: int, value: dict[str, Any]) -> View:
        t = value["type"]
        p = value.get("payload")
        if t == "response_item" and isinstance(p, dict):
            return self._item(number, p, value)
        if t == "compacted":
            text = ""
            if isinstance(p, dict):
                text = text_of(p.get("message"))
                history = p.get("replacement_history")
                if isinstance(history, list):
                    items = plural(len(history), "item")
                    text = f"{text}\n[replacement history: {items}]" if text else f"[replacement history: {items}]"
            return View(number, Kind.COMPACTION, text=text, compaction="compacted", label="compacted", value=value)
        if t == "session_meta":
            text = ""
            if isinstance(p, dict):
                bits = [f"{k}: {p[k]}" for k in ("cwd", "originator", "cli_version") if isinstance(p.get(k), str)]
                text = ", ".join(bits)
            return View(number, Kind.META, text=text, label="session_meta", value=value)
        if t == "turn_context":
            text = ""
            if isinstance(p, dict):
                bits = [f"{k}: {p[k]}" for k in ("model", "effort", "cwd") if isinstance(p.get(k), str)]
                text = ", ".join(bits)
            return View(number, Kind.META, text=text, label="turn_context", value=value)
        if t == "event_msg":
            sub = as_str(p.get("type")) if isinstance(p, dict) else None
            text = ""
            if isinstance(p, dict):
                for key in ("message", "text"):
                    if isinstance(p.get(key), str):
                        text = p[key]
                        break
            results = _event_answer(p) if isinstance(p, dict) else ()
            return View(number, Kind.META, text=text, label=f"event_msg:{sub}" if sub else "event_msg", tool_results=results, value=value)
        return View(number, Kind.UNKNOWN, label=t, value=value)

    def _item(self, number: int, p: dict[str, Any], value: dict[str, Any]) -> View:
        t = p.get("type")
        if t == "message":
            role = str_only(p.get("role")) or "unknown"
            return View(number, Kind.MESSAGE, role=role, text=text_of(p.get("content")), value=value)
        if t == "reasoning":
            return View(number, Kind.MESSAGE, role="assistant", reasoning=_reasoning_text(p), value=value)
        if t == "function_call":
            raw = p.get("arguments")
            call = ToolCall(
                as_str(p.get("call_id")) or as_str(p.get("id")),
                name_of(p.get("name")),
                parse_arguments(raw),
                raw if isinstance(raw, str) else None,
            )
            return View(number, Kind.MESSAGE, role="assistant", tool_calls=(call,), value=value)
        if t == "custom_tool_call":
            call = ToolCall(as_str(p.get("call_id")) or as_str(p.get("id")), name_of(p.get("name")), p.get("input"))
            return View(number, Kind.MESSAGE, role="assistant", tool_calls=(call,), value=value)
        if t == "local_shell_call":
            action = p.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            text = ""
            if isinstance(command, list) and all(isinstance(c, str) for c in command):
                text = "$ " + " ".join(command)
            call = ToolCall(as_str(p.get("call_id")) or as_str(p.get("id")), "local_shell", action)
            return View(number, Kind.MESSAGE, role="assistant", text=text, tool_calls=(call,), value=value)
        if t in ("function_call_output", "custom_tool_call_output"):
            text, is_error = output_text(p.get("output"))
            result = ToolResult(as_str(p.get("call_id")), text, is_error)
            return View(number, Kind.MESSAGE, role="tool", text=text, tool_results=(result,), value=value)
        if t == "web_search_call":
            action = p.get("action")
            query = action.get("query") if isinstance(action, dict) else None
            text = f"[web search] {query}" if isinstance(query, str) else "[web search]"
            return View(number, Kind.MESSAGE, role="assistant", text=text, value=value)
        if t in ("compaction", "compaction_summary"):
            text = text_of(p.get("summary")) if p.get("summary") is not None else "[encrypted compaction summary]"
            return View(number, Kind.COMPACTION, text=text, compaction="compaction", label=f"response_item:{t}", value=value)
        if t == "ghost_snapshot":
            return View(number, Kind.META, label="response_item:ghost_snapshot", value=value)
        return View(number, Kind.UNKNOWN, label=f"response_item:{t}" if isinstance(t, str) else "response_item", value=value)

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        if not isinstance(value, dict):
            return [warn(number, "a line must be a JSON object")]
        p = value.get("payload") if is_envelope(value) else value
        if is_envelope(value) and value["type"] != "response_item":
            return []
        if not isinstance(p, dict):
            return [warn(number, "a response_item needs an object payload")]
        out: list[Problem] = []
        t = p.get("type")
        if t == "function_call":
            raw = p.get("arguments")
            if not isinstance(raw, str):
                out.append(warn(number, "function_call arguments must be a JSON string"))
            elif arguments_invalid(raw):
                out.append(warn(number, f"arguments of call {as_str(p.get('call_id'))} are not valid JSON"))
        if t in ("function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output") and not isinstance(
            p.get("call_id"), str
        ):
            out.append(warn(number, f"{t} needs a call_id"))
        return out
