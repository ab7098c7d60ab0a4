"""The CLI's promises around a write: every warning reaches the user, a done write is never a failure,
printed paths are terminal-safe, and input files are bounded."""

import os
import subprocess
import sys

import pytest

from sessionview import cli
from sessionview.core.store import save as save_mod
from sessionview.core.store import steps as save_steps
from sessionview.core.edit import writeback

from clihelpers import CONVO, line

def run(*args, **kw):
    kw.setdefault("capture_output", "stdout" not in kw and "stderr" not in kw)
    return subprocess.run([sys.executable, "-m", "sessionview", *args], timeout=60, **kw)


# -- 1. every warning, and bytes not carried over ---------------------------------------------------


def test_force_over_a_held_writer_warns_on_stderr(session):
    with open(session, "ab"):  # this test process holds the file open for writing
        refused = run("delete", str(session), "4")
        assert refused.returncode == 1 and b"open for writing" in refused.stderr
        r = run("delete", str(session), "4", "--force")
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "warning:" in err and "had the file open for writing" in err
    assert b"Two files." not in session.read_bytes()


def test_a_partial_line_written_during_the_save_is_reported_with_exit_1(session, monkeypatch, capsys):
    held = os.open(session, os.O_WRONLY | os.O_APPEND)  # a writer still writing the replaced file
    monkeypatch.setattr(save_mod, "SETTLE_TIMEOUT", 0.05)

    def hook(step):
        if step == "rename":
            os.write(held, b'{"role":"assistant","content":"half a li')

    monkeypatch.setattr(save_steps, "hook", hook)
    try:
        code = cli.main(["delete", str(session), "4"])
    finally:
        os.close(held)
    err = capsys.readouterr().err
    assert code == 1, err
    assert "written" in err  # the edit itself is in place
    assert "bytes another process wrote during the save are not in the new file" in err
    assert b"Two files." not in session.read_bytes()


class _Result:
    changed = True
    rebased_bytes = 0
    carried_bytes = 0
    lost_partial_bytes = 0
    not_carried_bytes = 120
    kept_paths = ("/state/unmerged/s.jsonl.\x1b]52;c;eA==\x07.late",)
    warnings = ("120 bytes appended during the save could not be merged (x); they were kept in /state/u", "dir fsync failed")


def test_every_core_warning_and_the_kept_file_are_named(session, monkeypatch, capsys):
    monkeypatch.setattr(writeback, "commit", lambda *a, **k: writeback.Outcome(True, "delete #4", _Result()))
    code = cli.main(["delete", str(session), "4"])
    err = capsys.readouterr().err
    assert code == 1
    assert "could not be merged" in err and "dir fsync failed" in err
    assert "120 bytes another process wrote" in err and "kept in /state/unmerged/s.jsonl.\\x1b]52;c;eA==\\x07.late" in err
    assert "\x1b" not in err and "\x07" not in err


# -- 2. a done write is not a failure ----------------------------------------------------------------


def test_status_lines_go_to_stderr_and_stdout_stays_empty(session):
    r = run("delete", str(session), "4")
    assert r.returncode == 0
    assert r.stdout == b""
    assert b"delete #4: written" in r.stderr


def test_delete_with_stdout_on_dev_full_exits_0_with_the_records_deleted(session):
    with open("/dev/full", "wb") as full:
        r = run("delete", str(session), "4", stdout=full, stderr=subprocess.PIPE)
    assert r.returncode == 0, r.stderr
    assert b"Two files." not in session.read_bytes()


def test_delete_with_stderr_on_dev_full_exits_0(session):
    with open("/dev/full", "wb") as full:
        r = run("delete", str(session), "4", stdout=subprocess.PIPE, stderr=full)
    assert r.returncode == 0
    assert b"Two files." not in session.read_bytes()


@pytest.mark.parametrize("fd", [1, 2])
def test_delete_with_stdout_or_stderr_closed_exits_0(session, fd):
    other = subprocess.PIPE
    r = run("delete", str(session), "4", preexec_fn=lambda: os.close(fd),
            stdout=subprocess.PIPE if fd == 2 else None, stderr=other if fd == 1 else None)
    assert r.returncode == 0, r.stderr
    assert b"internal error" not in (r.stderr or b"") + (r.stdout or b"")
    assert b"Two files." not in session.read_bytes()
    assert session.read_bytes().count(b"\n") == 4  # nothing was written into the session by mistake


