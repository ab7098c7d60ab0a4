"""``check``'s facts read from a Brute record's bytes (core/checkfacts.py) are what its view gives: the same
findings, in the same order, as the view path, for the whole file and for a run of records in two parts."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fastrender import records  # Brute-shaped records, hostile text, spoiled bytes

from sessionview.core import checkfacts
from sessionview.core.doc.document import Document, Line
from sessionview.core.doc.pairing import is_user_words
from sessionview.core.formats.brute import BruteAdapter
from sessionview.core.session import JsonlSession
from sessionview.core.session_base import RecordFacts, finish_check, record_facts

IDS = st.sampled_from(["call_1", "call_2", "call_3"])


@st.composite
def pairing_records(draw):
    """Calls, results and user messages over a few ids: dangling, orphan, duplicate and interrupted calls."""
    what = draw(st.sampled_from(["call", "result", "user", "other"]))
    if what == "call":
        calls = [{"id": draw(IDS), "name": draw(st.sampled_from(["sh", "read"])), "arguments": {}} for _ in range(draw(st.integers(1, 2)))]
        return json.dumps({"role": "assistant", "content": "", "tool_calls": calls}).encode()
    if what == "result":
        return json.dumps({"role": "tool", "content": "ok", "tool_call_id": draw(IDS)}).encode()
    if what == "user":
        return json.dumps({"role": "user", "content": draw(st.sampled_from(["u", "[compacted:summary] s"]))}).encode()
    return draw(records())


def _session(lines: list[bytes]) -> JsonlSession:
    return JsonlSession(Document.from_bytes(b"\n".join(lines) + b"\n"), adapter=BruteAdapter())


def _by_views(s: JsonlSession, first: int, last: int, direct: bool) -> RecordFacts:
    facts = RecordFacts(direct=direct)
    for v in s.stream(first, last):
        record_facts(facts, v)
    return facts


def _by_facts(s: JsonlSession, first: int, last: int, direct: bool) -> RecordFacts:
    facts = RecordFacts(direct=direct)
    checkfacts.collect(s, facts, first, last)
    return facts


def _same_findings(lines: list[bytes], split: int) -> None:
    s = _session(lines)
    n = len(s)
    want = finish_check(s, [_by_views(s, 1, n, True)])
    assert finish_check(s, [_by_facts(s, 1, n, True)]) == want
    k = max(1, min(split, n))  # two runs, the second kept as blocks (as the child's half of checkpar)
    assert finish_check(s, [_by_facts(s, 1, k, True), _by_facts(s, k + 1, n, False)]) == want
    for number, raw in enumerate(lines, 1):  # a record it is sure of: a view without problems, the same facts
        got = checkfacts.sure_facts(raw)
        if got is None:
            continue
        v = s.view(number)
        assert v.problems == [], raw
        assert got == (tuple((c.id, c.name) for c in v.tool_calls), tuple(r.call_id for r in v.tool_results), is_user_words(v)), raw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(pairing_records(), min_size=1, max_size=12), st.integers(0, 12))
def test_the_facts_path_gives_the_view_paths_findings(lines, split):
    _same_findings(lines, split)


def test_plain_brute_records_are_read_without_a_view():
    lines = [
        b'{"role":"user","content":"hello"}',
        b'{"role":"assistant","content":"","tool_calls":[{"id":"call_1","name":"shell","arguments":{"command":"ls"}}]}',
        b'{"role":"user","content":"wait"}',
        b'{"role":"tool","content":"total 0\\n","tool_call_id":"call_1"}',
        b'{"role":"assistant","content":"x","tool_calls":[{"id":"call_2","name":"read"}]}',
        b'{"role":"tool","content":"r","tool_call_id":"nope"}',
    ]
    assert checkfacts.sure_facts(lines[0]) == ((), (), True)
    assert checkfacts.sure_facts(lines[1]) == ((("call_1", "shell"),), (), False)
    assert checkfacts.sure_facts(lines[3]) == ((), ("call_1",), False)
    s = _session(lines)
    kinds = [p.kind for p in finish_check(s, [_by_facts(s, 1, len(s), True)])]
    assert kinds == ["user message before tool result", "dangling tool call", "orphan tool result"]
    _same_findings(lines, 3)


def test_records_it_is_not_sure_of_take_the_view_path():
    unsure = [
        b"",
        b'{"role":"user","content":"a","content":"b"}',
        b'{"role":"user","content":"x","extra":1}',
        b'{"role":"assistant","tool_calls":[{"id":1,"name":"a"}]}',
        b'{"role":"assistant","tool_calls":[{"id":null,"name":"a"}]}',
        b'{"role":"user","content":"[compacted:summary] s"}',
        b'{"role":"user","content":NaN}',
        b'{"role":"assistant","content":"x","tool_calls":[{"id":"d","name":"b","arguments":' + b'{"a":' * 110 + b"1" + b"}" * 110 + b"}]}",
    ]
    for raw in unsure:
        assert checkfacts.sure_facts(raw) is None, raw
    _same_findings(unsure, 4)


def test_an_edited_file_or_another_format_takes_the_view_path():
    lines = [b'{"role":"user","content":"u"}', b'{"role":"assistant","content":"","tool_calls":[{"id":"a","name":"sh"}]}']
    doc = Document.from_bytes(b"\n".join(lines) + b"\n").splice(1, 1, [Line(b'{"role":"tool","content":"r","tool_call_id":"a"}')])
    assert doc.edited
    s = JsonlSession(doc, adapter=BruteAdapter())
    n = len(s)
    assert finish_check(s, [_by_facts(s, 1, n, True)]) == finish_check(s, [_by_views(s, 1, n, True)])
    other = JsonlSession(Document.from_bytes(b"\n".join(lines) + b"\n"))
    if other.adapter.name != "brute":
        assert finish_check(other, [_by_facts(other, 1, 2, True)]) == finish_check(other, [_by_views(other, 1, 2, True)])
