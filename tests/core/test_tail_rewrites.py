"""The follower on whole-file rewrites: a temp file renamed over the path that starts with what was shown
is an append; an agent's compaction (Brute's ``[compacted:...]`` markers) is announced as one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionview.core import tail
from sessionview.core.tail import Appended, Compacted, Follower, Renamed, Replaced

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def msg(role: str, content: str, **extra) -> bytes:
    return (json.dumps({"role": role, "content": content, **extra}, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def lines(n: int) -> list[bytes]:
    return [msg("user" if i % 2 == 0 else "assistant", f"message {i + 1}") for i in range(n)]


def rename_over(path: Path, data: bytes) -> None:
    """What sessionview's save does: write ``.NAME.sv-tmp-*`` next to the file, rename it over the path."""
    tmp = path.with_name(f".{path.name}.sv-tmp-test")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def rewrite_in_place(path: Path, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(data)


def kinds(events) -> list[str]:
    return [type(e).__name__ for e in events]


def appended(events) -> list[bytes]:
    return [line for e in events if isinstance(e, Appended) for line in e.lines()]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(lines(10)))
    return p


# -- a rename that keeps what was shown ---------------------------------------------------------------
def test_rename_that_starts_with_what_was_shown_is_an_append(path):
    old = path.read_bytes()
    with Follower(path) as f:
        assert len(appended(f.poll())) == 10
        new = msg("user", "after the rebase") + msg("assistant", "ok")
        rename_over(path, old + new)
        ev = f.poll()
        assert kinds(ev) == ["Renamed", "Appended"]
        ino = path.stat().st_ino
        assert ev[0] == Renamed((path.stat().st_dev, ino))
        assert ev[1].lines() == new.splitlines(keepends=True) and ev[1].rewritten and ev[1].starts[0] == len(old)
        assert f.ident[1] == ino and f.lines == 12
        # the new file is the one followed now
        with open(path, "ab") as fh:
            fh.write(msg("user", "later"))
        assert appended(f.poll()) == [msg("user", "later")]


def test_rename_with_the_same_content_says_only_renamed(path):
    with Follower(path) as f:
        f.poll()
        rename_over(path, path.read_bytes())
        ev = f.poll()
        assert kinds(ev) == ["Renamed"]
        assert f.poll() == []


def test_rename_completes_a_pending_line(path):
    old = path.read_bytes()
    with open(path, "ab") as fh:
        fh.write(b'{"role":"assistant","content":"half')
    with Follower(path) as f:
        ev = f.poll()
        assert kinds(ev) == ["Appended", "Pending"]
        rename_over(path, old + msg("assistant", "whole"))
        ev = f.poll()
        assert kinds(ev) == ["Renamed", "Appended", "Pending"]
        assert ev[1].lines() == [msg("assistant", "whole")] and ev[2].size == 0


def test_rename_with_an_edited_middle_line_is_replaced(path):
    data = path.read_bytes().splitlines(keepends=True)
    with Follower(path) as f:
        f.poll()
        data[4] = msg("user", "EDITED")  # what `sessionview edit` of line 5 produces
        rename_over(path, b"".join(data) + msg("user", "new"))
        ev = f.poll()
        assert kinds(ev) == ["Replaced", "Appended"]
        assert ev[0] == Replaced("a new file at the same path") and ev[1].count == 11


def test_rename_to_a_shorter_prefix_is_replaced(path):
    data = path.read_bytes().splitlines(keepends=True)
    with Follower(path) as f:
        f.poll()
        rename_over(path, b"".join(data[:5]))
        assert kinds(f.poll()) == ["Replaced", "Appended"]


def test_recreated_after_deletion_is_replaced_even_with_the_same_start(path):
    old = path.read_bytes()
    with Follower(path) as f:
        f.poll()
        path.unlink()
        assert kinds(f.poll()) == ["Deleted"]
        path.write_bytes(old + msg("user", "x"))
        assert kinds(f.poll()) == ["Replaced", "Appended"]


