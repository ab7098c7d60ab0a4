"""SVG snapshots of the readable transcript: a command and its result, an edit's diff, a file write, an error
result and Markdown text. Small fixed fixtures (tests/fixtures/views, no timestamps), fixed mtimes and clock.

Update with ``pytest tests/ui/test_snapshots_tools.py --snapshot-update`` after an intended change."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.session import SessionScreen
from uihelpers import FIXTURES, SIZE, after_workers, fixed_clock, place, wait_for

VIEWS = FIXTURES / "views"


@pytest.fixture
def views(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "views"
    d.mkdir()
    for name in ("tools-brute.jsonl", "errors-claude.jsonl"):
        place(VIEWS / name, d, 600)
    monkeypatch.chdir(tmp_path)
    return d


def at_record(n: int, unfold: bool = True):
    async def ready(pilot) -> None:
        app = pilot.app
        await after_workers(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
        await after_workers(pilot, lambda: app.screen.model.indexed and app.screen.model.stats is not None, what="index and stats")
        await pilot.press("colon", *str(n), "enter")
        await wait_for(pilot, lambda: app.screen.transcript.cursor_number == n)
        if unfold:
            await pilot.press("enter")
        await pilot.pause()

    return ready


def test_command_and_its_result_snapshot(views, snap_compare):
    app = SessionViewApp("views/tools-brute.jsonl", clock=fixed_clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=at_record(10))


def test_edit_diff_snapshot(views, snap_compare):
    app = SessionViewApp("views/tools-brute.jsonl", clock=fixed_clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=at_record(6))


def test_file_write_snapshot(views, snap_compare):
    app = SessionViewApp("views/tools-brute.jsonl", clock=fixed_clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=at_record(8))


def test_error_result_snapshot(views, snap_compare):
    app = SessionViewApp("views/errors-claude.jsonl", clock=fixed_clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=at_record(2))


def test_markdown_snapshot(views, snap_compare):
    app = SessionViewApp("views/tools-brute.jsonl", clock=fixed_clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=at_record(14, unfold=False))
