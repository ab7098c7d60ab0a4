"""The app's delete, truncate, compact and drop-result on a remote session, run by the host's own
``sessionview`` against a real sshd (Pilot): the host's --dry-run diff first, then the write with
``--expect`` naming the records it touches; a conflict when the file changed on the host after the
preview; a path with a space, a quote and ``$(…)`` that stays one argument. And ``--expect N:M:SHA256``
on the command line (no SSH)."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import subprocess
import sys

from sessionview.remote.writes import expect_arg, records_digest
from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.remote_edit import HostPreviewScreen, TextEditScreen

from test_app_sftp import SIZE, line, open_session, screen_text, session_bytes, target, wait_for

NAME = "it's a $(touch PWNED) \"run\".jsonl"


def contents(path: pathlib.Path) -> list[str]:
    return [json.loads(raw)["content"] for raw in path.read_bytes().splitlines()]


async def opened(pilot, path: pathlib.Path):
    screen = await open_session(pilot)
    await wait_for(pilot, lambda: screen.model.indexed and screen.transcript.cursor_number is not None, "the index")
    await wait_for(pilot, lambda: screen.remote_writable, "the probe of the host")
    return screen


async def select(pilot, screen, first: int, last: int | None = None) -> None:
    """The cursor on #first; with ``last``, the range #first-#last marked (v, then shift+down)."""
    screen.transcript.move_cursor_to(screen.model.row_of(first))
    await pilot.pause()
    if last is not None:
        await pilot.press("v")
        for _ in range(last - first):
            await pilot.press("shift+down")
        await wait_for(pilot, lambda: screen.transcript.marked_range == (first, last), "the marked range")


async def preview(pilot, app, screen, key: str) -> HostPreviewScreen | None:
    """``key`` pressed: the host's preview (None if the host refused at once)."""
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, HostPreviewScreen) or not screen.busy, "the host's preview or refusal")
    return app.screen if isinstance(app.screen, HostPreviewScreen) else None


async def answer_yes(pilot, screen) -> None:
    await pilot.press("y")
    await wait_for(pilot, lambda: not screen.busy and screen.model is not None, "the write, and the file read back")


async def test_delete_and_truncate_run_on_the_host_after_its_preview(sshd):
    path = sshd.sessions / NAME
    path.write_bytes(session_bytes(8, "the last message"))
    app = SessionViewApp(".", remote=target(f"svtest:{path}"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, path)
        # d on a marked range: the host's diff names the two records, nothing is written before y
        await select(pilot, screen, 3, 4)
        shown = await preview(pilot, app, screen, "d")
        assert shown is not None and "delete #3-#4" in shown.title_text
        assert "-" + line("user", "message 3").decode().strip() in shown.diff
        assert "-" + line("assistant", "message 4").decode().strip() in shown.diff
        assert "message 5" not in "".join(ln for ln in shown.diff.splitlines() if ln.startswith(("-", "+")))
        assert len(contents(path)) == 8
        await answer_yes(pilot, screen)
        await wait_for(pilot, lambda: len(screen.model) == 6, "the transcript after the delete")
        assert contents(path) == ["message 1", "message 2", "message 5", "message 6", "message 7", "the last message"]
        assert "saved on the host" in screen.edit_status and "written" in screen.edit_status
        assert screen.transcript.marked_range is None and screen.notice == ""  # our own save: no alarm
        # t on #3: every record after it goes, after the host's preview
        await select(pilot, screen, 3)
        shown = await preview(pilot, app, screen, "t")
        assert shown is not None and "truncate after #3" in shown.title_text and "the last message" in shown.diff
        await answer_yes(pilot, screen)
        await wait_for(pilot, lambda: len(screen.model) == 3, "the transcript after the truncate")
        assert contents(path) == ["message 1", "message 2", "message 5"]
        await wait_for(pilot, lambda: "message 5" in screen_text(app) and "the last message" not in screen_text(app), "the screen")
    # the odd name was one argument: no command ran from it, on the host or here
    assert not (sshd.sessions / "PWNED").exists() and not pathlib.Path("PWNED").exists()


async def test_a_write_is_refused_when_the_file_changed_on_the_host_after_the_preview(sshd):
    path = sshd.sessions / NAME
    path.write_bytes(session_bytes(6))
    app = SessionViewApp(".", remote=target(f"svtest:{path}"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, path)
        await select(pilot, screen, 2, 3)
        assert await preview(pilot, app, screen, "d") is not None
        # an agent rewrites record 3 while the preview is open
        data = path.read_bytes().splitlines(keepends=True)
        data[2] = line("user", "the agent's own words")
        path.write_bytes(b"".join(data))
        await answer_yes(pilot, screen)
        assert "conflict" in screen.edit_status and "#2-#3 are not the records that were shown" in screen.edit_status
        assert "nothing was written" in screen.edit_status
        assert contents(path) == ["message 1", "message 2", "the agent's own words", "message 4", "message 5", "the last message"]
        # a truncate's preview, then a line appended on the host: the write would drop a record never shown
        await wait_for(pilot, lambda: screen.model.indexed and len(screen.model) == 6
                       and screen.model.view(3).text == "the agent's own words", "the file as it is now")
        await select(pilot, screen, 4)
        assert await preview(pilot, app, screen, "t") is not None
        with open(path, "ab") as f:
            f.write(line("user", "appended after the preview"))
        await answer_yes(pilot, screen)
        assert "conflict" in screen.edit_status and "would touch #7, which was not shown" in screen.edit_status
        assert len(contents(path)) == 7 and contents(path)[-1] == "appended after the preview"


async def test_compact_and_drop_result_run_on_the_host(sshd):
    path = sshd.sessions / NAME
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "a very long output " * 20}
    path.write_bytes(session_bytes(4) + (json.dumps(call) + "\n" + json.dumps(result) + "\n").encode() + line("assistant", "done"))
    app = SessionViewApp(".", remote=target(f"svtest:{path}"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, path)
        # D on the tool result: its content becomes the marker, its id stays
        await select(pilot, screen, 6)
        shown = await preview(pilot, app, screen, "D")
        assert shown is not None and "compacted:tool_results" in shown.diff
        await answer_yes(pilot, screen)
        await wait_for(pilot, lambda: len(screen.model) == 7 and "compacted:tool_results" in screen.model.record(6).raw.decode(),
                       "the dropped result, read back")
        assert json.loads(path.read_bytes().splitlines()[5])["tool_call_id"] == "c1"
        # c on a marked range, with a typed summary sent on stdin
        await select(pilot, screen, 2, 3)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, TextEditScreen), "the summary editor")
        from textual.widgets import TextArea

        app.screen.query_one(TextArea).text = "two messages, in short"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, HostPreviewScreen) or not screen.busy, "the host's preview")
        assert isinstance(app.screen, HostPreviewScreen) and "two messages, in short" in app.screen.diff
        await answer_yes(pilot, screen)
        await wait_for(pilot, lambda: len(screen.model) == 6, "the compacted transcript")
        assert "two messages, in short" in contents(path)[1] and contents(path)[2] == "the last message"


