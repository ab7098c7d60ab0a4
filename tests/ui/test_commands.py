"""The session screen's state-dependent palette commands (``sessionview.ui.commands``)."""

from __future__ import annotations

from sessionview.ui.commands import SessionCommands
from edithelpers import make_app, opened, select
from uihelpers import SIZE, wait_for


async def _titles(screen) -> list[str]:
    provider = SessionCommands(screen)
    return [str(hit.display) async for hit in provider.discover()]


async def test_follow_the_end_is_offered_only_while_not_following(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("G")  # a finished session opens at its first prompt: to the end, following
        assert screen.transcript.follow and "Follow the end" not in await _titles(screen)
        await select(pilot, screen, 3)
        assert not screen.transcript.follow and "Follow the end" in await _titles(screen)
        hits = [h async for h in SessionCommands(screen).search("follow the end")]
        assert [str(h.text) for h in hits] == ["Follow the end"]
        await hits[0].command()
        await wait_for(pilot, lambda: screen.transcript.follow, what="following again")


async def test_writing_commands_only_when_the_session_can_be_written(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 6)
        titles = await _titles(screen)
        assert "Edit this message" in titles and "Delete this message" in titles
        assert "Undo the last edit" not in titles and "Apply the kept edit again" not in titles
        await pilot.press("v", "down")
        titles = await _titles(screen)
        assert "Delete the marked range" in titles and "Compact the marked range" in titles and "Edit this message" not in titles
    app = make_app(brute, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 6)
        titles = await _titles(screen)
        assert not any(t.startswith(("Edit", "Delete", "Compact", "Undo")) for t in titles)
