"""The outline of a run (core/view/outline.py) on the real fixtures: turns, tool calls, subagents under
their calls, prompts without what the harness injected."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sessionview.core.session import open_session
from sessionview.core.view.outline import build_outline, call_summary, first_prompt, is_prompt, outline_file

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
FIXTURES = REAL.parent
CC = REAL / "claude-code"
SUBAGENT_MAIN = CC / "agent-sessions-subagent-project" / "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"
SUBAGENT_FILE = SUBAGENT_MAIN.with_suffix("") / "subagents" / "agent-a0ad4f44468bdf20d.jsonl"


def shape(nodes, depth=0):
    out = []
    for n in nodes:
        out.append((depth, n.kind, n.number, n.label))
        out += shape(n.children, depth + 1)
    return out


def test_turns_then_tool_calls_in_record_order():
    o = outline_file(str(CC / "daaain-representative_messages.jsonl"))
    assert [(n.kind, n.number) for n in o.nodes] == [("turn", 1), ("turn", 3), ("turn", 7), ("turn", 11)]
    assert o.prompts == o.nodes
    assert o.nodes[0].label.startswith("Hello Claude! Can you help me understand how Python decorators work?")
    assert [(c.kind, c.number, c.label) for c in o.nodes[1].children] == [("tool", 4, "Edit  /tmp/decorator_example.py")]
    assert [c.label for c in o.nodes[2].children] == ["Bash  python /tmp/decorator_example.py"]


def test_inline_sidechain_hangs_under_its_task_call():
    """daaain sidechain_integrated: the Task call at #1, its result names agent e1c84ba5 (#2); the sidechain
    lines #3-#5 (the first ones name no agent) form one subagent under that call, with its Grep call."""
    o = outline_file(str(CC / "daaain-sidechain_integrated.jsonl"))
    assert shape(o.nodes) == [
        (0, "start", 1, "before the first prompt"),
        (1, "tool", 1, "Task  Research data-border-color usage and CSS class mat..."),
        (2, "subagent", 3, "subagent e1c84ba5"),
        (3, "tool", 4, "Grep  data-border-color"),
    ]
    sub = o.find("subagent")[0]
    assert sub.agent == "e1c84ba5" and sub.path is None


def test_subagent_file_hangs_under_the_task_call_that_has_no_id():
    o = outline_file(str(SUBAGENT_MAIN))
    turn = o.nodes[0]
    assert (turn.kind, turn.number, turn.label) == ("turn", 2, "Delegate a repo search to a subagent")
    (task,) = turn.children
    assert task.label == "Task  search files" and task.number == 3
    (sub,) = task.children
    assert sub.kind == "subagent" and sub.path == str(SUBAGENT_FILE) and sub.agent == "a0ad4f44468bdf20d" and sub.number is None


def test_a_subagent_file_is_its_own_main_chain():
    o = outline_file(str(SUBAGENT_FILE))
    assert shape(o.nodes) == [(0, "turn", 1, "Search the repo for TODO comments"), (1, "tool", 2, "bash  grep -rn TODO")]


def test_subagent_file_by_agent_id_when_the_result_names_it(tmp_path: Path):
    """A call with an id whose result names the agent gets that agent's file, not the first free call."""
    main = tmp_path / "s.jsonl"
    env = {"sessionId": "s", "cwd": "/", "timestamp": "2026-01-01T00:00:00Z"}
    lines = [
        {**env, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}},
        {**env, "type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Task", "input": {"description": "first"}},
            {"type": "tool_use", "id": "t2", "name": "Task", "input": {"description": "second"}}]}},
        {**env, "type": "user", "uuid": "u2", "agentId": "bbb", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "done"}]}},
    ]
    main.write_text("".join(json.dumps(x) + "\n" for x in lines))
    subs = tmp_path / "s" / "subagents"
    subs.mkdir(parents=True)
    shutil.copyfile(SUBAGENT_FILE, subs / "agent-bbb.jsonl")
    o = outline_file(str(main))
    first, second = o.nodes[0].children
    assert first.children == []
    assert [c.path for c in second.children] == [str(subs / "agent-bbb.jsonl")]


