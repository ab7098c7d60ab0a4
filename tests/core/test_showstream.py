"""``show`` of a big file (``core/view/showstream.py``): one process or two, the same bytes as the views give,
with small blocks so that the second process's blocks, holes and views are all exercised; a child that fails
is made up for; a child is never left behind."""

from __future__ import annotations

import glob
import os
import random

import pytest

from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.doc.model import iter_merged
from sessionview.core import streamview
from sessionview.core.streamview import open_stream
from sessionview.core.view import render, showpipe, showstream
from sessionview.core.view.showstream import ShowStream

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")
SPOILERS = [
    b"",
    b"{oops",
    b'{"role":"user","content":"a","content":"b"}',
    b'{"role":"assistant","content":"\\u001b[31m","tool_calls":[{"id":"x1","name":"shell","arguments":{"n":123456789012345678901234567890}}]}',
    b'{"role":"user","content":NaN}',
    b'{"role":"tool","tool_call_id":"tc_01","content":"\\u202eevil\\u0007 \\u00ad\\ufeff"}',
    b'{"role":"user","content":"\xff\xfe not utf-8"}',
    b'{"role":"user","content":"crlf"}\r',
    b'{"role":"assistant","content":null,"tool_calls":[{"id":"dup","name":"a"},{"id":"dup","name":"b","arguments":null}]}',
    b'{"role":"tool","tool_call_id":"dup","content":"[compacted:tool_results] gone"}',
    b'{"role":"tool","tool_call_id":"dup","content":"again"}',
    b"[1,2,3]",
    b'{"role":"user","content":"' + b"x" * 5000 + b'"}',  # over the cap of some tests
]


def _hostile_file(tmp_path, seed=14, lines=400):
    rng = random.Random(seed)
    pool = []
    for name in ("brute-session.jsonl", "roundtrip-edge-cases.jsonl"):
        with open(os.path.join(FIX, name), "rb") as f:
            pool += f.read().splitlines()
    head = open(os.path.join(FIX, "brute-session.jsonl"), "rb").read()  # Brute is detected from it
    body = [rng.choice(pool) if rng.random() < 0.8 else rng.choice(SPOILERS) for _ in range(lines)]
    p = tmp_path / "big.jsonl"
    p.write_bytes(head + b"\n".join(body) + b'\n{"role":"user","content":"unterminated')
    return str(p)


def _reference(path, json=False):
    """What the views give, printed as ``show`` printed them before it rendered from bytes."""
    stream = open_stream(path)
    pairing = render.RunningPairing()
    out = []
    for view in iter_merged(stream.views()):
        if json:
            out.append(render.view_json(view) + "\n")
        else:
            pairing.see(view)
            out.append("\n" + render.view_text(view, pairing) + "\n")
    stream.close()
    return "".join(out).encode("utf-8", "backslashreplace"), stream.count


