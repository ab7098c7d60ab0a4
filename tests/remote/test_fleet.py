"""Many hosts: the [hosts] table, and a session list that stays usable when a host is down or slow."""

import socket
import threading

import pytest

from sessionview.core.config import ConfigError, load_config
from sessionview.remote.fleet import Fleet, FleetCatalog

import remote_sshd


def test_the_hosts_table_is_read(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[hosts]\nweb1 = "ssh://agent@web1.example/srv/sessions"\ngpu = "gpu-box:runs"\n')
    assert load_config(str(cfg)).hosts == {"web1": "ssh://agent@web1.example/srv/sessions", "gpu": "gpu-box:runs"}
    cfg.write_text('[hosts]\nweb1 = "/srv/sessions"\n')
    with pytest.raises(ConfigError, match=r"config.toml:2: \[hosts\] web1: '/srv/sessions' is not a remote address"):
        load_config(str(cfg))
    cfg.write_text('hosts = ["a"]\n')
    with pytest.raises(ConfigError, match="must map host names"):
        load_config(str(cfg))


@pytest.fixture
def silent_server():
    """A TCP port that accepts connections and never says a word (a hung host)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    conns = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conns.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    for c in conns:
        c.close()
    srv.close()


def test_a_down_and_a_hung_host_are_unreachable_and_the_others_still_show(sshd, silent_server):
    (sshd.sessions / "a.jsonl").write_bytes(b'{"role":"user","content":"hi"}\n')
    (sshd.sessions / "b.jsonl").write_bytes(b'{"role":"user","content":"yo"}\n')
    down = remote_sshd.free_port()  # nothing listens there
    hosts = {
        "web1": f"svtest:{sshd.sessions}",
        "down": f"ssh://127.0.0.1:{down}/srv",
        "hung": f"ssh://127.0.0.1:{silent_server}/srv",
    }
    catalog = FleetCatalog(hosts)
    arrived = []

    def on_host(listing):
        arrived.append(listing.name)
        catalog.apply(listing)

    results = {h.name: h for h in Fleet(hosts, timeout=3).load(on_host)}
    assert results["web1"].reachable and sorted(e.rel for e in results["web1"].entries) == ["a.jsonl", "b.jsonl"]
    assert not results["down"].reachable and "unreachable" in results["down"].error
    assert not results["hung"].reachable and "unreachable" in results["hung"].error
    assert "hung" not in arrived[: arrived.index("web1") + 1]  # web1 was shown before the hung host gave up
    for name in ("down", "hung"):
        if name not in catalog.listings:
            catalog.apply(results[name])
    assert [r.label for r in catalog.rows(key="name")] == ["web1:a.jsonl", "web1:b.jsonl"]
    assert set(catalog.unreachable) == {"down", "hung"}
    status = catalog.status()
    assert status.startswith("2 sessions on 1 host") and "down: unreachable" in status and "hung: unreachable" in status


def test_a_host_with_an_unknown_key_is_marked_and_not_listed(sshd):
    (sshd.sessions / "a.jsonl").write_bytes(b'{"role":"user","content":"hi"}\n')
    kh = sshd.home / ".ssh" / "known_hosts"
    saved = kh.read_text()
    kh.write_text("")
    try:
        (result,) = Fleet({"web1": f"svtest:{sshd.sessions}"}, timeout=5).load()
    finally:
        kh.write_text(saved)
    assert result.entries == [] and "host key verification failed" in result.error


def test_sessionview_hosts_lists_every_host_and_names_the_one_that_is_down(sshd, tmp_path):
    import os
    import subprocess
    import sys

    (sshd.sessions / "a.jsonl").write_bytes(b'{"role":"user","content":"hi"}\n')
    cfg = tmp_path / "config.toml"
    down = remote_sshd.free_port()
    cfg.write_text(f'[hosts]\nweb1 = "svtest:{sshd.sessions}"\ndown = "ssh://127.0.0.1:{down}/srv"\n'
                   f'nosv = "svtest-nosv:{sshd.sessions}"\n')
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": repo, "HOME": str(sshd.home), "SESSIONVIEW_CONFIG": str(cfg)}
    r = subprocess.run([sys.executable, "-m", "sessionview", "hosts", "--timeout", "5"], capture_output=True, env=env, timeout=60)
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 1
    lines = out.splitlines()
    assert len(lines) == 2 and {ln.split()[0] for ln in lines} == {"web1", "nosv"}
    assert all(ln.endswith(str(sshd.sessions / "a.jsonl")) for ln in lines)
    assert err.startswith("sessionview: down: unreachable") and len(err.strip().splitlines()) == 1
