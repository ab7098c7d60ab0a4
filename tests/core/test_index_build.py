"""The build's speed-ups keep what is indexed: a forked extractor, several batches per transaction."""

from __future__ import annotations

import os
from typing import Iterator

import pytest

from sessionview.core.index import child
from sessionview.core.index.indexer import Indexer
from sessionview.core.index.sqlite import SqliteBackend

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")


def _session(path: str) -> None:
    with open(os.path.join(FIXTURES, "brute-session.jsonl"), "rb") as f:
        body = f.read()
    with open(path, "wb") as f:
        for i in range(40):
            f.write(body)
            f.write(b'{"role":"user","content":"marker %d"}\n' % i)
        f.write(b'{"role":"user","content":"no newline at the end"}')


def _rows(backend: SqliteBackend) -> list[tuple]:
    docs = backend.db.execute("select n, offset, length, role, tool, ts from docs order by n").fetchall()
    calls = backend.db.execute("select call_id, name from calls order by call_id").fetchall()
    state = backend.files()[0]
    return [docs, calls, (state.end, state.lines, state.head, state.tail, state.partial, state.size)]


@needs_fork
@pytest.mark.parametrize("tx_bytes", [1, 1 << 30])
def test_a_forked_extractor_indexes_the_same(tmp_path, tx_bytes: int) -> None:
    path = str(tmp_path / "s.jsonl")
    _session(path)
    seen = {}
    for fork in (False, True):
        backend = SqliteBackend(str(tmp_path / f"i{fork}{tx_bytes}.sqlite"))
        summary = Indexer(backend, batch=4096, fork=fork, tx_bytes=tx_bytes).update([path])
        seen[fork] = (_rows(backend), summary.docs, summary.bytes)
        words = backend.db.execute("select count(*) from words where words match '\"marker 39\"'").fetchone()[0]
        assert words == 1
        backend.close()
    assert seen[True] == seen[False]
    assert seen[True][1] == len(seen[True][0][0]) > 40


def test_progress_is_reported_per_transaction(tmp_path) -> None:
    path = str(tmp_path / "s.jsonl")
    _session(path)
    done: list[int] = []
    backend = SqliteBackend(str(tmp_path / "i.sqlite"))
    Indexer(backend, progress=lambda p: done.append(p.done), batch=4096, fork=False, tx_bytes=16384).update([path])
    assert len(done) > 3 and done == sorted(done) and done[-1] == backend.files()[0].end  # the last line is partial


def test_a_stop_between_transactions_keeps_what_was_committed(tmp_path) -> None:
    path = str(tmp_path / "s.jsonl")
    _session(path)
    backend = SqliteBackend(str(tmp_path / "i.sqlite"))
    calls = {"n": 0}

    def stop() -> bool:
        calls["n"] += 1
        return calls["n"] > 3

    Indexer(backend, batch=4096, fork=False, tx_bytes=8192, should_stop=stop).update([path])
    part = backend.files()[0]
    assert 0 < part.end < os.path.getsize(path)
    Indexer(backend, batch=4096, fork=False).update([path])  # goes on from there
    full = SqliteBackend(str(tmp_path / "j.sqlite"))
    Indexer(full, fork=False).update([path])
    assert _rows(backend)[0] == _rows(full)[0]


@needs_fork
def test_a_failing_child_raises_in_the_parent() -> None:
    def make() -> Iterator[int]:
        yield 1
        raise ValueError("bad record")

    it = child.forked(make, lambda x: x, lambda x: x)
    assert next(it) == 1
    with pytest.raises(child.ChildFailed, match="ValueError: bad record"):
        next(it)


@needs_fork
def test_closing_early_ends_the_child() -> None:
    def make() -> Iterator[int]:
        i = 0
        while True:
            yield i
            i += 1

    it = child.forked(make, lambda x: x, lambda x: x)
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    it.close()  # the finally block kills and joins the child: this returns


def test_the_child_is_forked_only_when_a_cpu_is_idle(monkeypatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert child.can_fork() is hasattr(os, "fork")
    monkeypatch.setattr(os, "getloadavg", lambda: (4.0, 4.0, 4.0))
    assert not child.can_fork()
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not child.can_fork()