def test_codex_spawn_agent_hangs_its_thread_file_under_the_call(tmp_path: Path):
    day = tmp_path / "sessions" / "2026" / "01" / "02"
    day.mkdir(parents=True)
    other = tmp_path / "sessions" / "2026" / "01" / "03"
    other.mkdir()
    thread = "019b0000-aaaa-7000-8000-000000000001"
    child = other / f"rollout-2026-01-03T00-00-00-{thread}.jsonl"
    shutil.copyfile(FIXTURES / "codex-rollout.jsonl", child)
    ts = "2026-01-02T00:00:00.000Z"
    lines = [
        {"timestamp": ts, "type": "session_meta", "payload": {"id": "p", "cwd": "/", "originator": "codex_cli_rs"}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n<cwd>/</cwd>\n</environment_context>"}]}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "split the work"}]}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "function_call", "name": "spawn_agent",
                                                                "arguments": json.dumps({"message": "count the lines"}), "call_id": "c1"}},
        {"timestamp": ts, "type": "event_msg", "payload": {"type": "collab_agent_spawn_end", "call_id": "c1", "new_thread_id": thread,
                                                           "new_agent_nickname": "Ada", "status": "pending_init"}},
    ]
    main = day / "rollout-2026-01-02T00-00-00-p.jsonl"
    main.write_text("".join(json.dumps(x) + "\n" for x in lines))
    o = outline_file(str(main))
    assert [(n.kind, n.number, n.label) for n in o.nodes] == [("turn", 3, "split the work")]
    (call,) = o.nodes[0].children
    assert call.label == "spawn_agent  count the lines"
    (sub,) = call.children
    assert (sub.kind, sub.label, sub.path, sub.number) == ("subagent", f"subagent Ada (thread {thread})", str(child), 5)


def test_prompts_skip_injected_lines_and_tool_results():
    s = open_session(str(CC / "daaain-edge_cases.jsonl"))
    views = list(s.views())
    o = build_outline(views)
    prompts = [v for v in views if is_prompt(v)]
    assert [n.number for n in o.prompts] == [v.number for v in prompts]
    assert all(not v.injected and not v.tool_results and v.role == "user" for v in prompts)
    injected = [v for v in views if v.role == "user" and v.injected]
    assert injected, "the fixture has command wrappers"
    assert not {v.number for v in injected} & {n.number for n in o.prompts}
    assert first_prompt(views) == o.prompts[0].number


def test_codex_environment_context_is_not_a_prompt():
    s = open_session(str(FIXTURES / "codex-rollout.jsonl"))
    o = build_outline(s.views())
    assert o.prompts[0].number == 3 and o.prompts[0].label == "Compte les lignes de café.txt ☕"


def test_pi_turns_and_compactions():
    o = outline_file(str(REAL / "pi" / "agent-sessions-v3-small.jsonl"))
    assert [(n.kind, n.number) for n in o.nodes] == [("turn", 4), ("compaction", 6), ("turn", 7), ("compaction", 9)]


def test_labels_are_one_escaped_line():
    label = call_summary("Bash\x1b[31m", {"command": "\n\n  rm -rf /tmp/x\x07\nsecond line"})
    assert "\x1b" not in label and "\x07" not in label and "\n" not in label
    assert label == "Bash\\x1b[31m  rm -rf /tmp/x\\x07"
    assert call_summary("shell", '{"command": ["ls", "-l"]}') == "shell  ls -l"


def test_branches_hold_their_turns():
    """Views that carry the branch of a pi id/parentId tree (``View.branch``): a branch node where it
    changes, holding the turns on it."""
    from dataclasses import dataclass
    from types import SimpleNamespace

    from sessionview.core.doc.model import Kind, View

    @dataclass
    class OnBranch(View):  # stands in for View.branch where this checkout's views do not have it yet
        branch: object = None

    def user(n, text, branch=None):
        return OnBranch(n, Kind.MESSAGE, role="user", text=text, branch=branch)

    b1, b2 = SimpleNamespace(point=1, index=1, count=2), SimpleNamespace(point=1, index=2, count=2)
    o = build_outline([user(1, "root"), user(2, "first try", b1), user(3, "more", b1), user(4, "second try", b2)])
    assert shape(o.nodes) == [
        (0, "turn", 1, "root"),
        (0, "branch", 2, "branch 1 of 2 from #1"),
        (1, "turn", 2, "first try"),
        (1, "turn", 3, "more"),
        (0, "branch", 4, "branch 2 of 2 from #1"),
        (1, "turn", 4, "second try"),
    ]
    assert [n.number for n in o.prompts] == [1, 2, 3, 4]
