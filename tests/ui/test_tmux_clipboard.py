"""Copy in a real terminal: ``y`` sends OSC 52, and tmux (``set-clipboard on``) takes it into a paste buffer."""

from __future__ import annotations

import os
import shlex
import shutil
import time
from pathlib import Path

import pytest

from test_tmux import TMUX, Tmux, command
from uihelpers import FIXTURES

pytestmark = pytest.mark.slow


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it)")
def test_y_reaches_the_terminal_clipboard_through_osc_52(tmp_path: Path):
    shutil.copyfile(FIXTURES / "brute-session.jsonl", tmp_path / "s.jsonl")
    os.utime(tmp_path / "s.jsonl", (time.time() - 3600,) * 2)  # finished: it opens at its first prompt, #1
    tmux = Tmux(f"svclip-{os.getpid()}")
    tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "sh")
    try:
        tmux.run("set-option", "-s", "set-clipboard", "on")  # before the app starts: applications may set the clipboard
        deadline = time.monotonic() + 10
        while tmux.run("display-message", "-p", "-t", "t", "#{pane_width}x#{pane_height}").strip() != "120x40":
            assert time.monotonic() < deadline, "the tmux pane never got its size"
            time.sleep(0.05)
        cmd = " ".join(shlex.quote(c) for c in [*command(), "s.jsonl"]) + "; echo EXITED $?"
        tmux.run("send-keys", "-t", "t", f"cd {shlex.quote(str(tmp_path))} && {cmd}", "Enter")
        tmux.wait_for("11 records")
        tmux.wait_for("Liste les fichiers")
        assert tmux.run("list-buffers", check=False).strip() == ""
        tmux.run("send-keys", "-t", "t", "y")
        tmux.wait_for("copied the text of #1")
        expected = "Liste les fichiers du dépôt, s'il te plaît 📁"
        deadline = time.monotonic() + 10
        buffer = ""
        while time.monotonic() < deadline:
            buffer = tmux.run("show-buffer", check=False)
            if buffer:
                break
            time.sleep(0.05)
        assert buffer == expected
        tmux.run("send-keys", "-t", "t", "q")
        tmux.wait_for("EXITED 0")
    finally:
        tmux.run("kill-server", check=False)
