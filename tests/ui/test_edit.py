"""Editing one message: the modal editor (JSON or text only), invalid input kept in place, the external
editor, the preview and its diff, read-only sessions and modes, keys, help and palette."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from sessionview.core.store import backups
from sessionview.core.edit import encode
from sessionview.core.littleghost import LittleGhostSession
from sessionview.core.session import open_session
from sessionview.ui.dialogs.confirm import ConfirmScreen, PreviewScreen
from sessionview.ui.dialogs.edit import EditorScreen
from sessionview.ui.dialogs.help import HelpScreen
from uihelpers import FIXTURES, SIZE, all_text, footer_line, place, wait_for
from edithelpers import make_app, modal, notes, opened, saved, select, settled

BRUTE = FIXTURES / "brute-session.jsonl"


def lines_of(p: Path) -> list[bytes]:
    return p.read_bytes().splitlines(keepends=True)


async def test_edit_in_the_modal_keeps_invalid_json_in_place_then_previews_and_saves(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 6)
        await pilot.press("e")
        ed = await modal(pilot, EditorScreen)
        assert ed.mode == "json" and ed.text == encode.pretty_record(open_session(brute), 6)
        assert "edit #6" in all_text(app) and "Check & preview" in all_text(app)
        # a broken edit: reported in the modal, the text stays as typed, nothing is written
        broken = '{"role": "user", "content": "Now read README.md, please"'
        ed.text_area.load_text(broken)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: ed.error, what="the error")
        assert app.screen is ed and "invalid JSON" in ed.error and ed.text == broken
        assert "✗ invalid JSON" in all_text(app)
        # a message Brute's reader would reject: also in place
        ed.text_area.load_text('{"role": "user", "content": "hi", "colour": "blue"}')
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "Brute would reject" in ed.error, what="the schema error")
        assert app.screen is ed and '"colour"' in ed.text
        assert lines_of(brute) == original
        # fixed: the preview shows the transcript as it will be, and the diff of the file
        ed.text_area.load_text(broken + "}")
        await pilot.press("end")
        await pilot.press("ctrl+s")
        pv = await modal(pilot, PreviewScreen)
        text = pv.query_one("#preview-rows").text
        assert "- user" in text and "+ user" in text and "Now read README.md, please" in text
        assert pv.showing == "transcript"
        await pilot.press("d")
        assert pv.showing == "diff"
        diff = pv.query_one("#preview-diff").text
        assert '-{"role":"user","content":"Now read README.md"}' in diff
        assert '+{"role":"user","content":"Now read README.md, please"}' in diff
        # n goes back to the editor, the text kept
        await pilot.press("n")
        ed = await modal(pilot, EditorScreen)
        assert ed.text == broken + "}"
        await pilot.press("ctrl+s")
        await modal(pilot, PreviewScreen)
        await pilot.press("enter")
        await saved(pilot, screen, "edit #6")
        assert screen.transcript.cursor_number == 6
        assert screen.model.view(6).text == "Now read README.md, please"
        assert "saved: edit #6" in all_text(app)
        assert "replaced" not in notes(app) and screen.notice == "" and screen.state == "idle"
    new = lines_of(brute)
    assert new[5] == b'{"role":"user","content":"Now read README.md, please"}\n'
    assert new[:5] + new[6:] == original[:5] + original[6:]
    assert len(backups.list_backups(brute)) == 1


async def test_escape_cancels_the_editor_and_writes_nothing(brute):
    before = brute.read_bytes()
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("e")
        ed = await modal(pilot, EditorScreen)
        ed.text_area.load_text("{}")
        await pilot.press("escape")
        ask = await modal(pilot, ConfirmScreen)  # the text was changed: escape asks first
        assert "throw the edit away?" in all_text(app)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is ed, what="back in the editor")
        assert ed.text == "{}"
        await pilot.press("escape")
        await modal(pilot, ConfirmScreen)
        await pilot.press("y")
        await settled(pilot, screen)
        assert "cancelled" in notes(app) and ask is not app.screen
    assert brute.read_bytes() == before


async def test_escape_leaves_an_unchanged_editor_without_asking(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("e")
        await modal(pilot, EditorScreen)
        await pilot.press("escape")
        await settled(pilot, screen)
        assert "edit cancelled" in notes(app)


async def test_content_only_toggle_edits_the_text_and_keeps_the_rest(tmp_path):
    p = place(FIXTURES / "littleghost-filesystem-snapshot.json", tmp_path, 3600)
    app = make_app(p)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 1)
        await pilot.press("e")
        ed = await modal(pilot, EditorScreen)
        assert '"type": "text"' in ed.text
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: ed.mode == "content")
        assert ed.text == "Wie spät ist es in Zürich? ⏰"
        assert "text only" in all_text(app)
        ed.text_area.load_text("Wie spät ist es in Bern?")
        await pilot.press("ctrl+t")  # back to JSON and again: each keeps its text
        await wait_for(pilot, lambda: ed.mode == "json")
        assert '"type": "text"' in ed.text
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: ed.mode == "content")
        assert ed.text == "Wie spät ist es in Bern?"
        await pilot.press("ctrl+s")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "edit #1")
        assert screen.model.view(1).text == "Wie spät ist es in Bern?"
    s = LittleGhostSession.load(p)
    assert s.read_only_reason is None and s.digest_ok is True
    assert s.message_values[0]["content"] == [{"type": "text", "text": "Wie spät ist es in Bern?"}]


def fake_editor(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-editor"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


async def test_external_editor_edits_the_message_and_previews(brute, tmp_path, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)  # $EDITOR when there is no $VISUAL
    monkeypatch.setenv("EDITOR", fake_editor(tmp_path, "sed -i 's/Now read README.md/Lis le README/' \"$1\""))
    app = make_app(brute)
    suspended = []

    @contextlib.contextmanager
    def suspend():  # the headless driver cannot suspend: the editor runs all the same
        suspended.append(True)
        yield

    app.suspend = suspend  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 6)
        await pilot.press("E")
        pv = await modal(pilot, PreviewScreen)
        assert suspended == [True]
        assert "Lis le README" in pv.query_one("#preview-rows").text
        await pilot.press("y")
        await saved(pilot, screen, "edit #6")
    assert lines_of(brute)[5] == b'{"role":"user","content":"Lis le README"}\n'


async def test_external_editor_result_that_is_invalid_opens_the_modal_with_it(brute, tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", "false")  # $VISUAL wins over $EDITOR
    monkeypatch.setenv("VISUAL", fake_editor(tmp_path, "printf '{\"role\": \"user\", \"content\": ' > \"$1\""))
    app = make_app(brute)
    app.suspend = contextlib.nullcontext  # type: ignore[method-assign]
    before = brute.read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 6)
        await pilot.press("E")
        ed = await modal(pilot, EditorScreen)
        assert ed.text == '{"role": "user", "content": ' and "invalid JSON" in ed.error
        await pilot.press("escape")
        await modal(pilot, ConfirmScreen)  # the editor's text is not the file's: escape asks
        await pilot.press("y")
        await settled(pilot, screen)
    assert brute.read_bytes() == before


async def test_external_editor_is_injectable_and_refuses_without_a_terminal(brute, monkeypatch):
    monkeypatch.setenv("VISUAL", "true")
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 4)
        # the default: the headless driver cannot be suspended, so no editor is started
        await pilot.press("E")
        await wait_for(pilot, lambda: "needs the terminal" in notes(app) and not screen.busy)
        app.external_editor = lambda text: text.replace("Trois entrées", "Three entries")
        await pilot.press("E")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "edit #4")
    assert b"Three entries" in lines_of(brute)[3]


async def test_read_only_mode_hides_every_write_action(brute):
    before = brute.read_bytes()
    app = make_app(brute, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        footer = footer_line(app)
        assert "Search" in footer and "Edit" not in footer and "Delete" not in footer and "Compact" not in footer
        commands = [c.title for c in app.get_system_commands(screen)]
        for hidden in ("Edit", "Edit in $EDITOR", "Delete", "Truncate after", "Mark range", "Compact", "Undo", "Redo"):
            assert hidden not in commands, hidden
        assert "Search" in commands and "History & backups" in commands
        await pilot.press("e", "E", "d", "t", "v", "c", "u")
        await pilot.pause()
        assert app.screen is screen and screen.transcript.range_anchor is None and not screen.busy
        assert "read-only" in all_text(app)
    assert brute.read_bytes() == before


async def test_littleghost_document_that_does_not_round_trip_is_refused_with_its_reason(tmp_path):
    raw = (FIXTURES / "littleghost-filesystem-snapshot.json").read_bytes()
    p = tmp_path / "doc.json"
    p.write_bytes(raw.replace(b"14:05 Uhr", b"14:06 Uhr"))
    os.utime(p, (0, 0))
    app = make_app(p)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert "read-only" in all_text(app).splitlines()[0]
        await select(pilot, screen, 2)
        for key in ("e", "d", "t"):
            app.notes.clear()
            await pilot.press(key)
            await wait_for(pilot, lambda: "read-only" in notes(app), what=f"{key} refused")
            assert "digest" in notes(app) and app.screen is screen
    assert b"14:06 Uhr" in p.read_bytes()


async def test_keys_help_and_palette_list_the_editing_actions(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await wait_for(pilot, lambda: "e Edit" in footer_line(app), what="the footer")
        footer = footer_line(app)
        for hint in ("e Edit", "d Delete", "v Mark range", "c Compact", "u Undo", "i Detail"):
            assert hint in footer, hint
        commands = [c.title for c in app.get_system_commands(screen)]
        names = ["Edit", "Edit in $EDITOR", "Delete", "Truncate after", "Mark range", "Extend range up", "Compact", "Undo", "Redo", "History & backups"]
        for name in names:
            assert name in commands, name
        assert "Apply again" not in commands  # only once an edit waits to be applied again
        await pilot.press("question_mark")
        help_screen = await modal(pilot, HelpScreen)
        rows = {desc: (where, keys) for where, keys, desc, _ in help_screen.rows}
        expected = {
            "Edit": "e",
            "Edit in $EDITOR": "E",
            "Delete": "d, del",
            "Truncate after": "t",
            "Mark range": "v",
            "Extend range up": "shift+↑",
            "Compact": "c",
            "Undo": "u",
            "Redo": "ctrl+r",
            "Detail": "i",
            "Unfold all": "O",
            "Last": "G, end",
        }
        for desc, keys in expected.items():
            assert rows[desc][1] == keys, (desc, rows[desc])
        assert rows["Edit"][0] == "Editing" and rows["Undo"][0] == "Editing" and rows["Detail"][0] == "SessionScreen"
        groups = [str(w.render()) for w in help_screen.query(".help-group")]
        assert "Editing (every write is previewed first)" in groups


async def test_the_keymap_rebinds_the_editing_actions(brute, tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[keymap]\nedit = "ctrl+e"\ndelete = "x"\nmark_range = "V"\ncompact = "C"\nundo = "ctrl+z"\n')
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(cfg))
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        footer = footer_line(app)
        assert "^e Edit" in footer and "x Delete" in footer and "V Mark range" in footer
        await pilot.press("G", "V")
        assert screen.transcript.range_anchor == 11
        await pilot.press("escape")
        await pilot.press("ctrl+e")
        await modal(pilot, EditorScreen)
        await pilot.press("escape")
        await settled(pilot, screen)


async def test_a_record_that_is_not_json_opens_as_its_text_to_be_fixed(tmp_path):
    p = tmp_path / "broken.jsonl"
    p.write_bytes(b'{"role":"user","content":"ok"}\n{"role":"assistant","content":"cut\n{"role":"user","content":"end"}\n')
    os.utime(p, (0, 0))
    app = make_app(p)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 2)
        await pilot.press("e")
        ed = await modal(pilot, EditorScreen)
        assert ed.text == '{"role":"assistant","content":"cut' and "not valid JSON" in ed.error
        ed.text_area.load_text('{"role":"assistant","content":"cut short"}')
        await pilot.press("ctrl+s")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "edit #2")
    assert p.read_bytes() == b'{"role":"user","content":"ok"}\n{"role":"assistant","content":"cut short"}\n{"role":"user","content":"end"}\n'


async def test_G_selects_the_last_message_for_the_next_action(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("g")
        assert screen.transcript.cursor_number == 1
        await pilot.press("G")
        assert screen.transcript.cursor_number == 11
        await pilot.press("d")
        await modal(pilot, PreviewScreen)
        assert "delete #11" in all_text(app)
        await pilot.press("y")
        await saved(pilot, screen, "delete #11")
        assert screen.transcript.cursor_number == 10
    assert lines_of(brute) == original[:10]


async def test_an_editor_that_fails_changes_nothing(brute, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "false")
    before = brute.read_bytes()
    app = make_app(brute)
    app.suspend = contextlib.nullcontext  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("E")
        await wait_for(pilot, lambda: "exited with status 1" in notes(app) and not screen.busy)
        assert app.screen is screen
    assert brute.read_bytes() == before
