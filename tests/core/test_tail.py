"""The follower: appends, partial lines, Brute rewrites, truncation, replacement, deletion; end-first open."""

from __future__ import annotations

import os

import pytest

from sessionview.core import tail
from sessionview.core.doc.document import Document
from sessionview.core.tail import (
    Appended,
    Deleted,
    Follower,
    Pending,
    Truncated,
)
from sessionview.core.tail_open import complete_end, full_index, grow, open_tail


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def write(path, data: bytes, mode: str = "wb") -> None:
    with open(path, mode) as f:
        f.write(data)


def append(path, data: bytes) -> None:
    write(path, data, "ab")


def rewrite_in_place(path, data: bytes) -> None:
    """Brute's SessionLog: File.open(path, "w") truncates the same inode, then writes."""
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(data)


def appended(events) -> list[bytes]:
    return [line for e in events if isinstance(e, Appended) for line in e.lines()]


def kinds(events) -> list[str]:
    return [type(e).__name__ for e in events]


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, b'{"role":"user","content":"hi"}\n')
    return p


def test_first_poll_reports_existing_lines_then_nothing(path):
    with Follower(path) as f:
        ev = f.poll()
        assert appended(ev) == [b'{"role":"user","content":"hi"}\n']
        assert f.offset == path.stat().st_size
        assert f.poll() == []


def test_start_at_offset_reports_only_new_lines(path):
    size = path.stat().st_size
    with Follower(path, offset=size) as f:
        assert f.poll() == []
        append(path, b'{"role":"assistant","content":"yo"}\n{"role":"user","content":"x"}\n')
        ev = f.poll()
        assert kinds(ev) == ["Appended"]
        (a,) = ev
        assert a.starts[0] == size and a.count == 2 and a.end == path.stat().st_size
        assert a.lines() == [b'{"role":"assistant","content":"yo"}\n', b'{"role":"user","content":"x"}\n']
        assert not a.rewritten


def test_partial_line_is_pending_until_its_newline(path):
    size = path.stat().st_size
    with Follower(path, offset=size) as f:
        append(path, b'{"role":"assis')
        ev = f.poll()
        assert ev == [Pending(size, 14, b'{"role":"assis')]
        assert f.offset == size and f.pending == 14
        append(path, b'tant","content":')
        ev = f.poll()
        assert kinds(ev) == ["Pending"] and ev[0].size == 30
        append(path, b'"done"}\n{"role":"us')
        ev = f.poll()
        assert kinds(ev) == ["Appended", "Pending"]
        assert ev[0].lines() == [b'{"role":"assistant","content":"done"}\n']
        assert ev[1].size == len(b'{"role":"us') and ev[1].offset == ev[0].end
        append(path, b'er"}\n')
        ev = f.poll()
        assert kinds(ev) == ["Appended", "Pending"]
        assert ev[1] == Pending(path.stat().st_size, 0, b"")
        assert f.pending == 0


def test_crlf_and_blank_lines_are_lines(path):
    size = path.stat().st_size
    with Follower(path, offset=size) as f:
        append(path, b'{"a":1}\r\n\n{"b":2}\n')
        assert appended(f.poll()) == [b'{"a":1}\r\n', b"\n", b'{"b":2}\n']


def test_pending_preview_is_bounded(path):
    size = path.stat().st_size
    with Follower(path, offset=size) as f:
        append(path, b"x" * 100_000)
        (p,) = f.poll()
        assert p.size == 100_000 and len(p.preview) == tail.PREVIEW


def test_brute_rewrite_observed_mid_way_is_an_append(path, tmp_path):
    clock = Clock()
    lines = [b'{"role":"user","content":"hi"}\n', b'{"role":"assistant","content":"hello"}\n']
    write(path, b"".join(lines))
    with Follower(path, clock=clock) as f:
        assert appended(f.poll()) == lines
        ino = path.stat().st_ino
        # truncate: the follower sees an empty file and waits
        with open(path, "r+b") as fh:
            fh.truncate(0)
        assert f.poll() == []
        clock.now += 0.1
        # part of the rewrite has landed: still a prefix, keep waiting
        write_pos = lines[0] + lines[1][:10]
        with open(path, "r+b") as fh:
            fh.write(write_pos)
        assert f.poll() == []
        clock.now += 0.1
        # the rewrite ends with one new message: only that one is reported
        new = b'{"role":"user","content":"next"}\n'
        with open(path, "r+b") as fh:
            fh.write(b"".join(lines) + new)
        assert path.stat().st_ino == ino
        ev = f.poll()
        assert kinds(ev) == ["Appended"]
        assert ev[0].lines() == [new] and ev[0].rewritten


