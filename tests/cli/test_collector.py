"""``sessionview FILE`` holds the cyclic garbage collector until the app's first frame (sessionview.ui.startup); the
command never leaves it off, however it ends, and never turns on a collector someone else turned off."""

from __future__ import annotations

import gc

from sessionview.cli import main
from sessionview.ui import startup


def test_the_app_path_leaves_the_collector_on_when_it_fails(tmp_path, capsys):
    assert gc.isenabled()
    assert main([str(tmp_path / "missing.jsonl")]) == 2  # no such file: the app never starts
    assert gc.isenabled() and not startup.held()
    assert "no such file" in capsys.readouterr().err


def test_a_hold_is_released_once_and_only_its_own():
    assert gc.isenabled()
    startup.hold_collector()
    try:
        assert not gc.isenabled() and startup.held()
        startup.release_collector()
        startup.release_collector()
        assert gc.isenabled() and not startup.held()
        gc.disable()  # someone else's
        startup.hold_collector()
        startup.release_collector()
        assert not gc.isenabled()  # still theirs
    finally:
        gc.enable()


def test_other_commands_never_touch_it(tmp_path, capsys):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"role":"user","content":"hi"}\n')
    assert main(["check", str(p)]) == 0
    assert gc.isenabled() and not startup.held()
