"""Big sessions: end first, background index, long and oversized lines, cancellable search."""

from __future__ import annotations

import json
from pathlib import Path

from sessionview.core.doc.model import Kind
from sessionview.ui.app import SessionViewApp
from sessionview.core.view.transcript import TranscriptModel
from sessionview.ui.screens.session import SessionScreen
from sessionview.ui.widgets.blocks import plain_lines
from uihelpers import SIZE, all_text, fixed_clock, wait_for


def write_session(p: Path, n: int) -> None:
    with open(p, "w") as f:
        for i in range(1, n + 1):
            f.write(json.dumps({"role": "user" if i % 2 else "assistant", "content": f"message number {i}"}) + "\n")


def test_model_opens_end_first_and_numbers_come_with_the_index(tmp_path):
    p = tmp_path / "big.jsonl"
    write_session(p, 5000)
    m = TranscriptModel.open(str(p), tail_count=20)
    try:
        assert not m.indexed and len(m) == 20
        assert m.line_number(1) is None and m.record_of_line(10) is None
        assert m.view(20).text == "message number 5000"
        from sessionview.core.tail_open import full_index

        shift = m.attach_index(full_index(m.tail.fd, m.end))
        assert shift == 4980 and m.indexed and len(m) == 5000
        assert m.line_number(5000) == 5000 and m.view(1).text == "message number 1"
    finally:
        m.close()


async def test_big_session_shows_the_end_then_indexes(tmp_path):
    p = tmp_path / "big.jsonl"
    write_session(p, 100_000)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None)
        screen = app.screen
        await pilot.pause()
        assert "message number 100000" in all_text(app)
        await wait_for(pilot, lambda: screen.model.indexed, what="index")
        t = screen.transcript
        assert len(screen.model) == 100_000 and t.cursor_number == 100_000
        await pilot.pause()
        assert "#100,000" in all_text(app)
        await pilot.press("g")
        await pilot.pause()
        assert t.cursor_number == 1 and "message number 1" in all_text(app)
        await pilot.press("colon", *"54321", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 54321)
        # how fast: bench/bench_tui.py (never a timing assert here)
        # scroll bar drag to the middle
        t.scroll_to_fraction(0.5)
        await pilot.pause()
        assert 49_000 < t.anchor[0] < 51_000
        # search from the top finds the last record quickly, and a search can be cancelled
        await pilot.press("g", "slash", *"number 99999", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 99_999, what="search hit")
        await pilot.press("slash", "ctrl+u", *"nowhere to be found", "enter")
        await pilot.press("escape")  # cancels the search if it still runs, else clears it
        await wait_for(pilot, lambda: not screen.workers_running("search"))
        assert screen.search_status in ("search cancelled", "") or "not found" in screen.search_status
        assert t.cursor_number == 99_999


async def test_long_and_oversized_lines_do_not_stall(tmp_path):
    p = tmp_path / "long.jsonl"
    big_text = ("lorem ipsum " * 500_000)  # 6 MB message
    with open(p, "w") as f:
        f.write(json.dumps({"role": "user", "content": "before"}) + "\n")
        f.write(json.dumps({"role": "tool", "content": "x" * (17 << 20), "tool_call_id": "a"}) + "\n")  # over the 16 MiB cap
        f.write(json.dumps({"role": "assistant", "content": big_text}) + "\n")
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None)
        screen = app.screen
        await pilot.pause()
        t = screen.transcript
        last = "\n".join(plain_lines(t.entry_lines(2)))
        assert "5.7 MB more" in last and "enter expands" in last
        assert len(t.entry_lines(2)) < 50
        assert screen.model.view(2).kind is Kind.INVALID and screen.model.view(2).label == "oversized"
        two = "\n".join(plain_lines(t.entry_lines(1)))
        assert "✗ oversized" in two and "more bytes" in two
        await pilot.press("enter")  # unfold: still bounded
        assert len(t.entry_lines(2)) <= 2100
        await pilot.press("i")
        assert "more bytes · a shows all" in screen.detail.text
        await pilot.press("k")
        assert "raw bytes" in screen.detail.text and "more bytes" in screen.detail.text
