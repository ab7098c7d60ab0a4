"""The session screen: reading, keys, folding, call↔result, search, filter, jump, detail, help, palette."""

from __future__ import annotations

from pathlib import Path

from sessionview.core.doc.model import Kind
from sessionview.ui.app import SessionViewApp
from sessionview.ui.dialogs.help import HelpScreen
from sessionview.ui.screens.session import SessionScreen
from sessionview.ui.widgets.blocks import plain_lines

from uihelpers import FIXTURES, SIZE, all_text, fixed_clock, place, wait_for


def make_app(path: Path, **kw) -> SessionViewApp:
    return SessionViewApp(path, clock=fixed_clock, **kw)


async def opened(pilot) -> SessionScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
    screen = app.screen
    await wait_for(pilot, lambda: screen.model.indexed and screen.model.stats is not None, what="stats")
    await pilot.pause()
    return screen


def entry_text(screen: SessionScreen, number: int) -> str:
    t = screen.transcript
    return "\n".join(plain_lines(t.entry_lines(screen.model.row_of(number))))


async def test_opens_a_finished_file_at_its_first_prompt_with_header(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        assert len(screen.model) == 11
        assert t.cursor == 0 and t.cursor_number == 1 and not t.follow  # an hour old: finished
        await pilot.press("G")
        assert t.cursor == 10 and t.cursor_number == 11 and t.follow
        text = all_text(app)
        assert "brute-session.jsonl" in text
        assert "Brute JSONL" in text and "11 records" in text
        assert "tok" in text and "○ idle" in text
        assert "#11" in text and "README.md a 12 lignes" in text
        # every message shows its role, its #N and approximate tokens
        assert "assistant" in entry_text(screen, 11) and "#11 · ~" in entry_text(screen, 11)


async def test_cursor_keys_first_last_and_goto(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        await pilot.press("g")
        assert t.cursor_number == 1 and not t.follow
        await pilot.press("j", "j")
        assert t.cursor_number == 3
        await pilot.press("k")
        assert t.cursor_number == 2
        await pilot.press("G")
        assert t.cursor_number == 11 and t.follow
        await pilot.press("colon", "7", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 7, what="jump to line 7")
        assert "#7" in all_text(app)
        await pilot.press("colon", "9", "9", "enter")  # past the end: the last record
        await wait_for(pilot, lambda: t.cursor_number == 11)


async def test_tool_call_folds_to_one_line_and_unfolds_to_its_command_and_result(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        await pilot.press("colon", "2", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 2)
        folded = entry_text(screen, 2)
        assert "▸ shell  $ ls -la" in folded and "→ #3" in folded
        assert '"command"' not in folded
        await pilot.press("enter")
        unfolded = entry_text(screen, 2)
        assert "▾ shell" in unfolded and "$ ls -la" in unfolded
        # the result is drawn right under the call, with the number of its record
        assert "└ result #3" in unfolded and "notes-日本語.txt" in unfolded.split("└ result #3")[1]
        await pilot.press("enter")
        assert entry_text(screen, 2) == folded


async def test_reasoning_is_folded_and_compaction_is_a_divider(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        seven = entry_text(screen, 7)
        assert "▸ reasoning · 1 line" in seven and "Two independent reads" in seven
        assert screen.model.view(5).kind is Kind.COMPACTION
        assert "── compacted · summary ──" in entry_text(screen, 5)
        await pilot.press("colon", "7", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 7)
        await pilot.press("enter")
        assert "▾ reasoning" in entry_text(screen, 7)
        # the reasoning style is the dimmed component style
        lines = t.entry_lines(screen.model.row_of(7))
        reasoning = next(s for s in lines if "reasoning" in s.text)
        dim = t._get_palette()["transcript--reasoning"]
        assert any(seg.style and seg.style.italic and seg.style.color == dim.color for seg in reasoning._segments)


async def test_jump_between_call_and_result(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        await pilot.press("colon", "2", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 2)
        await pilot.press("p")
        assert t.cursor_number == 3
        assert "← shell of #2" in entry_text(screen, 3)
        await pilot.press("p")
        assert t.cursor_number == 2
        # the second call of a parallel pair: #7 → first result #8; #9 → back to #7
        await pilot.press("colon", "9", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 9)
        await pilot.press("p")
        assert t.cursor_number == 7


async def test_search_next_previous_and_highlight(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        await pilot.press("G")
        await pilot.press("slash")
        await pilot.press(*"readme")
        await pilot.press("enter")
        # from the end, a forward search wraps to the first match
        await wait_for(pilot, lambda: "at #" in screen.search_status, what="first hit")
        assert t.cursor_number == 3 and "(wrapped)" in screen.search_status
        assert t.term == "readme"
        match = t._get_palette()["transcript--match"]
        lines = t.entry_lines(screen.model.row_of(3))
        assert any(seg.style and seg.style.bgcolor == match.bgcolor and seg.text.lower() == "readme" for s in lines for seg in s._segments)
        await pilot.press("n")
        await wait_for(pilot, lambda: t.cursor_number == 4)
        await pilot.press("n")
        await wait_for(pilot, lambda: t.cursor_number == 5)
        await pilot.press("N")
        await wait_for(pilot, lambda: t.cursor_number == 4)
        await pilot.press("escape")
        assert t.term == "" and screen.term == ""


async def test_search_not_found(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("G", "slash", *"zzzz-none", "enter")
        await wait_for(pilot, lambda: "not found" in screen.search_status)
        assert screen.transcript.cursor_number == 11


async def test_filter_by_role_and_by_tool(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        m = screen.model
        await pilot.press("f")
        assert "roles:" in all_text(app) and "tool:shell" in all_text(app)
        await pilot.press(*"tool", "enter")
        await wait_for(pilot, lambda: m.rows is not None, what="role filter")
        assert list(m.rows) == [3, 8, 9]
        assert t.total_rows() == 3
        await pilot.press("f")
        await pilot.press(*" tool:shell", "enter")  # roles {tool} or… no: a role AND a tool
        await wait_for(pilot, lambda: m.filter.tools == {"shell"})
        assert list(m.rows) == [3, 9]
        await pilot.press("f", "ctrl+u")
        await pilot.press(*"tool:shell", "enter")
        await wait_for(pilot, lambda: not m.filter.roles and m.filter.tools == {"shell"})
        assert list(m.rows) == [2, 3, 7, 9]
        assert "filter: tool:shell" in all_text(app)
        await pilot.press("escape")
        assert m.rows is None and t.total_rows() == 11


async def test_detail_shows_json_and_byte_range(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        t = screen.transcript
        await pilot.press("colon", "2", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 2)
        await pilot.press("i")
        d = screen.detail
        assert d.display
        rec = screen.model.record(2)
        assert f"bytes {rec.start:,}–{rec.end:,}" in d.text
        assert '"tool_calls": [' in d.text and '"name": "shell"' in d.text
        await pilot.press("j")
        assert "#3 · tool" in d.text
        await pilot.press("i")
        assert not d.display


async def test_invalid_records_have_their_own_style_with_problem_and_raw(tmp_path):
    p = tmp_path / "broken.jsonl"
    p.write_bytes(b'{"role":"user","content":"ok"}\n{"role":"assistant","content":"cut\n\xff\xfe{"a":\n')
    app = make_app(p)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.model.view(2).kind is Kind.INVALID
        two = entry_text(screen, 2)
        assert "✗ invalid JSON" in two and '{"role":"assistant","content":"cut' in two
        three = entry_text(screen, 3)
        assert "✗ not UTF-8" in three and "\\xff\\xfe" in three
        t = screen.transcript
        lines = t.entry_lines(screen.model.row_of(2))
        err = t._get_palette()["transcript--invalid"]
        assert any(seg.style and seg.style.color == err.color for seg in lines[0]._segments)
        await pilot.press("i")
        assert "raw bytes (escaped)" in screen.detail.text
        assert "not UTF-8" in screen.detail.text and "\\xff\\xfe" in screen.detail.text
        await pilot.press("k")
        assert "Unterminated string" in screen.detail.text


async def test_help_screen_and_palette_list_every_action(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        expected = ["Search", "Next match", "Prev match", "Filter", "Go to line", "Call↔result", "Detail", "Follow", "Fold/unfold", "First", "Last", "Back", "Help"]
        commands = [c.title for c in app.get_system_commands(screen)]
        for e in expected:
            assert e in commands, e
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        described = [desc for _, _, desc, _ in app.screen.rows]
        for e in expected:
            assert e in described, e
        text = all_text(app)
        assert "sessionview · keys" in text and "Fold/unfold" in text and "enter, o" in text
        await pilot.press("escape")
        assert app.screen is screen


async def test_palette_command_runs_its_action(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        cmd = next(c for c in app.get_system_commands(screen) if c.title == "First")
        await cmd.callback()
        await pilot.pause()
        assert screen.transcript.cursor_number == 1


async def test_back_from_a_single_file_quits(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_littleghost_document_shows_messages_state_and_metadata(tmp_path):
    p = place(FIXTURES / "littleghost-filesystem-snapshot.json", tmp_path, 100)
    app = make_app(p)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        m = screen.model
        assert not m.lines and len(m) >= 4
        assert "LittleGhost" in all_text(app)
        await pilot.press("i")
        assert "session state" in screen.detail.text or "session metadata" in screen.detail.text


async def test_the_user_keymap_rebinds_actions_by_id(brute, tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[keymap]\n"session.search" = "ctrl+f"\n"transcript.first" = "ctrl+home,g"\n')
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(cfg))
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("ctrl+home")
        assert screen.transcript.cursor_number == 1
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert screen.query_one("#prompt").is_open
