"""Dropping a tool result's content: the id stays, the content becomes Brute's marker in each format's own
result field, untouched records keep their bytes, and formats that cannot say it are refused with a reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sessionview.core import ops
from sessionview.core.edit.change import open_editable
from sessionview.core.edit.drop import MARK, marker_text
from sessionview.core.errors import InvalidEdit, Refused

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
REAL = FIXTURES / "real"


def first_result(session) -> int:
    return next(n for n in range(1, len(session) + 1) if session.view(n).tool_results)


def drop_and_write(src: Path, tmp_path: Path, number: int | None = None) -> tuple[bytes, bytes, int]:
    path = tmp_path / src.name
    shutil.copyfile(src, path)
    before = path.read_bytes()
    session = open_editable(str(path))
    try:
        n = number if number is not None else first_result(session)
        change = ops.plan_drop_result(session, n)
        outcome = ops.commit(session, change)
        assert outcome.changed
    finally:
        session.close()
    return before, path.read_bytes(), n


@pytest.mark.parametrize(
    "src",
    [
        FIXTURES / "brute-session.jsonl",
        FIXTURES / "claude-code.jsonl",
        FIXTURES / "codex-rollout.jsonl",
        FIXTURES / "codex-legacy.jsonl",
        FIXTURES / "openai-chat.jsonl",
        FIXTURES / "anthropic-messages.jsonl",
        FIXTURES / "pi-agent.jsonl",
        REAL / "claude-code" / "daaain-representative_messages.jsonl",
        REAL / "pi" / "v1-before-compaction.excerpt.jsonl",
    ],
    ids=lambda p: p.name,
)
def test_drop_keeps_the_id_and_every_other_line(src, tmp_path):
    before, after, n = drop_and_write(src, tmp_path)
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True), 1):
        if i != n:
            assert a == b, f"line {i} changed"
    assert MARK.encode() in new_lines[n - 1] and new_lines[n - 1] != old_lines[n - 1]
    session = open_editable(str(tmp_path / src.name))
    try:
        view = session.view(n)
        assert view.tool_results and all(r.content.startswith(MARK) for r in view.tool_results)
        assert all(p.number != n for p in session.pairing().problems())  # still answers its call
    finally:
        session.close()
    # the call ids of the line are the ones it had
    old_ids = json.dumps(json.loads(old_lines[n - 1]))
    for token in ("tool_call_id", "tool_use_id", "call_id", "toolCallId"):
        if token in old_ids:
            assert json.loads(new_lines[n - 1]) is not None and token in new_lines[n - 1].decode()


def test_brute_line_is_brutes_own_marker(tmp_path):
    before, after, n = drop_and_write(FIXTURES / "brute-session.jsonl", tmp_path, 3)
    line = after.splitlines()[n - 1]
    assert line == b'{"role":"tool","content":"' + marker_text("shell").encode() + b'","tool_call_id":"tc_01"}'
    # Brute's own compaction wrote the same words for #8
    assert b"[compacted:tool_results] Result dropped to free context. Call fs_read again if you still need it." in before


def test_claude_code_block_content_becomes_the_marker(tmp_path):
    before, after, n = drop_and_write(REAL / "claude-code" / "daaain-representative_messages.jsonl", tmp_path)
    value = json.loads(after.splitlines()[n - 1])
    blocks = [b for b in value["message"]["content"] if b.get("type") == "tool_result"]
    assert blocks and all(b["content"].startswith(MARK) and b["tool_use_id"] for b in blocks)


def test_codex_output_becomes_the_marker(tmp_path):
    before, after, n = drop_and_write(FIXTURES / "codex-rollout.jsonl", tmp_path)
    payload = json.loads(after.splitlines()[n - 1])["payload"]
    assert payload["type"] == "function_call_output" and payload["call_id"] == "call_abc123"
    assert payload["output"] == marker_text("shell")


def test_pi_content_becomes_one_text_block(tmp_path):
    before, after, n = drop_and_write(FIXTURES / "pi-agent.jsonl", tmp_path)
    message = json.loads(after.splitlines()[n - 1])["message"]
    assert message["content"] == [{"type": "text", "text": marker_text("bash")}] and message["toolCallId"]


def test_a_range_drops_every_result_in_it_and_keeps_the_rest(tmp_path):
    path = tmp_path / "b.jsonl"
    shutil.copyfile(FIXTURES / "brute-session.jsonl", path)
    before = path.read_bytes().splitlines(keepends=True)
    session = open_editable(str(path))
    try:
        change = ops.plan_drop_result(session, 1, len(session))
        ops.commit(session, change)
    finally:
        session.close()
    after = path.read_bytes().splitlines(keepends=True)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True), 1) if a != b]
    assert changed and all(b'"role":"tool"' in after[i - 1] and MARK.encode() in after[i - 1] for i in changed)
    assert 8 not in changed  # already dropped by Brute itself: its bytes stay


def test_refusals(tmp_path):
    session = open_editable(str(FIXTURES / "brute-session.jsonl"))
    try:
        with pytest.raises(Refused, match="no tool result there"):
            ops.plan_drop_result(session, 1)
        with pytest.raises(Refused, match="already dropped"):
            ops.plan_drop_result(session, 8)
        with pytest.raises(InvalidEdit):
            ops.plan_drop_result(session, 0)
    finally:
        session.close()


def test_gemini_jsonl_is_refused_with_its_reason():
    session = open_editable(str(REAL / "gemini" / "agent-sessions-jsonl_v040.jsonl"))
    try:
        with pytest.raises(Refused, match="read-only"):
            ops.plan_drop_result(session, 4)
    finally:
        session.close()


def test_a_result_inside_a_call_record_is_refused():
    # a Codex collaboration event answers a call, but it is not a result the model reads: refused
    from sessionview.core.doc.model import Kind, ToolResult, View
    from sessionview.core.formats.codex import CodexAdapter

    value = {"timestamp": "t", "type": "event_msg", "payload": {"type": "collab_close_end", "call_id": "c1", "status": "ok"}}
    view = View(1, Kind.META, tool_results=(ToolResult("c1", "ok"),), value=value)
    with pytest.raises(Refused, match="not supported"):
        CodexAdapter().drop_results(value, view, marker_text)
