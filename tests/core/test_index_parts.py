"""A bulk build split over two processes: the child's part of the index, adopted by the parent."""

from __future__ import annotations

import json
import os

import pytest
from indexhelpers import find, fresh, held, msg

from sessionview.core.index import child
from sessionview.core.index import indexer as ix_mod
from sessionview.core.index.indexer import Indexer
from sessionview.core.index.sqlite import SqliteBackend

pytestmark = pytest.mark.skipif(not child.can_split(), reason="needs fork, two CPUs and a single thread")

QUERIES = ["alpha", "beta*", '"gamma delta"', '"delta output" -betamax', "needle1"]


@pytest.fixture(autouse=True)
def small_bulk(monkeypatch):
    monkeypatch.setattr(ix_mod, "BULK_MIN", 2)  # every build into an empty index is a bulk build


def sessions(tmp_path, n: int = 5):
    d = tmp_path / "s"
    d.mkdir()
    paths = []
    for i in range(n):
        p = d / f"s{i}.jsonl"
        lines = [msg("user", f"alpha {i} needle{i}"), msg("assistant", f"betamax beta gamma delta {i}",
                 tool_calls=[{"id": f"c{i}", "name": "shell", "arguments": {"command": f"ls {i}"}}]),
                 msg("tool", f"gamma delta output {i}" * (i + 1), tool_call_id=f"c{i}")]
        p.write_bytes(b"".join(lines))
        paths.append(p)
    return d, paths


def hits_of(backend, q, **kw):
    return sorted((os.path.basename(h.path), h.n, h.snippet) for h in find(backend, q, **kw))


def parts(backend):
    row = backend.db.execute("select value from meta where key='parts'").fetchone()
    return json.loads(row[0]) if row else []


def test_a_split_build_holds_what_one_process_builds(tmp_path):
    d, paths = sessions(tmp_path)
    split = SqliteBackend(str(tmp_path / "split.sqlite"))
    summary = Indexer(split).update([str(d)])
    one = SqliteBackend(str(tmp_path / "one.sqlite"))
    Indexer(one, split=False).update([str(d)])
    assert summary.indexed == 5 and summary.docs == 15
    names = parts(split)
    assert len(names) == 1 and os.path.exists(tmp_path / names[0]) and parts(one) == []
    from_part = split.db.execute("select count(*) from files where part is not null").fetchone()[0]
    assert 1 <= from_part < 5  # about half the files came from the child
    for p in paths:
        assert held(split, p) == held(one, p) == fresh(p)
    for q in QUERIES:
        assert hits_of(split, q) == hits_of(one, q) != []
    assert [h.path for h in find(split, "needle3")] == [str(paths[3])]


def test_a_file_from_the_part_takes_appends_and_rewrites(tmp_path):
    d, paths = sessions(tmp_path)
    b = SqliteBackend(str(tmp_path / "i.sqlite"))
    ix = Indexer(b)
    ix.update([str(d)])
    (fid, path), = b.db.execute("select id, path from files where part is not null limit 1").fetchall()
    with open(path, "ab") as f:
        f.write(msg("user", "appended zebra"))
    assert ix.update([str(d)]).appended == 1
    assert [h.n for h in find(b, "zebra")] == [4]
    assert {h.n for h in find(b, "alpha", paths=(path,))} == {1}  # still read from the part
    with open(path, "wb") as f:  # replaced: indexed again here, the part's rows are dead
        f.write(msg("user", "only okapi now"))
    assert ix.update([str(d)]).indexed == 1
    assert find(b, "alpha", paths=(path,)) == [] and [h.n for h in find(b, "okapi")] == [1]
    assert held(b, path) == fresh(path)
    assert b.db.execute("select part from files where id=?", (fid,)).fetchone()[0] is None


