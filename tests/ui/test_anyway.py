"""Refusals in the app give the app's own way out: no command-line advice (``--force``, ``--keep``), and a
key that does it anyway after a clear warning (``f`` in a refusal, ``ctrl+f`` in the editor), with a preview
that says so. Escape in the editor asks before it throws a changed text away (see test_edit.py)."""

from __future__ import annotations

import json
from pathlib import Path

from sessionview.ui.dialogs.confirm import PreviewScreen, RefusalScreen
from sessionview.ui.dialogs.edit import EditorScreen
from uihelpers import SIZE, wait_for
from edithelpers import flat, make_app, modal, notes, opened, saved, select, settled


def lines_of(p: Path) -> list[bytes]:
    return p.read_bytes().splitlines(keepends=True)


async def test_truncate_right_after_a_tool_call_can_be_done_anyway(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 7)  # the assistant's two tool calls: their results are #8 and #9
        await pilot.press("t")
        await modal(pilot, RefusalScreen)
        text = flat(app)
        assert "--force" not in text and "--keep" not in text
        assert "nearest valid point is to keep #1-#6" in text
        assert "f does it anyway" in text and "f: do it anyway" in text
        await pilot.press("f")
        await modal(pilot, PreviewScreen)
        assert "done anyway" in flat(app) and "truncate after #7" in flat(app)
        await pilot.press("y")
        await saved(pilot, screen, "truncate after #7")
    assert lines_of(brute) == original[:7]


async def test_cancel_in_a_refusal_still_writes_nothing(brute):
    before = brute.read_bytes()
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 3)
        await pilot.press("d")
        await modal(pilot, RefusalScreen)
        await pilot.press("escape")
        await settled(pilot, screen)
        assert "cancelled: nothing was written" in notes(app)
    assert brute.read_bytes() == before


def test_f_is_only_bound_when_doing_it_anyway_would_pass():
    # the flows offer it when the same plan with force passes (Writer._forced); else f does nothing
    assert RefusalScreen("refused: something", (), None, anyway=False).check_action("reply", ("anyway",)) is False
    assert RefusalScreen("refused: something", (), None, anyway=True).check_action("reply", ("anyway",)) is True


async def test_an_edit_brute_would_drop_can_be_written_anyway_from_the_editor(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 6)
        await pilot.press("e")
        ed = await modal(pilot, EditorScreen)
        ed.text_area.load_text('{"role": "system", "content": "You are careful."}')
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: ed.error and not ed.checking, what="the refusal in the editor")
        assert "--force" not in ed.error and "ctrl+f writes it anyway" in ed.error
        assert ed.forceable
        await pilot.press("ctrl+f")
        await modal(pilot, PreviewScreen)
        assert "done anyway" in flat(app)
        await pilot.press("y")
        await saved(pilot, screen, "edit #6")
    assert json.loads(lines_of(brute)[5]) == {"role": "system", "content": "You are careful."}


async def test_a_save_refused_for_another_writer_can_be_saved_anyway(brute):
    import subprocess
    import sys

    from sessionview.ui.dialogs.confirm import ConfirmScreen

    original = lines_of(brute)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; f = open(sys.argv[1], 'ab'); print('open', flush=True); sys.stdin.read()", str(brute)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        app = make_app(brute)
        async with app.run_test(size=SIZE) as pilot:
            screen = await opened(pilot)
            await select(pilot, screen, 4)
            await pilot.press("d")
            await modal(pilot, PreviewScreen)
            await pilot.press("y")
            await modal(pilot, ConfirmScreen, "the save-anyway question")
            text = flat(app)
            assert "another process is writing this file" in text and "force" not in text
            assert "y: save anyway" in text
            await pilot.press("y")
            await saved(pilot, screen, "delete #4")
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    assert lines_of(brute) == original[:3] + original[4:]
