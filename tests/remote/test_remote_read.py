"""Reading, listing and following sessions on a real sshd over SFTP."""

import json
import os
import time

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


def test_the_ssh_agent_logs_in_and_without_a_key_nothing_prompts(sshd, tmp_path, monkeypatch):
    """A HOME with ~/.ssh/config and known_hosts but no key file: the agent's key logs in; with no agent
    either, the login is refused in one line (never a password prompt)."""
    import shutil
    import subprocess

    from sessionview.remote.connection import Unreachable

    if shutil.which("ssh-agent") is None or shutil.which("ssh-add") is None:
        pytest.skip("ssh-agent is missing (apt-get install openssh-client)")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    shutil.copy(sshd.home / ".ssh" / "known_hosts", home / ".ssh" / "known_hosts")
    config = (sshd.home / ".ssh" / "config").read_text().replace(str(sshd.home), str(home))  # a key file not there
    (home / ".ssh" / "config").write_text(config)
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(Unreachable, match=r"a key file named in ~/.ssh/config does not exist: .*id_ed25519"):
        Connection(Address("svtest", "")).open()
    (home / ".ssh" / "config").write_text("\n".join(ln for ln in config.splitlines() if "IdentityFile" not in ln) + "\n")
    with pytest.raises(Unreachable, match="permission denied .*never asks for a password"):
        Connection(Address("svtest", "")).open()
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not sock.exists():  # the agent makes its socket, then waits
            assert agent.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(sshd.home / ".ssh" / "id_ed25519")], env=env, check=True, capture_output=True)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        (sshd.sessions / "a.jsonl").write_bytes(line("user", "via the agent"))
        with Connection(Address("svtest", "")).open() as conn:
            assert [e.rel for e in scan(SftpAccess(conn), str(sshd.sessions))] == ["a.jsonl"]
    finally:
        agent.terminate()
        agent.wait(10)
