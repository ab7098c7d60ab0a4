"""The transcript: a Line-API widget that draws only the records on screen.

The view is anchored to a record and a line inside it (``anchor``), not to a pixel-like offset, so a
session of a million lines costs what a screenful costs: only the entries that are drawn (or walked over
when scrolling) are parsed and wrapped, and their lines are kept in small LRU caches (:mod:`.entries`).
The arithmetic of anchors is in :mod:`.anchors`; the scroll bar in the last column (:mod:`.scrollbar`)
shows the position by record.

Follow mode: while following, new records move the cursor to the end and scroll there. Moving away
(scrolling or moving the cursor up) stops following; records that arrive then are counted and a
"N new messages" marker is drawn at the bottom until following resumes (``F``, ``G``/``end``, a click on
the marker, or scrolling back to the end).
"""

from __future__ import annotations

from typing import Callable

from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from sessionview.core.doc.model import View
from sessionview.core.view.transcript import TranscriptModel
from sessionview.ui import messages as msg
from sessionview.ui.widgets.blocks import COMPONENT_RULES, COMPONENTS, Links, Painter, Palette, read_palette
from sessionview.ui.widgets.paint import gutter
from sessionview.ui.widgets import anchors
from sessionview.ui.widgets.anchors import Anchor
from sessionview.ui.widgets.entries import EntryCache, new_marker
from sessionview.ui.widgets.first_frame import FirstFrame
from sessionview.ui.widgets.ranges import MarkedRange
from sessionview.ui.widgets.markdown import markdown_ready, warm_up
from sessionview.ui.widgets.scrollbar import RecordScrollbar

GUTTER = 2
#: the cursor's style while focused: chosen when drawing, not a ``:focus`` rule (the focus redraws, not restyles)
FOCUSED_CURSOR = "transcript--cursor-focused"
DRAWN_LINES = 512  # lines of the screen kept as drawn (a few screens)


