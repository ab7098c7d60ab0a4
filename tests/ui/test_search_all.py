"""Search every session from the session list: hits as they arrive, escaped snippets, Enter opens the
session at the message with the match highlighted, and the index kept current while the screen is open."""

from __future__ import annotations

import json

from uihelpers import SIZE, all_text, fixed_clock, wait_for

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.browser import BrowserScreen
from sessionview.ui.screens.search_all import SearchAllScreen, hit_text
from sessionview.ui.screens.session import SessionScreen


def line(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


async def open_search(pilot) -> SearchAllScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded, what="listing")
    await pilot.press("ctrl+f")
    await wait_for(pilot, lambda: isinstance(app.screen, SearchAllScreen), what="the search screen")
    await wait_for(pilot, lambda: app.screen.index_status == "index current", timeout=30, what="the first update")
    return app.screen


async def search(pilot, screen: SearchAllScreen, text: str) -> None:
    screen.query_one("#search-all-input").value = text
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.search_status and "…" not in screen.search_status, what="search done")


async def test_hits_show_with_session_number_role_and_marked_snippet(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot)
        await search(pilot, screen, "README")
        assert screen.hits and "hit" in screen.search_status
        # the search's own pass (a stat per file) leaves the header at "index current", not at its progress
        assert screen.index_status == "index current"
        text = all_text(app)
        first = screen.hits[0]
        assert f"#{first.n}" in text and first.role in text
        rendered = hit_text(first, "x")
        assert any("reverse" in str(span.style) for span in rendered.spans)  # the match is marked


async def test_enter_opens_the_session_at_the_message_with_the_match_highlighted(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    rows = [line({"role": "user" if i % 2 == 0 else "assistant", "content": f"filler message {i}"}) for i in range(60)]
    rows[41] = line({"role": "assistant", "content": "the needle is here"})
    (d / "a.jsonl").write_bytes(b"".join(rows))
    app = SessionViewApp(d, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot)
        await search(pilot, screen, "needle")
        assert [h.n for h in screen.hits] == [42]
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), what="the session")
        session = app.screen
        await wait_for(pilot, lambda: session.model is not None and session.transcript.cursor_number is not None
                       and session.model.line_number(session.transcript.cursor_number) == 42, what="the message")
        assert session.term == "needle" and session.transcript.term == "needle"
        assert "at #42" in session.search_status


async def test_a_hostile_snippet_is_escaped(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "evil.jsonl").write_bytes(line({"role": "user", "content": "pwned [bold red]markup[/] \x1b[31m \u202eevil \x07 end"}))
    app = SessionViewApp(d, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot)
        await search(pilot, screen, "pwned")
        assert len(screen.hits) == 1
        plain = hit_text(screen.hits[0], "evil.jsonl").plain
        assert "\x1b" not in plain and "\u202e" not in plain and "\x07" not in plain
        assert "[bold red]markup[/]" in plain and "\\x1b[31m" in plain and "\\u202e" in plain
        assert "[bold red]markup[/]" in all_text(app)  # shown as text, never read as markup


async def test_a_query_with_nothing_to_search_says_so(sessions):
    app = SessionViewApp(sessions, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot)
        await search(pilot, screen, "-only")
        assert screen.search_status.startswith("search:") and screen.hits == []
        await search(pilot, screen, "zzzznothing")
        assert "not found" in screen.search_status


async def test_the_index_follows_the_directory_while_the_screen_is_open(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "a.jsonl").write_bytes(line({"role": "user", "content": "first words"}))
    app = SessionViewApp(d, clock=fixed_clock, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot)
        with open(d / "a.jsonl", "ab") as f:
            f.write(line({"role": "assistant", "content": "a later walrus"}))
        from sessionview.core.index import default_index_path
        from sessionview.core.index.sqlite import SqliteBackend

        def indexed() -> bool:
            b = SqliteBackend(default_index_path())
            try:
                state = b.file_state(str(d / "a.jsonl"))
                return state is not None and state.lines == 2
            finally:
                b.close()

        await wait_for(pilot, indexed, timeout=20, what="the appended line in the index")
        await search(pilot, screen, "walrus")
        assert [h.n for h in screen.hits] == [2]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen), what="back to the list")


async def test_search_inside_a_session_says_k_of_n(tmp_path):
    p = tmp_path / "s.jsonl"
    rows = [line({"role": "user", "content": "needle here" if i in (3, 10, 20) else f"hay {i}"}) for i in range(1, 31)]
    p.write_bytes(b"".join(rows))
    app = SessionViewApp(p, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
        screen = app.screen
        await pilot.press("g", "slash", *"needle", "enter")
        await wait_for(pilot, lambda: "of 3" in screen.search_status, what="the count")
        first = screen.search_status
        assert "at #3 · 1 of 3" in first
        await pilot.press("n")
        await wait_for(pilot, lambda: "at #10" in screen.search_status, what="the next hit")
        assert "2 of 3" in screen.search_status
        await pilot.press("N", "N")
        await wait_for(pilot, lambda: "at #20" in screen.search_status, what="wrapped back")
        assert "3 of 3" in screen.search_status


async def test_opening_a_hit_says_k_of_n_in_the_session(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    rows = [line({"role": "user", "content": "needle" if i in (5, 9) else f"hay {i}"}) for i in range(1, 13)]
    (d / "a.jsonl").write_bytes(b"".join(rows))
    app = SessionViewApp(d, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot)
        await search(pilot, screen, "needle")
        index = [h.n for h in screen.hits].index(9)
        screen.open_hit(index)
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), what="the session")
        await wait_for(pilot, lambda: "at #9 · 2 of 2" in app.screen.search_status, what="k of N")


async def test_a_search_while_the_index_is_being_built_says_its_hits_are_so_far(tmp_path, monkeypatch):
    from sessionview.ui.screens import search_all

    d = tmp_path / "s"
    d.mkdir()
    (d / "a.jsonl").write_bytes(line({"role": "user", "content": "findme"}))
    monkeypatch.setattr(search_all, "WAIT_FOR_UPDATE", 0.0)
    app = SessionViewApp(d, clock=fixed_clock, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.loaded, what="listing")
        await pilot.press("ctrl+f")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchAllScreen), what="the search screen")
        screen = app.screen
        screen._lock.acquire()  # as if the background update were still running
        try:
            await search(pilot, screen, "findme")
            assert "so far" in screen.search_status
        finally:
            screen._lock.release()
        await wait_for(pilot, lambda: screen.index_status == "index current", timeout=30, what="the first update")
        await search(pilot, screen, "findme")
        assert "so far" not in screen.search_status and len(screen.hits) == 1