async def test_undo_and_history_of_a_remote_session_say_they_are_the_clis(sshd):
    path = sshd.sessions / "s.jsonl"
    path.write_bytes(session_bytes(3))
    app = SessionViewApp(".", remote=target(f"svtest:{path}"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, path)
        seen = []
        screen.notify = lambda message, **kw: seen.append(message)  # type: ignore[method-assign]
        await pilot.press("u")
        await pilot.press("H")
        quoted = f"'ssh://svtest{path}'"  # a path with a space, quoted to paste
        assert len(seen) == 2 and all(f"sessionview undo {quoted}" in m for m in seen)
        assert path.read_bytes() == session_bytes(3)


def sv(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[2]))
    return subprocess.run([sys.executable, "-m", "sessionview", *args], input=stdin, capture_output=True, env=env, timeout=60)


def test_expect_names_a_range_and_a_change_may_touch_only_the_records_named(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes(6))
    raws = path.read_bytes().splitlines()
    assert expect_arg(2, raws[1:2]) == f"2:{hashlib.sha256(raws[1]).hexdigest()}"
    assert expect_arg(2, raws[1:4]) == f"2:4:{records_digest(raws[1:4])}"
    assert records_digest([b"ab", b"c"]) != records_digest([b"a", b"bc"])  # where records end counts
    # the wrong bytes for #2-#4: a conflict, exit 1, nothing written
    wrong = f"2:4:{records_digest([raws[1], raws[2], b'x'])}"
    got = sv("delete", str(path), "2:4", "--expect", wrong)
    assert got.returncode == 1 and b"#2-#4 are not the records that were shown" in got.stderr
    assert path.read_bytes() == session_bytes(6)
    # the right ones, but the change touches #5 too: not named, refused
    got = sv("delete", str(path), "2:5", "--expect", expect_arg(2, raws[1:4]))
    assert got.returncode == 1 and b"would touch #5, which was not shown" in got.stderr
    # named in two parts (repeated --expect): written
    got = sv("delete", str(path), "2:5", "--expect", expect_arg(2, raws[1:3]), "--expect", expect_arg(4, raws[3:5]))
    assert got.returncode == 0, got.stderr
    assert contents(path) == ["message 1", "the last message"]
    got = sv("truncate", str(path), "--keep", "1", "--expect", "2:x")
    assert got.returncode == 2 and b"give N:SHA256 or N:M:SHA256" in got.stderr