def test_brute_rewrite_between_polls_is_an_append(path):
    old = path.read_bytes()
    with Follower(path) as f:
        f.poll()
        rewrite_in_place(path, old + b'{"role":"assistant","content":"more"}\n')
        ev = f.poll()
        assert kinds(ev) == ["Appended"] and ev[0].lines() == [b'{"role":"assistant","content":"more"}\n']


def test_identical_rewrite_reports_nothing(path):
    clock = Clock()
    old = path.read_bytes()
    with Follower(path, clock=clock) as f:
        f.poll()
        with open(path, "r+b") as fh:
            fh.truncate(0)
        assert f.poll() == []
        clock.now += 0.05
        rewrite_in_place(path, old)
        assert f.poll() == []
        clock.now += 10
        assert f.poll() == []


def test_shrink_to_a_prefix_becomes_truncated_after_grace(path):
    clock = Clock()
    first = b'{"role":"user","content":"hi"}\n'
    append(path, b'{"role":"assistant","content":"gone soon"}\n')
    with Follower(path, clock=clock, grace=0.5) as f:
        assert len(appended(f.poll())) == 2
        with open(path, "r+b") as fh:
            fh.truncate(len(first))
        assert f.poll() == []
        clock.now += 0.2
        assert f.poll() == []
        clock.now += 0.4
        ev = f.poll()
        assert kinds(ev) == ["Truncated", "Appended"]
        assert ev[0] == Truncated(len(first), "shrank")
        assert ev[1].lines() == [first]
        assert f.poll() == []
        append(path, b'{"role":"user","content":"after"}\n')
        assert appended(f.poll()) == [b'{"role":"user","content":"after"}\n']


def test_shrink_to_other_content_is_truncated_at_once(path):
    append(path, b'{"role":"assistant","content":"a long answer that will go"}\n')
    with Follower(path, clock=Clock()) as f:
        f.poll()
        rewrite_in_place(path, b'{"role":"user","content":"other"}\n')
        ev = f.poll()
        assert kinds(ev) == ["Truncated", "Appended"]
        assert ev[0].reason == "rewritten"
        assert ev[1].lines() == [b'{"role":"user","content":"other"}\n']


def test_rewrite_with_other_content_that_grew_is_truncated(path):
    with Follower(path) as f:
        f.poll()
        rewrite_in_place(path, b'{"role":"user","content":"HI"}\n{"role":"assistant","content":"new"}\n')
        ev = f.poll()
        assert kinds(ev) == ["Truncated", "Appended"] and ev[0].reason == "rewritten"
        assert ev[1].count == 2 and ev[1].starts[0] == 0


def test_mid_rewrite_that_diverges_is_truncated_after_grace(path):
    clock = Clock()
    with Follower(path, clock=clock, grace=0.5) as f:
        f.poll()
        rewrite_in_place(path, b'{"role":"sys')
        # other content that ends inside a line: the writer is probably not done, wait for it
        assert f.poll() == []
        clock.now += 0.6
        ev = f.poll()
        assert kinds(ev) == ["Truncated", "Pending"]
        assert ev[1].size == len(b'{"role":"sys')


def test_large_prefix_uses_head_and_tail_windows(tmp_path):
    p = tmp_path / "big.jsonl"
    line = b'{"role":"tool","content":"' + b"y" * 200 + b'"}\n'
    write(p, line * 100)
    with Follower(p, verify_limit=1000, window=256, clock=Clock()) as f:
        assert len(appended(f.poll())) == 100
        assert f._shown is None and len(f._head) == 256 and len(f._tail) == 256
        # an append keeps the windows valid
        append(p, b'{"role":"user","content":"x"}\n')
        assert appended(f.poll()) == [b'{"role":"user","content":"x"}\n']
        # a rewrite that changes the last reported line is caught by the tail window
        data = p.read_bytes()
        rewrite_in_place(p, data[:-40] + b"Z" * 39 + b"\n" + b'{"role":"user","content":"y"}\n')
        ev = f.poll()
        assert kinds(ev)[0] == "Truncated"


