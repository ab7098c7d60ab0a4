"""The list of sessions in a directory (Line API: any number of rows costs one screenful).

Its columns are :data:`COLUMNS`, a list of :class:`Column` specs (a title, a width or a flexible share, how a
row shows it and the catalog key it sorts by); :class:`ColumnHeader` shows their titles with the sort's arrow
and sorts by the one clicked."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from sessionview.core.catalog import LIVE_WINDOW, Entry
from sessionview.core.text import escape_control
from sessionview.core.view.humanize import human_age, human_count, human_size

FORMAT_MIN = 16  # the format column before any title is known


@dataclass(frozen=True)
class Column:
    """One column of the list: its header, its width (``width`` cells, or a ``flex`` share of what is left, at
    least ``min``), its alignment, the catalog sort key it sorts by (:data:`sessionview.core.catalog.SORT_KEYS`)
    and how it shows an entry: ``cell(entry, now)`` → ``(text, style)``, the style a component-class suffix
    (``dim``, ``live``, ``format``, ``error``) or "" for the row's own."""

    id: str
    label: str
    cell: Callable[[Entry, float], tuple[str, str]]
    width: int = 0
    flex: int = 0
    min: int = 0
    right: bool = False
    sort: str | None = None
    #: hidden when the row is too narrow for every column's minimum (the highest first); 0: always shown
    drop: int = 0


def _pending(e: Entry) -> tuple[str, str]:
    return ("?" if e.error else "…"), "dim"


def _live(e: Entry, now: float) -> tuple[str, str]:
    return (" ● live", "live") if e.is_live(now, LIVE_WINDOW) else ("", "dim")


def _title(e: Entry, now: float) -> tuple[str, str]:
    if e.sketch is None:
        return _pending(e) if e.stale or e.error else ("", "dim")
    return (escape_control(e.sketch.title, one_line=True), "") if e.sketch.title else ("", "dim")


def _messages(e: Entry, now: float) -> tuple[str, str]:
    if e.sketch is None or e.sketch.messages is None:
        return _pending(e)
    return ("" if e.sketch.messages_exact else "~") + human_count(e.sketch.messages), ""


def _tokens(e: Entry, now: float) -> tuple[str, str]:
    if e.sketch is None or e.sketch.tokens is None:
        return _pending(e)
    return "~" + human_count(e.sketch.tokens), "dim"


def _problems(e: Entry, now: float) -> tuple[str, str]:
    if e.sketch is None or e.sketch.problems is None:
        return ("?", "dim") if e.error else ("", "dim")
    if not e.sketch.problems:
        return "", "dim"
    return f"✗ {human_count(e.sketch.problems)}{'' if e.sketch.problems_exact else '+'}", "error"


def _activity(e: Entry, now: float) -> tuple[str, str]:
    return human_age(now - e.mtime), "" if e.is_live(now, LIVE_WINDOW) else "dim"


def _format(e: Entry, now: float) -> tuple[str, str]:
    return (escape_control(e.format, one_line=True), "format") if e.format else _pending(e)


#: the columns, left to right (a new one is one more spec: a host column, for instance)
COLUMNS: list[Column] = [
    Column("live", "", _live, width=8),
    Column("name", "name", lambda e, now: (escape_control(e.rel, one_line=True), ""), flex=1, min=16, sort="name"),
    Column("title", "title", _title, flex=1, min=16, sort="title"),
    Column("messages", "msgs", _messages, width=8, right=True, sort="messages"),
    Column("tokens", "tokens", _tokens, width=9, right=True, sort="tokens", drop=2),
    Column("problems", "✗", _problems, width=7, right=True, sort="problems"),
    Column("size", "size", lambda e, now: (human_size(e.size), "dim"), width=9, right=True, sort="size", drop=3),
    Column("activity", "activity", _activity, width=11, right=True, sort="mtime", drop=1),
    Column("format", "format", _format, sort="format"),  # as wide as the titles it shows: never cut
]

HOST_MAX = 20  # cells the host column takes at most


def _host(e: Entry, now: float) -> tuple[str, str]:
    return (escape_control(e.host, one_line=True), "") if e.host else ("local", "dim")


def host_columns(width: int) -> list[Column]:
    """:data:`COLUMNS` with a host column after the live mark (``width`` cells: the longest host name)."""
    host = Column("host", "host", _host, width=max(6, min(HOST_MAX, width + 1)), sort="host")
    return [COLUMNS[0], host, *COLUMNS[1:]]


