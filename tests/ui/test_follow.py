"""Following a live session: appends, pending lines, the new-messages marker, Brute rewrites, truncation,
replacement and deletion. Files are written for real; the app's follower thread sees them."""

from __future__ import annotations

import os
from pathlib import Path

from textual import events

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.session import SessionScreen
from uihelpers import SIZE, all_text, fixed_clock, wait_for


def line(role: str, content: str) -> bytes:
    import json

    return (json.dumps({"role": role, "content": content}, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def make(tmp_path: Path, n: int = 30) -> Path:
    p = tmp_path / "live.jsonl"
    p.write_bytes(b"".join(line("user" if i % 2 == 0 else "assistant", f"message {i + 1}") for i in range(n)))
    return p


def append(p: Path, data: bytes) -> None:
    with open(p, "ab") as f:
        f.write(data)


def rewrite(p: Path, data: bytes) -> None:
    """Brute: truncate the same file, then write it whole."""
    with open(p, "r+b") as f:
        f.truncate(0)
        f.write(data)


async def open_live(pilot) -> SessionScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None)
    await wait_for(pilot, lambda: app.screen.model.indexed)
    await pilot.pause()
    return app.screen


async def test_appended_lines_show_in_order_and_the_view_follows(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        t = screen.transcript
        gen = screen.generation
        append(p, line("user", "one") + line("assistant", "two") + line("user", "three"))
        await wait_for(pilot, lambda: len(screen.model) == 33, what="3 appended records")
        assert [screen.model.view(n).text for n in (31, 32, 33)] == ["one", "two", "three"]
        assert t.follow and t.cursor_number == 33 and t.at_end
        assert screen.generation == gen and screen.state == "live"
        await pilot.pause()
        text = all_text(app)
        assert text.index("one") < text.index("two") < text.index("three")
        assert "● live" in text


async def test_a_batch_of_appends_moves_the_view_and_the_status_line_together(tmp_path):
    """What the follow thread reports is applied in batches (ui.controllers.pacing): the model, the cursor and
    the screen's ``position`` and ``revision`` (what the header and the status line redraw on) change in one
    go, one frame for them all. The transcript posts no message for it: without the bump the status line
    would go stale."""
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        t = screen.transcript
        position, revision = screen.position, screen.revision
        append(p, line("user", "one") + line("assistant", "two"))
        await wait_for(pilot, lambda: len(screen.model) == 32, what="2 appended records")
        assert t.cursor_number == 32 and t.at_end
        assert screen.position > position and screen.revision > revision
        append(p, line("user", "three"))
        await wait_for(pilot, lambda: len(screen.model) == 33, what="1 more")
        assert t.cursor_number == 33
        await pilot.pause()
        assert "three" in all_text(app)


async def test_the_detail_pane_follows_the_new_record(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        await pilot.press("i")
        await wait_for(pilot, lambda: screen.detail_shown and screen.detail.number == 30, what="the detail of the last record")
        append(p, line("assistant", "the newest"))
        await wait_for(pilot, lambda: len(screen.model) == 31, what="the appended record")
        assert screen.detail.number == 31  # (in the same batch)


async def test_partial_last_line_is_pending_until_its_newline(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        t = screen.transcript
        append(p, b'{"role":"assistant","content":"half a')
        await wait_for(pilot, lambda: screen.model.pending is not None, what="pending")
        assert len(screen.model) == 30
        assert t.total_rows() == 31 and t.is_pending_row(t.cursor)
        await pilot.pause()
        text = all_text(app)
        assert "… pending" in text and "half a" in text
        assert "invalid" not in text
        append(p, b' line"}\n')
        await wait_for(pilot, lambda: len(screen.model) == 31 and screen.model.pending is None, what="completed")
        assert screen.model.view(31).text == "half a line"
        assert t.cursor_number == 31
        assert screen.model.view(31).problems == []


async def test_scrolled_away_shows_new_messages_marker_and_F_resumes(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        t = screen.transcript
        await pilot.press("g")
        assert not t.follow
        anchor = t.anchor
        append(p, line("user", "new 1") + line("assistant", "new 2"))
        await wait_for(pilot, lambda: t.new_count == 2, what="two new messages counted")
        assert t.anchor == anchor and t.cursor_number == 1  # the view did not move
        await pilot.pause()
        assert "↓ 2 new messages · F follows" in all_text(app)
        assert "2 new" in all_text(app)  # status line
        await pilot.press("F")
        assert t.follow and t.new_count == 0 and t.cursor_number == 32
        await pilot.pause()
        assert "new messages" not in all_text(app)


async def test_mouse_scroll_up_stops_following(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        t = screen.transcript
        t.post_message(events.MouseScrollUp(t, 5, 5, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert not t.follow
        append(p, line("user", "x"))
        await wait_for(pilot, lambda: t.new_count == 1)
        for _ in range(10):
            t.post_message(events.MouseScrollDown(t, 5, 5, 0, 1, 0, False, False, False))
        await wait_for(pilot, lambda: t.follow, what="back at the end")
        assert t.new_count == 0


async def test_brute_rewrite_that_keeps_the_prefix_is_an_append(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        t = screen.transcript
        await pilot.press("colon", "5", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 5)
        anchor, gen = t.anchor, screen.generation
        old = p.read_bytes()
        rewrite(p, old + line("assistant", "after the turn"))
        await wait_for(pilot, lambda: len(screen.model) == 31, what="the new message")
        assert screen.generation == gen  # no reload
        assert t.anchor == anchor and t.cursor_number == 5  # scroll position kept
        assert t.new_count == 1
        assert screen.notice == ""


async def test_rewrite_with_other_content_reloads_and_says_truncated(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        gen = screen.generation
        rewrite(p, line("user", "all of it, said otherwise") + line("assistant", "fresh"))
        await wait_for(pilot, lambda: screen.generation > gen and screen.model is not None and len(screen.model) == 2, what="reload")
        assert screen.notice == "truncated"
        await pilot.pause()
        text = all_text(app)
        assert "truncated" in text and "fresh" in text and "message 30" not in text


async def test_shrink_to_a_prefix_says_truncated(tmp_path):
    p = make(tmp_path, 10)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        data = p.read_bytes()
        keep = b"".join(data.splitlines(keepends=True)[:4])
        with open(p, "r+b") as f:
            f.truncate(len(keep))
        await wait_for(pilot, lambda: screen.notice == "truncated" and len(screen.model) == 4, what="truncated after grace")


async def test_new_file_at_the_path_says_replaced_and_is_followed(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        tmp = tmp_path / "new.jsonl"
        tmp.write_bytes(line("user", "rotated"))
        os.replace(tmp, p)
        await wait_for(pilot, lambda: screen.notice == "replaced" and len(screen.model) == 1, what="replaced")
        append(p, line("assistant", "later"))
        await wait_for(pilot, lambda: len(screen.model) == 2, what="append after replace")
        assert screen.model.view(2).text == "later"
        await pilot.pause()
        assert "replaced" in all_text(app)


async def test_deleted_file_says_deleted_and_keeps_what_it_had(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        p.unlink()
        await wait_for(pilot, lambda: screen.state == "deleted", what="deleted")
        await pilot.press("g")
        assert len(screen.model) == 30 and screen.model.view(1).text == "message 1"
        await pilot.pause()
        text = all_text(app)
        assert "✗ deleted" in text and "message 1" in text
        # it comes back: a new file, followed
        p.write_bytes(line("user", "back again"))
        await wait_for(pilot, lambda: screen.notice == "replaced" and len(screen.model) == 1)


async def test_follow_with_a_filter_counts_only_matching_records(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        await wait_for(pilot, lambda: screen.model.stats is not None)
        await pilot.press("f", *"assistant", "enter")
        await wait_for(pilot, lambda: screen.model.rows is not None)
        assert len(screen.model.rows) == 15
        append(p, line("user", "u") + line("assistant", "a") + line("user", "u2"))
        await wait_for(pilot, lambda: len(screen.model) == 33)
        assert len(screen.model.rows) == 16 and screen.transcript.cursor_number == 32


async def test_a_filter_survives_a_reload(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        await pilot.press("f", *"user", "enter")
        await wait_for(pilot, lambda: screen.model.rows is not None)
        gen = screen.generation
        rewrite(p, line("assistant", "a") + line("user", "b") + line("user", "c"))
        await wait_for(pilot, lambda: screen.generation > gen and screen.model.rows is not None and len(screen.model) == 3)
        assert list(screen.model.rows) == [2, 3] and screen.model.filter.roles == {"user"}
