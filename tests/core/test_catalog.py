"""The catalog of sessions under a directory, and the watch filter."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from sessionview.core import catalog, watch
from sessionview.core.catalog import Catalog, count_lines, describe, detect_format, is_session_name, scan

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "node_modules" / "x").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "brute-session.jsonl", root / "brute.jsonl")
    shutil.copyfile(FIXTURES / "claude-code.jsonl", root / "a" / "claude.jsonl")
    shutil.copyfile(FIXTURES / "littleghost-filesystem-snapshot.json", root / "a" / "b" / "store.json")
    (root / "a" / "package.json").write_text('{"name": "not a session"}')
    (root / "notes.txt").write_text("no")
    (root / ".git" / "x.jsonl").write_text("{}\n")
    (root / "node_modules" / "x" / "y.jsonl").write_text("{}\n")
    (root / "a" / "events.ndjson").write_text('{"role":"user","content":"x"}\n')
    os.utime(root / "brute.jsonl", (1000, 1000))
    os.utime(root / "a" / "claude.jsonl", (3000, 3000))
    os.utime(root / "a" / "b" / "store.json", (2000, 2000))
    return root


def test_names():
    assert is_session_name("x.jsonl") and is_session_name("X.JSONL") and is_session_name("a.ndjson")
    assert is_session_name("store.json")
    assert not is_session_name("notes.txt") and not is_session_name(".#x.jsonl")


def test_scan_lists_session_files_only_without_opening_jsonl(tree):
    found = {e.rel: e for e in scan(str(tree))}
    assert set(found) == {"brute.jsonl", "a/claude.jsonl", "a/b/store.json", "a/events.ndjson"}
    e = found["brute.jsonl"]
    assert e.size == (tree / "brute.jsonl").stat().st_size and e.mtime == 1000
    assert e.format is None and e.count is None and e.stale


def test_scan_can_stop(tree):
    assert list(scan(str(tree), should_stop=lambda: True)) == []


def test_describe_format_and_count(tree):
    assert describe(str(tree / "brute.jsonl")) == ("Brute JSONL", 11, None)
    fmt, count, err = describe(str(tree / "a" / "claude.jsonl"))
    assert "Claude" in fmt and count == 11 and err is None
    fmt, count, err = describe(str(tree / "a" / "b" / "store.json"))
    assert "LittleGhost" in fmt and count == 6
    assert describe(str(tree / "missing.jsonl"))[2]


def test_count_lines_counts_an_unterminated_last_line(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_bytes(b"a\nb\nc")
    assert count_lines(str(p)) == 3
    p.write_bytes(b"")
    assert count_lines(str(p)) == 0
    assert count_lines(str(p), should_stop=lambda: True) in (0, None)


def test_detect_format_of_garbage():
    assert detect_format(b"") == "?"
    assert detect_format(b"not json\n") == "JSONL"


def test_catalog_sorting_filter_and_changes(tree):
    c = Catalog(str(tree))
    c.load()
    by_mtime = [e.rel for e in c.sorted()]
    assert by_mtime.index("a/claude.jsonl") < by_mtime.index("a/b/store.json") < by_mtime.index("brute.jsonl")
    assert [e.rel for e in c.sorted("CLAUDE")] == ["a/claude.jsonl"]
    assert [e.rel for e in c.sorted(key="name")][0] == "a/b/store.json"
    v = c.version
    # a new file, a modification, a deletion, a non-session file
    (tree / "new.jsonl").write_text('{"role":"user","content":"x"}\n')
    (tree / "brute.jsonl").write_text('{"role":"user","content":"x"}\n')
    (tree / "a" / "events.ndjson").unlink()
    changed = c.apply([
        ("added", str(tree / "new.jsonl")),
        ("modified", str(tree / "brute.jsonl")),
        ("deleted", str(tree / "a" / "events.ndjson")),
        ("added", str(tree / "notes.txt")),
    ])
    assert changed == {str(tree / "new.jsonl"), str(tree / "brute.jsonl"), str(tree / "a" / "events.ndjson")}
    assert c.version > v and str(tree / "a" / "events.ndjson") not in c.entries
    assert c.entries[str(tree / "new.jsonl")].rel == "new.jsonl"
    # descriptions survive a change of nothing, and go stale on a change
    e = c.entries[str(tree / "new.jsonl")]
    assert c.set_description(e.path, e.size, e.mtime, "Brute JSONL", 1, None)
    assert not e.stale
    assert c.apply([("modified", e.path)]) == set()
    assert not c.set_description(str(tree / "gone.jsonl"), 1, 1.0, "x", 1, None)


def test_catalog_directory_moves(tree, tmp_path):
    c = Catalog(str(tree))
    c.load()
    outside = tmp_path / "moved"
    os.rename(tree / "a", outside)
    changed = c.apply([("deleted", str(tree / "a"))])
    assert {os.path.basename(p) for p in changed} == {"claude.jsonl", "store.json", "events.ndjson"}
    assert all(not p.startswith(str(tree / "a") + os.sep) for p in c.entries)
    os.rename(outside, tree / "back")
    changed = c.apply([("added", str(tree / "back"))])
    assert {c.entries[p].rel for p in changed} == {"back/claude.jsonl", "back/b/store.json", "back/events.ndjson"}


def test_live_window():
    e = catalog.Entry("p", "p", 1, 100.0)
    assert e.is_live(104.0) and not e.is_live(106.0)


def test_watch_filter():
    assert watch.wanted("/x/y/s.jsonl")
    assert watch.wanted("/x/some-dir")
    assert not watch.wanted("/x/notes.txt")
    assert not watch.wanted("/x/node_modules/s.jsonl")
    assert not watch.wanted("/x/.git/s.jsonl")


async def test_watch_sessions_reports_changes(tmp_path):
    stop = asyncio.Event()
    got: list = []

    async def collect():
        async for batch in watch.watch_sessions(str(tmp_path), debounce_ms=50, step_ms=20, stop_event=stop):
            got.extend(batch)
            if any(p.endswith("s.jsonl") and k == "deleted" for k, p in got):
                return

    task = asyncio.create_task(collect())
    await asyncio.sleep(0.3)
    (tmp_path / "s.jsonl").write_text("{}\n")
    (tmp_path / "ignored.txt").write_text("x")
    await asyncio.sleep(0.3)
    (tmp_path / "s.jsonl").unlink()
    try:
        await asyncio.wait_for(task, 10)
    finally:
        stop.set()
    kinds = {(k, os.path.basename(p)) for k, p in got}
    assert ("added", "s.jsonl") in kinds and ("deleted", "s.jsonl") in kinds
    assert not any(p.endswith("ignored.txt") for _, p in got)
