"""The session browser: listing, lazy descriptions, name filter, live badge, watching, opening."""

from __future__ import annotations

import os

import pytest

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.browser import BrowserScreen
from sessionview.ui.screens.session import SessionScreen
from uihelpers import NOW, SIZE, all_text, fixed_clock, wait_for


async def browser(pilot) -> BrowserScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded, what="listing")
    return app.screen


def names(screen: BrowserScreen) -> list[str]:
    return [e.rel for e in screen.table.rows]


async def test_lists_sessions_newest_first_with_format_and_count(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        assert names(screen) == [
            "brute-session.jsonl",
            "claude-code.jsonl",
            "codex-rollout.jsonl",
            "openai-chat.jsonl",
            "anthropic-messages.jsonl",
            "pi-agent.jsonl",
            "littleghost-filesystem-snapshot.json",
        ]
        await wait_for(pilot, lambda: all(not e.stale for e in screen.table.rows), what="descriptions")
        by = {e.rel: e for e in screen.table.rows}
        assert by["brute-session.jsonl"].format == "Brute JSONL" and by["brute-session.jsonl"].count == 11
        assert by["littleghost-filesystem-snapshot.json"].count is not None
        await pilot.pause()
        text = all_text(app)
        assert "7 sessions" in text and "sorted by last change" in text
        assert "Brute JSONL" in text and "1m ago" in text and "1.5 KB" in text
        assert "● live" not in text


async def test_filter_by_name(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await pilot.press("slash", *"LITTLE")
        await wait_for(pilot, lambda: names(screen) == ["littleghost-filesystem-snapshot.json"])
        await pilot.press("down")  # back to the list
        assert screen.table.has_focus
        await pilot.press("escape")
        assert len(names(screen)) == 7


async def test_keys_queued_right_behind_the_slash_go_to_the_filter(sessions):
    """A paste, fast typing or `serve`'s browser queues "/" and the name at once: none of the name may reach the
    list's own bindings ("s" sorts, "r" rescans) before the filter has the focus; a "/" in the filter is text."""
    from textual import events
    from textual.widgets import Input

    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        sort = screen.sort
        for key, char in [("slash", "/"), *[(c, c) for c in "sessio"], ("slash", "/"), ("n", "n")]:
            app.post_message(events.Key(key, char))
        inp = screen.query_one("#name-filter", Input)
        await wait_for(pilot, lambda: inp.value == "sessio/n", what="the whole name in the filter")
        assert screen.sort == sort and inp.has_focus
        inp.value = "brute"
        await wait_for(pilot, lambda: names(screen) == ["brute-session.jsonl"])


async def test_enter_in_the_filter_opens_the_first_match(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await pilot.press("j", "j", "j", "j")  # the highlight on the 5th row (anthropic-messages)
        assert screen.table.selected.rel == "anthropic-messages.jsonl"
        await pilot.press("slash", *"codex")
        await wait_for(pilot, lambda: names(screen) == ["codex-rollout.jsonl"])
        assert screen.table.cursor == 0 and screen.table.selected.rel == "codex-rollout.jsonl"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), what="the match opened")
        assert app.screen.path.endswith("codex-rollout.jsonl")


async def test_a_filter_that_still_lists_the_highlighted_row_keeps_it(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await pilot.press("j", "j")
        assert screen.table.selected.rel == "codex-rollout.jsonl"
        await pilot.press("slash", "r")  # codex-rollout still matches (it moves up: 2nd of 3)
        await wait_for(pilot, lambda: len(names(screen)) == 3)
        assert screen.table.selected.rel == "codex-rollout.jsonl"


async def test_the_format_column_is_not_cut_and_the_name_leaves_it_room(sessions):
    from sessionview.ui.widgets.session_table import layout

    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await browser(pilot)
        await wait_for(pilot, lambda: all(not e.stale for e in screen.table.rows), what="descriptions")
        await pilot.pause()
        text = all_text(app)
        assert "LittleGhost Filesystem store" in text and "LittleGhost Filesystem s…" not in text
        need = len("LittleGhost messages JSONL (inferred)") + 1
        widths = {c.id: w for c, w in layout(140, need, needs={"name": 30})}
        assert widths["format"] == need and widths["name"] == 30 and widths["title"] >= 16  # the name takes what it needs
        assert sum(widths.values()) <= 140
        narrow = {c.id: w for c, w in layout(80, need, needs={"name": 30})}  # a narrow terminal: name and title give way
        assert narrow["format"] == need and sum(narrow.values()) <= 80


async def test_sort_cycles_name_and_size(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await pilot.press("s")
        assert names(screen) == sorted(names(screen), key=str.casefold)
        await pilot.press("s")
        sizes = [e.size for e in screen.table.rows]
        assert sizes == sorted(sizes, reverse=True)


async def test_live_badge_for_a_session_written_now(sessions):
    os.utime(sessions / "openai-chat.jsonl", (NOW - 1, NOW - 1))
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        assert names(screen)[0] == "openai-chat.jsonl"
        await pilot.pause()
        text = all_text(app)
        first_row = next(line for line in text.split("\n") if "openai-chat.jsonl" in line)
        assert "● live" in first_row
        assert "● 1 live" in text


async def test_new_files_appear_and_deleted_files_go(sessions):
    app = SessionViewApp(sessions, watch=True)  # the real clock: watching is about real changes
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await pilot.pause(0.3)  # let the watcher start
        new = sessions / "sub" / "fresh.jsonl"
        new.parent.mkdir()
        new.write_bytes(b'{"role":"user","content":"hello"}\n')
        await wait_for(pilot, lambda: "sub/fresh.jsonl" in names(screen), what="new file listed")
        assert names(screen)[0] == "sub/fresh.jsonl"
        await wait_for(pilot, lambda: screen.catalog.entries[str(new)].count == 1, what="described")
        first_row = next(line for line in all_text(app).split("\n") if "fresh.jsonl" in line)
        assert "● live" in first_row
        (sessions / "claude-code.jsonl").unlink()
        await wait_for(pilot, lambda: "claude-code.jsonl" not in names(screen), what="deleted file gone")
        (sessions / "notes.txt").write_text("not a session")
        await pilot.pause(0.3)
        assert "notes.txt" not in names(screen)


async def test_open_a_session_and_come_back(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        await pilot.press("j", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None)
        assert app.screen.path.endswith("claude-code.jsonl")
        await pilot.pause()
        assert "Claude Code" in all_text(app)
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is screen)
        assert screen.table.cursor == 1


@pytest.mark.slow
async def test_fifty_thousand_files_list_quickly(tmp_path):
    d = tmp_path / "many"
    for i in range(50):
        sub = d / f"project-{i:02d}"
        sub.mkdir(parents=True)
        for j in range(1000):
            (sub / f"s{j:04d}.jsonl").write_bytes(b'{"role":"user","content":"x"}\n')
    app = SessionViewApp(d, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await browser(pilot)
        assert len(screen.table.rows) == 50_000
        # keys are handled while rows are being described (how fast it lists: bench/, not a timing assert)
        await pilot.press("G")
        assert screen.table.cursor == 49_999
        await pilot.press("slash", *"project-07/s099")
        await wait_for(pilot, lambda: len(screen.table.rows) == 10)


def test_saves_stay_inside_the_directory_the_app_was_opened_on(tmp_path):
    from sessionview.ui.app import SessionViewApp

    (tmp_path / "sub").mkdir()
    f = tmp_path / "sub" / "s.jsonl"
    f.write_bytes(b'{"role":"user","content":"x"}\n')
    assert SessionViewApp(tmp_path).root == str(tmp_path)
    assert SessionViewApp(f).root == str(tmp_path / "sub")
