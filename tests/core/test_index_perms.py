"""The index holds the text of every session: its directory (when sessionview makes it) and its files are the user's only."""

from __future__ import annotations

import json
import os
import stat

import pytest
from indexhelpers import msg

from sessionview.core.index import child
from sessionview.core.index import indexer as ix_mod
from sessionview.core.index.indexer import Indexer
from sessionview.core.index.sqlite import SqliteBackend


@pytest.fixture(autouse=True)
def umask022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def sessions(tmp_path, n: int = 4):
    d = tmp_path / "s"
    d.mkdir()
    for i in range(n):
        (d / f"s{i}.jsonl").write_bytes(msg("user", f"alpha {i}") + msg("assistant", f"beta gamma {i}" * (i + 1)))
    return d


def test_a_new_index_directory_and_its_files_are_private(tmp_path):
    base = tmp_path / "cache" / "sessionview"
    b = SqliteBackend(str(base / "index.sqlite"))
    Indexer(b).update([str(sessions(tmp_path))])
    files = sorted(os.listdir(base))
    assert "index.sqlite-wal" in files and "index.sqlite-shm" in files  # open, in WAL mode
    assert mode(base) == 0o700
    for name in files:
        assert mode(base / name) == 0o600, name
    b.close()


def test_a_directory_the_user_made_is_left_alone_but_the_files_are_private(tmp_path):
    base = tmp_path / "mine"
    base.mkdir(mode=0o755)
    b = SqliteBackend(str(base / "index.sqlite"))
    Indexer(b).update([str(sessions(tmp_path))])
    assert mode(base) == 0o755
    assert {mode(base / n) for n in os.listdir(base)} == {0o600}
    b.close()


def test_an_old_readable_index_of_ours_is_made_private_on_open(tmp_path):
    path = tmp_path / "index.sqlite"
    b = SqliteBackend(str(path))
    Indexer(b).update([str(sessions(tmp_path))])
    b.close()
    for name in os.listdir(tmp_path):
        if name.startswith("index.sqlite"):
            os.chmod(tmp_path / name, 0o644)
    b = SqliteBackend(str(path))
    assert b.count_docs() == 8
    assert {mode(tmp_path / n) for n in os.listdir(tmp_path) if n.startswith("index.sqlite")} == {0o600}
    b.close()


@pytest.mark.skipif(not child.can_split(), reason="needs fork, two CPUs and a single thread")
def test_the_part_of_a_split_build_is_private(tmp_path, monkeypatch):
    monkeypatch.setattr(ix_mod, "BULK_MIN", 2)  # every build into an empty index is a bulk build
    base = tmp_path / "cache"
    b = SqliteBackend(str(base / "index.sqlite"))
    Indexer(b).update([str(sessions(tmp_path))])
    names = json.loads(b.db.execute("select value from meta where key='parts'").fetchone()[0])
    assert len(names) == 1 and names[0].startswith("index.sqlite.part-")
    assert mode(base) == 0o700
    assert mode(base / names[0]) == 0o600
    for name in os.listdir(base):
        assert mode(base / name) == 0o600, name
    b.close()
