"""The app here on remote sessions, reading over SFTP from a real sshd (Pilot): a remote directory's list,
opening a session at its end, following an appender, a Brute rewrite, a save's rename, a replacement, a
deletion, read-only and why, an edit written by the host's sessionview (and a conflict it refuses), the
session list with every host (one down, one hung), and a fleet search hit opened at its #N."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

from sessionview.remote.address import parse
from sessionview.ui.app import SessionViewApp
from sessionview.ui.launch import RemoteTarget, open_remote
from sessionview.ui.screens.browser import BrowserScreen
from sessionview.ui.screens.session import SessionScreen

import remote_sshd

SIZE = (140, 40)


def line(role: str, content: str) -> bytes:
    return (json.dumps({"role": role, "content": content}, separators=(",", ":")) + "\n").encode()


def session_bytes(n: int, last: str = "the last message") -> bytes:
    return b"".join(line("user" if i % 2 == 0 else "assistant", f"message {i + 1}") for i in range(n - 1)) + line("assistant", last)


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def wait_for(pilot, cond, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; the screen was:\n{screen_text(pilot.app)}")
        await pilot.pause(0.02)


def target(address_text: str) -> RemoteTarget:
    address = parse(address_text, check_local=False)
    assert address is not None
    got = open_remote(address_text, address)
    assert isinstance(got, RemoteTarget), got
    return got


async def open_session(pilot) -> SessionScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, "the session to open")
    return app.screen


def test_a_remote_address_that_is_missing_or_refused_says_why_in_one_line(sshd):
    assert open_remote("x", parse(f"svtest:{sshd.sessions}/nope.jsonl", check_local=False)) == "x: no such file or directory"
    known = sshd.home / ".ssh" / "known_hosts"
    kept = known.read_text()
    known.write_text("")  # an unknown host key: refused, nothing read
    try:
        why = open_remote("x", parse(f"svtest:{sshd.sessions}", check_local=False))
    finally:
        known.write_text(kept)
    assert isinstance(why, str) and "host key verification failed" in why and "not in known_hosts" in why


async def test_the_app_lists_a_remote_directory_and_opens_a_session_at_its_last_message(sshd):
    (sshd.sessions / "sub").mkdir()
    (sshd.sessions / "sub" / "run one.jsonl").write_bytes(session_bytes(400, "the very last words"))
    (sshd.sessions / "notes.txt").write_text("not a session")
    app = SessionViewApp(".", remote=target(f"svtest:{sshd.sessions}"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.table.rows, "the remote listing")
        browser = app.screen
        assert [(e.host, e.rel) for e in browser.table.rows] == [("svtest", "sub/run one.jsonl")]
        await wait_for(pilot, lambda: "1 session" in screen_text(app) and "1 host" in screen_text(app), "the header")
        await pilot.press("enter")
        screen = await open_session(pilot)
        access = screen.access
        assert access is not None and screen.path == f"{sshd.sessions}/sub/run one.jsonl"
        await wait_for(pilot, lambda: "the very last words" in screen_text(app), "the last message on screen")
        assert screen.model.tail is not None and screen.model.tail.file is not None  # read through SFTP, end first
        assert screen.model.tail_count < 400 or screen.model.tail.whole
        await wait_for(pilot, lambda: screen.model.indexed, "the full index (line numbers)")
        assert len(screen.model) == 400


async def test_follows_an_appender_a_brute_rewrite_and_a_deletion_over_sftp(sshd):
    path = sshd.sessions / "live.jsonl"
    path.write_bytes(session_bytes(20))
    app = SessionViewApp(".", remote=target(f"svtest:{path}"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_session(pilot)
        await wait_for(pilot, lambda: screen.model.indexed, "the index")
        # a real appender: another process writes lines
        code = ("import sys,time,json\n"
                "for i in range(3):\n"
                "    f=open(sys.argv[1],'ab'); f.write((json.dumps({'role':'user','content':f'appended {i}'})+'\\n').encode()); f.close()\n"
                "    time.sleep(0.05)\n")
        subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=30)
        await wait_for(pilot, lambda: len(screen.model) == 23, "three appended records")
        assert screen.model.view(23).text == "appended 2"
        await wait_for(pilot, lambda: "appended 2" in screen_text(app), "the appended message on screen")
        generation = screen.generation
        # Brute: truncate the same file and write it whole, with one more line: an append, not a reload
        data = path.read_bytes() + line("assistant", "after the rewrite")
        with open(path, "r+b") as f:
            f.truncate(0)
            f.write(data)
        await wait_for(pilot, lambda: len(screen.model) == 24, "the rewrite's new line")
        assert screen.generation == generation and screen.notice != "truncated"
        # a rewrite with other content: truncated, and reopened
        path.write_bytes(session_bytes(5, "a different story"))
        await wait_for(pilot, lambda: screen.notice == "truncated" and screen.model is not None and len(screen.model) == 5,
                       "the truncation")
        # a temp file renamed over the path that keeps what was shown (a save's way): followed on, not reloaded
        generation = screen.generation
        tmp = path.with_name("live.jsonl.tmp")
        tmp.write_bytes(path.read_bytes() + line("user", "after the rename"))
        os.replace(tmp, path)
        await wait_for(pilot, lambda: len(screen.model) == 6, "the renamed file's new line")
        assert screen.generation == generation and screen.model.view(6).text == "after the rename"
        await wait_for(pilot, lambda: "after the rename" in screen_text(app), "the new line on screen")
        # another file renamed over it: replaced, and reopened
        tmp.write_bytes(session_bytes(3, "someone else's session"))
        os.replace(tmp, path)
        await wait_for(pilot, lambda: screen.notice == "replaced" and len(screen.model) == 3, "the replacement")
        os.unlink(path)
        await wait_for(pilot, lambda: screen.state == "deleted", "the deletion")
        assert "someone else's session" in screen_text(app)  # what it had stays on screen


async def test_a_host_without_sessionview_is_read_only_and_says_why(sshd):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(session_bytes(6))
    app = SessionViewApp(".", remote=target(f"svtest-nosv:{path}"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_session(pilot)
        await wait_for(pilot, lambda: "not installed" in (screen.read_only_reason or ""), "the probe of the host")
        assert screen.read_only and "read-only" in screen_text(app)
        await wait_for(pilot, lambda: "sessionview is not installed there" in screen_text(app), "the reason on the status line")
        seen = []
        app.notify = lambda message, **kw: seen.append(message)  # type: ignore[method-assign]
        screen.notify = app.notify  # type: ignore[method-assign]
        await pilot.press("e")
        assert seen and "not installed" in seen[0]
        assert path.read_bytes() == session_bytes(6)


async def edit_on_host(pilot, app, screen, text: str, before_preview=None):
    """e on the cursor's message, ``text`` typed in, ctrl+s: the host's preview (or its refusal)."""
    from textual.widgets import TextArea

    from sessionview.ui.screens.remote_edit import HostPreviewScreen, TextEditScreen

    await wait_for(pilot, lambda: screen.remote_writable, "the probe of the host")
    await pilot.press("e")
    await wait_for(pilot, lambda: isinstance(app.screen, TextEditScreen), "the editor")
    app.screen.query_one(TextArea).text = text
    if before_preview is not None:
        before_preview()
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(app.screen, HostPreviewScreen) or not screen.busy, "the host's preview or refusal")
    return isinstance(app.screen, HostPreviewScreen)


async def test_an_edit_runs_on_the_host_with_its_preview_and_a_conflict_is_refused(sshd):
    name = "it's $(touch PWNED) \"x\".jsonl"
    path = sshd.sessions / name
    path.write_bytes(session_bytes(6, "the last message"))
    app = SessionViewApp(".", remote=target(f"svtest:{path}"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_session(pilot)
        await wait_for(pilot, lambda: screen.model.indexed and screen.transcript.cursor_number is not None, "the index")
        screen.transcript.move_cursor_to(screen.model.row_of(6))
        await pilot.pause()
        assert await edit_on_host(pilot, app, screen, "edited on the host")
        await wait_for(pilot, lambda: "edited on the host" in screen_text(app), "the host's --dry-run diff")
        await pilot.press("y")
        await wait_for(pilot, lambda: not screen.busy and screen.model is not None and screen.model.view(6).text == "edited on the host",
                       "the edit, read back")
        assert json.loads(path.read_bytes().splitlines()[5])["content"] == "edited on the host"
        assert "written" in screen.edit_status and screen.notice == ""  # our own save: no alarm
        assert not (sshd.sessions / "PWNED").exists() and not pathlib.Path("PWNED").exists()
        # the record changes on the host while the editor is open: the host refuses, nothing is written
        def agent_rewrites():
            data = path.read_bytes().splitlines(keepends=True)
            data[5] = line("assistant", "the agent's own words")
            path.write_bytes(b"".join(data))
        screen.transcript.move_cursor_to(screen.model.row_of(6))
        await pilot.pause()
        assert not await edit_on_host(pilot, app, screen, "mine", before_preview=agent_rewrites)
        assert "conflict" in screen.edit_status and "#6 is not the record that was shown" in screen.edit_status
        assert json.loads(path.read_bytes().splitlines()[5])["content"] == "the agent's own words"


async def test_the_session_list_shows_every_host_and_a_down_one_unreachable(sshd, tmp_path, monkeypatch):
    (sshd.sessions / "remote.jsonl").write_bytes(session_bytes(3, "from the host"))
    local = tmp_path / "local"
    local.mkdir()
    (local / "here.jsonl").write_bytes(session_bytes(2, "from here"))
    down = remote_sshd.free_port()
    hung = socket.socket()  # accepts TCP (the kernel does) but never says a word of SSH
    hung.bind(("127.0.0.1", 0))
    hung.listen(8)
    config = tmp_path / "config.toml"
    config.write_text(f'[hosts]\nweb1 = "svtest:{sshd.sessions}"\ndown = "ssh://127.0.0.1:{down}/srv"\n'
                      f'hung = "ssh://127.0.0.1:{hung.getsockname()[1]}/srv"\n')
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(config))
    app = SessionViewApp(str(local), watch=False, host_timeout=6)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and len(app.screen.table.rows) == 2, "both rows")
            browser = app.screen
            # the hung host holds up nothing: the others are listed while it is still being waited for
            assert "hung" not in browser.host_listing.heard and "listing hung…" in screen_text(app)
            await wait_for(pilot, lambda: "hung" in browser.host_listing.errors, "the hung host given up on")
            await check_two_hosts(pilot, app, browser)
    finally:
        hung.close()


async def check_two_hosts(pilot, app, browser) -> None:
    """The down host is named, the others listed with a host column; a remote row opens over SFTP."""
    await wait_for(pilot, lambda: "down" in browser.host_listing.errors, "the down host")
    assert sorted((e.host, e.rel) for e in browser.table.rows) == [("", "here.jsonl"), ("web1", "remote.jsonl")]
    text = screen_text(app)
    assert any(row.split()[:2] == ["host", "name"] for row in text.splitlines())  # the host column
    assert "web1" in text and "local" in text
    assert "down unreachable" in text
    # the remote row opens over SFTP
    browser.table.move_to(next(i for i, e in enumerate(browser.table.rows) if e.host == "web1"))
    await pilot.press("enter")
    screen = await open_session(pilot)
    assert screen.access is not None
    await wait_for(pilot, lambda: "from the host" in screen_text(app), "the remote session")


async def test_hosts_app_is_the_session_list_of_the_hosts_only(sshd):
    (sshd.sessions / "a.jsonl").write_bytes(session_bytes(2))
    (sshd.sessions / "evil\x1b[31m.jsonl").write_bytes(session_bytes(2))
    app = SessionViewApp(".", hosts={"web1": f"svtest:{sshd.sessions}"}, local=False, host_timeout=5)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and len(app.screen.table.rows) == 2, "the rows")
        text = screen_text(app)
        assert "evil\\x1b[31m.jsonl" in text and "\x1b" not in text


async def test_a_fleet_hit_opens_over_ssh_at_its_line_with_the_match(sshd):
    from sessionview.ui.screens import fleet_hits

    path = sshd.sessions / "fleet.jsonl"
    path.write_bytes(session_bytes(300).replace(b"message 137\"", b"message 137 needle here\""))
    hit = SimpleNamespace(host="svtest", path=str(path), n=137)
    app = SessionViewApp(".", hosts={}, local=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        from sessionview.ui.screens.search_all import open_at

        fleet_hits.open_remote(app, hit, "needle", open_at)
        screen = await open_session(pilot)
        assert screen.access is not None
        await wait_for(pilot, lambda: screen.transcript.cursor_number is not None and screen.model.indexed
                       and screen.model.line_number(screen.transcript.cursor_number) == 137, "the cursor on #137")
        assert screen.term == "needle"
        await wait_for(pilot, lambda: "needle here" in screen_text(app), "the hit on screen")


async def test_read_only_stays_read_only_on_a_host_that_could_write(sshd):
    from sessionview.ui.screens.remote_edit import TextEditScreen

    path = sshd.sessions / "s.jsonl"
    path.write_bytes(session_bytes(4))
    app = SessionViewApp(".", read_only=True, remote=target(f"svtest:{path}"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_session(pilot)
        assert screen.read_only_reason == "read-only: this app was started with --read-only"
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, TextEditScreen) and not screen.remote_writable
        assert path.read_bytes() == session_bytes(4)


async def test_a_host_that_stops_answering_is_said_and_what_was_read_stays(sshd):
    from sessionview.remote.connection import call

    path = sshd.sessions / "s.jsonl"
    path.write_bytes(session_bytes(5, "read before the drop"))
    app = SessionViewApp(".", remote=target(f"svtest:{path}"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_session(pilot)
        await wait_for(pilot, lambda: "read before the drop" in screen_text(app), "the session")
        seen = []
        screen.notify = lambda message, **kw: seen.append((kw.get("title"), message))  # type: ignore[method-assign]
        conn = screen.access.connection.conn

        async def drop():
            conn.abort()

        call(drop(), 5)
        await wait_for(pilot, lambda: any(title == "host not answering" for title, _ in seen), "the notice")
        assert "read before the drop" in screen_text(app)
