"""SVG snapshots of the dialogs around a write: the editor, the preview, an integrity refusal, a save
conflict, the history of backups, and the help screen. Deterministic as in ``test_snapshots``: fixed
clock, fixed mtimes, relative paths, times shown in UTC, every worker waited for before the picture.

Update with ``pytest tests/ui/test_snapshots_modals.py --snapshot-update`` after an intended change."""

from __future__ import annotations

import os
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sessionview.core.store import backups
from sessionview.ui.app import SessionViewApp
from sessionview.ui.dialogs.confirm import ConflictScreen, PreviewScreen, RefusalScreen
from sessionview.ui.dialogs.edit import EditorScreen
from sessionview.ui.dialogs.help import HelpScreen
from sessionview.ui.dialogs.history import HistoryScreen
from sessionview.ui.screens.session import SessionScreen
from uihelpers import FIXTURES, NOW, SIZE, after_workers, fixed_clock, wait_for

PATH = "sessions/brute-session.jsonl"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "sessions"
    d.mkdir()
    shutil.copyfile(FIXTURES / "brute-session.jsonl", d / "brute-session.jsonl")
    os.utime(d / "brute-session.jsonl", (NOW - 3600, NOW - 3600))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield d
    monkeypatch.undo()
    time.tzset()


async def _at(pilot, n: int) -> SessionScreen:
    """The session open, indexed and counted, the cursor on #n, no worker running."""
    app = pilot.app
    await after_workers(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
    screen = app.screen
    await after_workers(pilot, lambda: screen.model.indexed and screen.model.stats is not None, what="index and stats")
    await pilot.press("colon", *str(n), "enter")
    await wait_for(pilot, lambda: screen.transcript.cursor_number == n, what=f"cursor on #{n}")
    return screen


async def _modal(pilot, cls: type) -> None:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, cls), what=cls.__name__)
    await pilot.pause()


def _app() -> SessionViewApp:
    return SessionViewApp(PATH, clock=fixed_clock)


def test_editor_snapshot(workdir, snap_compare):
    async def ready(pilot):
        await _at(pilot, 6)
        await pilot.press("e")
        await _modal(pilot, EditorScreen)

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)


def test_preview_snapshot(workdir, snap_compare):
    async def ready(pilot):
        await _at(pilot, 6)
        await pilot.press("e")
        await _modal(pilot, EditorScreen)
        pilot.app.screen.text_area.load_text('{"role": "user", "content": "Now read README.md twice"}')
        await pilot.press("ctrl+s")
        await _modal(pilot, PreviewScreen)

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)


def test_refusal_snapshot(workdir, snap_compare):
    async def ready(pilot):
        await _at(pilot, 3)
        await pilot.press("d")  # a tool result alone: its call would dangle
        await _modal(pilot, RefusalScreen)

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)


def test_conflict_snapshot(workdir, snap_compare):
    diff = (
        "--- a/sessions/brute-session.jsonl\n+++ b/sessions/brute-session.jsonl\n@@ -6 +6 @@\n"
        '-{"role":"user","content":"Now read README.md"}\n+{"role":"user","content":"Now read README.md twice"}\n'
    )

    async def ready(pilot):
        await _at(pilot, 6)
        message = f"conflict: {PATH} changed on disk since it was loaded: not saved"
        pilot.app.push_screen(ConflictScreen(message, "edit #6", diff))
        await _modal(pilot, ConflictScreen)
        await pilot.press("d")  # the diff shown
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)


def test_history_snapshot(workdir, snap_compare, monkeypatch):
    size = (workdir / "brute-session.jsonl").stat().st_size

    def found(path: str) -> list[backups.Backup]:
        return [
            backups.Backup(f"/state/b{i}.bak", datetime(2025, 12, 31, 23, 50 - 10 * i, 7, tzinfo=timezone.utc), size - 40 * i, path, i)
            for i in range(3)
        ]

    monkeypatch.setattr(backups, "list_backups", found)

    async def ready(pilot):
        await _at(pilot, 6)
        await pilot.press("H")
        await _modal(pilot, HistoryScreen)

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)


def test_help_snapshot(workdir, snap_compare):
    async def ready(pilot):
        await _at(pilot, 6)
        await pilot.press("question_mark")
        await _modal(pilot, HelpScreen)

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)
