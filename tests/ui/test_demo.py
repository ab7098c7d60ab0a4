"""The demo: bundled examples (one per format), the simulated Brute agent, and the app on them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from sessionview.core.catalog import describe
from sessionview.demo import example_files
from sessionview.demo.agent import SimulatedAgent
from sessionview.ui.app import SessionViewApp
from sessionview.ui.demo import LIVE_NAME, prepare
from sessionview.ui.screens.browser import BrowserScreen
from sessionview.ui.screens.session import SessionScreen
from uihelpers import SIZE, all_text, wait_for


def test_examples_cover_every_format():
    formats = {describe(p)[0] for p in example_files()}
    for name in ("Brute", "Claude Code", "Codex", "OpenAI", "Anthropic", "pi", "LittleGhost"):
        assert any(name in f for f in formats), (name, formats)
    assert all(describe(p)[1] for p in example_files())


def test_prepare_copies_with_staggered_mtimes(tmp_path):
    copies = prepare(str(tmp_path), now=1_000_000.0)
    assert len(copies) == len(example_files())
    mtimes = sorted(os.path.getmtime(p) for p in copies)
    assert len(set(mtimes)) == len(mtimes) and mtimes[-1] <= 1_000_000.0


def test_simulated_agent_writes_like_brute(tmp_path):
    path = tmp_path / "live.jsonl"
    agent = SimulatedAgent(str(path), pace=0.003, rewrite_every=2, compact_every=5)
    seen_partial = False
    seen_shrink = False
    ino = None
    agent.start()
    try:
        last = 0
        deadline = time.monotonic() + 20
        while agent.turn < 6 and time.monotonic() < deadline:
            if path.exists():
                data = path.read_bytes()
                ino = ino or path.stat().st_ino
                if data and not data.endswith(b"\n"):
                    seen_partial = True
                if len(data) < last:
                    seen_shrink = True
                last = len(data)
            time.sleep(0.0005)
    finally:
        agent.stop()
        agent.join(5)
    assert agent.turn >= 6
    assert path.stat().st_ino == ino  # rewrites truncate the same file
    lines = path.read_bytes().splitlines()
    values = [json.loads(line) for line in lines]
    assert all(set(v) <= {"role", "content", "tool_calls", "tool_call_id", "reasoning"} for v in values)
    assert any(str(v.get("content", "")).startswith("[compacted:summary]") for v in values)
    assert seen_partial or seen_shrink  # the timing of a check may miss one, rarely both


async def test_app_on_the_demo_directory_with_a_live_agent(tmp_path):
    prepare(str(tmp_path))
    agent = SimulatedAgent(str(tmp_path / LIVE_NAME), pace=0.05, rewrite_every=2, compact_every=0)
    agent.start()
    try:
        app = SessionViewApp(tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen) and LIVE_NAME in [e.rel for e in app.screen.table.rows])
            screen = app.screen
            assert screen.table.rows[0].rel == LIVE_NAME
            await pilot.pause()
            assert "● live" in all_text(app)
            await pilot.press("home", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None)
            session = app.screen
            n = len(session.model)
            await wait_for(pilot, lambda: len(session.model) > n + 2, what="the agent's messages")
            assert session.transcript.follow and session.state == "live"
    finally:
        agent.stop()
        agent.join(5)


def test_run_reports_a_missing_path_without_starting(tmp_path):
    code = (
        "import sys; from sessionview.ui.launch import run; "
        f"rc = run({str(tmp_path / 'nope')!r}); "
        "assert 'textual' not in sys.modules; sys.exit(rc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no such file or directory" in out.stderr


def test_importing_the_entry_module_does_not_import_textual():
    code = "import sys, sessionview.ui.launch, sessionview.ui.demo; assert 'textual' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_simulated_agent_plays_a_coherent_run(tmp_path):
    from sessionview.demo.agent import STORY

    path = tmp_path / "live.jsonl"
    agent = SimulatedAgent(str(path), pace=0.001, rewrite_every=0, compact_every=0)
    agent.start()
    try:
        deadline = time.monotonic() + 30
        while agent.turn < len(STORY) + 1 and time.monotonic() < deadline:
            time.sleep(0.005)
    finally:
        agent.stop()
        agent.join(5)
    values = [json.loads(line) for line in path.read_bytes().splitlines()]
    # turn by turn: the user's message, then exactly the story's tool calls, each answered by its result
    turns: list[list[dict]] = []
    for v in values[1:]:
        if v["role"] == "user":
            turns.append([])
        turns[-1].append(v)
    for i, turn in enumerate(turns[: len(STORY)]):
        ask, steps, reply = STORY[i]
        calls = [c for v in turn for c in v.get("tool_calls", [])]
        assert [c["name"] for c in calls] == [name for name, _, _ in steps]
        results = [v for v in turn if v["role"] == "tool"]
        assert [r["tool_call_id"] for r in results] == [c["id"] for c in calls]
        assert turn[-1]["role"] == "assistant" and not turn[-1].get("tool_calls")
    text = "\n".join(str(v.get("content")) for v in values)
    assert "error: exit status 1" in text and "1 failed" in text  # the run has an error...
    assert text.index("1 failed") < text.index("12 passed") < text.index("Committed as")  # ...fixed before the commit