def test_a_write_never_lands_in_the_session_when_stdout_was_closed(session):
    r = run("edit", str(session), "1", "--content", "hello", preexec_fn=lambda: os.close(1), stderr=subprocess.PIPE)
    assert r.returncode == 0, r.stderr
    assert session.read_bytes().split(b"\n")[0] == b'{"role":"user","content":"hello"}'
    assert run("check", str(session)).returncode == 0


@pytest.mark.parametrize("which", ["stdout", "stderr"])
def test_a_write_piped_to_a_reader_that_closed_exits_0_without_a_traceback(session, which):
    rd, wr = os.pipe()
    os.close(rd)  # the reader is gone: any write gets EPIPE
    try:
        kw = {which: wr, ("stderr" if which == "stdout" else "stdout"): subprocess.PIPE}
        r = run("delete", str(session), "4", **kw)
    finally:
        os.close(wr)
    assert r.returncode == 0
    assert b"Traceback" not in (r.stderr or b"") + (r.stdout or b"")
    assert b"Two files." not in session.read_bytes()


def test_dry_run_to_a_closed_pipe_is_quiet(session):
    rd, wr = os.pipe()
    os.close(rd)
    try:
        r = run("delete", str(session), "4", "--dry-run", stdout=wr, stderr=subprocess.PIPE)
    finally:
        os.close(wr)
    assert r.returncode == 0 and b"Traceback" not in r.stderr and b"Exception" not in r.stderr


# -- 4. terminal-safe paths ----------------------------------------------------------------------------

HOSTILE = [b"osc\x1b]52;c;ZXZpbA==\x07.jsonl", "c1\u009b31m.jsonl".encode(), b"raw\x9b2J.jsonl"]


def _unsafe(out: bytes) -> bool:
    return b"\x1b" in out or b"\x07" in out or b"\x9b" in out


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_file_names_are_escaped_in_every_line(tmp_path, name):
    p = os.path.join(os.fsencode(tmp_path), name)
    with open(p, "wb") as f:
        f.write(b"".join(line(m) for m in CONVO))
    for args in (
        ["delete", p, "4", "--dry-run"],
        ["delete", p, "4"],
        ["edit", p, "99", "--content", "x"],  # an error line
        ["delete", p, "3"],  # a refusal
        ["truncate", p, "--keep", "9"],  # nothing to write
        ["history", p],
        ["undo", p, "--dry-run"],
        ["undo", p],
        ["check", p],
        ["show", p],
        ["edit", p + b".missing", "1", "--content", "x"],
    ):
        r = subprocess.run([sys.executable, "-m", "sessionview", *args], capture_output=True, timeout=60)
        assert not _unsafe(r.stdout) and not _unsafe(r.stderr), (args, r.stdout, r.stderr)
        assert r.returncode != 2 or args[1].endswith(b".missing") or args[2] == "99", (args, r.stderr)
    dry = subprocess.run([sys.executable, "-m", "sessionview", "delete", p, "4", "--dry-run"], capture_output=True)
    head = b"\n".join(dry.stdout.split(b"\n")[:2])
    assert dry.returncode == 0 and head.startswith(b"--- a/") and (b"\\x" in head or b"\\u" in head), head


# -- 5. --content-file and --summary-file ---------------------------------------------------------


def test_content_file_from_dev_zero_is_refused_at_once(session):
    before = session.read_bytes()
    r = run("edit", str(session), "1", "--content-file", "/dev/zero")
    assert r.returncode == 2
    err = r.stderr.decode()
    assert "not a regular file" in err and len(err.strip().splitlines()) == 1
    assert session.read_bytes() == before


def test_summary_file_from_a_fifo_does_not_hang(session, tmp_path):
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    r = run("compact", str(session), "1:3", "--summary-file", str(fifo))
    assert r.returncode == 2 and b"not a regular file (a FIFO)" in r.stderr


def test_content_file_over_the_cap_is_refused(session, tmp_path):
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.truncate(64 * 1024 * 1024 + 1)  # sparse: no disk used
    r = run("edit", str(session), "1", "--content-file", str(big))
    assert r.returncode == 2 and b"too large" in r.stderr


def test_content_file_and_stdin_still_work(session, tmp_path):
    t = tmp_path / "t.txt"
    t.write_text("from a file")
    assert run("edit", str(session), "1", "--content-file", str(t)).returncode == 0
    assert b'"content":"from a file"' in session.read_bytes()
    r = run("compact", str(session), "4:5", "--summary-file", "-", input=b"from stdin")
    assert r.returncode == 0, r.stderr
    assert b"[compacted:summary] from stdin" in session.read_bytes()
