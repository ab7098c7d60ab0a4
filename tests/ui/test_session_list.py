"""The session list's columns (title, messages, tokens, problems, last activity, format never cut) and its
sort: ``s`` cycles the sort column, a click on a column's title sorts by it, a second click the other way."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.browser import SORTS, BrowserScreen
from sessionview.ui.widgets.session_table import COLUMNS
from uihelpers import NOW, all_text, fixed_clock, wait_for

DEMO = Path(__file__).resolve().parents[2] / "sessionview" / "demo"


async def described(pilot) -> BrowserScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded, what="listing")
    screen = app.screen
    await wait_for(pilot, lambda: all(not e.stale for e in screen.table.rows), what="descriptions")
    await pilot.pause()
    return screen


def lines(app) -> list[str]:
    return all_text(app).split("\n")


def header(app) -> str:
    return next(line for line in lines(app) if " name" in line and "format" in line)


def row(app, name: str) -> str:
    return next(line for line in lines(app) if name in line)


def with_problems(sessions: Path) -> Path:
    shutil.copyfile(DEMO / "problems.jsonl", sessions / "problems.jsonl")
    os.utime(sessions / "problems.jsonl", (NOW - 86400 * 3, NOW - 86400 * 3))
    return sessions


async def test_the_columns_and_what_a_row_shows(sessions):
    app = SessionViewApp(with_problems(sessions), clock=fixed_clock, watch=False)
    async with app.run_test(size=(160, 30)) as pilot:
        screen = await described(pilot)
        head = header(app)
        titles = ["name", "title", "msgs", "tokens", "✗", "size", "activity ▾", "format"]
        positions = [head.index(t) for t in titles]
        assert positions == sorted(positions), head
        assert [c.id for c in COLUMNS] == ["live", "name", "title", "messages", "tokens", "problems", "size", "activity", "format"]
        brute = row(app, "brute-session.jsonl")
        assert "Liste les fichiers du dépôt" in brute and " 9 " in brute and "~153" in brute and "Brute JSONL" in brute
        assert "1m ago" in brute and "✗" not in brute
        bad = row(app, "problems.jsonl")
        assert "✗ 5" in bad and "3d ago" in bad
        entry = next(e for e in screen.table.rows if e.rel == "problems.jsonl")
        assert entry.sketch.problems == 5 and entry.sketch.problems_exact
        assert "LittleGhost Filesystem store" in row(app, "littleghost-filesystem-snapshot.json")


async def test_the_format_is_never_cut_in_a_narrow_terminal(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await described(pilot)
        assert "LittleGhost Filesystem store" in all_text(app)
        shown = [c.id for c, w in screen.table.columns(80) if w]
        assert "format" in shown and "title" in shown and "size" not in shown  # size gives way first


async def test_s_cycles_the_sort_column_and_the_header_shows_it(sessions):
    app = SessionViewApp(with_problems(sessions), clock=fixed_clock, watch=False)
    async with app.run_test(size=(160, 30)) as pilot:
        screen = await described(pilot)
        seen = []
        for _ in SORTS:
            seen.append(screen.sort)
            rows = screen.table.rows
            if screen.sort == "messages":
                counts = [e.sketch.messages for e in rows]
                assert counts == sorted(counts, reverse=True)
                assert "msgs ▾" in header(app) and "sorted by messages" in all_text(app)
            if screen.sort == "problems":
                assert rows[0].rel == "problems.jsonl" and "✗ ▾" in header(app)
            if screen.sort == "title":
                titles = [e.sketch.title.casefold() for e in rows]
                assert titles == sorted(titles)
            if screen.sort == "format":
                assert [e.format for e in rows] == sorted((e.format for e in rows), key=str.casefold)
            await pilot.press("s")
        assert seen == list(SORTS) and screen.sort == "mtime"


async def test_a_click_on_a_title_sorts_by_it_and_again_reverses(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=(160, 30)) as pilot:
        screen = await described(pilot)
        x = header(app).index("tokens")
        await pilot.click("#columns", offset=(x, 0))
        await wait_for(pilot, lambda: screen.sort == "tokens")
        tokens = [e.sketch.tokens for e in screen.table.rows]
        assert tokens == sorted(tokens, reverse=True) and not screen.reverse
        await pilot.pause()
        assert "tokens ▾" in header(app)
        await pilot.click("#columns", offset=(header(app).index("tokens"), 0))
        await wait_for(pilot, lambda: screen.reverse)
        assert [e.sketch.tokens for e in screen.table.rows] == sorted(tokens)
        await pilot.pause()
        assert "tokens ▴" in header(app) and "sorted by tokens (reversed)" in all_text(app)
        await pilot.click("#columns", offset=(header(app).index("name"), 0))
        await wait_for(pilot, lambda: screen.sort == "name" and not screen.reverse)
        names = [e.rel for e in screen.table.rows]
        assert names == sorted(names, key=str.casefold)


async def test_a_hostile_title_is_shown_inert(tmp_path):
    d = tmp_path / "dir"
    d.mkdir()
    (d / "h.jsonl").write_bytes(b'{"role":"user","content":"[b]x\\u001b[31mred [@click=app.quit]q \\u202eevil"}\n')
    app = SessionViewApp(d, clock=fixed_clock, watch=False)
    async with app.run_test(size=(160, 30)) as pilot:
        await described(pilot)
        shown = row(app, "h.jsonl")
        assert "[b]x\\x1b[31mred [@click=app.quit]q \\u202eevil" in shown
        assert "\x1b" not in all_text(app) and "\u202e" not in all_text(app)
        assert app.is_running


async def test_a_long_path_keeps_its_end_and_the_count_on_screen(tmp_path):
    deep = tmp_path.joinpath(*(["a-rather-long-directory-name"] * 6), "the-sessions")
    deep.mkdir(parents=True)
    shutil.copyfile(DEMO / "problems.jsonl", deep / "problems.jsonl")
    app = SessionViewApp(deep, clock=fixed_clock, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await described(pilot)
        first, second = lines(app)[:2]
        assert first.strip().startswith("sessionview …") and first.strip().endswith("the-sessions")
        assert second.strip().startswith("1 session")
