"""The marked range of a :class:`~sessionview.ui.widgets.transcript.TranscriptView` (``v``, shift+up/down):
the records from where it was started (``view.range_anchor``, a record number) to the cursor, for delete
and compact."""

from __future__ import annotations

from typing import Any


class MarkedRange:
    def __init__(self, view: Any) -> None:  # the TranscriptView
        self.view = view

    def marked(self) -> tuple[int, int] | None:
        """The marked range as record numbers ``(first, last)``: from the anchor to the cursor."""
        v = self.view
        n = v.cursor_number
        if v.range_anchor is None or n is None:
            return None
        return (min(v.range_anchor, n), max(v.range_anchor, n))

    def contains(self, row: int) -> bool:
        r = self.marked()
        m = self.view.model
        if r is None or m is None or self.view.is_pending_row(row) or row >= m.row_count():
            return False
        return r[0] <= m.number_at(row) <= r[1]

    def mark(self) -> bool:
        """Start a range at the cursor, or drop the one marked. Returns whether a range is marked now."""
        v = self.view
        v.range_anchor = None if v.range_anchor is not None else v.cursor_number
        v.post_cursor()
        v.refresh()
        return v.range_anchor is not None

    def clear(self) -> None:
        v = self.view
        if v.range_anchor is not None:
            v.range_anchor = None
            v.post_cursor()
            v.refresh()

    def extend(self, delta: int) -> None:
        """Start a range at the cursor if none is marked, then move the cursor (shift+up/down)."""
        v = self.view
        if v.range_anchor is None:
            v.range_anchor = v.cursor_number
        v.move_cursor_to(v.cursor + delta)
        v.refresh()
