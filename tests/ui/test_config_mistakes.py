"""Mistakes in the configuration are shown once, in a dialog, with the file and the line: invalid TOML, an
unknown setting, an unknown binding id under [keymap], an unknown key. What is right is still applied."""

from __future__ import annotations

from sessionview.ui.dialogs.modal import NoticeScreen
from sessionview.ui.screens.session import SessionScreen
from edithelpers import flat, make_app, modal, opened
from uihelpers import SIZE, wait_for


async def test_unknown_ids_keys_and_settings_are_shown_with_their_lines(brute, tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text('sumarizer = "llm"\n\n[keymap]\n"session.serach" = "ctrl+f"\ndelete = "ctrl+nonsense"\n"transcript.first" = "ctrl+home"\n')
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(cfg))
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        await modal(pilot, NoticeScreen)
        text = flat(app)
        assert "configuration: 3 mistakes" in text
        lines = "\n".join(app.screen.lines)  # what the dialog shows (the screen wraps a long temporary path)
        assert f"{cfg}:1: unknown setting 'sumarizer'" in lines
        assert f"{cfg}:4: [keymap] unknown binding id 'session.serach'; did you mean 'session.search'?" in lines
        assert f"{cfg}:5: [keymap] delete: unknown key 'ctrl+nonsense'" in lines
        assert "unknown setting 'sumarizer'" in text and "did you mean 'session.search'?" in text
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), what="the session")
        screen = await opened(pilot)
        await pilot.press("G", "ctrl+home")  # the right entry was applied
        assert screen.transcript.cursor_number == 1
        assert not any("mistake" in n for n in app.notes)  # a dialog, not (only) a passing toast


async def test_invalid_toml_is_shown_with_its_line(brute, tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[keymap]\nedit = "e"\ndelete = \n')
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(cfg))
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        await modal(pilot, NoticeScreen)
        text = flat(app)
        assert "configuration: 1 mistake in" in text and "invalid TOML" in text and "line 3" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), what="the session")


async def test_a_good_configuration_shows_nothing(brute, tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text('summarizer = "cat"\n[keymap]\n"session.search" = "ctrl+f"\nundo = "u,ctrl+z"\n')
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(cfg))
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert app.screen is screen
