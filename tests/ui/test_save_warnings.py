"""What the plan and the save warn about reaches the user of the app: a planned change's warnings in its
preview, bytes another process wrote that are not in the new file (with where they are kept) as an error and
in the status line; and the history screen marks untrusted backups and unmerged files and restores neither."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from textual.widgets import DataTable

from sessionview.core.edit import history as edit_history
from sessionview.core.store import backups
from sessionview.ui.dialogs.confirm import ConfirmScreen, PreviewScreen
from sessionview.ui.dialogs.history import HistoryScreen
from uihelpers import SIZE, wait_for
from edithelpers import make_app, modal, notes, opened, saved, select, settled


def lines_of(p: Path) -> list[bytes]:
    return p.read_bytes().splitlines(keepends=True)


async def test_a_planned_changes_warning_is_shown_in_its_preview(brute):
    app = make_app(brute)
    app.external_editor = lambda text: '{"role":"user","content":5}'  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 6)
        await pilot.press("E")
        pv = await modal(pilot, PreviewScreen)
        warning = str(pv.query_one("#preview-warning").render())
        assert "provider is likely to reject" in warning, warning
        await pilot.press("y")
        await saved(pilot, screen, "edit #6")
    assert lines_of(brute)[5] == b'{"role":"user","content":5}\n'  # Brute accepts it: written as asked


async def test_bytes_not_carried_into_the_new_file_are_told_with_where_they_are_kept(brute, monkeypatch):
    commit = edit_history.EditHistory._commit

    def not_carried(self, change, force):  # the real save, reported as if 5 appended bytes were not carried
        outcome = commit(self, change, force)
        result = dataclasses.replace(outcome.result, not_carried_bytes=5, kept_paths=("/x/y.unmerged",))
        return dataclasses.replace(outcome, result=result)

    monkeypatch.setattr(edit_history.EditHistory, "_commit", not_carried)
    app = make_app(brute)
    severities: list[tuple[str, str]] = []
    notify = app.notify

    def record(message, **kw):
        severities.append((kw.get("severity", "information"), str(message)))
        notify(message, **kw)

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 4)
        await pilot.press("d")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.edit_status.startswith("saved: delete #4"), what="saved")
        await settled(pilot, screen)
        assert "/x/y.unmerged" in screen.edit_status and "5 bytes" in screen.edit_status
        errors = [m for s, m in severities if s == "error"]
        assert any("5 bytes" in m and "/x/y.unmerged" in m for m in errors), severities
    assert "saved: delete #4" in notes(app)


async def test_a_save_warning_is_a_warning_notification(brute, monkeypatch):
    commit = edit_history.EditHistory._commit

    def warned(self, change, force):
        outcome = commit(self, change, force)
        result = dataclasses.replace(outcome.result, warnings=("lines carried over could not be synced: EIO",))
        return dataclasses.replace(outcome, result=result)

    monkeypatch.setattr(edit_history.EditHistory, "_commit", warned)
    app = make_app(brute)
    severities: list[tuple[str, str]] = []
    notify = app.notify

    def record(message, **kw):
        severities.append((kw.get("severity", "information"), str(message)))
        notify(message, **kw)

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 4)
        await pilot.press("d")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "delete #4")
        assert any(s == "warning" and "could not be synced" in m for s, m in severities), severities


async def test_history_marks_untrusted_backups_and_unmerged_files_and_restores_neither(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 4)
        await pilot.press("d")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "delete #4")
        after = lines_of(brute)
        (bak,) = backups.list_backups(brute)
        os.chmod(bak.path, 0o666)  # writable by others: never restored
        kept = backups.write_unmerged(os.path.realpath(brute), b'{"role":"user","content":"from elsewhere"}\n')
        await pilot.press("H")
        hs = await modal(pilot, HistoryScreen)
        assert hs.query_one(DataTable).row_count == 2
        assert [b.kind for b in hs.backups] == ["backup", "unmerged"] and hs.backups[0].untrusted
        table = hs.query_one(DataTable)
        first, second = (str(table.get_row_at(i)[4]) for i in range(2))
        assert first.startswith("UNTRUSTED: writable by") and "(not restored)" in first, first
        assert second.startswith("unmerged: bytes a save could not merge") and kept in second, second
        await pilot.press("enter")  # the untrusted backup: told why, not restored
        await wait_for(pilot, lambda: "not restored: UNTRUSTED" in notes(app), what="refusal")
        assert app.screen is hs
        await pilot.press("down", "r")  # the unmerged file: not a backup of the session
        await wait_for(pilot, lambda: "not restored: unmerged" in notes(app), what="refusal of unmerged")
        assert app.screen is hs and not isinstance(app.screen, ConfirmScreen)
        assert kept in notes(app)
        await pilot.press("escape")
        await settled(pilot, screen)
    assert lines_of(brute) == after
