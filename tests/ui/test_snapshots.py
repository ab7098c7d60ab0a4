"""A few SVG snapshots (pytest-textual-snapshot). Deterministic: fixed clock, fixed mtimes, relative
paths (the tests run from a temporary directory), and every worker waited for before the picture.

Update with ``pytest tests/ui/test_snapshots.py --snapshot-update`` after an intended change."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.browser import BrowserScreen
from sessionview.ui.screens.session import SessionScreen
from uihelpers import FIXTURES, NOW, SIZE, after_workers, fixed_clock, wait_for

DEMO = Path(__file__).resolve().parents[2] / "sessionview" / "demo"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "sessions"
    d.mkdir()
    for i, name in enumerate(["brute-session.jsonl", "claude-code.jsonl", "codex-rollout.jsonl", "pi-agent.jsonl"]):
        shutil.copyfile(FIXTURES / name, d / name)
        os.utime(d / name, (NOW - 90 * (i + 1), NOW - 90 * (i + 1)))
    shutil.copyfile(DEMO / "problems.jsonl", d / "problems.jsonl")
    os.utime(d / "problems.jsonl", (NOW - 86400 * 3, NOW - 86400 * 3))
    monkeypatch.chdir(tmp_path)
    return d


async def _session_ready(pilot) -> None:
    app = pilot.app
    await after_workers(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
    await after_workers(pilot, lambda: app.screen.model.indexed and app.screen.model.stats is not None, what="index and stats")
    await pilot.pause()


def test_browser_snapshot(workdir, snap_compare):
    async def ready(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded)
        await wait_for(pilot, lambda: all(not e.stale for e in app.screen.table.rows))
        await pilot.pause()

    app = SessionViewApp("sessions", clock=fixed_clock, watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_transcript_snapshot(workdir, snap_compare):
    async def ready(pilot):
        await _session_ready(pilot)
        await pilot.press("G", "colon", "7", "enter")  # from the end, as the picture was taken
        await wait_for(pilot, lambda: pilot.app.screen.transcript.cursor_number == 7)
        await pilot.press("enter")
        await pilot.pause()

    app = SessionViewApp("sessions/brute-session.jsonl", clock=fixed_clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_follow_snapshot(workdir, snap_compare):
    async def ready(pilot):
        await _session_ready(pilot)
        screen = pilot.app.screen
        await pilot.press("G", "k", "k")
        with open("sessions/brute-session.jsonl", "ab") as f:
            f.write(b'{"role":"user","content":"And now?"}\n{"role":"assistant","content":"Still here ')
        await wait_for(pilot, lambda: screen.transcript.new_count == 1 and screen.model.pending is not None)
        await pilot.pause()

    app = SessionViewApp("sessions/brute-session.jsonl", clock=fixed_clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_bad_records_snapshot(workdir, snap_compare):
    async def ready(pilot):
        await _session_ready(pilot)
        await pilot.press("G", "g", "j", "j", "i")
        await pilot.pause()

    app = SessionViewApp("sessions/problems.jsonl", clock=fixed_clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