def test_offset_beyond_verify_limit_at_start(tmp_path):
    p = tmp_path / "big.jsonl"
    write(p, b'{"n":1}\n' * 1000)
    size = p.stat().st_size
    with Follower(p, offset=size, verify_limit=100, window=64) as f:
        assert f._shown is None
        assert f.poll() == []
        append(p, b'{"n":2}\n')
        assert appended(f.poll()) == [b'{"n":2}\n']


def test_replaced_by_atomic_rename_then_follows_new_file(path, tmp_path):
    with Follower(path) as f:
        f.poll()
        new = tmp_path / "tmp.jsonl"
        write(new, b'{"role":"user","content":"fresh"}\n{"role":"assis')
        os.replace(new, path)
        ev = f.poll()
        assert kinds(ev) == ["Replaced", "Appended", "Pending"]
        assert ev[1].lines() == [b'{"role":"user","content":"fresh"}\n']
        append(path, b'tant","content":"ok"}\n')
        ev = f.poll()
        assert ev[0].lines() == [b'{"role":"assistant","content":"ok"}\n']


def test_deleted_keeps_old_bytes_readable_and_recreation_is_replaced(path):
    data = path.read_bytes()
    with Follower(path) as f:
        f.poll()
        path.unlink()
        assert f.poll() == [Deleted()]
        assert f.poll() == []
        assert f.deleted
        assert f.read(0, len(data)) == data
        write(path, b'{"role":"user","content":"again"}\n')
        ev = f.poll()
        assert kinds(ev) == ["Replaced", "Appended"]
        assert ev[0].reason == "deleted and created again"
        assert not f.deleted


def test_rotation_rename_away_and_new_file(path, tmp_path):
    with Follower(path) as f:
        f.poll()
        os.rename(path, tmp_path / "s.jsonl.1")
        assert kinds(f.poll()) == ["Deleted"]
        write(path, b"")
        assert kinds(f.poll()) == ["Replaced"]
        append(path, b'{"a":1}\n')
        assert appended(f.poll()) == [b'{"a":1}\n']


def test_max_read_splits_a_big_append_over_polls(path):
    size = path.stat().st_size
    with Follower(path, offset=size, max_read=100) as f:
        append(path, b'{"n":"' + b"a" * 40 + b'"}\n' * 1 + b'{"n":"' + b"b" * 40 + b'"}\n' + b'{"n":"' + b"c" * 40 + b'"}\n')
        got = []
        for _ in range(5):
            got += appended(f.poll())
        assert [g[6:7] for g in got] == [b"a", b"b", b"c"]
        assert f.offset == path.stat().st_size and f.poll() == []


def test_appended_data_dropped_when_too_big(path, monkeypatch):
    monkeypatch.setattr(tail, "DATA_LIMIT", 10)
    size = path.stat().st_size
    with Follower(path, offset=size) as f:
        append(path, b'{"a":"0123456789"}\n')
        (a,) = f.poll()
        assert a.data is None and a.count == 1
        with pytest.raises(ValueError):
            a.lines()
        # verification still works: the bytes were read for it
        append(path, b'{"b":1}\n')
        assert appended(f.poll()) == [b'{"b":1}\n']


def test_unchanged_file_is_not_read(path, monkeypatch):
    with Follower(path) as f:
        f.poll()
        reads = []
        orig = f._read
        f._read = lambda o, n: reads.append((o, n)) or orig(o, n)
        for _ in range(10):
            assert f.poll() == []
        assert reads == []


def test_not_a_regular_file_anymore_counts_as_deleted(path):
    with Follower(path) as f:
        f.poll()
        path.unlink()
        path.mkdir()
        assert f.poll() == [Deleted()]


# -- end-first open -------------------------------------------------------------------------------
def make_lines(n: int) -> list[bytes]:
    return [b'{"role":"user","content":"m%d"}\n' % i for i in range(n)]


def test_complete_end():
    data = b"a\nbb\nccc"
    read = lambda o, n: data[o : o + n]  # noqa: E731
    assert complete_end(read, len(data)) == 5
    assert complete_end(read, 2) == 2
    assert complete_end(lambda o, n: b"x" * n, 10, step=3) == 0


