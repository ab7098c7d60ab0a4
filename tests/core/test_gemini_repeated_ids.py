"""Gemini CLI JSONL appends a changed message again under its id: the last copy is the message, earlier copies
are one-line notes that name it, and check finds no duplicate call in them. Every line stays as it is."""

import json

from sessionview.core.doc.model import Kind
from sessionview.core.session import JsonlSession
from sessionview.core.view import render

META = {"sessionId": "s1", "projectHash": "abc", "startTime": "2026-04-29T21:39:22.319Z", "lastUpdated": "2026-04-29T21:39:22.319Z"}
CALL = {"id": "run_1", "name": "run_shell_command", "args": {"command": "ls"}}


def lines():
    return [
        META,
        {"id": "u1", "timestamp": "2026-04-29T21:39:33.155Z", "type": "user", "content": [{"text": "list files"}]},
        {"id": "g1", "timestamp": "2026-04-29T21:39:35.125Z", "type": "gemini", "content": "", "toolCalls": [{**CALL, "status": "executing"}]},
        {"$set": {"lastUpdated": "2026-04-29T21:39:36.000Z"}},
        {"id": "g1", "timestamp": "2026-04-29T21:39:35.125Z", "type": "gemini", "content": "Listing.",
         "toolCalls": [{**CALL, "status": "success", "result": [{"functionResponse": {"id": "run_1", "name": "run_shell_command",
                                                                                        "response": {"output": "a.txt"}}}]}]},
        {"id": "g2", "timestamp": "2026-04-29T21:39:45.996Z", "type": "gemini", "content": "Done."},
    ]


def data():
    return b"".join(json.dumps(v, separators=(",", ":")).encode() + b"\n" for v in lines())


def test_the_last_copy_is_the_message_and_earlier_ones_name_it():
    s = JsonlSession.from_bytes(data())
    assert s.format == "gemini"
    views = list(s.views())
    earlier, last = views[2], views[4]
    assert earlier.kind is Kind.META and earlier.label == "earlier copy" and "the message is #5" in earlier.text
    assert not earlier.tool_calls and not earlier.tool_results
    assert last.kind is Kind.MESSAGE and last.text == "Listing." and last.tool_results[0].content == "a.txt"
    assert [v.number for v in views if v.kind is Kind.MESSAGE] == [2, 5, 6]
    assert s.check() == []  # no "duplicate tool call id" from the two copies
    assert "[earlier copy]" in render.view_text(earlier)


def test_lines_stay_as_they_are():
    s = JsonlSession.from_bytes(data())
    list(s.views())
    assert s.doc.to_bytes() == data()


def test_without_repeats_nothing_is_collapsed():
    only = [v for i, v in enumerate(lines()) if i != 2]
    s = JsonlSession.from_bytes(b"".join(json.dumps(v, separators=(",", ":")).encode() + b"\n" for v in only))
    assert not s.superseded()
    assert all(v.label != "earlier copy" for v in s.views())


def test_a_copy_appended_later_collapses_the_one_before():
    full = data().splitlines(keepends=True)
    s = JsonlSession.from_bytes(b"".join(full[:4]))
    assert s.view(3).kind is Kind.MESSAGE  # the only copy so far
    s.doc = JsonlSession.from_bytes(data()).doc
    assert s.view(3).label == "earlier copy"
