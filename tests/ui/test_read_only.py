"""Read-only mode says so: a key that would edit tells "read-only" once (not nothing in silence), and the
help screen has no "Editing" group but a line that says editing is off."""

from __future__ import annotations

from sessionview.ui.dialogs.help import HelpScreen
from edithelpers import flat, make_app, modal, notes, opened, select
from uihelpers import SIZE


async def test_edit_keys_in_read_only_mode_say_read_only_once(brute):
    before = brute.read_bytes()
    app = make_app(brute, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 4)
        await pilot.press("e")
        await pilot.pause()
        assert notes(app).count("read-only: editing is off") == 1
        await pilot.press("d", "t", "e")
        await pilot.pause()
        assert notes(app).count("read-only: editing is off") == 1  # once
        assert app.screen is screen and not screen.busy
    assert brute.read_bytes() == before


async def test_the_help_of_a_read_only_session_has_no_editing_group(brute):
    app = make_app(brute, read_only=True)
    async with app.run_test(size=(120, 80)) as pilot:
        await opened(pilot)
        await pilot.press("question_mark")
        await modal(pilot, HelpScreen)
        text = flat(app)
        assert "Editing (every write" not in text
        assert "read-only: the keys that edit are off" in text
        assert "History & backups" in text  # H still lists the backups


async def test_the_help_lists_every_binding_id(brute):
    app = make_app(brute)
    async with app.run_test(size=(120, 100)) as pilot:
        await opened(pilot)
        await pilot.press("question_mark")
        help_screen = await modal(pilot, HelpScreen)
        text = flat(app)
        assert "Editing (every write is previewed first)" in text
        for binding_id in ("edit", "delete", "compact", "undo", "session.search", "transcript.follow", "app.help"):
            assert binding_id in [i for row in help_screen.rows for i in row[3].split(", ")]
        assert "session.search" in text and "transcript.follow" in text


async def test_the_help_text_wraps_to_the_box(brute):
    from uihelpers import all_text

    app = make_app(brute)
    async with app.run_test(size=(120, 100)) as pilot:
        await opened(pilot)
        await pilot.press("question_mark")
        await modal(pilot, HelpScreen)
        rows = [r.strip().strip("│▂▁▃▄▅▆▇█").strip() for r in all_text(app).splitlines() if "│" in r]
        width = max(len(r) for r in rows)
        start = next(i for i, r in enumerate(rows) if r.startswith("sessionview shows"))
        paragraphs: list[list[str]] = [[]]
        for r in rows[start:]:
            if r:
                paragraphs[-1].append(r)
            else:
                paragraphs.append([])
        # the box wraps each paragraph: only a paragraph's last line may be short (a text hard-wrapped
        # wider than the box leaves a stub in the middle of a paragraph)
        for p in paragraphs:
            for r in p[:-1]:
                assert len(r) > width * 0.7, (r, p)
