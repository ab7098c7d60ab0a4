"""Claude Code session JSONL (``~/.claude/projects/<cwd>/<sessionId>.jsonl``).

Every line is an envelope: ``type`` (``user``, ``assistant``, ``system``, ``summary``,
``file-history-snapshot``, ...), ``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``, and for user and
assistant lines a ``message`` that is an Anthropic message. Claude Code streams each content block of one
response on its own line: those lines share ``message.id``, which becomes :attr:`View.group` so that
:func:`merge_views` shows them as one message. Tool results sit in later user lines as ``tool_result``
blocks linked by ``tool_use_id``.

Compaction leaves a ``system`` line with ``subtype: "compact_boundary"`` followed by a user line with
``isCompactSummary: true``; both become :attr:`Kind.COMPACTION` views. ``summary`` lines (session titles)
and other known bookkeeping lines are :attr:`Kind.META`; types this adapter does not know are
:attr:`Kind.UNKNOWN` and shown raw.

Lines with ``isSidechain: true`` are a subagent's (:attr:`View.subagent` = its ``agentId``, "" when the line
names none); the ``Task``/``Agent`` call that started it is answered by a user line whose top-level
``agentId`` names the same agent (:func:`subagent_calls`). Current Claude Code writes a subagent's lines to
``<session>/subagents/agent-<agentId>.jsonl`` instead (:func:`subagent_files`, :func:`parent_of`). ``isMeta``
lines and user text wrapped in ``<command-name>``, ``<command-message>``, ``<local-command-stdout>`` or
``<local-command-caveat>`` were put there by the harness: :attr:`View.injected`.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable

from sessionview.core.formats.anthropic import content_problems, read_blocks
from sessionview.core.formats.base import Adapter, Capabilities, warn
from sessionview.core.formats.openai import as_str, dicts, guarded, str_only, text_of
from sessionview.core.doc.model import Kind, Problem, View
from sessionview.core.text import plural

#: line types that carry no conversation message but are known bookkeeping
META_TYPES = (
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "custom-title",
    "tag",
    "agent-name",
    "progress",
    "attachment",
    "last-prompt",
    "pr-link",
)


#: user text that starts with one of these tags was written by the harness, not typed by the user
INJECTED_TEXT = re.compile(r"\A\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat)>")


def is_envelope(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("type"), str) and "sessionId" in v and "uuid" in v


class ClaudeCodeAdapter(Adapter):
    name = "claude-code"
    title = "Claude Code JSONL"
    capabilities = Capabilities(editable=True)

    def content_holder(self, value: Any) -> tuple[dict[str, Any], str] | None:
        """The content of the envelope's ``message``."""
        msg = value.get("message") if isinstance(value, dict) else None
        return (msg, "content") if isinstance(msg, dict) and "content" in msg else None

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        for v in dicts(values):
            if is_envelope(v):
                return True
            if v.get("type") == "summary" and "leafUuid" in v:
                return True
        return False

    @guarded
    def view(self, number: int, value: Any) -> View:
        if not isinstance(value, dict):
            return View(number, Kind.UNKNOWN, label=type(value).__name__, value=value)
        t = value.get("type")
        label = t if isinstance(t, str) else "no type"
        message = value.get("message")
        if t in ("user", "assistant") and isinstance(message, dict):
            return self._message(number, value, t, message)
        if t == "system":
            subtype = as_str(value.get("subtype"))
            text = text_of(value.get("content"))
            if subtype == "compact_boundary":
                meta = value.get("compactMetadata")
                details = []
                if isinstance(meta, dict):
                    if isinstance(meta.get("trigger"), str):
                        details.append(f"trigger: {meta['trigger']}")
                    if isinstance(meta.get("preTokens"), int) and not isinstance(meta.get("preTokens"), bool):
                        details.append(f"{plural(meta['preTokens'], 'token')} before")
                if details:
                    text = f"{text} ({', '.join(details)})" if text else ", ".join(details)
                return View(number, Kind.COMPACTION, role="system", text=text, compaction="compact_boundary", label="system:compact_boundary", value=value)
            label = f"system:{subtype}" if subtype else "system"
            return View(number, Kind.META, role="system", text=text, label=label, value=value, injected=value.get("isMeta") is True)
        if t == "summary":
            summary = value.get("summary")
            if not isinstance(summary, str) and isinstance(message, dict):
                summary = read_blocks(message.get("content")).joined_text
            return View(number, Kind.META, text=text_of(summary), label="summary", value=value)
        if t in META_TYPES:
            return View(number, Kind.META, label=label, value=value)
        return View(number, Kind.UNKNOWN, label=label, value=value)

    def _message(self, number: int, value: dict[str, Any], t: str, message: dict[str, Any]) -> View:
        role = str_only(message.get("role")) or t
        blocks = read_blocks(message.get("content"))
        group = None
        if t == "assistant":
            mid = message.get("id")
            group = mid if isinstance(mid, str) and mid else None
        kind = Kind.MESSAGE
        compaction = None
        if value.get("isCompactSummary") is True:
            kind, compaction = Kind.COMPACTION, "summary"
        subagent = None
        if value.get("isSidechain") is True:
            subagent = as_str(value.get("agentId")) or ""
        injected = value.get("isMeta") is True or (t == "user" and bool(INJECTED_TEXT.match(blocks.joined_text)))
        return View(
            number,
            kind,
            role=role,
            text=blocks.joined_text,
            tool_calls=tuple(blocks.calls),
            tool_results=tuple(blocks.results),
            reasoning=blocks.joined_reasoning,
            compaction=compaction,
            group=group,
            value=value,
            subagent=subagent,
            injected=injected,
        )

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        if not isinstance(value, dict):
            return [warn(number, "a line must be a JSON object")]
        t = value.get("type")
        if not isinstance(t, str):
            return [warn(number, "a line needs a string type")]
        if t in ("user", "assistant"):
            message = value.get("message")
            if not isinstance(message, dict):
                return [warn(number, f"a {t} line needs a message object")]
            return content_problems(number, message.get("role"), message.get("content"))
        return []


