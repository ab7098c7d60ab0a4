"""A real OpenSSH server for the tests: ``/usr/sbin/sshd -D -e -f CONFIG`` on loopback ports, a throwaway
host key and user key, and a client home whose ``~/.ssh`` (config, key, known_hosts) is the test's.

It listens on two ports. On the first, the login's PATH finds a ``sessionview`` that runs this worktree
("installed"); on the second it does not ("missing"). Both log in as the current user (root in CI) with the
user key only, and give the remote ``sessionview`` a private state and config directory.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

SSHD = "/usr/sbin/sshd"
REPO = pathlib.Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(path: pathlib.Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sessionview-test", "-f", str(path)], check=True)
    return (path.with_suffix(".pub") if path.suffix else pathlib.Path(str(path) + ".pub")).read_text().strip()


@dataclass
class Sshd:
    root: pathlib.Path
    home: pathlib.Path  # the client's HOME
    port: int  # sessionview installed
    port_missing: int  # sessionview not on PATH
    host_pub: str
    proc: subprocess.Popen
    remote_state: pathlib.Path
    alias: str = "svtest"
    alias_missing: str = "svtest-nosv"

    @property
    def log(self) -> str:
        try:
            return (self.root / "sshd.log").read_text(errors="replace")
        except OSError:
            return ""

    def known_hosts_line(self, port: int) -> str:
        return f"[127.0.0.1]:{port} {self.host_pub}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                if s.recv(4).startswith(b"SSH-"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on {port}")


def start(root: pathlib.Path) -> Sshd:
    root.mkdir(parents=True, exist_ok=True)
    host_pub = keygen(root / "host_key")
    home = root / "home"
    dot_ssh = home / ".ssh"
    dot_ssh.mkdir(parents=True)
    os.chmod(dot_ssh, 0o700)
    user_pub = keygen(dot_ssh / "id_ed25519")
    (root / "authorized_keys").write_text(user_pub + "\n")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "sessionview"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m sessionview "$@"\n')
    wrapper.chmod(0o755)
    remote_state = root / "remote-state"
    remote_state.mkdir()
    port, port_missing = free_port(), free_port()
    base_env = f"SESSIONVIEW_STATE_DIR={remote_state}/backups XDG_CONFIG_HOME={remote_state}/config XDG_STATE_HOME={remote_state}/xdg XDG_CACHE_HOME={remote_state}/cache SESSIONVIEW_INDEX={remote_state}/index.sqlite"
    config = root / "sshd_config"
    config.write_text(
        f"""Port {port}
Port {port_missing}
ListenAddress 127.0.0.1
HostKey {root}/host_key
PidFile none
AuthorizedKeysFile {root}/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
Subsystem sftp internal-sftp
LogLevel ERROR
SetEnv PATH={bin_dir}:/usr/local/bin:/usr/bin:/bin {base_env}
Match LocalPort {port_missing}
    SetEnv PATH=/usr/bin:/bin {base_env}
"""
    )
    os.makedirs("/run/sshd", exist_ok=True)  # the privilege separation directory Debian's sshd wants
    log = open(root / "sshd.log", "wb")  # noqa: SIM115 - kept open for the server's life
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        wait_port(port, proc)
        wait_port(port_missing, proc)
    except Exception:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"sshd did not start: {(root / 'sshd.log').read_text(errors='replace')}") from None
    user = os.environ.get("USER") or __import__("pwd").getpwuid(os.getuid()).pw_name
    (dot_ssh / "config").write_text(
        f"""Host svtest
    HostName 127.0.0.1
    Port {port}
    User {user}
    IdentityFile {dot_ssh}/id_ed25519
Host svtest-nosv
    HostName 127.0.0.1
    Port {port_missing}
    User {user}
    IdentityFile {dot_ssh}/id_ed25519
"""
    )
    srv = Sshd(root, home, port, port_missing, host_pub, proc, remote_state)
    (dot_ssh / "known_hosts").write_text(srv.known_hosts_line(port) + "\n" + srv.known_hosts_line(port_missing) + "\n")
    return srv


def available() -> str | None:
    """Why the tests cannot run a server (None: they can)."""
    if not os.path.exists(SSHD):
        return f"{SSHD} is missing (apt-get install openssh-server)"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen is missing (apt-get install openssh-client)"
    return None
