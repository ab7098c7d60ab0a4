"""``check`` on two cores (core/checkpar.py) reports what the one-process check reports, in the same order."""

from __future__ import annotations

import json

import pytest

from sessionview.core import checkpar
from sessionview.core.session import JsonlSession
from sessionview.core.session_base import Session


def _call(*ids: str) -> bytes:
    return json.dumps({"role": "assistant", "content": "", "tool_calls": [{"id": i, "name": "sh", "arguments": {}} for i in ids]}).encode()


def _result(cid: str) -> bytes:
    return json.dumps({"role": "tool", "tool_call_id": cid, "content": "ok"}).encode()


LINES = [
    json.dumps({"role": "system", "content": "s"}).encode(),
    json.dumps({"role": "user", "content": "u"}).encode(),
    _call("a", "b"),
    _result("a"),
    b'{"role":"user","content":',  # invalid JSON
    _result("zz"),  # orphan
    b'{"role":"user","role":"assistant","content":"dup keys"}',
    _call("a"),  # a duplicate id, across the halves
    _call("c"),  # dangling
    b"",
    b"\xff\xfe not utf-8",
    _result("b"),  # its call is in the other half
    json.dumps({"role": "assistant", "content": "x" * 300}).encode(),
]


@pytest.fixture
def parallel(monkeypatch):
    monkeypatch.setattr(checkpar, "PARALLEL_MIN_BYTES", 0)


@pytest.mark.parametrize("tail", [b"\n", b'\n{"role":"user","content":"partial'])
@pytest.mark.parametrize("repeat", [1, 7])
def test_two_processes_report_what_one_reports(tmp_path, parallel, tail, repeat):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(LINES * repeat) + tail)
    s = JsonlSession.load(p, digest=False)
    try:
        one = Session.check(s)
        two = checkpar.check(s)
        assert [(x.kind, x.number, x.message, x.ids, x.severity) for x in two] == [
            (x.kind, x.number, x.message, x.ids, x.severity) for x in one
        ]
        assert len(one) > 5
    finally:
        s.close()


def test_the_split_lands_at_a_line_start_near_the_parents_share(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(LINES * 5) + b"\n")
    s = JsonlSession.load(p, digest=False)
    try:
        mid = checkpar._split(s)
        start = s.doc.source.starts[mid - 1]
        assert 1 < mid <= len(s) and abs(start - int(s.doc.source.size * checkpar.PARENT_SHARE)) <= max(len(x) for x in LINES) + 1
    finally:
        s.close()


def test_a_failure_in_the_second_half_is_raised(tmp_path, parallel, monkeypatch):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(LINES * 3) + b"\n")
    s = JsonlSession.load(p, digest=False)
    real = checkpar._facts
    calls = []

    def facts(session, first, last):
        calls.append(first)
        if first > 1:
            raise OSError("the file changed")
        return real(session, first, last)

    monkeypatch.setattr(checkpar, "_facts", facts)
    try:
        with pytest.raises(OSError, match="the file changed"):
            checkpar.check(s)
    finally:
        s.close()


def test_a_binary_file_is_one_finding(tmp_path, parallel):
    p = tmp_path / "b.jsonl"
    p.write_bytes(bytes(range(256)) * 200)
    s = JsonlSession.load(p, digest=False)
    try:
        assert [x.kind for x in checkpar.check(s)] == [x.kind for x in Session.check(s)] == ["binary file"]
    finally:
        s.close()


@pytest.mark.parametrize("split", [True, False])
def test_a_user_message_between_a_call_and_its_result_is_found_on_either_path(tmp_path, monkeypatch, split):
    """The whole-file rules see the user messages too, not only the records with tool calls or results."""
    from sessionview.core.doc.pairing import INTERRUPTED

    if split:
        monkeypatch.setattr(checkpar, "PARALLEL_MIN_BYTES", 0)
    pad = [json.dumps({"role": "user", "content": "x" * 50}).encode()] * 20
    lines = pad + [_call("c1"), json.dumps({"role": "user", "content": "wait"}).encode(), _result("c1")] + pad
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    s = JsonlSession.load(p, digest=False)
    try:
        found = [(x.kind, x.number) for x in checkpar.check(s) if x.kind == INTERRUPTED]
        assert found == [(INTERRUPTED, 22)]
    finally:
        s.close()
