"""The transcript's scroll bar: the last column of a :class:`~sessionview.ui.widgets.transcript.TranscriptView`,
by record rather than by line (a session of a million records has no line count until it is drawn).

The thumb's size is the share of records on screen, its place the first record shown; at the end it sits
at the bottom. A press or a drag on the column moves the view to that fraction of the records."""

from __future__ import annotations

from typing import Protocol

from rich.segment import Segment
from rich.style import Style
from textual import events

from sessionview.ui.widgets.anchors import Anchor
from sessionview.ui.widgets.blocks import Palette


class Scrolled(Protocol):
    """What the bar reads from the widget it belongs to."""

    anchor: Anchor

    def total_rows(self) -> int: ...

    def visible_rows(self) -> int: ...

    def bottom_anchor(self) -> Anchor: ...

    def scroll_to_fraction(self, fraction: float) -> None: ...

    def capture_mouse(self, capture: bool = True) -> None: ...

    def release_mouse(self) -> None: ...


class RecordScrollbar:
    """Draws the bar's cells and handles presses and drags on it."""

    TRACK = "transcript--scrollbar"
    THUMB = "transcript--scrollbar-thumb"

    def __init__(self, view: Scrolled) -> None:
        self.view = view
        self.dragging = False

    def thumb(self, height: int) -> tuple[int, int] | None:
        """``(start, size)`` of the thumb in a bar ``height`` cells high; None when everything fits."""
        v = self.view
        total = v.total_rows()
        bottom = v.bottom_anchor()
        if total == 0 or height <= 0 or (v.anchor == (0, 0) and bottom == (0, 0)):
            return None
        visible = v.visible_rows() or 1
        size = max(1, min(height, round(height * visible / total)))
        top = v.anchor[0]
        span = max(1, total - visible)
        start = round((height - size) * min(1.0, top / span))
        if v.anchor == bottom:
            start = height - size
        return start, size

    def cell(self, y: int, geometry: tuple[int, int] | None, base: Style, pal: Palette) -> Segment:
        """The bar's cell on line ``y``, the thumb being ``geometry`` (:meth:`thumb`)."""
        if geometry is None:
            return Segment(" ", base)
        start, size = geometry
        style = pal[self.THUMB] if start <= y < start + size else pal[self.TRACK]
        return Segment(" ", base + style)

    # -- the mouse ------------------------------------------------------------------------------------
    def press(self, event: events.MouseDown, height: int) -> bool:
        """A press on the bar (``event.x`` is the bar's column): start dragging. Whether it was taken."""
        if self.thumb(height) is None:
            return False
        self.dragging = True
        self.view.capture_mouse()
        self.view.scroll_to_fraction(event.y / max(1, height - 1))
        event.stop()
        return True

    def drag(self, event: events.MouseMove, height: int) -> None:
        if self.dragging:
            self.view.scroll_to_fraction(event.y / max(1, height - 1))

    def release(self) -> None:
        if self.dragging:
            self.dragging = False
            self.view.release_mouse()
