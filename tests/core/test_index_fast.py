"""The direct extractors of :mod:`sessionview.core.index.extract` index exactly what the adapter path does."""

from __future__ import annotations

import json
import os

import orjson
import pytest

from sessionview.core import formats
from sessionview.core.index import extract
from sessionview.core.index.extract import line_docs

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def _jsonl_files() -> list[str]:
    out = []
    for root, _, names in os.walk(FIXTURES):
        for name in sorted(names):
            if name.endswith((".jsonl", ".ndjson")) or name.endswith(".jsonl.txt"):
                out.append(os.path.join(root, name))
    return sorted(out)


def _both(adapter: formats.Adapter, data: bytes) -> tuple[list, list]:
    fast = list(line_docs(adapter, data, 0, 1, {}, fast=True))
    slow = list(line_docs(adapter, data, 0, 1, {}, fast=False))
    return fast, slow


@pytest.mark.parametrize("path", _jsonl_files(), ids=lambda p: os.path.relpath(p, FIXTURES))
def test_fast_path_extracts_what_the_adapter_path_does(path: str) -> None:
    with open(path, "rb") as f:
        data = f.read()
    detected = formats.detect_head(data[: formats.HEAD_BYTES])
    # the file's own format, and each format that has a direct extractor (a file read as another format)
    for adapter in [detected, *(formats.by_name(n) for n in extract.FAST)]:
        fast, slow = _both(adapter, data)
        assert fast == slow, (path, adapter.name)


def test_there_are_fixtures_of_every_fast_format() -> None:
    names = {formats.detect_head(open(p, "rb").read(formats.HEAD_BYTES)).name for p in _jsonl_files()}
    assert set(extract.FAST) <= names
    assert len(_jsonl_files()) >= 10


ODD = [
    {"role": "assistant", "content": None, "tool_calls": [{"id": 7, "name": 3.5, "arguments": None}]},
    {"role": "tool", "tool_call_id": 7, "content": "result of seven"},
    {"role": "assistant", "content": "x", "tool_calls": [{"id": "a", "name": "sh,ell", "arguments": "ls -l"}, "junk",
                                                          {"name": "noid"}, {"id": "", "name": "empty"}]},
    {"role": "tool", "tool_call_id": "a", "content": ""},
    {"role": "tool", "tool_call_id": "missing", "content": "orphan"},
    {"role": "assistant", "content": "thinks", "reasoning": {"text": "because"}},
    {"role": "assistant", "content": [{"type": "text", "text": "blocks"}]},
    {"role": "assistant", "content": "calls by id", "tool_calls": {"k1": {"name": "grep", "arguments": {}}}},
    {"role": "user", "content": "at a time", "timestamp": "2026-01-02T03:04:05Z"},
    {"role": "user", "content": "x" * (extract.PART_CAP + 10)},
    {"role": "assistant", "content": "big args", "tool_calls": [{"id": "b", "name": "w", "arguments": {"n": 2 ** 70}}]},
    {"role": "user", "content": "\ud800 lone surrogate"},
    {"role": 5, "content": "not a role"},
    ["not", "an", "object"],
    {"role": "user", "content": "caf\u00e9", "extra": {"nested": ["leaf"]}},
    {"role": "system", "content": "[compacted:summary] earlier"},
]


def test_fast_path_matches_on_odd_brute_records() -> None:
    lines = []
    for v in ODD:
        try:
            lines.append(orjson.dumps(v))
        except TypeError:  # 2**70 does not fit orjson: the stdlib writes it
            lines.append(json.dumps(v).encode())
    lines.insert(3, b"{not json")
    lines.insert(5, b"")
    lines.append(b'{"role": "user", "content": "bad \xff byte"}')
    data = b"\n".join(lines) + b"\n"
    fast, slow = _both(formats.by_name("brute"), data)
    assert fast == slow
    assert len(fast) == len(lines) - 1  # the blank line has no doc
    assert any(d.tool == "3.5" for d in fast) and any("result of seven" in d.text and d.tool == "3.5" for d in fast)


def test_the_fast_path_is_taken_for_plain_brute_records(monkeypatch: pytest.MonkeyPatch) -> None:
    from sessionview.core.formats.brute import BruteAdapter

    def boom(self, n, value):  # noqa: ANN001
        raise AssertionError("the adapter's view was used")

    monkeypatch.setattr(BruteAdapter, "view", boom)
    data = b'{"role":"user","content":"hello"}\n{"role":"assistant","content":"hi","tool_calls":[{"id":"1","name":"sh","arguments":{"c":"ls"}}]}\n'
    docs = list(line_docs(BruteAdapter(), data, 0, 1, {}))
    assert [d.text for d in docs] == ["hello", 'hi\nsh\n{"c":"ls"}']
    assert docs[1].tool == "sh" and docs[1].calls == (("1", "sh"),)


def test_the_quick_finder_finds_what_the_look_around_regex_finds() -> None:
    import random

    from sessionview.core.index.query import parse

    rng = random.Random(7)
    alphabet = ["pars", "parse", "Parser", "_", ".", " ", "x", "é", "É", "1", "\n", "retry", "build", "-", "sh"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(400)]
    texts += ["parse", "_parse_", "xparse", "parsex", "PARSE.sh", "retry__build", "retry build", "éparse", "parseé", "..."]
    for q in ["pars*", "parse", '"retry build"', "parse.sh", "é*", "1", "sh", '"..."']:
        for term in parse(q).terms:
            for substring in (False, True):
                slow, quick = term.pattern(substring), term.finder(substring)
                for text in texts:
                    got = quick.search(text)
                    want = slow.search(text)
                    assert (got and got.span()) == (want and want.span()), (q, substring, text)
                    assert [m.span() for m in quick.finditer(text)] == [m.span() for m in slow.finditer(text)], (q, text)
            whole_slow, whole_quick = term.word_pattern(), term.finder(whole=True)
            for text in texts:
                assert bool(whole_quick.search(text)) == bool(whole_slow.search(text)), (q, text)
