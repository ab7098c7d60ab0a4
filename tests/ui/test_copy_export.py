"""Out of the app: copy (y the text, Y the raw JSON, also from the detail pane), export to Markdown or
HTML and fork at the selected record (X), never over an existing file."""

from __future__ import annotations

import os
from pathlib import Path

from textual.widgets import Input

from sessionview.ui.app import SessionViewApp
from sessionview.ui.dialogs.export import ExportScreen
from sessionview.ui.screens.session import SessionScreen

from uihelpers import SIZE, after_workers, fixed_clock, wait_for


def make_app(path: Path, **kw) -> SessionViewApp:
    return SessionViewApp(path, clock=fixed_clock, **kw)


async def at(pilot, n: int) -> SessionScreen:
    app = pilot.app
    await after_workers(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
    screen = app.screen
    await after_workers(pilot, lambda: screen.model.indexed and screen.model.stats is not None, what="index and stats")
    await pilot.press("colon", *str(n), "enter")
    await wait_for(pilot, lambda: screen.transcript.cursor_number == n, what=f"cursor on #{n}")
    return screen


def line(path: Path, n: int) -> bytes:
    return path.read_bytes().splitlines(keepends=True)[n - 1]


def toasts(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


# -- copy -------------------------------------------------------------------------------------------
async def test_y_copies_the_text_and_Y_the_raw_line(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await at(pilot, 3)
        text = screen.model.view(3).text
        assert text and "\n" in text
        await pilot.press("y")
        assert app.clipboard == text
        size = len(text.encode())
        assert any(m.startswith("copied the text of #3: ") and f"{size:,} bytes" in m for m in toasts(app))
        await pilot.press("Y")
        raw = line(brute, 3).rstrip(b"\r\n").decode()
        assert app.clipboard == raw
        assert any(m.startswith(f"copied the raw JSON of #3: {len(raw.encode()):,} bytes") for m in toasts(app))


async def test_y_on_a_tool_call_copies_its_arguments_and_works_from_the_detail_pane(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await at(pilot, 1)
        n = next(k for k in range(1, len(screen.model) + 1) if screen.model.view(k).tool_calls and not screen.model.view(k).text)
        await pilot.press("colon", *str(n), "enter")
        await wait_for(pilot, lambda: screen.transcript.cursor_number == n)
        await pilot.press("i")
        await wait_for(pilot, lambda: screen.detail_shown, what="detail pane")
        screen.detail.focus()
        await pilot.pause()
        assert app.focused is screen.detail
        await pilot.press("y")
        call = screen.model.view(n).tool_calls[0]
        assert app.clipboard.startswith(call.name + "\n")
        assert any(m.startswith(f"copied the tool call of #{n}") for m in toasts(app))
        await pilot.press("Y")
        assert app.clipboard == line(brute, n).rstrip(b"\r\n").decode()


async def test_copy_sends_osc_52_to_the_terminal(brute):
    """What Textual writes to the terminal for y: an OSC 52 clipboard sequence with the text in base64."""
    import base64

    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await at(pilot, 3)
        written: list[str] = []
        driver = app._driver
        original = driver.write
        driver.write = lambda data: (written.append(data), original(data))[1]
        try:
            await pilot.press("y")
        finally:
            driver.write = original
        b64 = base64.b64encode(screen.model.view(3).text.encode()).decode()
        assert f"\x1b]52;c;{b64}\a" in written


# -- export ------------------------------------------------------------------------------------------
async def test_export_to_markdown_next_to_the_file_then_never_over_it(brute):
    app = make_app(brute)
    md = brute.with_suffix(".md")
    async with app.run_test(size=SIZE) as pilot:
        screen = await at(pilot, 3)
        await pilot.press("X")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen) and app.screen.query("#export-path"), what="export dialog")
        assert app.screen.query_one(Input).value == str(md)
        await pilot.press("enter")
        await after_workers(pilot, lambda: screen.exporter.last, what="export written", groups=("export",))
        assert screen.exporter.last == f"exported to {md}"
        text = md.read_text()
        assert "README.md a 12 lignes" in text  # the last message of the fixture
        assert any(f"exported to {md}" in m for m in toasts(app))
        # a second export: the next free name, and a taken name is refused in the dialog
        await pilot.press("X")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen) and app.screen.query("#export-path"), what="export dialog")
        box = app.screen.query_one(Input)
        assert box.value == str(brute.parent / "brute-session-2.md")
        box.value = str(md)
        await pilot.press("enter")
        assert isinstance(app.screen, ExportScreen)
        assert "exists" in str(app.screen.query_one("#export-error").render())
        await pilot.press("escape")
        assert md.read_text() == text
        assert not (brute.parent / "brute-session-2.md").exists()


async def test_export_to_html_by_choosing_it(brute):
    app = make_app(brute)
    html = brute.with_suffix(".html")
    async with app.run_test(size=SIZE) as pilot:
        screen = await at(pilot, 3)
        await pilot.press("X")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen) and app.screen.query("#export-path"), what="export dialog")
        await pilot.click("#export-html")
        await wait_for(pilot, lambda: app.screen.query_one(Input).value == str(html), what="the html name")
        app.screen.query_one(Input).focus()
        await pilot.press("enter")
        await after_workers(pilot, lambda: screen.exporter.last, what="export written", groups=("export",))
        body = html.read_text()
        assert body.lstrip().lower().startswith("<!doctype html") and "Content-Security-Policy" in body


async def test_fork_at_the_selected_record(brute):
    app = make_app(brute)
    fork = brute.parent / "brute-session.fork-4.jsonl"
    async with app.run_test(size=SIZE) as pilot:
        screen = await at(pilot, 4)
        await app.run_action("export('fork')", screen)
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen) and app.screen.query("#export-path"), what="export dialog")
        assert app.screen.query_one(Input).value == str(fork)
        await pilot.press("enter")
        await after_workers(pilot, lambda: screen.exporter.last, what="fork written", groups=("export",))
        assert screen.exporter.last.startswith(f"forked records 1 to 4 into {fork}")
        assert fork.read_bytes() == b"".join(brute.read_bytes().splitlines(keepends=True)[:4])
        assert os.stat(fork).st_mode == os.stat(brute).st_mode


async def test_export_is_off_in_read_only_mode(brute):
    app = make_app(brute, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await at(pilot, 3)
        await pilot.press("X")
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen)
        assert any("export and fork write files" in m for m in toasts(app))
        assert list(brute.parent.iterdir()) == [brute]


async def test_palette_offers_export_fork_and_copy(brute):
    from sessionview.ui.commands import SessionCommands

    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await at(pilot, 3)
        titles = [t for t, _h, _a in SessionCommands(screen)._commands()]
        for title in ("Jump to a prompt", "Outline of the run", "Export to Markdown…", "Export to HTML…", "Fork at this record…", "Copy the message's text"):
            assert title in titles
