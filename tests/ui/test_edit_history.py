"""Undo and redo across this run's operations (each a new previewed save), and the history screen that
lists the backups and restores one after a confirmation."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from sessionview.core.store import backups
from sessionview.ui.dialogs.confirm import ConfirmScreen, PreviewScreen
from sessionview.ui.dialogs.history import HistoryScreen
from uihelpers import SIZE, all_text, footer_line, wait_for
from edithelpers import make_app, modal, notes, opened, saved, select, settled


def lines_of(p: Path) -> list[bytes]:
    return p.read_bytes().splitlines(keepends=True)


async def delete(pilot, screen, n: int) -> None:
    await select(pilot, screen, n)
    await pilot.press("d")
    await modal(pilot, PreviewScreen)
    await pilot.press("y")
    await saved(pilot, screen, f"delete #{n}")


async def test_undo_and_redo_each_previewed_and_saved(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("u")
        await wait_for(pilot, lambda: "nothing to undo" in notes(app))
        await delete(pilot, screen, 4)
        await delete(pilot, screen, 10)  # was #11
        assert lines_of(brute) == original[:3] + original[4:10]
        await pilot.press("u")
        pv = await modal(pilot, PreviewScreen)
        assert "undo · delete #10" in all_text(app) and "+ assistant" in pv.query_one("#preview-rows").text
        await pilot.press("y")
        await saved(pilot, screen, "undo delete #10")
        assert lines_of(brute) == original[:3] + original[4:]
        await pilot.press("u")
        await modal(pilot, PreviewScreen)
        await pilot.press("enter")
        await saved(pilot, screen, "undo delete #4")
        assert lines_of(brute) == original
        assert screen.transcript.cursor_number == 4
        app.notes.clear()
        await pilot.press("u")
        await wait_for(pilot, lambda: "nothing to undo" in notes(app))
        await pilot.press("ctrl+r")
        await modal(pilot, PreviewScreen)
        assert "redo · delete #4" in all_text(app)
        await pilot.press("y")
        await saved(pilot, screen, "redo delete #4")
        assert lines_of(brute) == original[:3] + original[4:]
        await pilot.press("ctrl+r")
        await modal(pilot, PreviewScreen)
        await pilot.press("escape")  # a cancelled redo writes nothing and stays available
        await settled(pilot, screen)
        assert lines_of(brute) == original[:3] + original[4:]
        assert len(screen.history.undone) == 1
        assert "replaced" not in notes(app)
    # every save kept a backup of what it replaced
    assert len(backups.list_backups(brute)) == 5


async def test_history_screen_lists_backups_and_restores_one(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await delete(pilot, screen, 4)
        await delete(pilot, screen, 1)
        after = lines_of(brute)
        await pilot.press("H")
        hs = await modal(pilot, HistoryScreen)
        table = hs.query_one(DataTable)
        assert table.row_count == 2 and len(hs.backups) == 2
        text = all_text(app)
        assert "✓ delete #4" in text and "✓ delete #1" in text and "r or enter restores" in text
        # the oldest backup: the file before any edit
        await pilot.press("down")
        assert hs.selected is hs.backups[1]
        await pilot.press("enter")
        confirm = await modal(pilot, ConfirmScreen)
        assert "Put back the backup saved" in all_text(app)
        await pilot.press("n")
        await settled(pilot, screen)
        assert lines_of(brute) == after and "restore cancelled" in notes(app)
        await pilot.press("H")
        hs = await modal(pilot, HistoryScreen)
        await pilot.press("down", "r")
        confirm = await modal(pilot, ConfirmScreen)
        assert confirm is app.screen
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.edit_status.startswith("saved: restore of the backup"), what="restored")
        await settled(pilot, screen)
        assert len(screen.model) == 11
        assert screen.history.done == () and "restore of the backup" in notes(app)
    assert lines_of(brute) == original
    assert len(backups.list_backups(brute)) == 3  # the restore backed up what it replaced


async def test_history_screen_in_read_only_mode_browses_only(brute):
    app = make_app(brute, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("H")
        hs = await modal(pilot, HistoryScreen)
        assert "no backups of this file yet" in all_text(app) and "Restore" not in footer_line(app)
        await pilot.press("r")
        await pilot.pause()
        assert app.screen is hs
        await pilot.press("escape")
        await settled(pilot, screen)