def test_rename_append_beyond_verify_limit_compares_the_prefix_hash(tmp_path):
    p = tmp_path / "big.jsonl"
    data = b"".join(lines(200))
    p.write_bytes(data)
    with Follower(p, verify_limit=1000, window=128) as f:
        f.poll()
        assert f._shown is None
        # same head and tail windows, one byte different in the middle: not an append
        mid = len(data) // 2
        changed = data[:mid] + (b"X" if data[mid : mid + 1] != b"X" else b"Y") + data[mid + 1 :]
        assert changed[:128] == data[:128] and changed[-128:] == data[-128:]
        rename_over(p, changed + msg("user", "new"))
        assert kinds(f.poll())[0] == "Replaced"
        shown = p.read_bytes()
        rename_over(p, shown + msg("user", "newer"))
        ev = f.poll()
        assert kinds(ev) == ["Renamed", "Appended"] and ev[1].lines() == [msg("user", "newer")]


def test_rename_append_reads_the_new_prefix_once(tmp_path, monkeypatch):
    p = tmp_path / "big.jsonl"
    data = b"".join(lines(2000))
    p.write_bytes(data)
    with Follower(p, verify_limit=1000, window=256) as f:
        f.poll()
        read_bytes = []
        real = tail.preader

        def counting(fd):
            r = real(fd)
            return lambda o, n: read_bytes.append(n) or r(o, n)

        monkeypatch.setattr(tail, "preader", counting)
        new = msg("user", "new")
        rename_over(p, data + new)
        ev = f.poll()
        assert kinds(ev) == ["Renamed", "Appended"]
        # the windows, the prefix once for its hash, the new bytes, the new tail window
        assert sum(read_bytes) <= len(data) + 3 * 256 + len(new)


def test_rename_append_when_started_at_an_offset(tmp_path):
    p = tmp_path / "s.jsonl"
    data = b"".join(lines(50))
    p.write_bytes(data)
    with Follower(p, offset=len(data), verify_limit=100, window=64) as f:
        assert f.lines == 50
        rename_over(p, data + msg("user", "new"))
        assert kinds(f.poll()) == ["Renamed", "Appended"]


def test_rename_append_after_a_huge_offset_compares_with_the_old_file(tmp_path, monkeypatch):
    monkeypatch.setattr(tail, "SCAN_LIMIT", 500)  # the prefix given at start is not hashed
    p = tmp_path / "s.jsonl"
    data = b"".join(lines(50))
    p.write_bytes(data)
    with Follower(p, offset=len(data), verify_limit=100, window=64) as f:
        assert f.lines is None and f._hash is None
        mid = len(data) // 2
        rename_over(p, data[:mid] + b"#" + data[mid + 1 :] + msg("user", "new"))
        assert kinds(f.poll())[0] == "Replaced"
    p.write_bytes(data)
    with Follower(p, offset=len(data), verify_limit=100, window=64) as f:
        rename_over(p, data + msg("user", "new"))
        assert kinds(f.poll()) == ["Renamed", "Appended"]