def test_another_connection_sees_a_part_adopted_after_it_opened(tmp_path):
    d, paths = sessions(tmp_path)
    index = str(tmp_path / "i.sqlite")
    early = SqliteBackend(index)
    Indexer(SqliteBackend(index)).update([str(d)])
    assert hits_of(early, "needle*") == hits_of(SqliteBackend(index), "needle*")
    assert len(find(early, "needle*")) == 5


def test_a_missing_part_makes_a_new_index_with_a_message(tmp_path):
    d, _ = sessions(tmp_path)
    index = str(tmp_path / "i.sqlite")
    b = SqliteBackend(index)
    Indexer(b).update([str(d)])
    name = parts(b)[0]
    b.close()
    os.unlink(tmp_path / name)
    again = SqliteBackend(index)
    assert again.notice and "missing" in again.notice and "started a new one" in again.notice
    assert again.files() == [] and parts(again) == []
    Indexer(again).update([str(d)])
    assert len(find(again, "alpha")) == 5


def test_the_substring_index_and_a_reset_drop_the_parts(tmp_path):
    d, paths = sessions(tmp_path)
    b = SqliteBackend(str(tmp_path / "i.sqlite"))
    Indexer(b).update([str(d)])
    first = parts(b)[0]
    b.enable_grams()
    assert parts(b) == [] and not os.path.exists(tmp_path / first)
    Indexer(b).update([str(d)])  # an empty index again: split again, the part with its substring table
    assert len(parts(b)) == 1
    assert {os.path.basename(h.path) for h in find(b, "etamax", substring=True)} == {p.name for p in paths}
    second = parts(b)[0]
    b.reset("rebuilt")
    assert not os.path.exists(tmp_path / second) and parts(b) == []


def test_a_failed_child_leaves_its_files_to_the_parent(tmp_path, monkeypatch):
    d, paths = sessions(tmp_path)

    def fail(self, first_id, grams):
        raise OSError("no room")

    monkeypatch.setattr(SqliteBackend, "start_part", fail)  # the forked child inherits it
    b = SqliteBackend(str(tmp_path / "i.sqlite"))
    summary = Indexer(b).update([str(d)])
    assert summary.indexed == 5 and parts(b) == []
    for p in paths:
        assert held(b, p) == fresh(p)


def test_a_part_left_by_a_killed_build_is_removed_by_the_next(tmp_path):
    d, _ = sessions(tmp_path)
    index = str(tmp_path / "i.sqlite")
    dead = 4_000_000
    while True:  # a process id that no process has
        try:
            os.kill(dead, 0)
        except ProcessLookupError:
            break
        except OSError:
            pass
        dead += 1
    stale = tmp_path / f"i.sqlite.part-{dead}-1"
    running = tmp_path / f"i.sqlite.part-{os.getpid()}-9"  # another build of this process, still going
    stale.write_bytes(b"x")
    running.write_bytes(b"x")
    b = SqliteBackend(index)
    Indexer(b).update([str(d)])
    assert not stale.exists() and running.exists() and len(parts(b)) == 1


def test_the_progress_of_a_split_build_counts_both_halves_and_files_as_they_finish(tmp_path):
    d, paths = sessions(tmp_path, 6)
    seen: list = []
    b = SqliteBackend(str(tmp_path / "index.sqlite"))
    summary = Indexer(b, progress=lambda p: seen.append((p.done_files, p.files, p.done, p.total))).update([str(d)])
    assert len(parts(b)) == 1  # it was split
    size = sum(p.stat().st_size for p in paths)
    assert summary.bytes == size
    assert seen[-1] == (6, 6, size, size)  # the child's half counted, in files and bytes
    assert all(done <= total == size and files <= 6 for files, _, done, total in seen)  # the whole plan's bytes at once
    files = [f for f, _, _, _ in seen]
    assert files == sorted(files)  # never counted back
    # the files this process indexed, each as it finished: steps of one (the child's half may land between them,
    # as one step of its own: 0, 1, 4, 5, 6 as well as 0, 1, 2, 3, 6)
    assert sum(1 for a, b in zip(files, files[1:], strict=False) if b == a + 1) >= 2
