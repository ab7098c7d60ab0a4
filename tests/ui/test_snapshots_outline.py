"""SVG snapshot of the outline of a run (T): a turn, its Task call, and the subagent's own file unfolded
under it. Deterministic as in ``test_snapshots``: fixed clock and mtimes, relative paths, workers waited for.

Update with ``pytest tests/ui/test_snapshots_outline.py --snapshot-update`` after an intended change."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from textual.widgets import Tree

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.outline import OutlineScreen
from sessionview.ui.screens.session import SessionScreen
from uihelpers import FIXTURES, NOW, SIZE, after_workers, fixed_clock, wait_for

PROJECT = FIXTURES / "real" / "claude-code" / "agent-sessions-subagent-project"
MAIN = "project/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "project"
    shutil.copytree(PROJECT, d)
    for f in d.rglob("*"):
        os.utime(f, (NOW - 3600, NOW - 3600))
    monkeypatch.chdir(tmp_path)
    return d


def test_outline_snapshot(workdir, snap_compare):
    async def ready(pilot):
        app = pilot.app
        await after_workers(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
        await after_workers(pilot, lambda: app.screen.model.indexed and app.screen.model.stats is not None, what="index and stats")
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, OutlineScreen), what="outline")
        tree = app.screen.query_one(Tree)
        tree.cursor_line = 2  # the subagent's file
        await pilot.press("space")
        await wait_for(pilot, lambda: tree.last_line >= 4, what="the subagent's own outline")
        await pilot.pause()

    assert snap_compare(SessionViewApp(MAIN, clock=fixed_clock), terminal_size=SIZE, run_before=ready)
