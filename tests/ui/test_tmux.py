"""The real ``sessionview`` command in a real terminal (tmux): it starts, draws, follows and quits."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from uihelpers import FIXTURES

pytestmark = pytest.mark.slow

TMUX = shutil.which("tmux")


def command() -> list[str]:
    script = shutil.which("sessionview", path=os.path.dirname(sys.executable)) or shutil.which("sessionview")
    if script:
        return [script]
    return [sys.executable, "-c", "import sys; from sessionview.ui.launch import run; sys.exit(run(sys.argv[1]))"]


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def run(self, *args: str, check: bool = True) -> str:
        out = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, check=check, timeout=10)
        return out.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "t")

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.run("capture-pane", "-p", "-t", "t", check=False)
            if text in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never showed up; the screen was:\n{screen}")


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it)")
def test_sessionview_command_in_tmux(tmp_path: Path):
    d = tmp_path / "sessions"
    d.mkdir()
    for name in ("brute-session.jsonl", "claude-code.jsonl", "codex-rollout.jsonl"):
        shutil.copyfile(FIXTURES / name, d / name)
    os.utime(d / "codex-rollout.jsonl", (time.time() - 3600,) * 2)
    os.utime(d / "claude-code.jsonl", (time.time() - 7200,) * 2)
    os.utime(d / "brute-session.jsonl", (time.time() - 60,) * 2)
    tmux = Tmux(f"svtest-{os.getpid()}")
    cmd = " ".join(shlex.quote(c) for c in [*command(), str(d)]) + "; echo EXITED $?"
    # Start a shell first and the app once the pane has its final size: a detached tmux session may be
    # resized just after it starts, and a resize that lands before Textual listens for it is lost.
    tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "sh")
    try:
        deadline = time.monotonic() + 10
        while tmux.run("display-message", "-p", "-t", "t", "#{pane_width}x#{pane_height}").strip() != "120x40":
            assert time.monotonic() < deadline, "the tmux pane never got its size"
            time.sleep(0.05)
        tmux.run("send-keys", "-t", "t", f"cd {shlex.quote(str(tmp_path))} && {cmd}", "Enter")
        screen = tmux.wait_for("brute-session.jsonl")
        assert "3 sessions" in screen
        lines = screen.splitlines()
        order = [next(i for i, line in enumerate(lines) if n in line) for n in ("brute-session", "codex-rollout", "claude-code")]
        assert order == sorted(order)  # newest change first
        tmux.wait_for("Brute JSONL")
        tmux.run("send-keys", "-t", "t", "Enter")
        tmux.wait_for("11 records")
        tmux.wait_for("paused")  # a finished session opens at its first prompt: G goes to the end, following
        tmux.run("send-keys", "-t", "t", "G")
        screen = tmux.wait_for("README.md a 12 lignes")  # a frame may be captured half drawn: wait for it
        assert "#11" in tmux.wait_for("#11")
        # follow: an appended line shows up
        with open(d / "brute-session.jsonl", "ab") as f:
            f.write(b'{"role":"user","content":"typed into tmux"}\n')
        tmux.wait_for("typed into tmux")
        tmux.wait_for("#12")
        tmux.wait_for("● live")
        tmux.run("send-keys", "-t", "t", "q")
        tmux.wait_for("3 sessions")
        tmux.run("send-keys", "-t", "t", "q")
        tmux.wait_for("EXITED 0")
    finally:
        tmux.run("kill-server", check=False)


def _start(tmp_path: Path, args: list[str]) -> Tmux:
    tmux = Tmux(f"svtest-{os.getpid()}-{len(args)}")
    tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "sh")
    deadline = time.monotonic() + 10
    while tmux.run("display-message", "-p", "-t", "t", "#{pane_width}x#{pane_height}").strip() != "120x40":
        assert time.monotonic() < deadline, "the tmux pane never got its size"
        time.sleep(0.05)
    cmd = " ".join(shlex.quote(c) for c in [*command(), *args]) + "; echo EXITED $?"
    tmux.run("send-keys", "-t", "t", f"cd {shlex.quote(str(tmp_path))} && {cmd}", "Enter")
    return tmux


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it)")
def test_a_fifo_fails_in_one_line_in_a_terminal(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe.jsonl")
    tmux = _start(tmp_path, ["pipe.jsonl"])
    try:
        screen = tmux.wait_for("EXITED 2")  # the typed command line shows "EXITED $?": wait for the status itself
        assert "sessionview: pipe.jsonl: not a regular file (a FIFO)" in screen
        assert "NotRegularFile" not in screen
    finally:
        tmux.run("kill-server", check=False)


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it)")
def test_read_only_says_so_when_an_edit_key_is_pressed_in_a_terminal(tmp_path: Path):
    if not command()[0].endswith("sessionview"):
        pytest.skip("the sessionview command is not installed (--read-only is its option)")
    shutil.copyfile(FIXTURES / "brute-session.jsonl", tmp_path / "s.jsonl")
    tmux = _start(tmp_path, ["--read-only", "s.jsonl"])
    try:
        tmux.wait_for("11 records")
        tmux.wait_for("#11")
        tmux.run("send-keys", "-t", "t", "e")
        screen = tmux.wait_for("editing is off")
        assert "read-only" in screen
        tmux.run("send-keys", "-t", "t", "q")
        tmux.wait_for("EXITED 0")
    finally:
        tmux.run("kill-server", check=False)
