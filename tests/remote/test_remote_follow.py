"""Following a session on a real sshd: the same events as a local follower."""

import json
import os
import subprocess
import sys
import time

import pytest

from sessionview.core.tail import Appended, Compacted, Deleted, Pending, Renamed, Replaced, Truncated
from sessionview.remote.address import Address
from sessionview.remote.connection import Connection
from sessionview.remote.follow import remote_follower
from sessionview.remote.sftp import SftpAccess


def line(role, content):
    return (json.dumps({"role": role, "content": content}, separators=(",", ":")) + "\n").encode()


@pytest.fixture
def access(sshd):
    conn = Connection(Address("svtest", "")).open()
    yield SftpAccess(conn)
    conn.close()


def poll_until(follower, want, timeout=20.0):
    """Poll (as the app does) until an event of type ``want`` arrives; every event seen, in order."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen.extend(follower.poll())
        if any(isinstance(e, want) for e in seen):
            return seen
        time.sleep(0.05)
    raise AssertionError(f"no {want} within {timeout} s; saw {seen}")


def appended_lines(events):
    return [ln for e in events if isinstance(e, Appended) for ln in e.lines()]


APPENDER = r"""
import sys, time
path, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(path, "ab") as f:
        f.write(b'{"role":"assistant","content":"part ')  # a partial line first
        f.flush()
        time.sleep(0.02)
        f.write(str(i).encode() + b'"}\n')
    time.sleep(0.03)
