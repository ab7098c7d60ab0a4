"""Untrusted text is shown, never acted on: Textual markup, terminal escapes (OSC 52, CSI), bidi overrides,
in contents, tool output, file names and error messages."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.browser import BrowserScreen
from sessionview.ui.screens.session import SessionScreen
from uihelpers import NOW, SIZE, all_text, fixed_clock, wait_for

HOSTILE = "[@click=app.quit]x[/] and [/b] and \x1b]52;c;ZXZpbA==\x07 osc52 and \x1b[31mred\x1b[0m and \u202eevil \x9b2J"


def hostile_session(tmp_path: Path) -> Path:
    p = tmp_path / "hostile.jsonl"
    lines = [
        {"role": "user", "content": HOSTILE},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "name": "[b]shell[/b]", "arguments": {"cmd": "[@click=app.quit]q[/]"}}]},
        {"role": "tool", "content": "\x1b]0;pwned title\x07[red]output[/red]", "tool_call_id": "t1"},
    ]
    p.write_text("".join(json.dumps(v) + "\n" for v in lines) + '{"broken": "\x1b[2J [/]\n')
    os.utime(p, (NOW - 100, NOW - 100))
    return p


def no_raw_controls(text: str) -> bool:
    return not any(c in text for c in "\x1b\x07\x9b\u202e")


async def test_hostile_content_shows_literally_and_does_nothing(tmp_path):
    p = hostile_session(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None)
        screen = app.screen
        await pilot.press("g")
        await pilot.pause()
        text = all_text(app)
        assert "[@click=app.quit]x[/] and [/b] and \\x1b]52;c;ZXZpbA==\\x07 osc52" in text
        assert "\\x1b[31mred\\x1b[0m" in text and "\\u202eevil" in text and "\\x9b2J" in text
        assert "[b]shell[/b]" in text and "$ [@click=app.quit]q[/]" in text  # a "shell" call: its command
        assert no_raw_controls(text)
        # every drawn segment of every entry is free of control characters
        t = screen.transcript
        for row in range(t.total_rows()):
            for strip in t.entry_lines(row):
                assert no_raw_controls(strip.text)
        # the tool result and the broken last line too
        await pilot.press("G")
        await pilot.pause()
        text = all_text(app)
        assert "\\x1b]0;pwned title\\x07[red]output[/red]" in text
        assert "\\x1b[2J [/]" in text and no_raw_controls(text)
        # clicking on the "link" does not quit
        await pilot.press("g")
        await pilot.pause()
        y = next(i for i, line in enumerate(all_text(app).split("\n")) if "[@click=app.quit]" in line)
        await pilot.click(offset=(5, y))
        await pilot.click(offset=(5, y), times=2)
        await pilot.pause()
        assert app.is_running and app.screen is screen and app.return_code is None
        # the detail pane and the search prompt are just as inert
        await pilot.press("i")
        assert no_raw_controls(screen.detail.text)
        assert "[@click=app.quit]x[/]" in screen.detail.text
        await pilot.press("slash", *"[/b] and \\x1b", "enter")
        await wait_for(pilot, lambda: "at #" in screen.search_status or "not found" in screen.search_status)
        assert "not found" in screen.search_status  # the escape is display only: the text has ESC itself
        await pilot.press("slash", "ctrl+u", *"osc52", "enter")
        await wait_for(pilot, lambda: "at #1" in screen.search_status)
        assert screen.transcript.cursor_number == 1
        assert app.is_running


async def test_hostile_file_names_in_the_browser_and_in_errors(tmp_path):
    d = tmp_path / "dir"
    d.mkdir()
    name = "[b]bold \x1b[31mred [@click=app.quit]q \u202eevil.jsonl"
    (d / name).write_bytes(b'{"role":"user","content":"hi"}\n')
    os.utime(d / name, (NOW - 100, NOW - 100))
    fifo = d / "[@click=app.quit]fifo.jsonl"
    os.mkfifo(fifo)
    app = SessionViewApp(d, clock=fixed_clock, watch=False)
    async with app.run_test(size=(200, 40)) as pilot:  # wide enough for the whole escaped name beside its title
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded)
        await pilot.pause()
        text = all_text(app)
        assert "[b]bold \\x1b[31mred [@click=app.quit]q \\u202eevil.jsonl" in text
        assert no_raw_controls(text)
        assert "fifo" not in text  # not a regular file: not listed
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None)
        await pilot.pause()
        assert "[b]bold \\x1b[31mred" in all_text(app)
    # an error message that carries a hostile name shows it literally
    app = SessionViewApp(fifo, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state == "error")
        await pilot.pause()
        text = all_text(app)
        assert "[@click=app.quit]fifo" in text and "not a regular file (a FIFO)" in text and "NotRegularFile" not in text
        assert "[@click=app.quit]fifo.jsonl: not a regular file" in app.screen.notice
        assert app.is_running
