"""Tool calls and results a person can read, in the app: a call's result right under it, long results folded
with their size, errors loud, housekeeping quiet, and Markdown that `m` turns back into raw text."""

from __future__ import annotations

import json
from pathlib import Path

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.session import SessionScreen
from sessionview.ui.widgets.blocks import plain_lines
from sessionview.ui.widgets import markdown
from uihelpers import FIXTURES, SIZE, fixed_clock, place, wait_for

VIEWS = FIXTURES / "views"


async def opened(pilot) -> SessionScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
    screen = app.screen
    await wait_for(pilot, lambda: screen.model.indexed and screen.model.stats is not None, what="stats")
    await pilot.pause()
    return screen


def entry_text(screen: SessionScreen, number: int) -> str:
    return "\n".join(plain_lines(screen.transcript.entry_lines(screen.model.row_of(number))))


async def goto(pilot, screen: SessionScreen, n: int) -> None:
    await pilot.press("colon", *str(n), "enter")
    await wait_for(pilot, lambda: screen.transcript.cursor_number == n)


async def test_unfolding_a_call_shows_its_result_under_it_and_p_still_jumps(tmp_path):
    app = SessionViewApp(place(VIEWS / "tools-brute.jsonl", tmp_path, 60), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await goto(pilot, screen, 2)
        folded = entry_text(screen, 2)
        assert "▸ shell  $ pytest -q tests/test_greet.py" in folded and "→ #3" in folded and "FAILED" not in folded
        await pilot.press("enter")
        unfolded = entry_text(screen, 2)
        call, result = unfolded.split("└ result #3")
        assert "$ pytest -q tests/test_greet.py" in call
        assert "exit 1" in result and "✗ error" in result and "1 failed in 0.02s" in result
        assert "[exit code: 1]" not in result  # the trailer became the exit code
        await pilot.press("p")
        assert screen.transcript.cursor_number == 3
        await pilot.press("p")
        assert screen.transcript.cursor_number == 2


async def test_an_edit_is_a_diff_a_write_is_highlighted_a_read_is_numbered_a_todo_is_a_checklist(tmp_path):
    app = SessionViewApp(place(VIEWS / "tools-brute.jsonl", tmp_path, 60), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        assert "greet.py +3 −2" in entry_text(screen, 6)
        t.expand_all = True
        t.invalidate()
        edit = entry_text(screen, 6)
        assert "edit greet.py  +3 −2" in edit and "@@ -1,2 +1,3 @@" in edit
        assert "\n    -def hello():" in edit and '\n    +def hello(name="world"):' in edit
        # the diff's colours: added lines in the added style, removed ones in the removed style
        pal = t._get_palette()
        lines = t.entry_lines(screen.model.row_of(6))
        added = next(s for s in lines if s.text.strip().startswith("+def"))
        removed = next(s for s in lines if s.text.strip().startswith("-def"))
        assert any(seg.style == pal["transcript--added"] for seg in added) and any(seg.style == pal["transcript--removed"] for seg in removed)
        write = entry_text(screen, 8)
        assert "write tests/test_greet.py · 140 B" in write and "  1 from greet import hello" in write and "  9     assert hello" in write
        colours = {seg.style.color for s in t.entry_lines(screen.model.row_of(8)) for seg in s if "import" in seg.text and seg.style}
        assert colours and None not in colours  # highlighted as Python by its extension
        assert "  1 def hello():" in entry_text(screen, 5)  # the read's result: its own numbers, no tab
        todo = entry_text(screen, 12)
        assert "☑ Fix hello()" in todo and "◐ Update the README" in todo and "☐ Release 1.1" in todo


async def test_a_long_result_folds_to_its_first_lines_and_its_size(tmp_path):
    p = tmp_path / "long.jsonl"
    out = "\n".join(f"line {i}" for i in range(1, 1001))
    rows = [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "shell", "arguments": {"command": "seq"}}]},
        {"role": "tool", "content": out, "tool_call_id": "c"},
        {"role": "user", "content": "ok"},
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        result = entry_text(screen, 2)
        assert "line 8" in result and "line 9\n" not in result
        assert "… 992 more lines, 8.6 KB · enter expands" in result
        await goto(pilot, screen, 1)
        await pilot.press("enter")
        under = entry_text(screen, 1).split("└ result #2")[1]
        assert "line 12" in under and "line 13\n" not in under and "more lines" in under and "p jumps to the result" in under


