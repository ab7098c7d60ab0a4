"""Delete, range delete, truncate and compact from the transcript, with integrity refusals that widen the
range, and the three sources of a summary: typed, the built-in digest, the configured summarizer."""

from __future__ import annotations

import json
from pathlib import Path

from sessionview.ui.dialogs.confirm import PreviewScreen, RefusalScreen
from sessionview.ui.dialogs.edit import CompactScreen
from uihelpers import SIZE, all_text, wait_for
from edithelpers import flat, make_app, modal, notes, opened, saved, select, settled


def lines_of(p: Path) -> list[bytes]:
    return p.read_bytes().splitlines(keepends=True)


async def test_delete_the_selected_message(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 4)
        await pilot.press("d")
        pv = await modal(pilot, PreviewScreen)
        assert "delete #4" in all_text(app) and "1 record removed" in all_text(app)
        rows = pv.query_one("#preview-rows").text
        assert "- assistant" in rows and "Trois entrées" in rows
        await pilot.press("y")
        await saved(pilot, screen, "delete #4")
        assert len(screen.model) == 10 and screen.transcript.cursor_number == 4
    assert lines_of(brute) == original[:3] + original[4:]


async def test_n_or_escape_in_the_preview_cancels(brute):
    before = brute.read_bytes()
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 4)
        for key in ("n", "escape"):
            await pilot.press("d")
            await modal(pilot, PreviewScreen)
            await pilot.press(key)
            await settled(pilot, screen)
    assert brute.read_bytes() == before


async def test_delete_a_range_marked_with_v(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 10)
        await pilot.press("v", "j")
        assert screen.transcript.marked_range == (10, 11)
        assert "range #10-#11 (2 records)" in all_text(app)
        await pilot.press("d")
        pv = await modal(pilot, PreviewScreen)
        assert "2 records removed" in all_text(app)
        assert pv.query_one("#preview-rows").text.count("\n- ") + pv.query_one("#preview-rows").text.startswith("- ") >= 2
        await pilot.press("enter")
        await saved(pilot, screen, "delete #10-#11")
        assert screen.transcript.range_anchor is None and len(screen.model) == 9
    assert lines_of(brute) == original[:9]


async def test_a_range_that_splits_tool_calls_is_refused_and_w_widens_it(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 6)
        await pilot.press("shift+down")
        assert screen.transcript.marked_range == (6, 7)
        await pilot.press("d")
        refusal = await modal(pilot, RefusalScreen)
        text = all_text(app)
        assert "tc_02" in text and "tc_03" in text and "orphan" in text
        assert refusal.ids == ("tc_02", "tc_03") and "widen to #6-#9" in text
        await pilot.press("w")
        await modal(pilot, PreviewScreen)
        assert "delete #6-#9" in all_text(app) and "4 records removed" in all_text(app)
        await pilot.press("y")
        await saved(pilot, screen, "delete #6-#9")
    assert lines_of(brute) == original[:5] + original[9:]


async def test_deleting_a_tool_result_alone_is_refused_and_escape_writes_nothing(brute):
    before = brute.read_bytes()
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 3)
        await pilot.press("d")
        refusal = await modal(pilot, RefusalScreen)
        assert refusal.ids == ("tc_01",) and "dangling" in all_text(app) and "w: widen to #2-#3" in all_text(app)
        await pilot.press("escape")
        await settled(pilot, screen)
    assert brute.read_bytes() == before


async def test_truncate_after_the_selected_message(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 9)
        await pilot.press("t")
        await modal(pilot, PreviewScreen)
        assert "truncate after #9" in all_text(app) and "2 records removed" in all_text(app)
        await pilot.press("y")
        await saved(pilot, screen, "truncate after #9")
        assert len(screen.model) == 9 and screen.transcript.cursor_number == 9
    assert lines_of(brute) == original[:9]


async def test_truncate_that_would_leave_calls_without_results_widens_to_a_valid_point(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 7)
        await pilot.press("t")
        await modal(pilot, RefusalScreen)
        assert "keep #1-#6 instead (truncate after #6)" in all_text(app)
        await pilot.press("w")
        await modal(pilot, PreviewScreen)
        assert "truncate after #6" in all_text(app)
        await pilot.press("y")
        await saved(pilot, screen, "truncate after #6")
    assert lines_of(brute) == original[:6]