def test_a_sessionview_save_in_another_process_is_an_append(path, tmp_path):
    """A real process saves the file with sessionview's own save (temp file, rename): what a rebase
    onto an unchanged prefix plus new lines produces."""
    old = path.read_bytes()
    new = msg("user", "from the other process") + msg("assistant", "✓")
    script = (
        "import sys\n"
        "from sessionview.core.store import save, stamp\n"
        "path, data = sys.argv[1], bytes.fromhex(sys.argv[2])\n"
        "save.save(path, lambda appended: [data, appended], stamp.stamp_file(path), root=sys.argv[3],"
        " backup=False, state_dir=sys.argv[4])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with Follower(path) as f:
        f.poll()
        ino = path.stat().st_ino
        state = tmp_path / "state"
        state.mkdir()
        subprocess.run(
            [sys.executable, "-c", script, str(path), (old + new).hex(), str(tmp_path), str(state)],
            check=True, env=env, timeout=60,
        )
        assert path.stat().st_ino != ino  # it did replace the file
        ev = f.poll()
        assert kinds(ev) == ["Renamed", "Appended"]
        assert ev[1].lines() == new.splitlines(keepends=True)


# -- compaction -----------------------------------------------------------------------------------------
SUMMARY = msg("user", "[compacted:summary] ## Objective\n- tidy\n## Outstanding\n- nothing")


def test_a_compaction_in_place_is_compacted_with_its_marker_and_counts(path):
    data = path.read_bytes().splitlines(keepends=True)
    with Follower(path, clock=Clock()) as f:
        f.poll()
        new = [data[0], SUMMARY, *data[-3:]]
        rewrite_in_place(path, b"".join(new))
        ev = f.poll()
        assert kinds(ev) == ["Compacted", "Appended"]
        assert ev[0] == Compacted(path.stat().st_size, ("summary",), 10, 5, False)
        assert ev[1].lines() == new and f.lines == 5


def test_a_compaction_seen_mid_write_waits_for_its_marker_line(path):
    clock = Clock()
    data = path.read_bytes().splitlines(keepends=True)
    new = b"".join([data[0], SUMMARY, *data[-2:]])
    with Follower(path, clock=clock, grace=0.5) as f:
        f.poll()
        with open(path, "r+b") as fh:
            fh.truncate(0)
        assert f.poll() == []
        clock.now += 0.1
        cut = len(data[0]) + 30  # inside the marker line
        with open(path, "r+b") as fh:
            fh.write(new[:cut])
        assert f.poll() == []  # other content, ending inside a line: the writer is not done
        clock.now += 0.1
        with open(path, "r+b") as fh:
            fh.write(new)
        ev = f.poll()
        assert kinds(ev) == ["Compacted", "Appended"]
        assert ev[0].markers == ("summary",) and ev[0].before == 10 and ev[0].after == 4


def test_tool_results_and_sliding_window_markers_are_named_once_each(path):
    data = path.read_bytes().splitlines(keepends=True)
    with Follower(path) as f:
        f.poll()
        tr = [msg("tool", "[compacted:tool_results] Result dropped to free context.", tool_call_id=f"tc{i}") for i in range(3)]
        sw = msg("user", "[compacted:sliding_window] 4 earlier messages were dropped to free context.")
        rewrite_in_place(path, b"".join([sw, *tr, data[-1]]))
        ev = f.poll()
        assert ev[0] == Compacted(path.stat().st_size, ("sliding_window", "tool_results"), 10, 5, False)


def test_shrinking_to_a_prefix_with_an_old_marker_is_truncated(tmp_path):
    clock = Clock()
    p = tmp_path / "s.jsonl"
    data = [msg("system", "sys"), SUMMARY, *lines(6)]
    p.write_bytes(b"".join(data))
    with Follower(p, clock=clock) as f:
        f.poll()
        with open(p, "r+b") as fh:
            fh.truncate(len(data[0]) + len(data[1]) + len(data[2]))
        assert f.poll() == []
        clock.now += 1
        ev = f.poll()
        assert kinds(ev) == ["Truncated", "Appended"] and ev[0].reason == "shrank"


def test_a_rewrite_that_keeps_the_old_summary_and_drops_lines_is_truncated(tmp_path):
    p = tmp_path / "s.jsonl"
    data = [msg("system", "sys"), SUMMARY, *lines(6)]
    p.write_bytes(b"".join(data))
    with Follower(p, offset=len(b"".join(data))) as f:
        assert f.lines == 8
        rewrite_in_place(p, b"".join([data[1], *data[4:]]))  # the old marker, other lines gone
        assert kinds(f.poll())[0] == "Truncated"
        # and a new summary later is a compaction again, counted from what is shown now
        rewrite_in_place(p, b"".join([msg("system", "sys"), msg("user", "[compacted:summary] second"), data[-1]]))
        ev = f.poll()
        assert kinds(ev)[0] == "Compacted" and ev[0].before == 5 and ev[0].after == 3


def test_marker_text_that_is_not_a_marker_message_is_truncated(path):
    with Follower(path) as f:
        f.poll()
        rewrite_in_place(
            path,
            msg("user", "what does [compacted:summary] mean?")
            + msg("assistant", "", tool_calls=[{"id": "t", "name": "fs_write", "arguments": {"content": "[compacted:summary] x"}}])
            + b'{"role":"user","content":"[compacted:summary] but the key order is not Brute\'s"}\n'.replace(b'"role":"user","content"', b'"content"')
            + msg("tool", "{\"content\":\"[compacted:summary]\"}", tool_call_id="t"),
        )
        assert kinds(f.poll())[0] == "Truncated"


def test_a_compaction_by_rename_is_compacted_and_replaced(path):
    data = path.read_bytes().splitlines(keepends=True)
    with Follower(path) as f:
        f.poll()
        rename_over(path, SUMMARY + data[-1])
        ev = f.poll()
        assert ev[0] == Compacted(path.stat().st_size, ("summary",), 10, 2, True)


def test_markers_in_a_prefix_given_at_start_are_known(tmp_path, monkeypatch):
    monkeypatch.setattr(tail, "CHUNK", 7)  # the needle split over reading pieces
    p = tmp_path / "s.jsonl"
    data = [msg("system", "sys"), SUMMARY, *lines(3)]
    p.write_bytes(b"".join(data))
    clock = Clock()
    with Follower(p, offset=len(b"".join(data)), verify_limit=10, window=8, clock=clock) as f:
        assert list(f._markers.values()) == ["summary"] and f.lines == 5
        with open(p, "r+b") as fh:
            fh.truncate(len(b"".join(data[:3])))
        assert f.poll() == []
        clock.now += 1
        assert kinds(f.poll()) == ["Truncated", "Appended"]  # the summary was there before

def test_after_a_huge_offset_any_marker_counts_as_new(tmp_path, monkeypatch):
    monkeypatch.setattr(tail, "SCAN_LIMIT", 100)
    p = tmp_path / "s.jsonl"
    data = [msg("system", "sys"), SUMMARY, *lines(6)]
    p.write_bytes(b"".join(data))
    with Follower(p, offset=len(b"".join(data))) as f:
        rewrite_in_place(p, b"".join([SUMMARY, data[-1]]))
        ev = f.poll()
        assert ev[0] == Compacted(p.stat().st_size, ("summary",), None, 2, False)


def test_compacted_reports_after_as_unknown_when_not_all_read(path):
    with Follower(path, max_read=len(SUMMARY) + 10) as f:
        while f.poll():
            pass
        rewrite_in_place(path, SUMMARY + b"".join(lines(5)))
        ev = f.poll()
        assert isinstance(ev[0], Compacted) and ev[0].after is None and ev[0].before == 10


def test_a_compaction_that_ends_inside_a_line_is_compacted_after_grace(path):
    clock = Clock()
    with Follower(path, clock=clock, grace=0.5) as f:
        f.poll()
        rewrite_in_place(path, SUMMARY + b'{"role":"user","content":"typing')
        assert f.poll() == []
        clock.now += 0.6
        ev = f.poll()
        assert kinds(ev) == ["Compacted", "Appended", "Pending"]
        assert ev[0].after == 1 and ev[2].size == len(b'{"role":"user","content":"typing')


def test_the_model_reads_the_adopted_file_also_after_its_index_is_attached(tmp_path):
    """After a rename-append the model reads the new file, even with a full index built from the old one."""
    from sessionview.core.doc.document import open_regular
    from sessionview.core.tail_open import full_index
    from sessionview.core.view.transcript import TranscriptModel

    p = tmp_path / "s.jsonl"
    data = b"".join(lines(40))
    p.write_bytes(data)
    model = TranscriptModel.open(str(p), tail_count=5)
    try:
        assert not model.indexed
        full = full_index(model.tail.fd, model.tail.end)  # the index worker, on the old file
        with Follower(p, fd=os.dup(model.tail.fd), offset=model.end) as f:
            rename_over(p, data + msg("user", "in the new file"))
            renamed, added = f.poll()
        assert isinstance(renamed, Renamed)
        model.adopt(open_regular(p))
        model.append(added)
        assert model.view(len(model)).text == "in the new file"
        model.attach_index(full)
        assert len(model) == 41 and model.view(41).text == "in the new file" and model.view(1).text == "message 1"
    finally:
        model.close()


def test_lines_too_big_to_keep_still_feed_the_hash_and_the_markers(path, monkeypatch):
    monkeypatch.setattr(tail, "DATA_LIMIT", 10)
    monkeypatch.setattr(tail, "CHUNK", 16)
    with Follower(path, verify_limit=100, window=32) as f:
        f.poll()
        with open(path, "ab") as fh:
            fh.write(b'{"role":"user","content":"a pending start')
        f.poll()
        with open(path, "ab") as fh:
            fh.write(b'"}\n' + SUMMARY)
        (a, _) = f.poll()
        assert a.data is None and list(f._markers.values()) == ["summary"]
        shown = path.read_bytes()
        rename_over(path, shown + msg("user", "x"))
        assert kinds(f.poll()) == ["Renamed", "Appended"]
        rename_over(path, shown[:-5] + b"#" * 4 + b"\n")  # the summary line changed: a new marker line
        assert kinds(f.poll())[0] == "Compacted"