class TranscriptView(Widget, can_focus=True):
    """Draws a :class:`TranscriptModel`; owns cursor, scrolling, folding and follow state."""

    COMPONENT_CLASSES = {*COMPONENTS, FOCUSED_CURSOR}

    DEFAULT_CSS = (
        """
    TranscriptView {
        height: 1fr;
        background: $surface;
        color: $foreground;
"""
        + COMPONENT_RULES
        + """
        & > .transcript--cursor { background: $boost; } & > .transcript--cursor-focused { background: $primary 18%; }
        & > .transcript--gutter-cursor { color: $text-accent; } & > .transcript--marker { background: $accent; color: $text; text-style: bold; }
        & > .transcript--scrollbar { background: $panel; } & > .transcript--scrollbar-thumb { background: $primary 60%; }
        & > .transcript--range { background: $accent 12%; } & > .transcript--gutter-range { color: $text-accent; text-style: bold; }
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
        Binding("m", "toggle_markdown", "Markdown", show=False, tooltip="show message text as Markdown or as its raw text", id="transcript.markdown"),
    ]

    CursorMoved = msg.CursorMoved
    FollowChanged = msg.FollowChanged

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
        self.markdown = True  # user and assistant text drawn as Markdown; m shows the raw text
        self.range_anchor: int | None = None  # record number where a marked range starts (v)
        self._entries = EntryCache()  # what was drawn, by record
        self._layout: list[Anchor | None] | None = None
        self._layout_size = Size(0, 0)
        self._palette: Palette | None = None
        # text is drawn plain until the Markdown renderer is loaded (after the first frame), then redrawn
        self._first = FirstFrame(self, lambda: markdown_ready() or warm_up(lambda: self.app.call_from_thread(self.action_toggle_markdown, False)))
        self._range = MarkedRange(self)
        self._painter: Painter | None = None
        self._frame: tuple = (None,)  # per layout: (layout, size, base style, thumb, painter)
        self._drawn: LRUCache[tuple, tuple[Strip, Strip]] = LRUCache(DRAWN_LINES)  # (see render_line)
        self.scrollbar = RecordScrollbar(self)

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
        self.post_cursor()
        self._post_follow()

    def invalidate(self, keep_entries: bool = False) -> None:
        """Forget every drawn entry (the data, the numbering or the style changed)."""
        if not keep_entries:
            self._entries.clear()
        self._layout = None
        self.refresh()

    def forget(self, numbers: set[int]) -> None:
        """Draw the records ``numbers`` again (what they link to changed)."""
        if numbers and self._entries.forget(numbers):
            self.invalidate(keep_entries=True)

    def rows_changed(self, added: int = 0) -> None:
        """Records were appended (``added`` rows) or the pending line changed. No message: the caller tells
        the screen that the cursor or the count of new messages moved (in the same frame, not the next)."""
        self._layout = None
        total = self.total_rows()
        if self.follow:
            self.cursor = max(0, total - 1)
            self._scroll_to_end()
        else:
            self.new_count += added
            self.cursor = min(self.cursor, max(0, total - 1))
        self._entries.drop_pending()
        self.refresh()

    def remap(self, row_of: Callable[[int], int]) -> None:
        """Keep cursor and position on the same records after a change of numbering or filter."""
        self._entries.clear()
        self._layout = None
        self.cursor = row_of(self.cursor)
        self.anchor = (row_of(self.anchor[0]), self.anchor[1])
        if self.follow:
            self.cursor = max(0, self.total_rows() - 1)
            self._scroll_to_end()
        else:
            self._clamp_anchor()
        self.post_cursor()
        self.refresh()

    def total_rows(self) -> int:
        return 0 if self.model is None else self.model.row_count() + (1 if self._has_pending() else 0)

    def _has_pending(self) -> bool:
        m = self.model
        return m is not None and m.pending is not None and m.pending.size > 0 and not m.filter.active

    def is_pending_row(self, row: int) -> bool:
        return self._has_pending() and self.model is not None and row == self.model.row_count()

    def number_at(self, row: int) -> int | None:
        """The record number at ``row`` (None for the pending row or an empty transcript)."""
        m = self.model
        return None if m is None or row < 0 or row >= m.row_count() else m.number_at(row)

    @property
    def cursor_number(self) -> int | None:
        return self.number_at(self.cursor)

    # -- drawing ------------------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._palette = None
        self._entries.clear()
        self._layout = None

    def watch_has_focus(self, _has_focus: bool) -> None:  # (Textual's styles the widget again: no rule needs it)
        self.refresh()

    def _get_palette(self) -> Palette:
        if self._palette is None:
            self._palette = read_palette(self, (*COMPONENTS, FOCUSED_CURSOR))
        return self._palette

    @property
    def content_width(self) -> int:
        return max(10, self.size.width - GUTTER - 1)

    def _get_painter(self) -> Painter:
        p, pal, width = self._painter, self._get_palette(), self.content_width  # (at least 10, as a Painter's)
        if p is None or p.pal is not pal or p.width != width:
            self._painter = p = Painter(pal, self.app.console, width)
        return p

    def entry_lines(self, row: int, painter: Painter | None = None) -> list[Strip]:
        """The drawn lines of the entry at ``row`` (cached)."""
        m = self.model
        if m is None:
            return []
        painter = painter or self._get_painter()
        if self.is_pending_row(row):
            return self._entries.pending(m, painter)
        n = m.number_at(row)
        return self._entries.entry(m, n, self.expand_all or n in self.expanded, self.term, self.links, painter, self.markdown)

    def height_of(self, row: int) -> int:
        return len(self.entry_lines(row))

    def _get_layout(self) -> list[Anchor | None]:
        if self._layout is None or self._layout_size != self.size:
            if self._layout_size != self.size:  # a new size (the first included): where the view is depends on it
                self._layout_size = self.size
                self._place_for_size()
            self._layout = anchors.layout(self.anchor, self.total_rows(), self.size.height, self.height_of)
        return self._layout

    def render_line(self, y: int) -> Strip:
        layout = self._get_layout()
        if self._frame[0] is not layout:  # once per layout, not per line: the size, the base style, the thumb
            size = self.size
            self._frame = (layout, size, self.rich_style, self.scrollbar.thumb(size.height), self._get_painter())
        _, size, base, thumb, painter = self._frame
        width = size.width
        at = layout[y] if y < len(layout) else None
        pal = self._get_palette()
        if self.model is not None:
            self._first.drawn()
        marker = y == size.height - 1 and not self.follow and self.new_count
        if at is None or marker:
            body = list(new_marker(self.new_count, width - 1, base, pal, self.app.console)) if marker else [Segment(" " * (width - 1), base)]
            body.append(self.scrollbar.cell(y, thumb, base, pal))
            return Strip(body, width)
        row, li = at
        lines = self.entry_lines(row, painter)
        line = lines[li] if li < len(lines) else Strip.blank(painter.width)
        is_cursor, in_range, n = row == self.cursor, self._range.contains(row), self.number_at(row)
        # A line is drawn as before while its entry's strip, its place and its styles are (following scrolls
        # every line up: those already on screen come from here)
        focused = is_cursor and self.has_focus
        key = (id(line), n, li, is_cursor, focused, in_range, thumb is None, thumb is not None and thumb[0] <= y < sum(thumb), width, base, id(pal))
        hit = self._drawn.get(key)
        if hit is not None and hit[0] is line:
            return hit[1]
        line_base = base + pal[FOCUSED_CURSOR if focused else "transcript--cursor"] if is_cursor else base + pal["transcript--range"] if in_range else base
        styled = line.apply_style(line_base)  # (cached by the strip)
        if styled.cell_length != width - 1 - GUTTER:
            styled = styled.adjust_cell_length(width - 1 - GUTTER, line_base)
        m, role, bar = self.model, None, " "
        if n is not None and m is not None and not (is_cursor or in_range):
            role, bar = self._entries.role_style(m, n, pal), self._entries.token_bar(m, n) if li == 0 else " "
        strip = Strip([*gutter(pal, line_base, is_cursor, in_range, role, bar), *styled, self.scrollbar.cell(y, thumb, base, pal)], width)
        self._drawn.set(key, (line, strip))
        return strip

    def visible_rows(self) -> int:  # how many records are (partly) on screen
        return len({a[0] for a in self._get_layout() if a is not None})

    # -- scrolling ----------------------------------------------------------------------------------
    def bottom_anchor(self) -> Anchor:
        return anchors.bottom(self.total_rows(), self.size.height, self.height_of)

    def _clamp_anchor(self) -> None:
        self.anchor = anchors.clamp(self.anchor, self.total_rows(), self.size.height, self.height_of)
        self._layout = None

    def _scroll_to_end(self) -> None:
        self.anchor = self.bottom_anchor()
        self._layout = None
        self.refresh()

    @property
    def at_end(self) -> bool:
        return self.anchor >= self.bottom_anchor()

    def scroll_by_lines(self, delta: int) -> None:
        total = self.total_rows()
        if total == 0:
            return
        self.anchor = anchors.scrolled(self.anchor, delta, total, self.size.height, self.height_of)
        self._layout = None
        if delta < 0:
            self._set_follow(False)
        elif self.at_end:
            self.cursor = max(0, total - 1)
            self.post_cursor()
            self._set_follow(True)
        self.refresh()

    def _ensure_visible(self, row: int) -> None:
        self.anchor = anchors.revealing(self.anchor, row, self.size.height, self.height_of)
        self._layout = None

    def move_cursor_to(self, row: int, *, center: bool = False) -> None:
        total = self.total_rows()
        if total == 0:
            return
        row = max(0, min(row, total - 1))
        self.cursor = row
        if center:
            self.anchor = anchors.centered(row, total, self.size.height, self.height_of)
        else:
            self._ensure_visible(row)
        self._layout = None
        self._set_follow(row == total - 1 and self.at_end)
        self.post_cursor()
        self.refresh()

    def scroll_to_fraction(self, fraction: float) -> None:
        total = self.total_rows()
        if total == 0:
            return
        row = int(max(0.0, min(1.0, fraction)) * (total - 1))
        self.anchor = min((row, 0), self.bottom_anchor())
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
        self.post_cursor()
        self.refresh()

    def post_cursor(self) -> None:  # (also for the marked range)
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
        self.post_cursor()
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

    def action_toggle_markdown(self, toggle: bool = True) -> None:
        """``m``: Markdown or raw text; without ``toggle``, redraw (the Markdown renderer has loaded)."""
        self.markdown = not self.markdown if toggle else self.markdown
        self._entries.lines.clear()
        self._after_fold()
        if toggle:
            self.notify("Markdown" if self.markdown else "raw text", timeout=2, markup=False)

    def set_term(self, term: str) -> None:
        if term != self.term:
            self.term = term
            self._entries.lines.clear()
            self._layout = None
            self.refresh()

    # -- a marked range (for delete and compact; :class:`~.ranges.MarkedRange`) -------------------------
    @property
    def marked_range(self) -> tuple[int, int] | None:
        return self._range.marked()

    def mark_range(self) -> bool:
        return self._range.mark()

    def clear_range(self) -> None:
        self._range.clear()

    def extend_range(self, delta: int) -> None:
        self._range.extend(delta)

    # -- events -------------------------------------------------------------------------------------
    def call_after_first_frame(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once the first frame that shows a model is written (see :class:`FirstFrame`)."""
        self._first.call_after(callback)

    def _place_for_size(self) -> None:
        if self.follow:
            self.anchor = self.bottom_anchor()
        else:
            self.anchor = anchors.clamp(self.anchor, self.total_rows(), self.size.height, self.height_of)
            self.anchor = anchors.revealing(self.anchor, self.cursor, self.size.height, self.height_of)

    def on_resize(self, event: events.Resize) -> None:
        # (sent after the first frame at this size: _get_layout has placed the view for it already)
        if self._layout_size != self.size:
            self._layout = None
            self.refresh()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.scroll_by_lines(3)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.scroll_by_lines(-3)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if event.x >= self.size.width - 1:
            self.scrollbar.press(event, self.size.height)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.scrollbar.drag(event, self.size.height)

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self.scrollbar.release()

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
        self.post_cursor()
        if event.chain == 2:
            self.action_toggle_fold()
        self.refresh()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return container.height

