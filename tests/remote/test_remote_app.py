"""``sessionview ADDRESS`` in a real terminal (tmux), over a real sshd: the app here reading over SFTP (the
default), or the app on the host (``--on-host``, ssh -t)."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TMUX = shutil.which("tmux")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it)")]


class Tmux:
    def __init__(self, socket):
        self.socket = socket

    def run(self, *args, check=True):
        return subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, check=check, timeout=10).stdout

    def wait_for(self, text, timeout=30.0):
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.run("capture-pane", "-p", "-t", "t", check=False)
            if text in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never showed up; the screen was:\n{screen}")


@pytest.mark.parametrize("how", ["", "--on-host"])
def test_the_app_on_a_remote_directory_lists_opens_and_follows(sshd, how):
    d = sshd.sessions / "dir with space"
    d.mkdir()
    session = d / "s.jsonl"
    session.write_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in (
        {"role": "user", "content": "hello from the host"}, {"role": "assistant", "content": "hi there"})))
    tmux = Tmux(f"svremote-{os.getpid()}")
    env = f"HOME={shlex.quote(str(sshd.home))} PYTHONPATH={shlex.quote(REPO)}"
    cmd = f"{env} {shlex.quote(sys.executable)} -m sessionview {how} {shlex.quote('svtest:' + str(d))}; echo EXITED $?"
    tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "sh")
    try:
        deadline = time.monotonic() + 10
        while tmux.run("display-message", "-p", "-t", "t", "#{pane_width}x#{pane_height}").strip() != "120x40":
            assert time.monotonic() < deadline, "the tmux pane never got its size"
            time.sleep(0.05)
        tmux.run("send-keys", "-t", "t", cmd, "Enter")
        tmux.wait_for("s.jsonl")
        tmux.wait_for("1 session")
        tmux.run("send-keys", "-t", "t", "Enter")
        tmux.wait_for("hello from the host")
        with open(session, "ab") as f:
            f.write(b'{"role":"user","content":"appended on the host"}\n')
        tmux.wait_for("appended on the host")
        tmux.run("send-keys", "-t", "t", "q")
        tmux.wait_for("1 session")
        tmux.run("send-keys", "-t", "t", "q")
        tmux.wait_for("EXITED 0")
    finally:
        tmux.run("kill-server", check=False)