def layout(
    width: int, format_need: int = FORMAT_MIN, columns: list[Column] = COLUMNS, needs: dict[str, int] | None = None
) -> list[tuple[Column, int]]:
    """Each column shown, with its width. The format column gets what its titles need; fixed columns their
    width; flexible ones share the rest, a flexible column with a known need (``needs``: the names' widths)
    getting up to that need first (at most 3/5 of the room), as long as the others keep their ``min``. Where the row is too narrow for
    every ``min``, columns with a ``drop`` rank are hidden (the highest first), and then the flexible ones
    shrink: the format is never cut."""
    needs = needs or {}
    columns = list(columns)
    for c in sorted((c for c in columns if c.drop), key=lambda c: -c.drop):
        if sum(k.width for k in columns) + format_need + sum(k.min for k in columns if k.flex) <= width:
            break
        columns.remove(c)
    flex = [c for c in columns if c.flex]
    room = max(0, width - sum(c.width for c in columns) - format_need)
    widths: dict[str, int] = {}
    if room < sum(c.min for c in flex):  # not even the minimums: shrink in proportion
        total = sum(c.flex for c in flex) or 1
        widths = {c.id: room * c.flex // total for c in flex}
    else:
        widths = {c.id: c.min for c in flex}
        left = room - sum(widths.values())
        for c in flex:
            if c.id in needs:  # up to its need, and to at most 3/5 of the room (the title keeps a share)
                grow = max(0, min(needs[c.id], c.min + left, max(c.min, room * 3 // 5)) - c.min)
                widths[c.id] += grow
                left -= grow
        rest = [c for c in flex if c.id not in needs] or flex
        total = sum(c.flex for c in rest) or 1
        for c in rest:
            widths[c.id] += left * c.flex // total
    return [(c, format_need if c.id == "format" else (c.width or widths.get(c.id, 0))) for c in columns]


def _shown_len(name: str) -> int:
    """The cells a name takes as shown (escaped; plain ASCII is measured without escaping it)."""
    if name.isascii() and name.isprintable():
        return len(name)
    from rich.cells import cell_len

    return cell_len(escape_control(name, one_line=True))


def _cell(text: str, width: int, right: bool = False) -> str:
    from rich.cells import cell_len, set_cell_size

    if width <= 0:
        return ""
    if cell_len(text) > width - 1:
        text = set_cell_size(text, max(0, width - 2)) + "…"
    return set_cell_size(text.rjust(width - 1) if right else text, width - 1) + " "


def header_text(widths: list[tuple[Column, int]], sort: str | None = None, reverse: bool = False) -> str:
    """The column titles (of a :func:`layout`); the sorted column's has ``▾`` (its natural order) or ``▴``
    (reversed)."""
    out = []
    for c, w in widths:
        label = c.label
        if sort is not None and c.sort == sort:
            label = f"{label} {'▴' if reverse else '▾'}".strip()
        out.append(_cell(label, w, c.right))
    return "".join(out)


def column_at(x: int, widths: list[tuple[Column, int]]) -> Column | None:
    """The column under cell ``x`` of a row laid out as ``widths``."""
    left = 0
    for c, w in widths:
        if left <= x < left + w:
            return c
        left += w
    return None


class ColumnHeader(Static):
    """The column titles; a click on one sorts by it (again: the other way)."""

    @dataclass
    class SortBy(Message):
        sort: str

    widths: list[tuple[Column, int]] = []  # the rows' layout, as the titles are shown

    def show(self, widths: list[tuple[Column, int]], sort: str | None, reverse: bool) -> None:
        self.widths = widths
        self.update(Content(header_text(widths, sort, reverse)))  # plain text, never markup

    def on_click(self, event: events.Click) -> None:
        column = column_at(event.x, self.widths)
        if column is not None and column.sort is not None:
            self.post_message(self.SortBy(column.sort))


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
        self.name_need = 0  # the width the listed names need (the name column takes up to that first)
        #: the columns (with a host column when other hosts are listed: :meth:`show_hosts`)
        self.column_specs: list[Column] = COLUMNS

    def show_hosts(self, names: list[str]) -> None:
        """Add a host column, as wide as the longest of ``names`` (and "local")."""
        self.column_specs = host_columns(max((_shown_len(n) for n in [*names, "local"]), default=5))

    @property
    def format_need(self) -> int:
        from rich.cells import cell_len

        return max((cell_len(escape_control(f, one_line=True)) + 1 for f in self.formats), default=FORMAT_MIN)

    def columns(self, width: int | None = None) -> list[tuple[Column, int]]:
        """The columns and their widths for rows ``width`` cells wide (default: the table's own)."""
        if width is None:
            width = self.scrollable_content_region.width or self.size.width
        return layout(width, self.format_need, self.column_specs, needs={"name": self.name_need})

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
        self.name_need = max((_shown_len(e.rel) for e in rows), default=0) + 1
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
        now = self.clock()
        segs = []
        for column, w in self.columns(width):
            text, style = column.cell(e, now)
            segs.append(Segment(_cell(text, w, column.right), base + self._style(f"session-table--{style}") if style else base))
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
