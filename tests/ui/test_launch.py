"""What the app is given: a FIFO or another path that is not a regular file fails as ``show`` does (one line,
exit 2) before any app starts; a file that cannot be opened once the app runs says why without a Python
class name and offers no editing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionview.ui.launch import run
from edithelpers import make_app
from uihelpers import SIZE, after_workers


def test_a_fifo_fails_before_the_app_starts(tmp_path: Path, capsys):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert run(str(fifo)) == 2
    err = capsys.readouterr().err
    assert err == f"sessionview: {fifo}: not a regular file (a FIFO)\n"


def test_a_device_fails_the_same_way(capsys):
    assert run("/dev/null") == 2
    assert capsys.readouterr().err == "sessionview: /dev/null: not a regular file (a character device)\n"


@pytest.mark.slow
def test_the_command_on_a_fifo_prints_one_line_and_exits_2(tmp_path: Path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    code = "import sys; from sessionview.ui.launch import run; sys.exit(run(sys.argv[1]))"
    out = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [f"sessionview: {fifo}: not a regular file (a FIFO)"]
    assert out.stdout == ""


async def test_a_path_that_turns_into_a_fifo_says_so_without_a_class_name_and_offers_no_edit(tmp_path: Path):
    p = tmp_path / "s.jsonl"
    os.mkfifo(p)
    app = make_app(p)  # past launch.run's check (as if it was swapped after): the screen says why
    async with app.run_test(size=SIZE) as pilot:
        await after_workers(pilot, lambda: getattr(app.screen, "state", "") == "error", what="the open to fail")
        await pilot.pause()
        screen = app.screen
        assert "NotRegularFile" not in screen.notice and "not a regular file (a FIFO)" in screen.notice
        assert "NotRegularFile" not in "\n".join(app.notes)
        assert screen.check_action("edit", ()) is False and screen.check_action("delete", ()) is False
        footer = " ".join(b.binding.description for b in screen.active_bindings.values() if b.enabled and b.binding.show)
        assert "Edit" not in footer
