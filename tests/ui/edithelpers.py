"""Helpers for the editing tests: open a session, drive a flow to a given modal, wait for a save, record
notifications. Every wait is bounded (``uihelpers.wait_for``, ``uihelpers.after_workers``); nothing sleeps a
fixed time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sessionview.ui.app import SessionViewApp
from sessionview.ui.screens.session import SessionScreen
from uihelpers import FINITE_WORKERS, SIZE, after_workers, all_text, fixed_clock, wait_for  # noqa: F401  (re-exported)


def line(role: str, content: str, **extra: Any) -> bytes:
    return (json.dumps({"role": role, "content": content, **extra}, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def make_app(path: Path, **kw: Any) -> SessionViewApp:
    app = SessionViewApp(path, clock=fixed_clock, **kw)
    app.notes = []  # type: ignore[attr-defined]
    original = app.notify

    def notify(message: str, **kwargs: Any) -> None:
        app.notes.append(str(message))  # type: ignore[attr-defined]
        original(message, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    return app


def flat(app: SessionViewApp) -> str:
    """The screen's text with every run of blanks (wrapping, borders' padding) made one space."""
    return " ".join(all_text(app).replace("│", " ").split())


def notes(app: SessionViewApp) -> str:
    return "\n".join(app.notes)  # type: ignore[attr-defined]


async def opened(pilot) -> SessionScreen:
    app = pilot.app
    await after_workers(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.model is not None, what="open")
    screen = app.screen
    await after_workers(pilot, lambda: screen.model.indexed and screen.model.stats is not None, what="index and stats")
    await pilot.pause()
    return screen


async def select(pilot, screen: SessionScreen, n: int) -> None:
    await pilot.press("colon", *str(n), "enter")
    await wait_for(pilot, lambda: screen.transcript.cursor_number == n, what=f"cursor on #{n}")


async def modal(pilot, cls: type, what: str = "") -> Any:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, cls), what=what or cls.__name__)
    await pilot.pause()
    return app.screen


async def settled(pilot, screen: SessionScreen) -> None:
    """Until no edit flow runs, the session screen is on top and the file is open and indexed again."""
    app = pilot.app
    await after_workers(
        pilot,
        lambda: not screen.busy and app.screen is screen and screen.model is not None and screen.model.indexed,
        what="the flow to end and the file to be open",
        groups=FINITE_WORKERS + ("edit",),  # the flow has left its last dialog: its worker ends
    )
    await pilot.pause()


async def saved(pilot, screen: SessionScreen, description: str) -> None:
    """Until the save of ``description`` went through and the transcript shows the new file."""
    await wait_for(pilot, lambda: screen.edit_status == f"saved: {description}", what=f"saved: {description}")
    await settled(pilot, screen)
