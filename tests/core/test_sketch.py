"""The session list's sketch of a file: title, messages, tokens and problems from its head and tail only."""

import json
import os

from sessionview.core import catalog, sketch
from sessionview.core.catalog import Catalog, describe_full


def write(p, values, extra=b""):
    p.write_bytes(b"".join(json.dumps(v).encode() + b"\n" for v in values) + extra)
    return str(p)


def test_a_small_file_is_sketched_exactly(tmp_path):
    p = write(tmp_path / "s.jsonl", [
        {"role": "user", "content": "  Fix the\nbuild  "},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "shell", "arguments": {}}]},
        {"role": "assistant", "content": "done"},
    ])
    d = describe_full(p)
    assert d.format == "Brute JSONL" and d.count == 3
    s = d.sketch
    assert s.title == "Fix the build" and s.messages == 3 and s.messages_exact
    assert s.problems == 1 and s.problems_exact  # the dangling call, as check says
    assert s.tokens and s.tokens > 0


def test_the_formats_own_title_wins_over_the_first_prompt(tmp_path):
    cc = {"sessionId": "s", "uuid": "u1", "type": "user", "timestamp": "2025-11-01T10:00:00.000Z",
          "message": {"role": "user", "content": "hello there"}}
    assert describe_full(write(tmp_path / "a.jsonl", [cc])).sketch.title == "hello there"
    named = [{"type": "summary", "summary": "Refactor the parser", "leafUuid": "u1"}, cc]
    assert describe_full(write(tmp_path / "b.jsonl", named)).sketch.title == "Refactor the parser"
    custom = [*named, {"type": "custom-title", "customTitle": "my title", "sessionId": "s"}]
    assert describe_full(write(tmp_path / "c.jsonl", custom)).sketch.title == "my title"
    pi = [{"type": "session", "version": 3, "id": "x", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"},
          {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
           "message": {"role": "user", "content": [{"type": "text", "text": "question"}]}},
          {"type": "session_info", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:02Z", "name": "pi name"}]
    assert describe_full(write(tmp_path / "p.jsonl", pi)).sketch.title == "pi name"


def test_injected_and_wrapped_text_is_not_the_title(tmp_path):
    lines = [
        {"sessionId": "s", "uuid": "u0", "type": "user", "isMeta": True, "timestamp": "2025-11-01T10:00:00.000Z",
         "message": {"role": "user", "content": "Caveat: harness text"}},
        {"sessionId": "s", "uuid": "u1", "type": "user", "timestamp": "2025-11-01T10:00:00.000Z",
         "message": {"role": "user", "content": "<command-name>/clear</command-name>"}},
        {"sessionId": "s", "uuid": "u2", "type": "user", "timestamp": "2025-11-01T10:00:00.000Z",
         "message": {"role": "user", "content": "the real question"}},
    ]
    assert describe_full(write(tmp_path / "i.jsonl", lines)).sketch.title == "the real question"


def big(tmp_path, tail=b""):
    values = [{"role": "user", "content": "first prompt"}] + [
        {"role": "assistant" if i % 2 else "user", "content": "x" * 200} for i in range(4000)
    ]
    return write(tmp_path / "big.jsonl", values, tail)


def test_a_big_file_is_estimated_from_its_head_and_tail_only(tmp_path, monkeypatch):
    p = big(tmp_path, b'{"role":"user","content":"ok"}\n{not json}\n')
    size = os.path.getsize(p)
    assert size > 2 * sketch.HEAD
    reads = []
    real = os.pread
    monkeypatch.setattr(sketch.os, "pread", lambda fd, n, off: reads.append((n, off)) or real(fd, n, off))
    s = describe_full(p).sketch
    assert reads and all(n <= sketch.TAIL and off >= size - sketch.TAIL for n, off in reads)  # the tail only
    assert s.title == "first prompt"
    assert not s.messages_exact and abs(s.messages - 4002) < 400  # scaled from the head
    assert s.problems == 1 and not s.problems_exact  # the broken line in the tail; pairing is not looked at
    assert s.tokens > 4000 * 40


def test_sorting_by_any_column_puts_unknown_last(tmp_path):
    a = write(tmp_path / "a.jsonl", [{"role": "user", "content": "zebra"}] * 3)
    b = write(tmp_path / "b.jsonl", [{"role": "user", "content": "apple"}])
    write(tmp_path / "c.jsonl", [{"role": "user", "content": "not described"}] * 2)
    cat = Catalog(str(tmp_path))
    cat.load()
    for path in (a, b):
        e = cat.entries[path]
        d = describe_full(path)
        cat.set_description(path, e.size, e.mtime, d.format, d.count, d.error, d.sketch)
    rel = lambda key, rev=False: [e.rel for e in cat.sorted("", key, rev)]  # noqa: E731
    assert rel("title") == ["b.jsonl", "a.jsonl", "c.jsonl"]
    assert rel("title", True) == ["a.jsonl", "b.jsonl", "c.jsonl"]
    assert rel("messages") == ["a.jsonl", "b.jsonl", "c.jsonl"]
    assert rel("name", True) == ["c.jsonl", "b.jsonl", "a.jsonl"]
    assert set(catalog.SORT_KEYS) >= {"mtime", "name", "size", "title", "messages", "tokens", "problems", "format"}


def test_a_json_document_is_sketched_from_its_session():
    d = describe_full("tests/fixtures/real/gemini/agent-sessions-small.json")
    assert d.sketch.title == "Hello" and d.sketch.messages == 2 and d.sketch.problems == 0
