"""Editing a session an agent is writing: the warning, appends during an edit (rebased byte for byte), a
divergent rewrite (conflict, then reload and apply again), an agent writing its memory back over a saved
edit (overwritten, then apply again), and the transcript following the new file after our own save."""

from __future__ import annotations

import os
from pathlib import Path

from sessionview.ui.dialogs.confirm import ConfirmScreen, ConflictScreen, PreviewScreen
from sessionview.ui.dialogs.edit import EditorScreen
from uihelpers import SIZE, all_text, footer_line, wait_for
from edithelpers import flat, line, make_app, modal, notes, opened, saved, select, settled


def lines_of(p: Path) -> list[bytes]:
    return p.read_bytes().splitlines(keepends=True)


def append(p: Path, data: bytes) -> None:
    with open(p, "ab") as f:
        f.write(data)


def rewrite_in_place(p: Path, data: bytes) -> None:
    """What Brute does at the end of a turn: truncate the file, then write it whole."""
    with open(p, "r+b") as f:
        f.truncate(0)
        f.write(data)


def replace_file(p: Path, data: bytes) -> None:
    tmp = p.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, p)


EDITED = b'{"role":"user","content":"Now read README.md twice"}\n'


async def edit_six(pilot, screen, confirm_live: bool = False) -> None:
    await select(pilot, screen, 6)
    await pilot.press("e")
    if confirm_live:
        await modal(pilot, ConfirmScreen)
        await pilot.press("y")
    ed = await modal(pilot, EditorScreen)
    ed.text_area.load_text('{"role": "user", "content": "Now read README.md twice"}')
    await pilot.press("ctrl+s")



async def apply_again_shown(pilot) -> None:
    """Until the footer offers ``a Apply again`` (failing with the footer it showed)."""
    app = pilot.app
    await wait_for(pilot, lambda: "a Apply again" in footer_line(app), what=lambda: f"the key in the footer, on {footer_line(app)!r}")

async def test_a_live_session_warns_before_an_edit(brute):
    before = brute.read_bytes()
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        append(brute, line("user", "still typing"))
        await wait_for(pilot, lambda: screen.state == "live" and len(screen.model) == 12, what="live")
        await select(pilot, screen, 6)
        await pilot.press("e")
        await modal(pilot, ConfirmScreen)
        text = flat(app)
        assert "live session" in text and "rewrites the whole file at the end of its turn" in text
        await pilot.press("n")
        await settled(pilot, screen)
        assert brute.read_bytes() == before + line("user", "still typing")
        await pilot.press("d")
        await modal(pilot, ConfirmScreen)
        await pilot.press("y")
        await modal(pilot, PreviewScreen)
        assert "the session is live" in all_text(app)
        await pilot.press("escape")
        await settled(pilot, screen)


async def test_lines_appended_during_an_edit_are_kept_byte_for_byte(brute):
    original = lines_of(brute)
    tail = '{"role":"user","content":"während du editierst"}\r\n'.encode() + b'{"role":"assistant","content":"ok"}\n'
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 6)
        await pilot.press("e")
        ed = await modal(pilot, EditorScreen)
        append(brute, tail)  # the agent writes while the editor is open
        await wait_for(pilot, lambda: len(screen.model) == 13, what="the appended records")
        ed.text_area.load_text('{"role": "user", "content": "Now read README.md twice"}')
        await pilot.press("ctrl+s")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "edit #6")
        assert "appended meanwhile kept" in notes(app)
        assert len(screen.model) == 13 and screen.transcript.cursor_number == 6
        # the transcript follows the new file: a later append shows up
        append(brute, line("user", "after the save"))
        await wait_for(pilot, lambda: len(screen.model) == 14, what="an append after the save")
        assert screen.model.view(14).text == "after the save"
        assert "replaced" not in notes(app)
    assert brute.read_bytes() == b"".join(original[:5]) + EDITED + b"".join(original[6:]) + tail + line("user", "after the save")


async def test_a_divergent_rewrite_is_a_conflict_then_reload_and_apply_again(brute):
    original = lines_of(brute)
    rewritten = [line("user", "a new first message")] + original[1:] + [line("assistant", "the agent's next turn")]
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await edit_six(pilot, screen)
        await modal(pilot, PreviewScreen)
        rewrite_in_place(brute, b"".join(rewritten))  # while the preview is open
        await wait_for(pilot, lambda: screen.notice == "truncated", what="the rewrite seen")
        await pilot.press("y")
        cs = await modal(pilot, ConflictScreen)
        text = all_text(app)
        assert "conflict: edit #6 was not written" in text and "changed on disk" in text
        assert brute.read_bytes() == b"".join(rewritten)
        assert screen.pending_change is not None and "conflict" in screen.edit_status
        await pilot.press("d")
        assert cs.diff_shown and '+{"role":"user","content":"Now read README.md twice"}' in cs.query_one("#conflict-diff").text
        await pilot.press("r")
        pv = await modal(pilot, PreviewScreen)
        assert "apply again · edit #6" in all_text(app)
        assert "+ user" in pv.query_one("#preview-rows").text and "Now read README.md twice" in pv.query_one("#preview-rows").text
        assert '+{"role":"user","content":"Now read README.md twice"}' in pv.query_one("#preview-diff").text
        await pilot.press("y")
        await saved(pilot, screen, "edit #6 (applied again)")
        assert screen.pending_change is None
    expected = rewritten[:5] + [EDITED] + rewritten[6:]
    assert lines_of(brute) == expected


async def test_a_conflict_kept_for_later_is_applied_again_with_a(brute):
    original = lines_of(brute)
    rewritten = original[:1] + [line("user", "inserted by the agent")] + original[1:]
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await edit_six(pilot, screen)
        await modal(pilot, PreviewScreen)
        replace_file(brute, b"".join(rewritten))
        await wait_for(pilot, lambda: screen.notice == "replaced", what="the replacement seen")
        await pilot.press("y")
        await modal(pilot, ConflictScreen)
        await pilot.press("escape")
        await settled(pilot, screen)
        await apply_again_shown(pilot)
        assert screen.state == "live"  # the file was just replaced: a live session asks first
        await pilot.press("a")
        await modal(pilot, ConfirmScreen)
        await pilot.press("y")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "edit #6 (applied again)")
        await wait_for(pilot, lambda: "Apply again" not in footer_line(app), what="the key gone")
    assert lines_of(brute) == rewritten[:6] + [EDITED] + rewritten[7:]


async def test_an_agent_writing_its_memory_back_is_detected_as_overwritten(brute):
    original = lines_of(brute)
    agent = original + [line("assistant", "next turn")]
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await edit_six(pilot, screen)
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "edit #6")
        assert lines_of(brute)[5] == EDITED
        rewrite_in_place(brute, b"".join(agent))  # Brute ends its turn: its own history, without the edit
        await wait_for(pilot, lambda: screen.pending_change is not None, what="overwritten")
        assert "overwritten" in screen.edit_status and "overwritten" in notes(app)
        await wait_for(pilot, lambda: len(screen.model) == 12, what="the agent's file shown")
        await apply_again_shown(pilot)
        assert "overwritten: edit #6" in all_text(app)
        await pilot.press("a")
        await modal(pilot, ConfirmScreen)  # the file just changed: the session is live
        await pilot.press("y")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "edit #6 (applied again)")
    assert lines_of(brute) == agent[:5] + [EDITED] + agent[6:]
