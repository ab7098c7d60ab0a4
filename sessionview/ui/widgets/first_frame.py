"""Work that waits for a widget's first frame: the first frame of the session screen is the one the user waits
for, so what would compete with it for the interpreter (the Markdown renderer's import, the full index,
the footer's keys, the user's keymap) starts once that frame is written to the terminal.

"Written", not "refreshed": Textual renders the first frames while it mounts the screen, inside a batch,
and writes none of them; ``call_after_refresh`` would run after those. The app says when a frame went out
(``SessionViewApp.call_after_frame``); without it, after the next refresh."""

from __future__ import annotations

from typing import Callable

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


class FirstFrameScreen(Screen):
    """A screen whose first frame is drawn once. Textual mounts the first screen inside a batch and draws a frame
    there that it does not write; the frame written after the batch is drawn again. This screen draws none
    inside the batch: it draws (and writes) the first frame once the batch is over."""

    _held_frame = False

    def _compositor_refresh(self) -> None:
        if self.app._batch_count and self.is_current:
            self._held_frame = self._repaint_required = True  # drawn once the batch is over
            return
        if self._held_frame:  # this one: the compositor still holds the whole screen as dirty, so it draws it all
            self._held_frame = self._repaint_required = False
        super()._compositor_refresh()
