"""check flags a user message placed between a tool call and its result (provider APIs reject that), in Brute
and Claude Code shaped sessions, and never in the real published sessions."""

import json
import pathlib

import pytest

from sessionview.core.doc.pairing import INTERRUPTED
from sessionview.core.session import JsonlSession, open_session

REAL = pathlib.Path(__file__).parent.parent / "fixtures" / "real"


def jsonl(*values):
    return JsonlSession.from_bytes(b"".join(json.dumps(v).encode() + b"\n" for v in values))


def brute_call(cid, name="shell"):
    return {"role": "assistant", "content": "", "tool_calls": [{"id": cid, "name": name, "arguments": {}}]}


def interrupted(session):
    return [p for p in session.check() if p.kind == INTERRUPTED]


def test_brute_user_message_between_call_and_result():
    s = jsonl(
        {"role": "user", "content": "list files"},
        brute_call("c1"),
        {"role": "user", "content": "actually, wait"},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    )
    assert s.format == "brute"
    [p] = interrupted(s)
    assert p.number == 3 and p.ids == ("c1",)
    assert "user message #3 comes between tool call c1 (shell) at #2 and its result at #4" in p.message
    assert "provider APIs reject" in p.message


def test_brute_user_message_after_every_result_is_fine():
    s = jsonl(
        {"role": "user", "content": "list files"},
        brute_call("c1"),
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "user", "content": "thanks"},
    )
    assert s.check() == []


def test_a_dangling_call_is_not_also_an_interrupted_one():
    s = jsonl({"role": "user", "content": "go"}, brute_call("c1"), {"role": "user", "content": "hello?"})
    assert [p.kind for p in s.check()] == ["dangling tool call"]


def test_two_calls_of_one_turn_and_a_user_message_between_their_results():
    s = jsonl(
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "shell", "arguments": {}},
            {"id": "b", "name": "fs_read", "arguments": {}},
        ]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "user", "content": "stop"},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
    )
    [p] = interrupted(s)
    assert p.number == 4 and p.ids == ("b",) and "fs_read" in p.message


def cc(uid, parent, kind, content, **extra):
    return {
        "type": kind, "uuid": uid, "parentUuid": parent, "sessionId": "s", "timestamp": "2025-11-01T10:00:00.000Z",
        "message": {"role": kind, "content": content, **({"id": "m-" + uid} if kind == "assistant" else {})}, **extra,
    }


def test_claude_code_user_text_between_tool_use_and_tool_result():
    s = jsonl(
        cc("1", None, "user", "run ls"),
        cc("2", "1", "assistant", [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]),
        cc("3", "2", "user", "no, wait"),
        cc("4", "3", "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]),
    )
    assert s.format == "claude-code"
    [p] = interrupted(s)
    assert p.number == 3 and "toolu_1 (Bash) at #2" in p.message


def test_claude_code_injected_and_subagent_lines_between_call_and_result_are_fine():
    s = jsonl(
        cc("1", None, "user", "research"),
        cc("2", "1", "assistant", [{"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "look"}}]),
        cc("3", "2", "user", "look", isSidechain=True, agentId="ag1"),
        cc("4", "3", "user", "<command-name>/cost</command-name>", isMeta=True),
        cc("5", "4", "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "found"}]),
    )
    assert interrupted(s) == []


@pytest.mark.parametrize(
    "path", sorted(p.relative_to(REAL).as_posix() for p in REAL.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))
)
def test_no_false_alarm_on_real_sessions(path):
    assert interrupted(open_session(REAL / path)) == []
