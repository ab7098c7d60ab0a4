"""Helpers for the UI tests (imported as ``uihelpers``): fixture copies with fixed mtimes, a fixed clock, and bounded waits:
on the app's workers where the thing waited for is their work (:func:`after_workers`), else on a condition."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Callable

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z: the tests' "now"
SIZE = (120, 40)


def fixed_clock() -> float:
    return NOW


def place(src: Path, dst_dir: Path, age: float, name: str | None = None) -> Path:
    """Copy ``src`` into ``dst_dir`` and set its mtime to ``age`` seconds before the tests' now."""
    dst = dst_dir / (name or src.name)
    shutil.copyfile(src, dst)
    os.utime(dst, (NOW - age, NOW - age))
    return dst


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """A directory with the fixture sessions, fixed mtimes (newest: brute-session, 1 minute ago)."""
    d = tmp_path / "sessions"
    d.mkdir()
    names = [
        "brute-session.jsonl",
        "claude-code.jsonl",
        "codex-rollout.jsonl",
        "openai-chat.jsonl",
        "anthropic-messages.jsonl",
        "pi-agent.jsonl",
        "littleghost-filesystem-snapshot.json",
    ]
    for i, name in enumerate(names):
        place(FIXTURES / name, d, 60.0 * (i + 1))
    return d


@pytest.fixture
def brute(tmp_path: Path) -> Path:
    return place(FIXTURES / "brute-session.jsonl", tmp_path, 3600)


def _timed_out(what: str | Callable[[], str], predicate: Callable[[], object]) -> AssertionError:
    """The failure of a wait for ``what``: a string, or a callable asked now (to say what the screen showed)."""
    return AssertionError(f"timed out waiting for {(what() if callable(what) else what) or predicate}")


async def wait_for(pilot, predicate: Callable[[], object], timeout: float = 10.0, what: str | Callable[[], str] = "") -> None:
    """Let the app run until ``predicate()`` holds (bounded; fails with ``what`` otherwise)."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if time.monotonic() > deadline:
            raise _timed_out(what, predicate)
        await pilot.pause(0.01)


#: the session screen's workers that end (the follower runs until the file is closed; edit flows wait on the user)
FINITE_WORKERS = ("open", "index", "stats", "search", "filter", "overwritten")


async def after_workers(
    pilot, predicate: Callable[[], object], timeout: float = 10.0, what: str | Callable[[], str] = "",
    groups: tuple[str, ...] = FINITE_WORKERS,
) -> None:
    """Until ``predicate()`` holds, waiting for the app's running workers of ``groups`` to complete and
    their messages to be handled, which may start the next ones (open, then index, then stats). Bounded."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while not predicate():
        left = deadline - time.monotonic()
        if left <= 0:
            raise _timed_out(what, predicate)
        busy = [w for w in app.workers if w.group in groups and w.is_running]
        if busy:
            await asyncio.wait_for(app.workers.wait_for_complete(busy), left)
            await pilot.pause()  # the messages they posted
        else:
            await pilot.pause(0.01)  # nothing running yet: a worker is about to start (after a refresh)


def all_text(app) -> str:
    """Every character currently on screen, one line per row (the one private Textual API the tests use:
    the screen's compositor, as Textual's own tests do)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def footer_line(app) -> str:
    """The screen's last row: the footer's keys."""
    return all_text(app).splitlines()[-1]
