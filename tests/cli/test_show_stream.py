"""``show`` of a whole big file prints as it reads (no index first): the same bytes as the indexed path."""

import glob
import os

import pytest

from sessionview.cli import commands, main

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")
FIXTURES = sorted(p for p in glob.glob(os.path.join(FIX, "**", "*"), recursive=True) if os.path.isfile(p))


def _show(capsysbinary, *args):
    code = main(["show", *args])
    out = capsysbinary.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("json", [False, True])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, FIX))
def test_streamed_show_prints_what_the_indexed_show_prints(path, json, monkeypatch, capsysbinary):
    monkeypatch.setattr(commands, "SHOW_PAIR_FIRST", -1)  # every file is "big": pairing as it is read
    extra = ["--json"] if json else []
    streamed = _show(capsysbinary, path, *extra)
    calls = []
    monkeypatch.setattr(commands, "_show_stream", lambda args: calls.append(1) or None)
    indexed = _show(capsysbinary, path, *extra)
    assert calls
    assert streamed == indexed


def test_a_big_jsonl_file_is_streamed(monkeypatch, capsysbinary, tmp_path):
    monkeypatch.setattr(commands, "SHOW_PAIR_FIRST", 10)
    seen = []
    from sessionview.core import streamview

    real = streamview.open_stream
    monkeypatch.setattr(streamview, "open_stream", lambda p: seen.append(p) or real(p))
    path = os.path.join(FIX, "brute-session.jsonl")
    code, out, _ = _show(capsysbinary, path)
    assert code == 0 and seen == [path]
    assert b"#1 user" in out and out.rstrip().endswith(b"records")
    seen.clear()
    _show(capsysbinary, path, "2:")  # a range reads the index
    _show(capsysbinary, path, "--last", "2")
    assert seen == []


def test_a_streamed_show_leaves_the_collector_as_it_found_it(monkeypatch, capsysbinary):
    """It freezes what the start made while it prints (fewer objects walked by each collection), and thaws it
    again: a process that calls ``main`` and goes on (a script, these tests) collects its garbage as before."""
    import gc

    monkeypatch.setattr(commands, "SHOW_PAIR_FIRST", -1)
    frozen = []
    from sessionview.core.view import showstream

    original = showstream.ShowStream.pieces

    def pieces(self):
        frozen.append(gc.get_freeze_count())
        return original(self)

    monkeypatch.setattr(showstream.ShowStream, "pieces", pieces)
    code, _, _ = _show(capsysbinary, os.path.join(FIX, "brute-session.jsonl"))
    assert code == 0 and frozen and frozen[0] > 0
    assert gc.get_freeze_count() == 0


def test_streamed_show_of_a_missing_file_says_so(monkeypatch, capsysbinary, tmp_path):
    monkeypatch.setattr(commands, "SHOW_PAIR_FIRST", -1)
    code, _, err = _show(capsysbinary, str(tmp_path / "nope.jsonl"))
    assert code != 0 and b"no such file" in err


