"""Search and filter over a model, without the UI: prefilter on raw bytes, escapes, wrap, cancel."""

from __future__ import annotations

import json

from sessionview.core.view.transcript import Filter, TranscriptModel
from sessionview.core.view.search import filter_rows, find


def model_of(tmp_path, values) -> TranscriptModel:
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values))
    return TranscriptModel.open(str(p))


def test_find_forward_backward_and_wrap(tmp_path):
    m = model_of(tmp_path, [{"role": "user", "content": f"line {i} {'needle' if i in (3, 7) else ''}"} for i in range(1, 11)])
    s = m.scanner()
    assert find(s, "NEEDLE", 0, len(m)) == 3
    assert find(s, "needle", 3, len(m)) == 7
    assert find(s, "needle", 7, len(m)) == 3  # wrapped
    assert find(s, "needle", 7, len(m), wrap=False) is None
    assert find(s, "needle", 7, len(m), forward=False) == 3
    assert find(s, "needle", 3, len(m), forward=False) == 7  # wrapped backwards
    assert find(s, "absent", 0, len(m)) is None
    assert find(s, "needle", 0, len(m), accept=lambda n: n != 3) == 7


def test_find_sees_text_behind_json_escapes(tmp_path):
    m = model_of(tmp_path, [{"role": "user", "content": "plain"}, {"role": "user", "content": 'quote " and é and tab\there'}])
    # ensure_ascii=False wrote é raw; escape it to check the \\u path as well
    raw = m.path
    data = open(raw, "rb").read().replace("é".encode(), b"\\u00e9")
    open(raw, "wb").write(data)
    m = TranscriptModel.open(raw)
    s = m.scanner()
    assert find(s, 'quote "', 0, len(m)) == 2
    assert find(s, "É", 0, len(m)) == 2
    assert find(s, "tab\there", 0, len(m)) == 2


def test_find_in_tool_calls_and_results_and_invalid_lines(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(
        b'{"role":"assistant","content":"","tool_calls":[{"id":"a","name":"grep","arguments":{"pattern":"zebra"}}]}\n'
        b'{"role":"tool","content":"giraffe","tool_call_id":"a"}\n'
        b'{"broken": okapi\n'
    )
    m = TranscriptModel.open(str(p))
    s = m.scanner()
    assert find(s, "zebra", 0, 3) == 1 and find(s, "grep", 0, 3) == 1
    assert find(s, "giraffe", 0, 3) == 2
    assert find(s, "okapi", 0, 3) == 3


def test_find_can_be_stopped_and_reports_progress(tmp_path):
    m = model_of(tmp_path, [{"role": "user", "content": f"m{i}"} for i in range(5000)])
    seen = []
    assert find(m.scanner(), "nothing", 0, len(m), should_stop=lambda: True) is None
    find(m.scanner(), "nothing", 0, len(m), progress=seen.append)
    assert seen and 0 < seen[-1] <= 1.0


def test_filter_rows_by_role_and_tool(tmp_path):
    values = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "shell", "arguments": {}}]},
        {"role": "tool", "content": "ok", "tool_call_id": "a"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "b", "name": "read", "arguments": {}}]},
        {"role": "tool", "content": "ok", "tool_call_id": "b"},
    ]
    m = model_of(tmp_path, values)
    s = m.scanner()
    assert list(filter_rows(s, Filter.parse("user"), {}, len(m))) == [1]
    assert list(filter_rows(s, Filter.parse("tool:shell"), {}, len(m))) == [2, 3]
    assert list(filter_rows(s, Filter.parse("tool tool:read"), {}, len(m))) == [5]
    assert list(filter_rows(s, Filter.parse("user,assistant"), {}, len(m))) == [1, 2, 4]
    assert filter_rows(s, Filter.parse("user"), {}, len(m), should_stop=lambda: True) is None
    assert Filter.parse("role:user tool=shell").describe() == "user tool:shell"
    assert not Filter.parse("  ").active


def test_quick_views_read_like_the_full_path(tmp_path):
    import shutil
    from pathlib import Path

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    for name in ("brute-session.jsonl", "claude-code.jsonl", "codex-rollout.jsonl", "openai-chat.jsonl", "roundtrip-edge-cases.jsonl"):
        p = tmp_path / name
        shutil.copyfile(fixtures / name, p)
        m = TranscriptModel.open(str(p))
        s = m.scanner()
        quick = list(s.quick_views(1, len(m)))
        full = [m.session.view(n) for n in range(1, len(m) + 1)]
        assert [(v.kind, v.role, v.text, v.tool_calls, v.tool_results, v.reasoning) for v in quick] == [
            (v.kind, v.role, v.text, v.tool_calls, v.tool_results, v.reasoning) for v in full
        ], name


def test_a_big_record_is_shown_without_the_slow_checks(tmp_path, monkeypatch):
    import sessionview.core.doc.parse as parse

    p = tmp_path / "big.jsonl"
    p.write_text(json.dumps({"role": "tool", "content": "{[" * 700_000, "tool_call_id": "x"}) + "\n")
    m = TranscriptModel.open(str(p))
    called = []
    monkeypatch.setattr(parse, "nesting_depth", lambda raw: called.append(1) or 0)
    view = m.view(1)
    assert view.role == "tool" and view.text.startswith("{[{[") and not called
    assert m.view(1) is view  # cached