"""


def test_follows_an_appender_process(sshd, access):
    path = sshd.sessions / "live.jsonl"
    path.write_bytes(line("user", "go"))
    follower = remote_follower(access, str(path), offset=path.stat().st_size)
    try:
        proc = subprocess.Popen([sys.executable, "-c", APPENDER, str(path), "20"])
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 20 and time.monotonic() < deadline:
            events = follower.poll()
            assert not any(isinstance(e, (Truncated, Replaced, Deleted)) for e in events)
            got += appended_lines(events)
            time.sleep(0.02)
        assert proc.wait(30) == 0
        assert got == [f'{{"role":"assistant","content":"part {i}"}}\n'.encode() for i in range(20)]
        assert follower.offset == path.stat().st_size
    finally:
        follower.close()


def test_a_partial_line_is_pending_until_its_newline(sshd, access):
    path = sshd.sessions / "p.jsonl"
    path.write_bytes(line("user", "a"))
    follower = remote_follower(access, str(path), offset=path.stat().st_size)
    try:
        with open(path, "ab") as f:
            f.write(b'{"role":"assistant",')
        events = poll_until(follower, Pending)
        assert [e.size for e in events if isinstance(e, Pending)] == [len(b'{"role":"assistant",')]
        assert not appended_lines(events)
        with open(path, "ab") as f:
            f.write(b'"content":"b"}\n')
        events = poll_until(follower, Appended)
        assert appended_lines(events) == [b'{"role":"assistant","content":"b"}\n']
    finally:
        follower.close()


def test_a_brute_rewrite_in_place_that_keeps_the_lines_is_an_append(sshd, access):
    path = sshd.sessions / "brute.jsonl"
    old = line("user", "q") + line("assistant", "a")
    path.write_bytes(old)
    follower = remote_follower(access, str(path), offset=len(old))
    try:
        ino = os.stat(path).st_ino
        with open(path, "wb") as f:  # File.open(path, "w"): truncate, then write every line again
            f.write(old + line("user", "next"))
        assert os.stat(path).st_ino == ino
        events = poll_until(follower, Appended)
        assert not any(isinstance(e, (Truncated, Replaced)) for e in events)
        assert appended_lines(events) == [line("user", "next")]
    finally:
        follower.close()


def test_a_rewrite_with_other_content_is_truncated(sshd, access):
    path = sshd.sessions / "t.jsonl"
    old = line("user", "q") + line("assistant", "a") + line("user", "more")
    path.write_bytes(old)
    follower = remote_follower(access, str(path), offset=len(old))
    try:
        with open(path, "wb") as f:
            f.write(line("user", "other"))
        events = poll_until(follower, Truncated)
        assert appended_lines(events) == [line("user", "other")]
    finally:
        follower.close()


def test_a_compaction_by_the_agent_is_compacted(sshd, access):
    path = sshd.sessions / "c.jsonl"
    old = b"".join(line("user" if i % 2 else "assistant", f"m{i}") for i in range(6))
    path.write_bytes(old)
    follower = remote_follower(access, str(path), offset=len(old))
    try:
        with open(path, "wb") as f:
            f.write(line("user", "[compacted:summary] all of it") + line("assistant", "ok"))
        events = poll_until(follower, Compacted)
        compacted = next(e for e in events if isinstance(e, Compacted))
        assert compacted.markers == ("summary",) and compacted.before == 6
    finally:
        follower.close()


def test_a_temp_file_renamed_over_the_path(sshd, access):
    path = sshd.sessions / "r.jsonl"
    old = line("user", "q")
    path.write_bytes(old)
    follower = remote_follower(access, str(path), offset=len(old))
    try:
        tmp = sshd.sessions / ".r.tmp"
        tmp.write_bytes(old + line("assistant", "kept"))
        os.replace(tmp, path)
        events = poll_until(follower, Appended)
        assert isinstance(events[0], Renamed)
        assert appended_lines(events) == [line("assistant", "kept")]
        other = sshd.sessions / ".r2.tmp"
        other.write_bytes(line("user", "a different session"))
        os.replace(other, path)
        events = poll_until(follower, Replaced)
        assert appended_lines(events) == [line("user", "a different session")]
    finally:
        follower.close()


def test_deletion_is_deleted_and_what_was_read_stays_readable(sshd, access):
    path = sshd.sessions / "d.jsonl"
    old = line("user", "q")
    path.write_bytes(old)
    follower = remote_follower(access, str(path), offset=len(old))
    try:
        path.unlink()
        poll_until(follower, Deleted)
        assert follower.read(0, len(old)) == old
        assert follower.poll() == []
    finally:
        follower.close()


def test_a_lost_connection_is_an_error_not_an_exception(sshd):
    conn = Connection(Address("svtest", "")).open()
    path = sshd.sessions / "lost.jsonl"
    path.write_bytes(line("user", "q"))
    follower = remote_follower(SftpAccess(conn), str(path), offset=path.stat().st_size)
    try:
        conn.close()
        with open(path, "ab") as f:
            f.write(line("user", "after"))
        assert follower.poll() == []
        assert follower.error
    finally:
        follower.close()


def test_a_stat_against_a_file_closed_meanwhile_is_a_plain_stat(sshd, access):
    # another thread closes the file between stat()'s check and the stat on the connection's loop: the path's
    # stat, as of another file (no AttributeError, no coroutine left unawaited)
    path = sshd.sessions / "closing.jsonl"
    path.write_bytes(line("user", "go"))
    opened = access.open(str(path))
    same = access.stat(str(path), opened)
    assert (same.st_dev, same.st_ino) == opened.ident and same.st_size == path.stat().st_size
    opened.close()
    st = access._call(access._stat_against(str(path), opened), str(path))
    assert st.st_size == path.stat().st_size and (st.st_dev, st.st_ino) == (0, 0)  # sftp.OTHER_FILE


def test_a_stat_against_a_handle_closed_under_it_is_a_plain_stat(sshd, access):
    # closed after _stat_against read the handle: asyncssh raises ValueError, not an OSError
    path = sshd.sessions / "closed-under.jsonl"
    path.write_bytes(line("user", "go"))
    opened = access.open(str(path))
    access._call(opened.handle.close(), str(path))  # the handle closed, the SftpFile not told
    st = access._call(access._stat_against(str(path), opened), str(path))
    assert st.st_size == path.stat().st_size and (st.st_dev, st.st_ino) == (0, 0)  # sftp.OTHER_FILE