def test_show_into_a_pipe_that_closes_ends_both_processes(tmp_path):
    """``show BIG | head -3``: the reader goes away, show exits quietly (as before), and the process that
    rendered the second half is ended and reaped, not left running."""
    import subprocess
    import sys

    lines = open(os.path.join(FIX, "brute-session.jsonl"), "rb").read().splitlines()
    p = tmp_path / "big.jsonl"
    p.write_bytes(b"\n".join(lines[i % len(lines)] for i in range(60_000)) + b"\n")
    code = (
        "import sys\n"
        "from sessionview.core import streamview\n"
        "from sessionview.core.view import showstream\n"
        "from sessionview.cli import commands, main\n"
        "streamview.CHUNK = 4096; showstream.PARALLEL_MIN_BYTES = 0; commands.SHOW_PAIR_FIRST = -1\n"
        "sys.exit(main(['show', sys.argv[1]]))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(p)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    got = b""
    while b"\n#200 " not in got:  # well into the first half: the second process has started
        chunk = proc.stdout.read1(65536)
        assert chunk, got[-500:]
        got += chunk
    children = open(f"/proc/{proc.pid}/task/{proc.pid}/children").read().split()
    assert len(children) == 1
    proc.stdout.close()
    assert proc.wait() == 0
    assert proc.stderr.read() == b""
    assert not os.path.exists(f"/proc/{children[0]}")


def _big_copy(tmp_path, records=6000):
    lines = open(os.path.join(FIX, "brute-session.jsonl"), "rb").read().splitlines()
    p = tmp_path / "big.jsonl"
    p.write_bytes(b"\n".join(lines[i % len(lines)] for i in range(records)) + b"\n")
    return str(p)


_TWO = (
    "import sys\n"
    "from sessionview.core import streamview\n"
    "from sessionview.core.view import showstream\n"
    "from sessionview.cli import commands, main\n"
    "streamview.CHUNK = 4096; showstream.BLOCK = 4096; commands.SHOW_PAIR_FIRST = -1\n"
    "showstream.PARALLEL_MIN_BYTES = 0 if sys.argv[2] == 'two' else 1 << 60\n"
    "sys.exit(main(['show', sys.argv[1]]))\n"
)


@pytest.mark.parametrize("into", ["file", "pipe"])
def test_the_second_half_is_copied_out_by_sendfile_into_a_file_or_a_pipe(tmp_path, into):
    """Two processes, the child's blocks sent from its file to stdout (a file, a pipe): the bytes one process
    prints."""
    import subprocess
    import sys

    path = _big_copy(tmp_path)
    outs = []
    for mode in ("one", "two"):
        cmd = [sys.executable, "-c", _TWO, path, mode]
        if into == "file":
            target = tmp_path / f"out-{mode}"
            with open(target, "wb") as f:
                assert subprocess.run(cmd, stdout=f, check=False).returncode == 0
            outs.append(target.read_bytes())
        else:
            done = subprocess.run(cmd, stdout=subprocess.PIPE, check=False)
            assert done.returncode == 0
            outs.append(done.stdout)
    assert outs[0] == outs[1] and outs[0].rstrip().endswith(b"6000 records")


class _Buf:
    def __init__(self, fd):
        self.fd = fd
        self.data = b""

    def fileno(self):
        if self.fd is None:
            import io

            raise io.UnsupportedOperation("fileno")
        return self.fd

    def write(self, b):
        self.data += bytes(b)

    def flush(self):
        pass


@pytest.mark.parametrize("how", ["no descriptor", "sendfile refused", "sendfile stops half way", "sendfile"])
def test_a_span_is_copied_whole_however_sendfile_fares(tmp_path, monkeypatch, how):
    from sessionview.cli.output import Out

    data = bytes(range(256)) * 5000
    src = os.memfd_create("span")
    os.write(src, data)
    dst = os.open(tmp_path / "dst", os.O_RDWR | os.O_CREAT)
    out = Out()
    out.buf = _Buf(None if how == "no descriptor" else dst)
    real = os.sendfile
    calls = []

    def sendfile(out_fd, in_fd, offset, count):
        calls.append(offset)
        if how == "sendfile refused" or (how == "sendfile stops half way" and len(calls) > 1):
            raise OSError(22, "Invalid argument")
        return real(out_fd, in_fd, offset, min(count, 70001))

    monkeypatch.setattr(os, "sendfile", sendfile)
    commands._copy_span(out, src, len(data) - 100, 100)
    sent = os.pread(dst, len(data), 0)
    assert sent + out.buf.data == data[100:]
    assert (len(calls) > 0) == (how != "no descriptor")
    if how == "sendfile":
        assert out.buf.data == b""
    os.close(src)
    os.close(dst)


def test_a_closed_pipe_under_sendfile_is_a_broken_pipe(monkeypatch):
    from sessionview.cli.output import Out

    src = os.memfd_create("span")
    os.write(src, b"x" * 10)
    r, w = os.pipe()
    os.close(r)
    out = Out()
    out.buf = _Buf(w)
    with pytest.raises(BrokenPipeError):
        commands._copy_span(out, src, 10, 0)
    os.close(w)
    os.close(src)