async def test_errors_are_loud_and_lose_their_wrapper(tmp_path):
    app = SessionViewApp(place(VIEWS / "errors-claude.jsonl", tmp_path, 60), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        pal = t._get_palette()
        three = entry_text(screen, 3)
        assert "✗ error" in three.split("\n")[0]
        assert "▌ File has not been read yet." in three and "tool_use_error" not in three
        header = t.entry_lines(screen.model.row_of(3))[0]
        assert header.text.startswith("user") and pal["transcript--invalid"].color in {seg.style.color for seg in header if seg.style}
        assert t._entries.role_style(screen.model, 3, pal) == pal["transcript--invalid"]  # the gutter bar is red
        assert t._entries.role_style(screen.model, 1, pal) != pal["transcript--invalid"]
        assert "✗ error" in entry_text(screen, 5) and "▌ cat: /etc/sessionview.toml" in entry_text(screen, 5)


async def test_housekeeping_is_one_dim_line_that_unfolds(tmp_path):
    app = SessionViewApp(place(VIEWS / "errors-claude.jsonl", tmp_path, 60), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        snap = t.entry_lines(screen.model.row_of(6))
        assert len(snap) == 1 and snap[0].text.startswith("· file-history-snapshot") and "#6" in snap[0].text
        assert len(t.entry_lines(screen.model.row_of(7))) == 1 and "queue-operation" in entry_text(screen, 7)
        await goto(pilot, screen, 6)
        await pilot.press("enter")
        unfolded = entry_text(screen, 6)
        assert unfolded.startswith("[file-history-snapshot]") and len(unfolded.split("\n")) > 2
        assert screen.model.row_count() == 8  # nothing dropped


async def test_m_toggles_markdown_and_raw_text(tmp_path):
    app = SessionViewApp(place(VIEWS / "tools-brute.jsonl", tmp_path, 60), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        md = entry_text(screen, 14)
        assert "## What changed" not in md and "What changed" in md
        assert "**name**" not in md and "a name (default world)" in md
        assert "docs (https://example.com/greet)" in md  # a link shows its URL as text
        assert "• greet.py: the new signature" in md and "test_hello  failed  passed" in md
        assert "```" not in md and 'print(hello("Ada"))' in md
        await pilot.press("m")
        raw = entry_text(screen, 14)
        assert "## What changed" in raw and "**name**" in raw and "```python" in raw
        await pilot.press("m")
        assert entry_text(screen, 14) == md
        # tool output is never Markdown
        assert "FAILED tests/test_greet.py::test_hello" in entry_text(screen, 3)


async def test_m_has_a_binding_id_and_is_in_the_help(tmp_path):
    from sessionview.ui.keymap import binding_ids

    assert "transcript.markdown" in binding_ids()
    app = SessionViewApp(place(VIEWS / "tools-brute.jsonl", tmp_path, 60), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        keys = {b.key: b for _, b, *_ in screen.active_bindings.values()}
        assert keys["m"].description == "Markdown" and keys["m"].id == "transcript.markdown"
        await pilot.press("question_mark")
        await pilot.pause()
        from uihelpers import all_text

        assert any("Markdown" in line and "transcript.markdown" in line for line in all_text(app).splitlines())


def _hostile_markdown(tmp_path: Path) -> Path:
    evil = "\x1b]52;c;ZXZpbA==\x07"
    text = (
        "# Title \x1b[31mred\x1b[0m\n\n"
        "[bold]not bold[/bold] and [@click=app.quit]click[/] and \u202eevil\n\n"
        f"[link {evil}](https://evil.example/\x1b]8;;x\x1b\\) and \x1b]8;;https://osc8.example\x1b\\osc8 text\x1b]8;;\x1b\\\n\n"
        "entities: &#x202e; &#x1b; &#27; &#x9b;\n\n"
        "[docs \u202e](https://docs.example/a\u202eb) and <https://auto.example/x>\n\n"
        "| a [b]x[/b] | \x1b[2J |\n|---|---|\n| \u2066cell\u2069 | [@click=app.quit]q[/] |\n\n"
        "```python\nprint('\x1b[2J') # \u202e bidi \x1b]0;title\x07\n```\n\n"
        "<script>alert(1)</script> `\x1b[31mcode\x1b[0m`\n"
    )
    p = tmp_path / "hostile-md.jsonl"
    p.write_text(json.dumps({"role": "assistant", "content": text}) + "\n" + json.dumps({"role": "user", "content": text}) + "\n")
    return p


async def test_hostile_markdown_is_inert(tmp_path):
    app = SessionViewApp(_hostile_markdown(tmp_path), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        for expanded in (False, True):
            t.expand_all = expanded
            t.invalidate()
            for n in (1, 2):
                lines = t.entry_lines(screen.model.row_of(n))
                for strip in lines:
                    for seg in strip:
                        assert not any(c in seg.text for c in "\x1b\x07\x9b\u202e\u2066\u2069"), repr(seg.text)
                        assert seg.style is None or (not seg.style.link and not seg.style.meta), seg
                        assert not seg.control
                text = "\n".join(plain_lines(lines))
                assert "[bold]not bold[/bold]" in text and "[@click=app.quit]click[/]" in text
                assert "\\x1b]52;c;ZXZpbA==\\x07" in text and "\\u202eevil" in text and "\\x1b[31mred\\x1b[0m" in text
                assert "(https://evil.example/" in text
                assert "docs \\u202e (https://docs.example/a%5Cu202eb)" in text  # a link: its text and its URL, as text (escaped before parsing)
                assert "https://auto.example/x" in text
                assert "\\u202e" in text.split("entities:")[1]  # an entity decoded by markdown-it is escaped too
                assert "[@click=app.quit]q[/]" in text and "\\u2066cell\\u2069" in text  # table cells
                assert "print('\\x1b[2J')" in text and "\\u202e bidi" in text  # the code fence
                assert "<script>alert(1)</script>" in text  # raw HTML is text, not hidden
        # clicking the would-be links does nothing
        await pilot.click(offset=(10, 5))
        await pilot.click(offset=(10, 5), times=2)
        await pilot.pause()
        assert app.is_running and app.screen is screen


async def test_markdown_keeps_line_breaks_and_highlights_a_search_term(tmp_path):
    p = tmp_path / "lines.jsonl"
    p.write_text(json.dumps({"role": "user", "content": "first line\nsecond *line*\n\n```\ncode here\n```"}) + "\n")
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        text = entry_text(screen, 1).split("\n")
        assert text[1:3] == ["first line", "second line"]  # a newline is a line break, as in a chat
        await pilot.press("slash", *"here", "enter")
        await wait_for(pilot, lambda: "at #1" in screen.search_status)
        t = screen.transcript
        match = t._get_palette()["transcript--match"]
        code = next(s for s in t.entry_lines(0) if "code here" in s.text)
        assert any(seg.text == "here" and seg.style is not None and seg.style.bgcolor == match.bgcolor for seg in code)


def test_plain_paragraphs_skip_the_markdown_renderer():
    from sessionview.ui.widgets.markdown import needs_markdown

    for plain in ("message number 5", "plain\n\nprose, with punctuation!? (yes) 50% off: \"q\"", "a = b"):
        assert not needs_markdown(plain)
    for md in ("a *b*", "- item", "1. x", "    code", "a\n---", "x_y", "`x`", "# h", "> q", "| a |", "&amp;", "<b>"):
        assert needs_markdown(md), md


async def test_text_is_plain_until_the_markdown_renderer_has_loaded_then_redrawn(tmp_path, monkeypatch):
    import threading

    import sessionview.ui.widgets.transcript as transcript_module

    loaded: list = []
    monkeypatch.setattr(markdown._READY, "is_set", lambda: False)
    monkeypatch.setattr(transcript_module, "warm_up", loaded.append)
    app = SessionViewApp(place(VIEWS / "tools-brute.jsonl", tmp_path, 60), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        # the transcript asks for the renderer after its first frame (which `opened` need not wait for)
        await wait_for(pilot, lambda: len(loaded) > 0, what="the renderer asked for")
        assert len(loaded) == 1
        assert "## What changed" in entry_text(screen, 14)  # meanwhile: the text as it is
        monkeypatch.undo()
        threading.Thread(target=loaded[0]).start()  # the renderer has loaded: the thread says so
        await wait_for(pilot, lambda: "## What changed" not in entry_text(screen, 14), what="Markdown")
        assert "What changed" in entry_text(screen, 14) and screen.transcript.markdown