def _shown(path, workers, json=False, printers=None):
    stream = open_stream(path)
    printer = ShowStream(stream, json=json, workers=workers)
    if printers is not None:
        printers.append(printer)
    try:
        data = b"".join(printer.blocks())
    finally:
        printer.close()
        stream.close()
    if stream.format == "brute":
        assert printer.messages == printer.shown == printer.count
        assert (printer.split is not None) == (workers == 2 and printer.count > 30), "two processes"
    return data, printer.count


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(streamview, "CHUNK", 256)  # the format is detected within the first reads, not the whole file
    monkeypatch.setattr(showstream, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(showstream, "BLOCK", 300)


@pytest.mark.parametrize("json", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_or_two_processes_print_what_the_views_give(tmp_path, small_blocks, seed, json):
    path = _hostile_file(tmp_path, seed)
    want = _reference(path, json)
    assert _shown(path, 1, json) == want
    assert _shown(path, 2, json) == want


def test_blocks_that_need_the_first_half_are_rendered_again(tmp_path, small_blocks):
    """Unique call ids: the child's blocks are printed as they are; an id of the first half used again in the
    second (a result of an early call, a call id used twice): that block is rendered again here."""
    head = open(os.path.join(FIX, "brute-session.jsonl"), "rb").read()
    body = []
    for i in range(300):  # calls with unique ids, no results: nothing of the second half links to the first
        body.append(b'{"role":"assistant","content":"","tool_calls":[{"id":"c%d","name":"shell","arguments":{"command":"ls"}}]}' % i)
        body.append(b'{"role":"user","content":"next"}')
    p = tmp_path / "unique.jsonl"
    p.write_bytes(head + b"\n".join(body) + b"\n")
    printers: list = []
    assert _shown(str(p), 2, printers=printers) == _reference(str(p))
    assert printers[0].relayed > 0 and printers[0].redone == 0
    redone = 0
    body[-1] = b'{"role":"tool","content":"late","tool_call_id":"c3"}'  # answers a call of the first half
    body[-4] = b'{"role":"assistant","content":"","tool_calls":[{"id":"c4","name":"again"}]}'  # an id used again
    p.write_bytes(head + b"\n".join(body) + b"\n")
    printers.clear()
    assert _shown(str(p), 2, printers=printers) == _reference(str(p))
    assert printers[0].relayed > 0 and printers[0].redone > redone


def test_a_block_rendered_again_knows_the_calls_of_the_blocks_relayed_before_it(tmp_path, small_blocks):
    """The logs of the blocks printed as the child wrote them are replayed before a block is rendered here
    again: its result of a call the child saw (c250) names that call, next to one of the first half (c3)."""
    head = open(os.path.join(FIX, "brute-session.jsonl"), "rb").read()
    body = []
    for i in range(300):
        body.append(b'{"role":"assistant","content":"","tool_calls":[{"id":"c%d","name":"shell","arguments":{"command":"ls"}}]}' % i)
        body.append(b'{"role":"user","content":"next"}')
    big = b"y" * 400  # over BLOCK: a block ends after each such record
    body += [
        b'{"role":"user","content":"%s"}' % big,
        b'{"role":"tool","content":"mid","tool_call_id":"c250"}',  # starts a block ...
        b'{"role":"tool","content":"late %s","tool_call_id":"c3"}' % big,  # ... which this ends
        b'{"role":"user","content":"done"}',
    ]
    p = tmp_path / "late.jsonl"
    p.write_bytes(head + b"\n".join(body) + b"\n")
    printers: list = []
    data, count = _shown(str(p), 2, printers=printers)
    assert (data, count) == _reference(str(p))
    assert printers[0].relayed > 0 and printers[0].redone == 1
    assert b"<- result of c250 shell from #" in data


@pytest.mark.parametrize("workers", [1, 2])
def test_a_bom_crlf_lines_and_bad_records_inside_blocks(tmp_path, small_blocks, workers):
    """A file that starts with a BOM and ends its lines with CRLF, with, inside blocks, a control character, a
    record that is not sure (a duplicate key), a line that is not JSON and an empty one: what the views give."""
    head = open(os.path.join(FIX, "brute-session.jsonl"), "rb").read().splitlines()
    body = []
    for i in range(120):
        body.append(b'{"role":"user","content":"line %d\\n\\nnext"}' % i)
        if i % 17 == 5:
            body.append(b'{"role":"tool","tool_call_id":"c%d","content":"a\\u001b[31mred\\u0007 \\u202e"}' % i)
        if i % 23 == 7:
            body.append(b'{"role":"user","content":"a","content":"dup %d"}' % i)
        if i % 29 == 11:
            body += [b"{not json", b""]
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(head + body) + b"\r\n")
    assert open_stream(str(p)).format == "brute"
    assert _shown(str(p), workers) == _reference(str(p))


@pytest.mark.parametrize("split", [0.01, 0.3, 0.99])
def test_any_split_point(tmp_path, small_blocks, monkeypatch, split):
    monkeypatch.setattr(showstream, "SPLIT", split)
    path = _hostile_file(tmp_path)
    assert _shown(path, 2) == _reference(path)


def test_every_fixture_in_two_processes(small_blocks):
    for path in sorted(glob.glob(os.path.join(FIX, "**", "*.jsonl"), recursive=True)):
        stream = open_stream(path)
        if stream is None:
            continue
        stream.close()
        assert _shown(path, 2) == _reference(path), path


@pytest.mark.parametrize("fails", ["pipe", "fork"])
def test_no_pipe_or_process_to_be_had_prints_it_all_here_and_leaves_no_descriptor(tmp_path, small_blocks, monkeypatch, fails):
    path = _hostile_file(tmp_path)
    want = _reference(path)

    def refuse(*args):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(showstream.os, fails, refuse)
    before = len(os.listdir("/proc/self/fd"))
    stream = open_stream(path)
    printer = ShowStream(stream, workers=2)
    try:
        data = b"".join(printer.blocks())
    finally:
        printer.close()
        stream.close()
    assert (data, printer.count) == want and printer.split is None
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_child_that_dies_is_made_up_for(tmp_path, small_blocks, monkeypatch):
    path = _hostile_file(tmp_path)
    want = _reference(path)

    def dies(self, mid, w, out, relayed):
        os._exit(3)

    monkeypatch.setattr(ShowStream, "_child_main", dies)
    assert _shown(path, 2) == want


def test_a_child_that_fails_half_way_is_made_up_for(tmp_path, small_blocks, monkeypatch):
    path = _hostile_file(tmp_path)
    want = _reference(path)
    real = showpipe.Frames.write
    frames = []

    def fails(self, kind, *rest):
        frames.append(kind)
        if len(frames) == 3:
            os.pwrite(self.out, b"half a block", self.off)
            raise OSError(28, "No space left on device")
        real(self, kind, *rest)

    monkeypatch.setattr(showpipe.Frames, "write", fails)
    assert _shown(path, 2) == want


def test_a_changed_file_seen_by_the_child_is_an_error(tmp_path, small_blocks, monkeypatch):
    path = _hostile_file(tmp_path)
    monkeypatch.setattr(showpipe, "count_lines", lambda fd, end: (_ for _ in ()).throw(SourceChanged("shrank")))
    with pytest.raises(SourceChanged):
        _shown(path, 2)


def test_the_child_must_start_where_the_parent_stops(tmp_path, small_blocks, monkeypatch):
    path = _hostile_file(tmp_path)
    real = showpipe.count_lines
    monkeypatch.setattr(showpipe, "count_lines", lambda fd, end: real(fd, end) + 1)
    with pytest.raises(SourceChanged):
        _shown(path, 2)


def test_closing_early_ends_the_child(tmp_path, small_blocks):
    path = _hostile_file(tmp_path, lines=2000)
    stream = open_stream(path)
    printer = ShowStream(stream, workers=2)
    blocks = printer.blocks()
    for _ in range(4):
        next(blocks)
    assert printer._child is not None
    pid = printer._child[0]
    blocks.close()  # as when the reader of a pipe goes away
    stream.close()
    assert printer._child is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: not ours any more, not a zombie


@pytest.mark.parametrize("memory", [0, 1 << 40])
def test_the_childs_output_in_memory_or_in_a_temporary_file(tmp_path, small_blocks, monkeypatch, memory):
    """Little memory available: the child writes an unlinked temporary file instead of a memfd; either way
    the same bytes (and no file is left in the temporary directory)."""
    monkeypatch.setattr(showpipe, "available_memory", lambda: memory)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    made = []
    real = showpipe.scratch

    def scratch_file(size):
        fd = real(size)
        made.append(os.readlink(f"/proc/self/fd/{fd}"))
        return fd

    monkeypatch.setattr(showpipe, "scratch", scratch_file)
    path = _hostile_file(tmp_path)
    assert _shown(path, 2) == _reference(path)
    assert len(made) == 1
    if memory:
        assert made[0].startswith("/memfd:sessionview-show")
    else:
        assert made[0].startswith(str(scratch) + "/") and made[0].endswith("(deleted)")
    assert os.listdir(scratch) == []


def test_available_memory_is_read_from_meminfo():
    assert showpipe.available_memory() > 0 if os.path.exists("/proc/meminfo") else True


@pytest.mark.parametrize("mapped", [True, False])
def test_lines_are_counted_with_or_without_a_map(tmp_path, monkeypatch, mapped):
    data = b"".join(random.Random(5).choice([b"a\n", b"\n", b"bb", b"\r\n", b"x" * 70000 + b"\n"]) for _ in range(400))
    p = tmp_path / "lines"
    p.write_bytes(data)
    monkeypatch.setattr(showpipe, "WINDOW", showpipe.mmap.ALLOCATIONGRANULARITY)  # many windows
    if not mapped:
        monkeypatch.setattr(showpipe.mmap, "mmap", lambda *a, **k: (_ for _ in ()).throw(OSError(12, "no map")))
    fd = os.open(p, os.O_RDONLY)
    try:
        for end in (1, len(data) // 3, len(data) - 1, len(data)):
            assert showpipe.count_lines(fd, end) == data[:end].count(b"\n")
    finally:
        os.close(fd)


def _paged_file(tmp_path, late_result):
    """Records of about 1.5 KB with unique call ids, in blocks of 16 pages; ``late_result``: the last
    record answers a call of the first half (its block is rendered again here, after the logs of every block
    relayed before it are replayed, the pages of those blocks freed meanwhile)."""
    head = open(os.path.join(FIX, "brute-session.jsonl"), "rb").read()
    text = b"word " * 300
    body = []
    for i in range(1200):
        body.append(b'{"role":"assistant","content":"%s","tool_calls":[{"id":"c%d","name":"shell","arguments":{"n":%d}}]}' % (text, i, i))
    if late_result:
        body.append(b'{"role":"tool","content":"late","tool_call_id":"c3"}')
    p = tmp_path / "paged.jsonl"
    p.write_bytes(head + b"\n".join(body) + b"\n")
    return str(p)


@pytest.mark.parametrize("late_result", [False, True])
def test_the_child_frees_the_pages_of_the_blocks_printed(tmp_path, monkeypatch, late_result):
    """The child, once done, frees the pages of each block the parent says it printed: at the end its file
    holds the logs and little else (the parent does not free the whole output at its end). Its logs, read
    after, are left whole. Without the freeing the file holds every block."""
    monkeypatch.setattr(streamview, "CHUNK", 4096)
    monkeypatch.setattr(showstream, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(showstream, "BLOCK", 16 * showpipe.mmap.PAGESIZE)
    path = _paged_file(tmp_path, late_result)
    want = _reference(path)
    printers: list = []
    assert _shown(path, 2, printers=printers) == want
    kept = printers[0].left
    assert printers[0].relayed > 10 and printers[0].redone == int(late_result)
    monkeypatch.setattr(showpipe, "free_relayed", lambda *args: None)
    printers.clear()
    assert _shown(path, 2, printers=printers) == want
    whole = printers[0].left
    assert whole > 800_000  # the child's half of about 1.8 MB of output
    assert kept < whole / 4


@pytest.mark.timeout(60)
def test_a_child_still_rendering_never_holds_up_the_parent(tmp_path, monkeypatch):
    """The child reads which blocks were printed only once it is done: when more are printed meanwhile than
    the pipe holds (here the child writes its last header only once the pipe is full), the parent does not
    wait for room there (the child waits for the parent to read its headers: both would wait forever)."""
    import fcntl
    import termios

    monkeypatch.setattr(streamview, "CHUNK", 4096)
    monkeypatch.setattr(showstream, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(showstream, "BLOCK", 1)  # a block a record
    head = open(os.path.join(FIX, "brute-session.jsonl"), "rb").read()
    p = tmp_path / "many.jsonl"
    p.write_bytes(head + b"".join(b'{"role":"user","content":"m%d"}\n' % i for i in range(12000)))
    real_main, real_write = ShowStream._child_main, showpipe.Frames.write
    relayed_fd: list[int] = []

    def child_main(self, mid, w, out, relayed):
        relayed_fd.append(relayed)
        real_main(self, mid, w, out, relayed)

    def write(self, kind, *rest):
        if kind == showpipe.END:
            size = fcntl.fcntl(relayed_fd[0], fcntl.F_GETPIPE_SZ)  # 64 KiB: 4096 spans
            full = bytearray(4)
            while int.from_bytes(full, "little") < size:
                fcntl.ioctl(relayed_fd[0], termios.FIONREAD, full)
                os.sched_yield()
        real_write(self, kind, *rest)

    monkeypatch.setattr(ShowStream, "_child_main", child_main)
    monkeypatch.setattr(showpipe.Frames, "write", write)
    printers: list = []
    assert _shown(str(p), 2, printers=printers) == _reference(str(p))
    assert printers[0].relayed > 4096 and printers[0].redone == 0
