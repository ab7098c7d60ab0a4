import pytest

import remote_sshd as sshd_mod


@pytest.fixture(scope="session")
def sshd_server(tmp_path_factory):
    reason = sshd_mod.available()
    if reason:
        pytest.skip(reason)
    srv = sshd_mod.start(tmp_path_factory.mktemp("sshd"))
    yield srv
    srv.stop()


@pytest.fixture
def sshd(sshd_server, monkeypatch, tmp_path):
    """The server, with the client's HOME (its ~/.ssh) pointed at the test's, no agent, and a session
    directory on the "host" (the same machine) in ``sshd.sessions``."""
    monkeypatch.setenv("HOME", str(sshd_server.home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.delenv("SSH_AGENT_PID", raising=False)
    sessions = tmp_path / "remote sessions"
    sessions.mkdir()
    sshd_server.sessions = sessions
    return sshd_server
