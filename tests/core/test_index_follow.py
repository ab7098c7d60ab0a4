"""The index follows a file that real processes change: an appender and a Brute-style rewriter, and two
indexers at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from indexhelpers import find, fresh, held

from sessionview.core.index.indexer import Indexer
from sessionview.core.index.sqlite import SqliteBackend

CHILD = str(Path(__file__).with_name("index_child.py"))
pytestmark = pytest.mark.slow


def child(mode: str, **cfg) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, CHILD, mode, json.dumps(cfg)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def say(proc: subprocess.Popen, command: str) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(command + "\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == "ok\n"


@pytest.fixture
def session(tmp_path):
    from index_child import line

    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(line(k) for k in range(1, 21)))
    return p


def test_each_change_an_agent_makes_is_indexed_the_way_the_follower_sees_it(tmp_path, session):
    backend = SqliteBackend(str(tmp_path / "index.sqlite"))
    ix = Indexer(backend)
    ix.update([str(session)])
    agent = child("steps", path=str(session))
    try:
        expected = [
            ("append 3", "appended", 3),
            ("rewrite 2", "appended", 2),  # Brute's end of turn: the same start, so only the tail
            ("append 1", "appended", 1),
            ("half", "indexed", None),  # caught in the middle of a rewrite: shorter, so again from the start
            ("finish", "appended", None),  # and the finished rewrite starts with what was indexed
            ("compact", "indexed", None),
            ("replace", "indexed", 2),
            ("append 2", "appended", 2),
        ]
        for command, what, docs in expected:
            before = backend.count_docs()
            say(agent, command)
            summary = ix.update([str(session)])
            assert (command, getattr(summary, what)) == (command, 1)
            if docs is not None:
                assert (command, backend.count_docs() - before) == (command, docs) or what == "indexed"
            assert (command, held(backend, session)) == (command, fresh(session))
    finally:
        agent.stdin.close()
        agent.wait(timeout=30)
    assert [h.n for h in find(backend, "marker1009")] == [3] and find(backend, "marker1001") == []  # replaced: renumbered


@pytest.mark.parametrize("kind", ["append", "rewrite"])
def test_the_index_follows_while_a_writer_runs(tmp_path, session, kind):
    backend = SqliteBackend(str(tmp_path / "index.sqlite"))
    ix = Indexer(backend, batch=512)  # small batches: a writer changes the file between them
    writer = child("run", path=str(session), kind=kind, count=150)
    assert writer.stdout is not None
    rounds = 0
    while writer.poll() is None:
        ix.update([str(session)])
        rounds += 1
    assert writer.stdout.read() == "done\n"
    ix.update([str(session)])
    assert rounds > 1
    assert held(backend, session) == fresh(session)
    numbers = [row[0] for row in held(backend, session)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) == 170


def test_an_appender_and_a_rewriter_at_once(tmp_path, session):
    backend = SqliteBackend(str(tmp_path / "index.sqlite"))
    ix = Indexer(backend, batch=1024)
    procs = [child("run", path=str(session), kind="append", count=100), child("run", path=str(session), kind="rewrite", count=60)]
    while any(p.poll() is None for p in procs):
        ix.update([str(session)])
    ix.update([str(session)])
    assert held(backend, session) == fresh(session)


def test_two_processes_indexing_at_once_add_each_record_once(tmp_path, session):
    from index_child import line

    others = tmp_path / "more"
    others.mkdir()
    for i in range(6):
        (others / f"s{i}.jsonl").write_bytes(b"".join(line(k) for k in range(i * 100, i * 100 + 200)))
    index = str(tmp_path / "index.sqlite")
    stop = tmp_path / "stop"
    cfg = dict(index=index, paths=[str(tmp_path)], stop=str(stop))
    procs = [child("index", **cfg), child("index", **cfg)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline() == "ready\n"
    writer = child("run", path=str(session), kind="append", count=100)
    writer.wait(timeout=60)
    stop.write_text("")
    counts = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    backend = SqliteBackend(index)
    Indexer(backend).update([str(tmp_path)])
    assert held(backend, session) == fresh(session)
    for i in range(6):
        assert held(backend, others / f"s{i}.jsonl") == fresh(others / f"s{i}.jsonl")
    total = sum(len(fresh(p)) for p in [session, *others.iterdir()])
    assert backend.count_docs() == total and counts[0] == counts[1] == total
    assert backend.db.execute("select count(*) from (select file_id, n from docs group by file_id, n having count(*) > 1)").fetchone()[0] == 0
