"""The list of sessions in a directory (Line API: any number of rows costs one screenful)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from sessionview.core.catalog import LIVE_WINDOW, Entry
from sessionview.core.text import escape_control
from sessionview.core.view.humanize import human_age, human_count, human_size

BADGE_W, COUNT_W, SIZE_W, AGE_W = 8, 9, 10, 10
FORMAT_W = 39  # the longest format title ("LittleGhost messages JSONL (inferred)") and its gap
FORMAT_MIN, NAME_MIN = 16, 20


def column_widths(width: int, format_need: int = FORMAT_W) -> tuple[int, int, int, int, int, int]:
    """The format column gets what the titles shown need (``format_need`` cells, their gap included) first
    (a narrow terminal shrinks it to ``FORMAT_MIN`` before the name goes under ``NAME_MIN``); the name
    takes the rest."""
    fixed = BADGE_W + COUNT_W + SIZE_W + AGE_W + 1
    fmt = max(FORMAT_MIN, min(FORMAT_W, format_need, width - fixed - NAME_MIN))
    name = max(10, width - fixed - fmt)
    return BADGE_W, name, fmt, COUNT_W, SIZE_W, AGE_W


def _cell(text: str, width: int, right: bool = False) -> str:
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) > width - 1:
        text = set_cell_size(text, max(0, width - 2)) + "…"
    return set_cell_size(text.rjust(width - 1) if right else text, width - 1) + " "


def header_text(width: int, format_need: int = FORMAT_W) -> str:
    b, n, f, c, s, a = column_widths(width, format_need)
    return _cell("", b) + _cell("name", n) + _cell("format", f) + _cell("records", c, True) + _cell("size", s, True) + _cell("changed", a, True)


class SessionTable(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {
        "session-table--cursor",
        "session-table--live",
        "session-table--dim",
        "session-table--format",
        "session-table--error",
    }

    DEFAULT_CSS = """
    SessionTable {
        background: $surface;
        & > .session-table--cursor { background: $boost; }
        &:focus > .session-table--cursor { background: $primary 25%; }
        & > .session-table--live { color: $text-success; text-style: bold; }
        & > .session-table--dim { color: $text-muted; }
        & > .session-table--format { color: $text-secondary; }
        & > .session-table--error { color: $text-error; }
    }
    """

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="sessions.up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="sessions.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="sessions.pageup"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="sessions.pagedown"),
        Binding("home,g", "first", "First", show=False, id="sessions.first"),
        Binding("end,G", "last", "Last", show=False, id="sessions.last"),
        Binding("enter", "open", "Open", id="sessions.open"),
    ]

    @dataclass
    class Opened(Message):
        table: "SessionTable"
        entry: Entry

        @property
        def control(self) -> "SessionTable":
            return self.table

    @dataclass
    class Scrolled(Message):
        """The visible rows changed (so their descriptions can be fetched)."""

        table: "SessionTable"

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, SessionTable.Scrolled)

    def __init__(self, clock: Callable[[], float] = time.time, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.rows: list[Entry] = []
        self.cursor = 0
        self.formats: set[str] = set()  # the format titles met so far: the format column fits them

    @property
    def format_need(self) -> int:
        from rich.cells import cell_len

        return max((cell_len(escape_control(f, one_line=True)) + 1 for f in self.formats), default=FORMAT_MIN)

    def saw_format(self, title: str | None) -> bool:
        """Note a format title; True when the column must widen for it."""
        if not title or title in self.formats:
            return False
        before = self.format_need
        self.formats.add(title)
        return self.format_need != before

    # -- data ---------------------------------------------------------------------------------------
    def set_rows(self, rows: list[Entry], *, else_first: bool = False) -> None:
        """New rows; the cursor stays on the same path when it is still listed. When it is not, it goes to
        the first row if ``else_first`` (a new filter: its first match), else stays near where it was."""
        current = self.rows[self.cursor].path if self.rows and self.cursor < len(self.rows) else None
        self.rows = rows
        if current is not None:
            for i, e in enumerate(rows):
                if e.path == current:
                    self.cursor = i
                    break
            else:
                self.cursor = 0 if else_first else min(self.cursor, max(0, len(rows) - 1))
        else:
            self.cursor = 0
        top = int(self.scroll_offset.y)
        h = self.size.height or 1
        if self.cursor < top or self.cursor >= top + h:
            self.scroll_to(y=max(0, self.cursor - h // 2), animate=False)
        self.virtual_size = Size(self.size.width, len(rows))
        self.refresh()
        self.post_message(self.Scrolled(self))

    @property
    def selected(self) -> Entry | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def visible_rows(self) -> list[Entry]:
        top = int(self.scroll_offset.y)
        return self.rows[top : top + self.size.height + 1]

    # -- drawing ------------------------------------------------------------------------------------
    def _style(self, name: str) -> Style:
        full = self.get_component_rich_style(name)
        partial = self.get_component_rich_style(name, partial=True)
        return Style(color=full.color, bgcolor=full.bgcolor if partial.bgcolor else None, bold=partial.bold, italic=partial.italic)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width or self.size.width
        base = self.rich_style
        index = y + int(self.scroll_offset.y)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        e = self.rows[index]
        if index == self.cursor:
            base = base + self._style("session-table--cursor")
        dim = base + self._style("session-table--dim")
        b, n, f, c, s, a = column_widths(width, self.format_need)
        now = self.clock()
        live = e.is_live(now, LIVE_WINDOW)
        segs = [
            Segment(_cell(" ● live" if live else "", b), base + self._style("session-table--live") if live else dim),
            Segment(_cell(escape_control(e.rel, one_line=True), n), base),
            Segment(
                _cell(escape_control(e.format, one_line=True) if e.format else "…", f),
                (base + self._style("session-table--format")) if e.format else dim,
            ),
            Segment(_cell(human_count(e.count) if e.count is not None else ("?" if e.error else "…"), c, True), base if e.count is not None else dim),
            Segment(_cell(human_size(e.size), s, True), dim),
            Segment(_cell(human_age(now - e.mtime), a, True), base if live else dim),
        ]
        return Strip(segs).adjust_cell_length(width, base)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self.post_message(self.Scrolled(self))

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self.rows))
        self.post_message(self.Scrolled(self))

    # -- actions ------------------------------------------------------------------------------------
    def move_to(self, index: int) -> None:
        if not self.rows:
            return
        self.cursor = max(0, min(index, len(self.rows) - 1))
        top = int(self.scroll_offset.y)
        h = self.size.height or 1
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + h:
            self.scroll_to(y=self.cursor - h + 1, animate=False)
        self.refresh()

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * max(1, (self.size.height or 1) - 1))

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(len(self.rows) - 1)

    def action_open(self) -> None:
        if self.selected is not None:
            self.post_message(self.Opened(self, self.selected))

    def on_click(self, event: events.Click) -> None:
        index = event.y + int(self.scroll_offset.y)
        if 0 <= index < len(self.rows):
            self.move_to(index)
            if event.chain >= 2:
                self.action_open()