async def test_compact_needs_a_range(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("c")
        await wait_for(pilot, lambda: "mark the range" in notes(app))
        assert app.screen is screen


async def test_compact_a_range_with_a_typed_summary(brute):
    original = lines_of(brute)
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 2)
        await pilot.press("v", "j", "j", "c")
        cs = await modal(pilot, CompactScreen)
        assert "compact #2-#4" in all_text(app) and "3 records" in all_text(app)
        assert "No summarizer command is configured" in flat(app) and "Run summarizer" not in all_text(app)
        await pilot.press("ctrl+s")  # empty: refused in place
        await wait_for(pilot, lambda: "empty" in cs.error)
        await pilot.press(*"Listed the files.")
        assert cs.text == "Listed the files."
        await pilot.press("ctrl+s")
        pv = await modal(pilot, PreviewScreen)
        rows = pv.query_one("#preview-rows").text
        assert "3 records removed, 1 added" in all_text(app)
        assert "+ ── compacted · summary" in rows and "Listed the files." in rows and "- assistant" in rows
        await pilot.press("n")  # back to the summary, kept
        cs = await modal(pilot, CompactScreen)
        assert cs.text == "Listed the files."
        await pilot.press("ctrl+s")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "compact #2-#4")
        assert screen.transcript.cursor_number == 2 and screen.transcript.range_anchor is None
    assert lines_of(brute) == original[:1] + [b'{"role":"user","content":"[compacted:summary] Listed the files."}\n'] + original[4:]


async def test_compact_refusal_widens_then_the_digest_fills_in_the_summary(brute):
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 3)
        await pilot.press("v", "j", "c")
        await modal(pilot, RefusalScreen)
        assert "tc_01" in all_text(app) and "widen to #2-#4" in all_text(app)
        await pilot.press("w")
        cs = await modal(pilot, CompactScreen)
        assert "compact #2-#4" in all_text(app)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: cs.text.startswith("Compacted 3 records"))
        assert "shell ×1: command=ls -la" in cs.text and "Trois entrées" in cs.text
        await pilot.press("end", *" (checked)")
        await pilot.press("ctrl+s")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "compact #2-#4")
    second = lines_of(brute)[1]
    assert second.startswith(b'{"role":"user","content":"[compacted:summary] Compacted 3 records') and b"(checked)" in second


def config(tmp_path: Path, monkeypatch, command: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"summarizer = {json.dumps(command)}\nsummarizer_timeout = 30\n")
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(cfg))


async def test_compact_with_the_summarizer_command(brute, tmp_path, monkeypatch):
    config(tmp_path, monkeypatch, "printf 'Summary of '; wc -l | tr -d ' '; printf ' records'")
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 2)
        await pilot.press("v", "j", "j", "c")
        cs = await modal(pilot, CompactScreen)
        assert "the summarizer (ctrl+r: printf" in all_text(app)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: cs.text == "Summary of 3\n records", what="the summarizer's text")
        assert not cs.running and "filled in by the summarizer" in cs.status
        await pilot.press("ctrl+s")
        await modal(pilot, PreviewScreen)
        await pilot.press("y")
        await saved(pilot, screen, "compact #2-#4")
    assert lines_of(brute)[1] == b'{"role":"user","content":"[compacted:summary] Summary of 3\\n records"}\n'


async def test_a_failing_summarizer_is_reported_and_the_text_kept(brute, tmp_path, monkeypatch):
    config(tmp_path, monkeypatch, "echo boom >&2; exit 3")
    before = brute.read_bytes()
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 2)
        await pilot.press("v", "j", "j", "c")
        cs = await modal(pilot, CompactScreen)
        await pilot.press(*"mine")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: "summarizer failed" in cs.error, what="the failure")
        assert "status 3" in cs.error and "boom" in cs.error and cs.text == "mine"
        assert "summarizer failed" in all_text(app)
        await pilot.press("escape")
        await settled(pilot, screen)
    assert brute.read_bytes() == before


async def test_escape_cancels_a_running_summarizer_and_kills_it(brute, tmp_path, monkeypatch):
    config(tmp_path, monkeypatch, "sleep 60")
    before = brute.read_bytes()
    app = make_app(brute)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 2)
        await pilot.press("v", "j", "j", "c")
        cs = await modal(pilot, CompactScreen)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: cs._proc is not None, what="the summarizer to start")
        proc = cs._proc
        assert cs.running and "esc cancels" in all_text(app)
        assert cs.query_one("#compact-busy").display
        await pilot.press("escape")
        await wait_for(pilot, lambda: not cs.running and "cancelled" in cs.status, what="cancelled")
        await wait_for(pilot, lambda: proc.poll() is not None, what="the process to be gone")
        assert proc.returncode != 0 and app.screen is cs  # still editing the summary
        await pilot.press("escape")
        await settled(pilot, screen)
    assert brute.read_bytes() == before