# -- subagents ---------------------------------------------------------------------------------------


def subagent_calls(views: Iterable[View]) -> dict[str, str]:
    """``{agentId: the id of the Task/Agent call that started it}``: read from the main chain's user lines that
    answer a call and name the agent (top-level ``agentId``)."""
    out: dict[str, str] = {}
    for v in views:
        value = v.value
        if v.subagent is not None or not isinstance(value, dict) or not v.tool_results:
            continue
        agent = as_str(value.get("agentId"))
        if agent is None:
            tur = value.get("toolUseResult")
            agent = as_str(tur.get("agentId")) if isinstance(tur, dict) else None
        if agent and v.tool_results[0].call_id:
            out.setdefault(agent, v.tool_results[0].call_id)
    return out


def subagent_files(path: str) -> list[str]:
    """The subagent files of the main session file ``path``: ``<path without .jsonl>/subagents/agent-*.jsonl``."""
    folder = os.path.join(os.path.splitext(path)[0], "subagents")
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith("agent-") and n.endswith(".jsonl"))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names]


def parent_of(path: str) -> str | None:
    """The main session file of a subagent file ``<session>/subagents/agent-<id>.jsonl`` (when it exists)."""
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    if os.path.basename(folder) != "subagents" or not name.startswith("agent-"):
        return None
    parent = os.path.dirname(folder) + ".jsonl"
    return parent if os.path.isfile(parent) else None


def agent_id_of(path: str) -> str | None:
    """The agent id a subagent file's name carries (``agent-<id>.jsonl``)."""
    name = os.path.basename(path)
    if name.startswith("agent-") and name.endswith(".jsonl"):
        return name[len("agent-") : -len(".jsonl")] or None
    return None
