"""The status line: its messages pass (a lifetime), Esc clears what it was about, the position counter of a
pending line, and notifications that cover neither the status line nor a dialog's keys."""

from __future__ import annotations

from pathlib import Path

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.session import SessionScreen
from uihelpers import SIZE, after_workers, fixed_clock, wait_for


def line(role: str, content: str) -> bytes:
    import json

    return (json.dumps({"role": role, "content": content}, separators=(",", ":")) + "\n").encode()


def make(tmp_path: Path, n: int = 17) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(line("user" if i % 2 == 0 else "assistant", f"message {i + 1}") for i in range(n)))
    return p


async def opened(pilot) -> SessionScreen:
    app = pilot.app
    await after_workers(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None and app.screen.model.indexed)
    await pilot.pause()
    return app.screen


def status(app) -> str:
    return str(app.screen.query_one("#status").render())


async def test_a_file_event_on_the_status_line_passes(tmp_path, monkeypatch):
    monkeypatch.setattr(SessionScreen, "STATUS_LIFETIME", 0.2)
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        with open(p, "r+b") as f:
            f.truncate(0)
            f.write(line("user", "a new start"))
        await wait_for(pilot, lambda: screen.notice == "truncated", what="truncated")
        assert "truncated" in status(app)
        await wait_for(pilot, lambda: screen.notice == "", what="the notice to pass")
        assert "truncated" not in status(app)


async def test_a_deleted_file_stays_said(tmp_path, monkeypatch):
    monkeypatch.setattr(SessionScreen, "STATUS_LIFETIME", 0.05)
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        p.unlink()
        await wait_for(pilot, lambda: screen.notice == "deleted", what="deleted")
        await pilot.pause()
        assert screen.notice == "deleted" and "notice" not in screen._expiry  # no lifetime: it is the state of things


async def test_esc_clears_the_filter_count_and_it_passes_anyway(tmp_path, monkeypatch):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("f", *"user", "enter")
        await after_workers(pilot, lambda: "records match" in screen.search_status, what="the filter")
        assert "9 records match" in status(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not screen.model.filter.active
        assert "match" not in status(app)
        monkeypatch.setattr(SessionScreen, "STATUS_LIFETIME", 0.1)
        await pilot.press("f", *"assistant", "enter")
        await after_workers(pilot, lambda: screen.model.filter.active, what="the filter")
        await wait_for(pilot, lambda: screen.search_status == "", what="the count to pass")
        assert "filter: assistant" in status(app)  # the filter itself is still said


async def test_the_position_of_a_pending_line(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        with open(p, "ab") as f:
            f.write(b'{"role":"assistant","content":"half')
        await wait_for(pilot, lambda: screen.model.pending is not None, what="pending")
        await pilot.pause()
        text = status(app)
        assert "18/17" not in text
        assert "pending line after #17" in text and "18/18" in text


async def test_notifications_cover_neither_the_status_line_nor_a_dialogs_keys(tmp_path):
    from textual.widgets._toast import Toast

    from sessionview.ui.dialogs.confirm import ConfirmScreen

    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await opened(pilot)
        for i in range(3):
            app.notify(f"a notification with some words in it, number {i}", timeout=30)
        await wait_for(pilot, lambda: len(app.screen.query(Toast)) == 3, what="three toasts")
        toasts = list(app.screen.query(Toast))
        status_region = screen.query_one("#status").region
        assert not any(t.region.overlaps(status_region) for t in toasts)
        app.push_screen(ConfirmScreen("a question", "is this " * 60))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        app.notify("another one, over the dialog", timeout=30)
        dialog = app.screen
        await wait_for(pilot, lambda: len(dialog.query(Toast)) >= 1, what="a toast over the dialog")
        keys = dialog.query_one(".modal-keys").region
        footer = dialog.query_one("Footer").region
        toasts = list(dialog.query(Toast))
        assert not any(t.region.overlaps(keys) or t.region.overlaps(footer) for t in toasts)
