"""The context view (C), dropping a tool result (D) from it and from the transcript, the run overview in the
header and the times in the transcript: Pilot tests on the state, and one SVG snapshot."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sessionview.core.edit.drop import marker_text
from sessionview.ui.dialogs.confirm import PreviewScreen
from sessionview.ui.screens.context import ContextScreen, bar
from sessionview.ui.screens.session import SessionScreen
from sessionview.ui.widgets.blocks import plain_lines

from edithelpers import all_text, make_app, modal, notes, opened, saved, select, wait_for
from uihelpers import FIXTURES, NOW, SIZE, after_workers, fixed_clock

REAL = FIXTURES / "real"
SIDECHAIN = REAL / "claude-code" / "daaain-sidechain_integrated.jsonl"


@pytest.fixture
def claude(tmp_path: Path) -> Path:
    dst = tmp_path / SIDECHAIN.name
    shutil.copyfile(SIDECHAIN, dst)
    os.utime(dst, (NOW - 3600, NOW - 3600))
    return dst


async def context_view(pilot) -> ContextScreen:
    await pilot.press("C")
    screen = await modal(pilot, ContextScreen)
    await after_workers(pilot, lambda: screen.profile is not None and bool(screen.rows), what="the profile", groups=("context",))
    await pilot.pause()
    return screen


def entry_text(screen: SessionScreen, number: int) -> str:
    return "\n".join(plain_lines(screen.transcript.entry_lines(screen.model.row_of(number))))


def test_bar():
    assert bar(0, 10) == " " * 12 and bar(10, 10) == "█" * 12 and bar(5, 10, 4) == "██  "
    assert len(bar(1, 1000)) == 12 and bar(1, 1000).strip() == "▏"


async def test_context_view_shows_recorded_usage_the_ranking_and_totals(claude):
    app = make_app(claude)
    async with app.run_test(size=SIZE) as pilot:
        session = await opened(pilot)
        ctx = await context_view(pilot)
        p = ctx.profile
        assert p is not None and p.real and len(p) == 6
        assert p.peak() == 3 + 141272 + 2952 + 0  # the last response read its whole context from the cache
        # the ranking: largest first, every record once
        tokens = [p.tokens[n - 1] for n in ctx.rows]
        assert tokens == sorted(tokens, reverse=True) and sorted(ctx.rows) == [1, 2, 3, 4, 5, 6]
        text = all_text(app)
        assert "recorded: 9 in · 738 out · 141.3k cache read · 164.1k cache write · 3 responses" in text
        assert "context over the session (recorded usage): peak 144.2k" in text
        assert "by role" in text and "by tool" in text and "Task" in text and "Grep" in text
        # enter jumps to the selected record in the session screen
        second = ctx.rows[1]
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.screen is session, what="back in the session")
        assert session.transcript.cursor_number == second


async def test_context_view_estimates_where_nothing_is_recorded(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        ctx = await context_view(pilot)
        assert ctx.profile is not None and not ctx.profile.real
        text = all_text(app)
        assert "no usage recorded in this file" in text and "estimated from the text" in text and "peak ~" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen))


async def test_drop_result_from_the_context_view_then_undo(brute):
    original = brute.read_bytes()
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        session = await opened(pilot)
        ctx = await context_view(pilot)
        row = ctx.rows.index(9)  # #9: the result of the shell call tc_03
        before_tokens = ctx.profile.tokens[8]
        await pilot.press(*["down"] * row)
        assert ctx.selected == 9
        await pilot.press("D")
        pv = await modal(pilot, PreviewScreen)
        assert "drop the tool result of #9" in all_text(app)
        assert pv is app.screen
        await pilot.press("y")
        await wait_for(pilot, lambda: session.edit_status == "saved: drop the tool result of #9" and not session.busy, what="saved")
        old, new = original.splitlines(keepends=True), brute.read_bytes().splitlines(keepends=True)
        assert len(old) == len(new)
        assert [x for i, x in enumerate(new) if i != 8] == [x for i, x in enumerate(old) if i != 8]  # byte for byte
        assert new[8] == b'{"role":"tool","content":"' + marker_text("shell").encode() + b'","tool_call_id":"tc_03"}\n'
        # the view is still there and counts the new file
        assert app.screen is ctx
        await after_workers(pilot, lambda: ctx.profile is not None and ctx.profile.tokens[8] != before_tokens, what="recount", groups=("context", "open", "index", "stats"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is session)
        await pilot.press("u")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, session, "undo drop the tool result of #9")
        assert brute.read_bytes() == original


async def test_drop_result_from_the_transcript_and_its_refusals(brute):
    original = brute.read_bytes()
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        session = await opened(pilot)
        await select(pilot, session, 1)
        await pilot.press("D")
        await wait_for(pilot, lambda: "nothing to drop in #1: no tool result there" in notes(app), what="refusal")
        await select(pilot, session, 8)  # Brute's own compaction dropped it already
        await pilot.press("D")
        await wait_for(pilot, lambda: "already dropped" in notes(app), what="refusal")
        assert brute.read_bytes() == original
        await select(pilot, session, 3)
        await pilot.press("D")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, session, "drop the tool result of #3")
        assert marker_text("shell").encode() in brute.read_bytes().splitlines()[2]
        assert "[compacted:tool_results]" in entry_text(session, 3)


async def test_read_only_has_no_drop(brute):
    original = brute.read_bytes()
    app = make_app(brute, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        ctx = await context_view(pilot)
        assert ctx.check_action("drop_result", ()) is False
        await pilot.press("D")
        await pilot.pause()
        assert app.screen is ctx and brute.read_bytes() == original


async def test_header_overview_and_transcript_times(claude):
    app = make_app(claude)
    async with app.run_test(size=(160, 40)) as pilot:
        session = await opened(pilot)
        header = all_text(app).splitlines()[1]
        assert "claude-sonnet-4-5-20250929 · 2m 05s · 2 tool calls · 9 in · 738 out · 305.3k cached tok" in header
        assert "+0:00 · #1" in entry_text(session, 1)
        assert "took 1m 59s · +1:59 · #2" in entry_text(session, 2)  # the Task call's duration
        assert "⏸ 1m 17s · +1:22 · #5" in entry_text(session, 5)  # a long quiet before it


async def test_header_says_estimated_tokens_where_nothing_is_recorded(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        header = all_text(app).splitlines()[1]
        assert " tool calls · ~" in header and " tok" in header


def test_context_snapshot(claude, snap_compare, monkeypatch):
    monkeypatch.chdir(claude.parent)

    async def ready(pilot):
        app = pilot.app
        await after_workers(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
        await after_workers(pilot, lambda: app.screen.model.indexed and app.screen.model.stats is not None, what="stats")
        await context_view(pilot)

    from sessionview.ui.app import SessionViewApp

    app = SessionViewApp(claude.name, clock=fixed_clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
