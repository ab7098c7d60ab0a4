"""Reading, listing and following sessions on a real sshd over SFTP."""

import json

import pytest

from sessionview.remote.address import Address
from sessionview.remote.connection import Connection
from sessionview.remote.sessions import open_session, scan
from sessionview.remote.sftp import SftpAccess


def line(role, content):
    return (json.dumps({"role": role, "content": content}, separators=(",", ":")) + "\n").encode()


@pytest.fixture
def access(sshd):
    conn = Connection(Address("svtest", "")).open()
    yield SftpAccess(conn)
    conn.close()


def test_lists_the_session_directory(sshd, access):
    (sshd.sessions / "a.jsonl").write_bytes(line("user", "hi"))
    (sshd.sessions / "sub").mkdir()
    (sshd.sessions / "sub" / "b.jsonl").write_bytes(line("user", "x") * 3)
    (sshd.sessions / "notes.txt").write_text("not a session")
    entries = sorted(scan(access, str(sshd.sessions)), key=lambda e: e.rel)
    assert [(e.rel, e.size) for e in entries] == [("a.jsonl", len(line("user", "hi"))), ("sub/b.jsonl", 3 * len(line("user", "x")))]


def test_reads_a_session_in_ranges(sshd, access):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(b"".join(line("user" if i % 2 else "assistant", f"message {i}") for i in range(200)))
    session = open_session(access, str(path), read_only="remote")
    try:
        assert len(session) == 200 and session.format == "brute"
        assert session.view(200).text == "message 199"
        assert session.read_only_reason == "remote"
    finally:
        session.close()
