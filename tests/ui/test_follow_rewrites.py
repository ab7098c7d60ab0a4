"""Following through whole-file rewrites: a temp file renamed over the path that keeps what is shown is an
append (no reload, no "replaced"); an agent's compaction says so, naming Brute's marker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sessionview.demo.agent import SimulatedAgent
from sessionview.ui.app import SessionViewApp
from test_follow import line, make, open_live, rewrite
from uihelpers import SIZE, all_text, fixed_clock, wait_for

ROOT = Path(__file__).resolve().parents[2]


def rename_over(p: Path, data: bytes) -> None:
    """sessionview's save: a temp file ``.NAME.sv-tmp-*`` next to the file, renamed over it."""
    tmp = p.with_name(f".{p.name}.sv-tmp-test")
    tmp.write_bytes(data)
    os.replace(tmp, p)


async def test_rename_that_keeps_what_is_shown_is_an_append(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        t = screen.transcript
        await pilot.press("colon", "5", "enter")
        await wait_for(pilot, lambda: t.cursor_number == 5)
        anchor, gen = t.anchor, screen.generation
        old_ino = p.stat().st_ino
        rename_over(p, p.read_bytes() + line("assistant", "rebased in"))
        await wait_for(pilot, lambda: len(screen.model) == 31, what="the new message")
        assert p.stat().st_ino != old_ino
        assert screen.generation == gen  # no reload
        assert t.anchor == anchor and t.cursor_number == 5 and t.new_count == 1
        assert screen.notice == "" and screen.model.view(31).text == "rebased in"
        # the new file is the one read and followed now
        with open(p, "ab") as f:
            f.write(line("user", "after the rename"))
        await wait_for(pilot, lambda: len(screen.model) == 32, what="an append to the new file")
        assert screen.model.view(32).text == "after the rename" and screen.generation == gen
        await pilot.press("G")
        await pilot.pause()
        text = all_text(app)
        assert "after the rename" in text and "replaced" not in text


async def test_rename_with_an_edited_middle_line_reloads_and_says_replaced(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        gen = screen.generation
        data = p.read_bytes().splitlines(keepends=True)
        data[9] = line("assistant", "EDITED in the middle")
        rename_over(p, b"".join(data))
        await wait_for(pilot, lambda: screen.generation > gen and screen.notice == "replaced", what="reload")
        assert screen.model.view(10).text == "EDITED in the middle"


async def test_another_process_saving_appended_lines_is_an_append(tmp_path):
    """A real child process saves the file with sessionview's save (temp file and rename) while the app
    shows it: the old content unchanged plus two lines, what a rebase produces."""
    p = make(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    script = (
        "import sys\n"
        "from sessionview.core.store import save, stamp\n"
        "path, data = sys.argv[1], bytes.fromhex(sys.argv[2])\n"
        "save.save(path, lambda appended: [data, appended], stamp.stamp_file(path), root=sys.argv[3],"
        " backup=False, state_dir=sys.argv[4])\n"
    )
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        gen = screen.generation
        new = p.read_bytes() + line("user", "from another process") + line("assistant", "saved ✓")
        proc = subprocess.Popen(
            [sys.executable, "-c", script, str(p), new.hex(), str(tmp_path), str(state)],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            await wait_for(pilot, lambda: proc.poll() is not None, timeout=60, what="the saving process")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 0
        await wait_for(pilot, lambda: len(screen.model) == 32, what="the two saved lines")
        assert screen.generation == gen and screen.notice == ""
        assert [screen.model.view(n).text for n in (31, 32)] == ["from another process", "saved ✓"]


async def test_an_agents_compaction_says_compacted_with_its_marker(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        gen = screen.generation
        data = p.read_bytes().splitlines(keepends=True)
        rewrite(p, b"".join([data[0], line("user", "[compacted:summary] ## Objective\n- all of it"), *data[-5:]]))
        await wait_for(pilot, lambda: screen.generation > gen and screen.notice == "compacted", what="reload")
        assert len(screen.model) == 7
        assert screen.notice_detail == "by the agent ([compacted:summary]): 30 messages → 7; reloaded"
        await pilot.pause()
        text = all_text(app)
        assert "compacted by the agent ([compacted:summary]): 30 messages → 7; reloaded" in text
        assert "truncated" not in text


async def test_real_shrinkage_without_a_marker_still_says_truncated(tmp_path):
    p = make(tmp_path)
    app = SessionViewApp(p, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot)
        data = p.read_bytes().splitlines(keepends=True)
        rewrite(p, b"".join([data[0], line("user", "not a [compacted:summary] marker"), *data[-5:]]))
        await wait_for(pilot, lambda: screen.notice == "truncated" and len(screen.model) == 7, what="reload")


async def test_the_demo_agents_compaction_shows_as_a_compaction(tmp_path):
    p = tmp_path / "live.jsonl"
    agent = SimulatedAgent(str(p), pace=0.02, rewrite_every=0, compact_every=2)
    agent.start()
    try:
        await_path = 0
        while not p.exists() and await_path < 1000:
            agent.join(0.01)
            await_path += 1
        app = SessionViewApp(p)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_live(pilot)
            await wait_for(pilot, lambda: screen.notice == "compacted", timeout=20, what="the demo agent's compaction")
            assert screen.notice_detail.startswith("by the agent ([compacted:summary]): ")
            assert "truncated" not in all_text(app)
    finally:
        agent.stop()
        agent.join(5)
