"""The outline of a run, without any Textual: user turns, then the tool calls of each turn, then subagents.

:func:`build_outline` reads views in record order once and returns an :class:`Outline`: a list of
:class:`Node` trees (what the outline screen draws) and the user's prompts (the jump list).

* A **turn** starts at each prompt of the user (:func:`is_prompt`: a user message with text, not put there
  by the harness, not a tool result, not a subagent's). Records before the first prompt go under a
  ``start`` node.
* A **tool** node is one tool call, under the turn it was made in; an error result marks it.
* A **subagent** node hangs under the call that started it:

  - Claude Code ``isSidechain`` lines in the same file (:attr:`View.subagent` = the agent id) go under the
    ``Task``/``Agent`` call whose result names that agent (top-level ``agentId`` or ``toolUseResult``);
  - Claude Code ``<session>/subagents/agent-<id>.jsonl`` files (``agent_files``) go under the call that
    names their agent id, else, in order, under the ``Task``/``Agent`` calls that have no subagent yet
    (the call may carry no id), else at the end of the outline. Such a node has :attr:`Node.path`;
  - a Codex ``spawn_agent`` call is answered by a ``collab_agent_spawn_end`` event that names the new
    thread; the thread's rollout file, when found next to this one (:func:`codex_thread_file`), is the node's
    path.
* A **branch** node holds the turns of one branch of an ``id``/``parentId`` tree (pi): where the records'
  branch changes, a new one starts. :func:`branch_of` reads the branch a view is on (``View.branch``, a
  ``Branch(point, index, count)``, where the views carry one; nothing is marked where they do not).
* A **compaction** node is a compaction divider, at the top level.

Labels are plain one-line text with control characters escaped; they are still untrusted (a UI must not
read them as markup).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from sessionview.core.doc.model import Kind, View
from sessionview.core.formats.claude_code import agent_id_of, parent_of, subagent_files
from sessionview.core.text import escape_control

LABEL_WIDTH = 80

#: tools that start a subagent (Claude Code ``Task``, later ``Agent``; Codex ``spawn_agent``)
SUBAGENT_TOOLS = ("Task", "Agent", "spawn_agent")

#: user text that starts with one of these was put there by the harness (Codex), not typed by the user
HARNESS_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>", "<turn_aborted>")

#: argument keys that say best what a call does, in order of preference
SUMMARY_KEYS = ("command", "cmd", "file_path", "path", "pattern", "description", "query", "url", "prompt", "message")


@dataclass
class Node:
    kind: str  # "start", "turn", "tool", "subagent", "branch", "compaction"
    label: str
    number: int | None  # the record to jump to (None: a subagent file that no record of this file shows)
    children: list["Node"] = field(default_factory=list)
    path: str | None = None  # a subagent's own session file
    agent: str | None = None  # a subagent's id
    error: bool = False  # a tool call whose result is an error
    call_id: str | None = None
    timestamp: str | None = None  # a turn's time, ISO 8601, where the format records it

    def walk(self) -> Iterable["Node"]:
        yield self
        for c in self.children:
            yield from c.walk()


@dataclass
class Outline:
    nodes: list[Node] = field(default_factory=list)
    prompts: list[Node] = field(default_factory=list)  # the turn nodes, in order

    def walk(self) -> Iterable[Node]:
        for n in self.nodes:
            yield from n.walk()

    def find(self, kind: str) -> list[Node]:
        return [n for n in self.walk() if n.kind == kind]


def one_line(text: str, width: int = LABEL_WIDTH) -> str:
    """The first non-blank line of ``text``, escaped and cut to ``width``."""
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    line = escape_control(line, one_line=True)
    return line if len(line) <= width else line[: width - 1] + "…"


def is_prompt(view: View) -> bool:
    """A prompt the user typed: a user message with text that the harness did not put there."""
    if view.kind is not Kind.MESSAGE or view.role != "user" or view.injected or view.subagent is not None or view.tool_results:
        return False
    text = view.text.lstrip()
    return bool(text) and not text.startswith(HARNESS_PREFIXES)


def first_prompt(views: Iterable[View]) -> int | None:
    """The record number of the first prompt among ``views`` (read only as far as needed)."""
    for v in views:
        if is_prompt(v):
            return v.number
    return None


def branch_of(view: View) -> tuple[int, int, int] | None:
    """``(point, index, count)``: the view is on branch ``index`` of the ``count`` that start at record
    ``point`` (``View.branch`` of the pi id/parentId tree); None when it is on no branch or views carry none."""
    b = getattr(view, "branch", None)
    try:
        return (int(b.point), int(b.index), int(b.count)) if b is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def call_summary(name: str, arguments: Any) -> str:
    """``name`` and what best says what the call does (its command, path, description...)."""
    detail = ""
    if isinstance(arguments, dict):
        for key in SUMMARY_KEYS:
            if isinstance(arguments.get(key), str) and arguments[key].strip():
                detail = arguments[key]
                break
            if isinstance(arguments.get(key), list) and arguments[key] and all(isinstance(a, str) for a in arguments[key]):
                detail = " ".join(arguments[key])
                break
        else:
            detail = next((v for v in arguments.values() if isinstance(v, str) and v.strip()), "")
    elif isinstance(arguments, str):
        parsed = _json_object(arguments)
        return call_summary(name, parsed) if parsed is not None else call_summary(name, {"value": arguments})
    name = escape_control(name, one_line=True)
    return f"{name}  {one_line(detail, LABEL_WIDTH - len(name) - 2)}" if detail else name


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _agent_of_result(view: View) -> str | None:
    """The agent a Claude Code result line names (top-level ``agentId`` or ``toolUseResult.agentId``)."""
    value = view.value
    if not isinstance(value, dict):
        return None
    agent = value.get("agentId")
    if not isinstance(agent, str):
        tur = value.get("toolUseResult")
        agent = tur.get("agentId") if isinstance(tur, dict) else None
    return agent if isinstance(agent, str) and agent else None


def _codex_spawned(view: View) -> tuple[str, str, str] | None:
    """``(call id, new thread id, nickname)`` of a Codex ``collab_agent_spawn_end`` event."""
    value = view.value
    payload = value.get("payload") if isinstance(value, dict) else None
    if not isinstance(payload, dict) or payload.get("type") != "collab_agent_spawn_end":
        return None
    call, thread = payload.get("call_id"), payload.get("new_thread_id")
    if not isinstance(call, str) or not isinstance(thread, str) or not thread:
        return None
    nick = payload.get("new_agent_nickname")
    return call, thread, nick if isinstance(nick, str) else ""


def codex_thread_file(path: str, thread: str) -> str | None:
    """The rollout file of Codex thread ``thread``: ``rollout-…-<thread>.jsonl`` in the directory of ``path``
    or in the other day directories of its month (``sessions/YYYY/MM/DD``)."""
    suffix = f"-{thread}.jsonl"
    here = os.path.dirname(os.path.abspath(path))
    dirs = [here]
    month = os.path.dirname(here)
    try:
        dirs += sorted(os.path.join(month, d) for d in os.listdir(month) if d.isdigit() and os.path.join(month, d) != here)
    except OSError:
        pass
    for d in dirs:
        try:
            for name in os.listdir(d):
                if name.startswith("rollout-") and name.endswith(suffix):
                    return os.path.join(d, name)
        except OSError:
            continue
    return None


class _Builder:
    def __init__(self, path: str | None, agent_files: list[str], main: str | None) -> None:
        self.path = path
        self.agent_files = agent_files
        self.out = Outline()
        self.turn: Node | None = None
        self.calls: dict[str, Node] = {}  # call id -> tool node
        self.spawners: list[Node] = []  # subagent-starting calls, in order
        self.agents: dict[str, Node] = {}  # agent id -> subagent node (inline lines)
        self.agent_call: dict[str, str] = {}  # agent id -> call id
        self.side: Node | None = None  # the subagent of the sidechain lines being read
        self.sides: list[Node] = []  # every inline subagent node
        self.main = main  # the agent whose file this is: its lines are the main chain
        self.branch: tuple[int, int, int] | None = None  # the branch being read
        self.top = self.out.nodes  # where turns go: the outline, or the branch being read

    def _parent(self, number: int) -> Node:
        if self.turn is None:
            self.turn = Node("start", "before the first prompt", number)
            self.top.append(self.turn)
        return self.turn

    def add(self, v: View) -> None:
        branch = branch_of(v)
        if branch != self.branch:
            self.branch = branch
            self.turn = None
            self.top = self.out.nodes
            if branch is not None:
                point, index, count = branch
                node = Node("branch", f"branch {index} of {count} from #{point}", v.number)
                self.out.nodes.append(node)
                self.top = node.children
        if v.subagent is not None and (self.main is None or v.subagent not in (self.main, "")):
            self._sidechain(v)
            return
        self.side = None
        if v.subagent is not None:
            v = replace(v, subagent=None)
        if v.kind is Kind.COMPACTION:
            what = v.compaction or "compaction"
            self.top.append(Node("compaction", f"compaction ({escape_control(what, one_line=True)})", v.number))
            return
        if is_prompt(v):
            self.turn = Node("turn", one_line(v.text), v.number, timestamp=v.timestamp)
            self.top.append(self.turn)
            self.out.prompts.append(self.turn)
        for c in v.tool_calls:
            node = Node("tool", call_summary(c.name, c.arguments), v.number, call_id=c.id)
            self._parent(v.number).children.append(node)
            if c.id:
                self.calls[c.id] = node
            if c.name in SUBAGENT_TOOLS:
                self.spawners.append(node)
        for r in v.tool_results:
            called = self.calls.get(r.call_id or "")
            if called is not None and r.is_error:
                called.error = True
        agent = _agent_of_result(v) if v.tool_results else None
        if agent and v.tool_results[0].call_id:
            self.agent_call.setdefault(agent, v.tool_results[0].call_id)
        spawned = _codex_spawned(v)
        if spawned is not None:
            self._codex_agent(v.number, *spawned)

    def _sidechain(self, v: View) -> None:
        """A subagent's line. Lines that name no agent belong to the subagent of the lines next to them
        (Claude Code names the agent on some lines of a sidechain only)."""
        agent = v.subagent or ""
        node = self.agents.get(agent) if agent else None
        side = self.side
        if node is None and side is not None and (not agent or side.agent is None):
            node = side
            if agent and side.agent is None:
                side.agent = agent
                side.label = side.label.replace("subagent", f"subagent {escape_control(agent, one_line=True)}", 1)
                self.agents[agent] = side
        if node is None:
            name = f"subagent {escape_control(agent, one_line=True)}" if agent else "subagent"
            node = Node("subagent", name, v.number, agent=agent or None)
            if agent:
                self.agents[agent] = node
            self.sides.append(node)
            self._parent(v.number).children.append(node)  # moved under its call when that is known
        self.side = node
        if v.kind is Kind.MESSAGE and v.role == "user" and not v.tool_results and not v.injected and v.text.strip() and not node.children:
            node.label += f": {one_line(v.text, LABEL_WIDTH - len(node.label) - 2)}"
        for c in v.tool_calls:
            node.children.append(Node("tool", call_summary(c.name, c.arguments), v.number, call_id=c.id))

    def _codex_agent(self, number: int, call: str, thread: str, nick: str) -> None:
        parent = self.calls.get(call)
        label = f"subagent {escape_control(nick, one_line=True)}" if nick else "subagent"
        label += f" (thread {escape_control(thread, one_line=True)})"
        path = codex_thread_file(self.path, thread) if self.path else None
        node = Node("subagent", label, number, path=path, agent=thread)
        (parent.children if parent is not None else self.out.nodes).append(node)

    def finish(self) -> Outline:
        # inline subagents: under the call whose result names them
        for node in self.sides:
            call = self.calls.get(self.agent_call.get(node.agent or "", ""))
            if call is None:
                continue
            for holder in self.out.walk():
                if node in holder.children:
                    holder.children.remove(node)
                    break
            call.children.append(node)
        # subagent files: by agent id, else in order under the calls that have none
        free = [c for c in self.spawners if not any(ch.kind == "subagent" for ch in c.children)]
        for f in self.agent_files:
            agent = agent_id_of(f)
            node = Node("subagent", f"subagent {escape_control(agent or os.path.basename(f), one_line=True)}", None, path=f, agent=agent)
            call = self.calls.get(self.agent_call.get(agent or "", ""))
            if call is None and free:
                call = free.pop(0)
            (call.children if call is not None else self.out.nodes).append(node)
        return self.out


def build_outline(views: Iterable[View], *, path: str | None = None, agent_files: list[str] | None = None, main: str | None = None) -> Outline:
    """The outline of the views (record order). ``path``: the session file (to find Codex threads' files);
    ``agent_files``: its Claude Code subagent files (:func:`sessionview.core.formats.claude_code.subagent_files`);
    ``main``: the agent id of a subagent's own file (its lines are then the main chain, not a subagent)."""
    b = _Builder(path, list(agent_files or ()), main)
    for v in views:
        b.add(v)
    return b.finish()


def related_files(path: str, format_name: str) -> tuple[list[str], str | None]:
    """For :func:`build_outline`: the subagent files of session ``path`` and, for a subagent's own file, its
    agent id (``main``)."""
    if format_name != "claude-code":
        return [], None
    return subagent_files(path), agent_id_of(path) if parent_of(path) else None


def outline_file(path: str) -> Outline:
    """The outline of the session file ``path`` (read whole)."""
    from sessionview.core.session import open_session

    session = open_session(path)
    try:
        files, main = related_files(path, session.format)
        return build_outline(session.views(), path=path, agent_files=files, main=main)
    finally:
        session.close()
