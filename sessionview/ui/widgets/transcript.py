"""The transcript: a Line-API widget that draws only the records on screen.

The view is anchored to a record and a line inside it (``anchor``), not to a pixel-like offset, so a
session of a million lines costs what a screenful costs: only the entries that are drawn (or walked over
when scrolling) are parsed and wrapped, and their lines are kept in a small LRU cache. The scroll bar in
the last column shows the position by record.

Follow mode: while following, new records move the cursor to the end and scroll there. Moving away
(scrolling or moving the cursor up) stops following; records that arrive then are counted and a
"N new messages" marker is drawn at the bottom until following resumes (``F``, ``G``/``end``, a click on
the marker, or scrolling back to the end).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from sessionview.core.doc.model import Kind, View
from sessionview.core.view.transcript import TranscriptModel
from sessionview.ui.widgets.blocks import COMPONENT_RULES, COMPONENTS, Entry, Links, Painter, Palette

GUTTER = 2
CACHE_SIZE = 512

Anchor = tuple[int, int]  # (row, line within that row's entry)


class TranscriptView(Widget, can_focus=True):
    """Draws a :class:`TranscriptModel`; owns cursor, scrolling, folding and follow state."""

    COMPONENT_CLASSES = set(COMPONENTS)

    DEFAULT_CSS = (
        """
    TranscriptView {
        height: 1fr;
        background: $surface;
        color: $foreground;
"""
        + COMPONENT_RULES
        + """
        & > .transcript--cursor { background: $boost; }
        & > .transcript--gutter-cursor { color: $text-accent; }
        & > .transcript--scrollbar { background: $panel; }
        & > .transcript--scrollbar-thumb { background: $primary 60%; }
        & > .transcript--marker { background: $accent; color: $text; text-style: bold; }
        & > .transcript--range { background: $accent 12%; }
        & > .transcript--gutter-range { color: $text-accent; text-style: bold; }
        &:focus > .transcript--cursor { background: $primary 18%; }
    }
    """
    )

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Previous", show=False, id="transcript.up"),
        Binding("down,j", "cursor(1)", "Next", show=False, id="transcript.down"),
        Binding("pageup,b", "page(-1)", "Page up", show=False, id="transcript.pageup"),
        Binding("pagedown,space", "page(1)", "Page down", show=False, id="transcript.pagedown"),
        Binding("ctrl+up", "scroll_lines(-1)", "Scroll up a line", show=False, id="transcript.scroll-up"),
        Binding("ctrl+down", "scroll_lines(1)", "Scroll down a line", show=False, id="transcript.scroll-down"),
        Binding("g,home", "first", "First", show=False, id="transcript.first"),
        Binding("G,end", "last", "Last", show=False, id="transcript.last"),
        Binding("enter,o", "toggle_fold", "Fold/unfold", id="transcript.fold"),
        Binding("O", "toggle_fold_all", "Unfold all", show=False, id="transcript.fold-all"),
        Binding("F", "follow", "Follow", show=False, id="transcript.follow"),
    ]

    @dataclass
    class CursorMoved(Message):
        """The selected record changed (``number`` is a record number of the model, or None)."""

        view: "TranscriptView"
        number: int | None

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, TranscriptView.CursorMoved)

        @property
        def control(self) -> "TranscriptView":
            return self.view

    @dataclass
    class FollowChanged(Message):
        view: "TranscriptView"
        follow: bool
        new_count: int

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, TranscriptView.FollowChanged)

        @property
        def control(self) -> "TranscriptView":
            return self.view

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.model: TranscriptModel | None = None
        self.links: Callable[[View], Links] = lambda v: Links()
        self.cursor = 0
        self.anchor: Anchor = (0, 0)
        self.follow = True
        self.new_count = 0
        self.expanded: set[int] = set()  # record numbers unfolded
        self.expand_all = False
        self.term = ""
        self.range_anchor: int | None = None  # record number where a marked range starts (v)
        self._cache: OrderedDict[tuple, list[Strip]] = OrderedDict()
        self._role_styles: OrderedDict[int, Style] = OrderedDict()
        self._layout: list[Anchor | None] | None = None
        self._layout_size = Size(0, 0)
        self._palette: Palette | None = None
        self._dragging = False

    # -- data ---------------------------------------------------------------------------------------
    def set_model(self, model: TranscriptModel | None, *, keep_position: bool = False) -> None:
        """Show ``model``; unless ``keep_position``, start at its end, following."""
        self.model = model
        self.invalidate()
        if not keep_position:
            self.expanded.clear()
            self.range_anchor = None
            self.new_count = 0
            self.follow = True
            self.cursor = max(0, self.total_rows() - 1)
            self._scroll_to_end()
        else:
            self.cursor = min(self.cursor, max(0, self.total_rows() - 1))
            self._clamp_anchor()
        self._post_cursor()
        self._post_follow()

    def invalidate(self) -> None:
        """Forget every drawn entry (the data, the numbering or the style changed)."""
        self._cache.clear()
        self._role_styles.clear()
        self._layout = None
        self.refresh()

    def rows_changed(self, added: int = 0) -> None:
        """Records were appended (``added`` rows) or the pending line changed."""
        self._layout = None
        total = self.total_rows()
        if self.follow:
            self.cursor = max(0, total - 1)
            self._scroll_to_end()
            self._post_cursor()
        else:
            if added:
                self.new_count += added
                self._post_follow()
            self.cursor = min(self.cursor, max(0, total - 1))
        self._drop_pending_from_cache()
        self.refresh()

    def remap(self, row_of: Callable[[int], int]) -> None:
        """Keep cursor and position on the same records after a change of numbering or filter."""
        self._cache.clear()
        self._role_styles.clear()
        self._layout = None
        self.cursor = row_of(self.cursor)
        self.anchor = (row_of(self.anchor[0]), self.anchor[1])
        if self.follow:
            self.cursor = max(0, self.total_rows() - 1)
            self._scroll_to_end()
        else:
            self._clamp_anchor()
        self._post_cursor()
        self.refresh()

    def _drop_pending_from_cache(self) -> None:
        for key in [k for k in self._cache if k[0] == "pending"]:
            del self._cache[key]

    def total_rows(self) -> int:
        m = self.model
        if m is None:
            return 0
        return m.row_count() + (1 if self._has_pending() else 0)

    def _has_pending(self) -> bool:
        m = self.model
        return m is not None and m.pending is not None and m.pending.size > 0 and not m.filter.active

    def is_pending_row(self, row: int) -> bool:
        return self._has_pending() and self.model is not None and row == self.model.row_count()

    def number_at(self, row: int) -> int | None:
        """The record number at ``row`` (None for the pending row or an empty transcript)."""
        m = self.model
        if m is None or row < 0 or row >= m.row_count():
            return None
        return m.number_at(row)

    @property
    def cursor_number(self) -> int | None:
        return self.number_at(self.cursor)

    # -- drawing ------------------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._palette = None
        self._cache.clear()
        self._role_styles.clear()
        self._layout = None

    def _get_palette(self) -> Palette:
        if self._palette is None:
            styles: dict[str, Style] = {}
            for name in COMPONENTS:
                full = self.get_component_rich_style(name)
                partial = self.get_component_rich_style(name, partial=True)
                styles[name] = Style(
                    color=full.color,
                    bgcolor=full.bgcolor if partial.bgcolor is not None else None,
                    bold=partial.bold,
                    italic=partial.italic,
                    underline=partial.underline,
                )
            self._palette = Palette(Style(), styles)
        return self._palette

    @property
    def content_width(self) -> int:
        return max(10, self.size.width - GUTTER - 1)

    def entry_lines(self, row: int) -> list[Strip]:
        """The drawn lines of the entry at ``row`` (cached)."""
        m = self.model
        if m is None:
            return []
        width = self.content_width
        if self.is_pending_row(row):
            key: tuple = ("pending", width, m.pending)
            hit = self._cache.get(key)
            if hit is None:
                hit = self._painter(width).pending(m.pending, self._pending_view(), self._pending_number())
                self._store(key, hit)
            return hit
        n = m.number_at(row)
        expanded = self.expand_all or n in self.expanded
        key = (n, width, expanded, self.term)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        view = m.view(n)
        entry = Entry(view, m.line_number(n), expanded, self.term, self.links(view), m.record_size(n) if view.kind is Kind.INVALID else None)
        lines = self._painter(width).render(entry)
        self._store(key, lines)
        return lines

    def _pending_view(self) -> View | None:
        m = self.model
        if m is None or m.pending is None or m.pending.size > len(m.pending.preview):
            return None
        from sessionview.core.doc.parse import parse_record

        parsed = parse_record(m.pending.preview.rstrip(b"\r"), terminated=False)
        if not parsed.ok or m.adapter is None:
            return None
        try:
            return m.adapter.view(len(m) + 1, parsed.value)
        except Exception:
            return None

    def _pending_number(self) -> int | None:
        m = self.model
        return None if m is None else m.line_number(len(m) + 1)

    def _painter(self, width: int) -> Painter:
        return Painter(self._get_palette(), self.app.console, width)

    def _store(self, key: tuple, lines: list[Strip]) -> None:
        self._cache[key] = lines
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    def height_of(self, row: int) -> int:
        return len(self.entry_lines(row))

    def _get_layout(self) -> list[Anchor | None]:
        if self._layout is not None and self._layout_size == self.size:
            return self._layout
        self._layout_size = self.size
        layout: list[Anchor | None] = []
        total = self.total_rows()
        row, line = self.anchor
        h = self.size.height
        while len(layout) < h and row < total:
            lines = self.height_of(row)
            while line < lines and len(layout) < h:
                layout.append((row, line))
                line += 1
            row += 1
            line = 0
        layout.extend([None] * (h - len(layout)))
        self._layout = layout
        return layout

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        layout = self._get_layout()
        at = layout[y] if y < len(layout) else None
        pal = self._get_palette()
        if at is None:
            body = Strip.blank(width - 1, base)
        else:
            row, li = at
            lines = self.entry_lines(row)
            line = lines[li] if li < len(lines) else Strip.blank(self.content_width)
            is_cursor = row == self.cursor
            in_range = self._in_range(row)
            line_base = base + pal["transcript--cursor"] if is_cursor else base
            if in_range and not is_cursor:
                line_base = line_base + pal["transcript--range"]
            gutter = self._gutter(row, li, is_cursor, line_base, in_range)
            body = Strip.join([gutter, line.apply_style(line_base)]).adjust_cell_length(width - 1, line_base)
        if y == self.size.height - 1 and not self.follow and self.new_count:
            body = self._marker(width - 1, base)
        return Strip.join([body, self._scrollbar_cell(y, base)])

    def _gutter(self, row: int, li: int, is_cursor: bool, style: Style, in_range: bool = False) -> Strip:
        pal = self._get_palette()
        if is_cursor:
            return Strip([_seg("▌ ", style + pal["transcript--gutter-cursor"])], GUTTER)
        if in_range:
            return Strip([_seg("┃ ", style + pal["transcript--gutter-range"])], GUTTER)
        role_style = pal["transcript--pending"]
        if not self.is_pending_row(row) and self.model is not None:
            n = self.model.number_at(row)
            role_style = self._role_styles.get(n)
            if role_style is None:
                role_style = self._role_style(self.model.view(n))
                self._role_styles[n] = role_style
                if len(self._role_styles) > CACHE_SIZE:
                    self._role_styles.popitem(last=False)
        return Strip([_seg("▎ ", style + role_style)], GUTTER)

    def _role_style(self, view: View) -> Style:
        pal = self._get_palette()
        if view.kind is Kind.INVALID:
            return pal["transcript--invalid"]
        if view.kind is Kind.COMPACTION:
            return pal["transcript--compaction"]
        if view.kind in (Kind.META, Kind.UNKNOWN):
            return pal["transcript--dim"]
        return pal.role(view.role)

    def _marker(self, width: int, base: Style) -> Strip:
        pal = self._get_palette()
        n = self.new_count
        label = f" ↓ {n:,} new message{'s' if n != 1 else ''} · F follows "
        pad = max(0, (width - len(label)) // 2)
        t = Text(" " * pad, style=base)
        t.append(label, style=base + pal["transcript--marker"])
        segs = list(t.render(self.app.console, end=""))
        return Strip(segs).adjust_cell_length(width, base)

    def _scrollbar_cell(self, y: int, base: Style) -> Strip:
        pal = self._get_palette()
        geometry = self._thumb()
        if geometry is None:
            return Strip([_seg(" ", base)], 1)
        start, size = geometry
        style = pal["transcript--scrollbar-thumb"] if start <= y < start + size else pal["transcript--scrollbar"]
        return Strip([_seg(" ", base + style)], 1)

    def _thumb(self) -> tuple[int, int] | None:
        total = self.total_rows()
        h = self.size.height
        if total == 0 or h <= 0 or (self.anchor == (0, 0) and self._bottom_anchor() == (0, 0)):
            return None
        layout = self._get_layout()
        visible = len({a[0] for a in layout if a is not None}) or 1
        size = max(1, min(h, round(h * visible / total)))
        top = self.anchor[0]
        span = max(1, total - visible)
        start = round((h - size) * min(1.0, top / span))
        if self.anchor == self._bottom_anchor():
            start = h - size
        return start, size

    # -- scrolling ----------------------------------------------------------------------------------
    def _bottom_anchor(self) -> Anchor:
        total = self.total_rows()
        need = self.size.height
        row = total - 1
        while row >= 0 and need > 0:
            h = self.height_of(row)
            if h >= need:
                return (row, h - need)
            need -= h
            row -= 1
        return (0, 0)

    def _anchor_ending_at(self, row: int) -> Anchor:
        h_screen = self.size.height
        h = self.height_of(row)
        if h >= h_screen:
            return (row, 0)
        need = h_screen - h
        r = row - 1
        while r >= 0:
            hr = self.height_of(r)
            if hr >= need:
                return (r, hr - need)
            need -= hr
            r -= 1
        return (0, 0)

    def _clamp_anchor(self) -> None:
        total = self.total_rows()
        if total == 0:
            self.anchor = (0, 0)
        else:
            row, line = self.anchor
            row = max(0, min(row, total - 1))
            line = max(0, min(line, self.height_of(row) - 1))
            self.anchor = min((row, line), self._bottom_anchor())
        self._layout = None

    def _scroll_to_end(self) -> None:
        self.anchor = self._bottom_anchor()
        self._layout = None
        self.refresh()

    @property
    def at_end(self) -> bool:
        return self.anchor >= self._bottom_anchor()

    def scroll_by_lines(self, delta: int) -> None:
        row, line = self.anchor
        total = self.total_rows()
        if total == 0:
            return
        line += delta
        if delta > 0:
            bottom = self._bottom_anchor()
            while row < total - 1 and line >= self.height_of(row):
                line -= self.height_of(row)
                row += 1
                if (row, line) >= bottom:
                    break
            self.anchor = min((row, line), bottom)
        else:
            while line < 0 and row > 0:
                row -= 1
                line += self.height_of(row)
            self.anchor = (row, max(0, line))
        self._layout = None
        if delta < 0:
            self._set_follow(False)
        elif self.at_end:
            self.cursor = max(0, total - 1)
            self._post_cursor()
            self._set_follow(True)
        self.refresh()

    def _ensure_visible(self, row: int) -> None:
        top_row, top_line = self.anchor
        h = self.size.height
        if row < top_row or (row == top_row and top_line > 0):
            self.anchor = (row, 0)
        elif row - top_row > h:
            self.anchor = self._anchor_ending_at(row)
        else:
            used = -top_line
            for r in range(top_row, row + 1):
                used += self.height_of(r)
            if used > h:
                self.anchor = self._anchor_ending_at(row)
        self._layout = None

    def move_cursor_to(self, row: int, *, center: bool = False) -> None:
        total = self.total_rows()
        if total == 0:
            return
        row = max(0, min(row, total - 1))
        self.cursor = row
        if center:
            self.anchor = (row, 0)
            back = self.size.height // 3
            r = row
            while back > 0 and r > 0:
                r -= 1
                back -= self.height_of(r)
            if r < row:
                self.anchor = (r, max(0, -back))
            self.anchor = min(self.anchor, self._bottom_anchor())
            self._ensure_visible(row)
        else:
            self._ensure_visible(row)
        self._layout = None
        self._set_follow(row == total - 1 and self.at_end)
        self._post_cursor()
        self.refresh()

    def scroll_to_fraction(self, fraction: float) -> None:
        total = self.total_rows()
        if total == 0:
            return
        row = int(max(0.0, min(1.0, fraction)) * (total - 1))
        self.anchor = min((row, 0), self._bottom_anchor())
        self._layout = None
        self._set_follow(self.at_end)
        self.refresh()

    # -- follow -------------------------------------------------------------------------------------
    def _set_follow(self, follow: bool) -> None:
        if follow == self.follow:
            return
        self.follow = follow
        if follow:
            self.new_count = 0
        self._post_follow()
        self.refresh()

    def resume_follow(self) -> None:
        self.cursor = max(0, self.total_rows() - 1)
        self._scroll_to_end()
        self.new_count = 0
        self.follow = True
        self._post_follow()
        self._post_cursor()
        self.refresh()

    def _post_cursor(self) -> None:
        self.post_message(self.CursorMoved(self, self.cursor_number))

    def _post_follow(self) -> None:
        self.post_message(self.FollowChanged(self, self.follow, self.new_count))

    # -- actions ------------------------------------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        self.move_cursor_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.scroll_by_lines(direction * max(1, self.size.height - 2))
        if direction > 0 and self.at_end:
            return  # scroll_by_lines put the cursor on the last row and resumed following
        rows = [a for a in self._get_layout() if a is not None]
        if not rows:
            return
        first_row, first_line = rows[0]
        later = [r for r, li in rows if r > first_row and li == 0]
        self.cursor = first_row if first_line == 0 or not later else later[0]
        self._set_follow(False)
        self._post_cursor()
        self.refresh()

    def action_scroll_lines(self, delta: int) -> None:
        self.scroll_by_lines(delta)

    def action_first(self) -> None:
        self.move_cursor_to(0)

    def action_last(self) -> None:
        self.resume_follow()

    def action_follow(self) -> None:
        self.resume_follow()

    def action_toggle_fold(self) -> None:
        n = self.cursor_number
        if n is None:
            return
        if n in self.expanded:
            self.expanded.discard(n)
        else:
            self.expanded.add(n)
        self._after_fold()

    def action_toggle_fold_all(self) -> None:
        self.expand_all = not self.expand_all
        if not self.expand_all:
            self.expanded.clear()
        self._after_fold()

    def _after_fold(self) -> None:
        self._layout = None
        if self.follow:
            self._scroll_to_end()
        else:
            self._clamp_anchor()
            self._ensure_visible(self.cursor)
        self.refresh()
        self.refresh()

    def is_expanded(self, n: int) -> bool:
        return self.expand_all or n in self.expanded

    def set_term(self, term: str) -> None:
        if term != self.term:
            self.term = term
            self._cache.clear()
            self._layout = None
            self.refresh()

    # -- a marked range (for delete and compact) ------------------------------------------------------
    @property
    def marked_range(self) -> tuple[int, int] | None:
        """The marked range as record numbers ``(first, last)``: from the anchor to the cursor."""
        n = self.cursor_number
        if self.range_anchor is None or n is None:
            return None
        return (min(self.range_anchor, n), max(self.range_anchor, n))

    def _in_range(self, row: int) -> bool:
        r = self.marked_range
        if r is None or self.model is None or self.is_pending_row(row) or row >= self.model.row_count():
            return False
        return r[0] <= self.model.number_at(row) <= r[1]

    def mark_range(self) -> bool:
        """Start a range at the cursor, or drop the one marked. Returns whether a range is marked now."""
        if self.range_anchor is not None:
            self.range_anchor = None
        else:
            self.range_anchor = self.cursor_number
        self._post_cursor()
        self.refresh()
        return self.range_anchor is not None

    def clear_range(self) -> None:
        if self.range_anchor is not None:
            self.range_anchor = None
            self._post_cursor()
            self.refresh()

    def extend_range(self, delta: int) -> None:
        """Start a range at the cursor if none is marked, then move the cursor (shift+up/down)."""
        if self.range_anchor is None:
            self.range_anchor = self.cursor_number
        self.move_cursor_to(self.cursor + delta)
        self.refresh()

    # -- events -------------------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        self._layout = None
        if self.follow:
            self._scroll_to_end()
        else:
            self._clamp_anchor()
            self._ensure_visible(self.cursor)
        self.refresh()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.scroll_by_lines(3)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.scroll_by_lines(-3)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if event.x >= self.size.width - 1 and self._thumb() is not None:
            self._dragging = True
            self.capture_mouse()
            self.scroll_to_fraction(event.y / max(1, self.size.height - 1))
            event.stop()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._dragging:
            self.scroll_to_fraction(event.y / max(1, self.size.height - 1))

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            self._dragging = False
            self.release_mouse()

    def on_click(self, event: events.Click) -> None:
        if event.x >= self.size.width - 1:
            return
        if event.y == self.size.height - 1 and not self.follow and self.new_count:
            self.resume_follow()
            return
        layout = self._get_layout()
        at = layout[event.y] if 0 <= event.y < len(layout) else None
        if at is None:
            return
        self.cursor = at[0]
        self._set_follow(self.cursor == self.total_rows() - 1 and self.at_end)
        self._post_cursor()
        if event.chain == 2:
            self.action_toggle_fold()
        self.refresh()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return container.height


def _seg(text: str, style: Style):
    from rich.segment import Segment

    return Segment(text, style)
