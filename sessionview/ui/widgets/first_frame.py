"""Work that waits for a widget's first frame: the first frame of the session screen is the one the user waits
for, so what would compete with it for the interpreter (the Markdown renderer's import, the full index,
the footer's keys, the user's keymap) starts once that frame is written to the terminal.

"Written", not "refreshed": Textual renders the first frames while it mounts the screen, inside a batch,
and writes none of them; ``call_after_refresh`` would run after those. The app says when a frame went out
(``SessionViewApp.call_after_frame``); without it, after the next refresh."""

from __future__ import annotations

from typing import Callable

from textual import events
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget

WAIT = 0.5  # seconds: if no frame is written by then (nothing to show, a covered screen), run anyway


class FirstFrame:
    """For ``widget``: ``drawn()`` from its ``render_line`` once it draws what matters; ``first`` and the
    callbacks given to ``call_after`` run (in the widget's own handler) after that frame is written."""

    def __init__(self, widget: Widget, first: Callable[[], object]) -> None:
        self.widget = widget
        self._waiting: list[Callable[[], object]] | None = [first]  # None once they ran
        self._drawn = False
        self._timer = False

    def call_after(self, callback: Callable[[], object]) -> None:
        if self._waiting is None:
            self.widget.call_after_refresh(callback)
            return
        self._waiting.append(callback)
        if not self._timer:  # mounted by now
            self._timer = True
            self.widget.set_timer(WAIT, self._run)

    def drawn(self) -> None:
        if self._drawn or self._waiting is None:
            return
        self._drawn = True
        w = self.widget
        getattr(w.app, "call_after_frame", w.call_after_refresh)(lambda: w.call_later(self._run))

    def _run(self) -> None:
        waiting, self._waiting = self._waiting, None
        for callback in waiting or ():
            callback()


def draw_first_frame_once(screen: Screen) -> Screen:
    """``screen``, drawing no frame inside Textual's mount batch. Textual mounts the app's first screen inside a
    batch and draws a frame there that it does not write; the frame written after the batch is drawn again.
    This screen's first drawn frame is the written one: the compositor still holds the whole screen as dirty
    then, so it draws all of it. (The screen's own ``_compositor_refresh``, wrapped: the session screen itself
    stays a plain composed ``Screen``.)"""
    refresh = screen._compositor_refresh
    held = False

    def compositor_refresh() -> None:
        nonlocal held
        if screen.app._batch_count and screen.is_current:
            held = screen._repaint_required = True  # drawn once the batch is over
            return
        if held:
            held = screen._repaint_required = False
        refresh()

    screen.__dict__["_compositor_refresh"] = compositor_refresh  # an instance attribute: it shadows the method
    return screen


def resume_without_restyle(screen: Screen) -> Screen:
    """``screen``, the app's first (default) screen, not styled again as it is first resumed. Textual styles each
    widget as it mounts it, and again when the screen is resumed (every widget of it: 5–10 ms for the session
    screen, most of it the transcript's 30 component classes), although nothing changed in between that did
    not restyle its widget itself (a class, a pseudo-class such as focus). Later resumes (after a dialog)
    style the screen as Textual does."""
    post = screen.post_message

    def post_message(message: Message) -> bool:
        if isinstance(message, events.ScreenResume):
            del screen.__dict__["post_message"]  # once
            if message.refresh_styles:
                message = events.ScreenResume(refresh_styles=False)
        return post(message)

    screen.__dict__["post_message"] = post_message  # an instance attribute: it shadows the method
    return screen
