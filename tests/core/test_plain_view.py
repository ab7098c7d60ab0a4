"""``Adapter.plain_view``: where it answers, it is the adapter's view, with no schema problem and no timestamp,
so ``build_view`` may skip the rest; and ``build_view`` gives the same views with it and without it."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionview.core.doc.model import Kind
from sessionview.core.doc.parse import parse_record
from sessionview.core.formats.brute import BruteAdapter
from sessionview.core.session import JsonlSession, build_view

scalars = st.none() | st.booleans() | st.integers(-5, 2**65) | st.floats(allow_nan=False) | st.text(max_size=6)
any_json = st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=8)
contents = st.none() | st.text(max_size=8) | st.sampled_from(["[compacted:summary] s", "[compacted:tool_results] r", "[compacted:x"]) | any_json
calls = st.fixed_dictionaries(
    {},
    optional={
        "id": st.none() | st.text(max_size=4) | st.integers(0, 9),
        "name": st.text(max_size=4) | st.integers(0, 9) | st.none(),
        "arguments": st.none() | st.dictionaries(st.text(max_size=3), any_json, max_size=2) | st.lists(st.lists(st.text(max_size=2), max_size=2), max_size=2) | st.text(max_size=2),
        "extra": any_json,
    },
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant", "tool", "system", "other"]) | st.integers(0, 2) | st.none(),
        "content": contents,
        "tool_calls": st.none() | st.lists(calls | any_json, max_size=3) | st.dictionaries(st.text(max_size=3), calls, max_size=2),
        "tool_call_id": st.none() | st.text(max_size=4) | st.integers(0, 9),
        "reasoning": st.none() | st.text(max_size=4) | st.fixed_dictionaries({"text": st.text(max_size=3)}),
        "timestamp": st.just("2025-11-01T10:00:05.000Z"),
        "x": any_json,
    },
)

good_calls = st.fixed_dictionaries(
    {"id": st.text(max_size=4) | st.integers(0, 9) | st.none(), "name": st.text(max_size=4)},
    optional={"arguments": st.none() | st.dictionaries(st.text(max_size=3), any_json, max_size=2) | st.just([])},
)
brute_like = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system", ""])},
    optional={
        "content": st.none() | st.text(max_size=8) | st.sampled_from(["[compacted:summary] s", "[compacted:sliding_window]", "[compacted:Bad]"]),
        "tool_calls": st.none() | st.lists(good_calls, max_size=3) | st.just({}),
        "tool_call_id": st.none() | st.text(max_size=4) | st.integers(0, 9),
        "reasoning": st.none() | st.just(""),
    },
)


def _fields(view):
    return {f.name: getattr(view, f.name) for f in dataclasses.fields(view)}


def _check(adapter, number, value):
    plain = adapter.plain_view(number, value)
    if plain is None:
        return False
    full = adapter.view(number, value)
    assert _fields(plain) == _fields(full)
    assert adapter.schema_problems(number, value) == []
    assert adapter.timestamp_of(value) is None
    assert plain.kind is not Kind.UNKNOWN
    return True


@settings(max_examples=600, deadline=None)
@given(brute_like | messages | any_json)
def test_brute_plain_view_is_the_view_of_a_line_brute_loads_without_a_word(value):
    _check(BruteAdapter(), 7, value)


def test_brute_plain_view_answers_for_the_lines_brute_writes():
    a = BruteAdapter()
    answered = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "read", "arguments": {"p": 1}}]},
        {"role": "assistant", "content": "x", "tool_calls": [{"id": 5, "name": "n"}]},
        {"role": "tool", "content": "ok", "tool_call_id": "c1"},
        {"role": "user", "content": "[compacted:summary] s"},
    ]
    for value in answered:
        assert _check(a, 1, value), value
    for value in [{"role": "user", "x": 1}, {"role": 1}, {"role": "a", "reasoning": "r"}, {"role": "a", "content": ["b"]}, [1]]:
        assert a.plain_view(1, value) is None


@pytest.mark.parametrize("name", ["brute-session.jsonl", "roundtrip-edge-cases.jsonl", "claude-code.jsonl", "codex-rollout.jsonl", "pi-agent.jsonl"])
def test_build_view_is_the_same_without_plain_views(fixtures, name, monkeypatch):
    s = JsonlSession.load(fixtures / name)
    with_plain = [repr(_fields(v)) for v in s.views()]  # repr: NaN is not equal to itself
    monkeypatch.setattr(type(s.adapter), "plain_view", lambda self, n, v: None)
    s2 = JsonlSession.load(fixtures / name)
    assert [repr(_fields(v)) for v in s2.views()] == with_plain


def test_build_view_adds_the_parse_problems_to_a_plain_view():
    a = BruteAdapter()
    raw = b'{"role":"user","content":"a","content":"b"}'
    v = build_view(a, 3, parse_record(raw), len(raw) + 1, lambda limit: raw)
    assert [p.kind for p in v.problems] == ["duplicate keys"]
    raw = b'{"role":"user","content":"\\ud800"}'
    v = build_view(a, 3, parse_record(raw), len(raw) + 1, lambda limit: raw)
    assert [p.message.split(":")[0] for p in v.problems] == ["lone surrogate"]
    raw = b'{"role":"assistant","content":"' + b"x" * 200 + b'","tool_calls":[{"id":"c","name":"n","arguments":{"a":' + b"[" * 99 + b"]" * 99 + b"}}]}"
    v = build_view(a, 3, parse_record(raw), len(raw) + 1, lambda limit: raw)
    assert any("nesting deeper than 100" in p.message for p in v.problems)
