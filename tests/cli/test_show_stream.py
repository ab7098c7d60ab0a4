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