def test_open_tail_indexes_only_the_last_lines(tmp_path):
    p = tmp_path / "s.jsonl"
    lines = make_lines(1000)
    write(p, b"".join(lines) + b'{"role":"par')
    t = open_tail(p, count=10)
    try:
        assert not t.whole
        assert t.source.count == 10
        doc = Document(t.source)
        assert [r.data for r in doc] == lines[-10:]
        assert t.end == sum(map(len, lines)) and t.size == t.end + len(b'{"role":"par')
        assert doc.record(1).start == sum(map(len, lines[:-10]))
        full = full_index(t.fd, t.end)
        assert full.count == 1000
        base = full.count - t.source.count
        assert Document(full).record(base + 1).raw == doc.record(1).raw
    finally:
        t.close()


def test_open_tail_small_file_is_whole_with_bom(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, b"\xef\xbb\xbf" + b"".join(make_lines(3)))
    t = open_tail(p, count=10)
    try:
        assert t.whole and t.source.count == 3 and t.source.bom == b"\xef\xbb\xbf"
        assert Document(t.source).to_bytes() == p.read_bytes()
    finally:
        t.close()


def test_open_tail_empty_and_partial_only(tmp_path):
    p = tmp_path / "e.jsonl"
    write(p, b"")
    t = open_tail(p)
    assert t.whole and t.source.count == 0 and t.end == 0
    t.close()
    write(p, b'{"no newline"')
    t = open_tail(p)
    assert t.whole and t.source.count == 0 and t.end == 0 and t.size == 13
    t.close()


def test_grow_matches_a_fresh_load(tmp_path):
    p = tmp_path / "s.jsonl"
    write(p, b"".join(make_lines(5)))
    t = open_tail(p, count=3)
    with Follower(p, fd=os.dup(t.fd), offset=t.end) as f:
        src = t.source
        old_doc = Document(src)
        append(p, b"".join(make_lines(3)))
        (a,) = f.poll()
        src2 = grow(src, a.starts, a.end)
        assert src2.count == 6 and src2.size == p.stat().st_size
        assert [r.data for r in Document(src2)] == make_lines(5)[-3:] + make_lines(3)
        # the older source still reads its own lines
        assert [r.data for r in old_doc] == make_lines(5)[-3:]
        full = grow(full_index(t.fd, t.end), a.starts, a.end)
        assert Document(full).to_bytes() == Document.load(p).to_bytes()
        with pytest.raises(ValueError):
            grow(src, (1,), 5)
    t.close()


def test_open_tail_with_a_scan_limit(tmp_path):
    from sessionview.core.doc.linescan import ScanLimit, tail_line_starts

    p = tmp_path / "s.jsonl"
    write(p, b"".join(make_lines(50)) + b'{"x":"' + b"y" * 5000 + b'"}\n')
    with pytest.raises(ScanLimit):
        open_tail(p, count=10, max_scan=1000)
    t = open_tail(p, count=10, max_scan=1 << 20)
    assert t.source.count == 10
    t.close()
    write(p, b"z" * 10_000)  # no newline at all
    with pytest.raises(ScanLimit):
        open_tail(p, max_scan=1000)
    data = b"".join(make_lines(7))
    read = lambda o, n: data[o : o + n]  # noqa: E731
    assert tail_line_starts(read, 0, len(data), 3, max_scan=1 << 20) == tail_line_starts(read, 0, len(data), 3)
    assert tail_line_starts(read, 0, len(data), 100, max_scan=1 << 20)[0] == 0


@pytest.mark.parametrize(
    "data",
    [b"", b"a", b"\n", b"a\n", b"a\nb", b"a\nb\n", b"\n\n\n", b"\xef\xbb\xbfx\ny\n", b"\xef\xbb\xbf", b"x" * 10 + b"\n" + b"y" * 7],
)
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_full_index_matches_the_document_index(tmp_path, data, chunk, monkeypatch):
    import sessionview.core.doc.linescan as linescan
    from sessionview.core.doc.document import Source

    monkeypatch.setattr(linescan, "CHUNK", chunk)  # exercise lines across chunk boundaries

    p = tmp_path / "x"
    p.write_bytes(data)
    end = complete_end(lambda o, n: data[o : o + n], len(data))
    fd = os.open(p, os.O_RDONLY)
    try:
        got = full_index(fd, end)
        want = Source.from_bytes(data[:end])
        assert list(got.starts) == list(want.starts) and got.bom == want.bom and got.size == end
    finally:
        os.close(fd)
