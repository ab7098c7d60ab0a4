"""What a write will do, before it is done: the transcript as it will be (:class:`PreviewPane`) and the
diff of the file (:class:`DiffPane`). Both draw what :mod:`sessionview.core.edit.preview` and
:func:`sessionview.core.edit.writeback.diff` computed; text from files is escaped as everywhere else."""

from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from sessionview.core.edit.preview import PreviewRow
from sessionview.core.text import escape_control
from sessionview.ui.widgets.blocks import COMPONENT_RULES, COMPONENTS, Entry, Painter, Palette, read_palette
from sessionview.ui.widgets.text_pane import PANE_COMPONENTS, TextPane

MARKS = {"+": "preview--added", "-": "preview--removed", " ": "preview--context", "…": "preview--elided"}
CLIP = {" ": 3, "-": 4}  # drawn lines of a context or removed record at most (new ones are shown whole)
CLIP_MANY = 2  # ... of a removed record when several are removed
DIFF_LINES = 4000  # diff lines shown at most
DIFF_LINE_CHARS = 4000  # characters of one diff line shown at most


class PreviewPane(ScrollView, can_focus=True):
    """The records around a change: context, removed (``-``) and new (``+``) ones."""

    COMPONENT_CLASSES = set(COMPONENTS) | set(MARKS.values())

    DEFAULT_CSS = (
        """
    PreviewPane {
        background: $surface;
        color: $foreground;
"""
        + COMPONENT_RULES
        + """
        & > .preview--added { color: $text-success; text-style: bold; background: $success 12%; }
        & > .preview--removed { color: $text-error; text-style: bold; background: $error 12%; }
        & > .preview--context { color: $text-muted; }
        & > .preview--elided { color: $text-muted; text-style: italic; }
    }
    """
    )

    def __init__(self, rows: list[PreviewRow] | None = None, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: list[PreviewRow] = rows or []
        self._lines: list[Strip] = []
        self._width = -1
        self._scrolled = False

    @property
    def text(self) -> str:
        """Everything drawn, as plain text (for tests)."""
        self._layout(max(20, self.size.width or 100))
        return "\n".join(s.text.rstrip() for s in self._lines)

    def set_rows(self, rows: list[PreviewRow]) -> None:
        self.rows = rows
        self._width = -1
        self.refresh()

    def _palette(self) -> Palette:
        return read_palette(self, self.COMPONENT_CLASSES)

    def _layout(self, width: int) -> None:
        if width == self._width:
            return
        pal = self._palette()
        painter = Painter(pal, self.app.console, max(10, width - 2))
        out: list[Strip] = []
        many = sum(1 for r in self.rows if r.mark in ("-", "…")) > 1
        first_new: int | None = None
        for row in self.rows:
            mark_style = pal[MARKS.get(row.mark, "preview--context")]
            if row.view is None:
                t = Text(f"  … {escape_control(row.note, one_line=True)}", style=mark_style)
                out.append(painter.strip(t, width))
                out.append(Strip.blank(width))
                continue
            number = row.new if row.mark != "-" else row.old
            lines = painter.render(Entry(row.view, number, expanded=row.mark == "+"))
            clip = CLIP_MANY if (many and row.mark == "-") else CLIP.get(row.mark)
            if row.mark == "+" and first_new is None:
                first_new = len(out)
            if clip is not None and len(lines) > clip + 2:  # + the blank line after every entry
                more = len(lines) - clip - 1
                note = Text(f"… {more:,} more line{'s' if more != 1 else ''}", style=pal["transcript--note"])
                lines = lines[:clip] + [painter.strip(note), lines[-1]]
            gutter = Segment(f"{row.mark} ", mark_style)
            for line in lines:
                out.append(Strip.join([Strip([gutter], 2), line]))
        self._lines = out
        self._width = width
        self.virtual_size = Size(width, len(out))
        height = self.scrollable_content_region.height or self.size.height
        if not self._scrolled and first_new is not None and height and first_new > height - 6:
            # the new records are what matters: bring them into view (what comes before is a scroll away)
            self._scrolled = True
            self.call_after_refresh(self.scroll_to, 0, max(0, first_new - height // 3), animate=False)

    def on_resize(self) -> None:
        self._width = -1

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._width = -1
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width or self.size.width
        self._layout(width)
        index = y + int(self.scroll_offset.y)
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        return self._lines[index].adjust_cell_length(width, self.rich_style).apply_style(self.rich_style)


class DiffPane(TextPane):
    """A unified diff, coloured by line kind."""

    COMPONENT_CLASSES = set(PANE_COMPONENTS) | {"diff--added", "diff--removed", "diff--hunk", "diff--header"}

    DEFAULT_CSS = """
    DiffPane {
        & > .diff--added { color: $text-success; }
        & > .diff--removed { color: $text-error; }
        & > .diff--hunk { color: $text-accent; text-style: bold; }
        & > .diff--header { color: $text-muted; text-style: bold; }
    }
    """

    def set_diff(self, text: str) -> None:
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        out: list[tuple[str, str]] = []
        for line in lines[:DIFF_LINES]:
            if len(line) > DIFF_LINE_CHARS:
                line = line[:DIFF_LINE_CHARS] + f" … ({len(line) - DIFF_LINE_CHARS:,} more characters)"
            line = escape_control(line, one_line=True)  # idempotent on what writeback escaped already
            if line.startswith(("---", "+++")):
                style = "diff--header"
            elif line.startswith("@@"):
                style = "diff--hunk"
            elif line.startswith("+"):
                style = "diff--added"
            elif line.startswith("-"):
                style = "diff--removed"
            elif line.startswith("#") or line.startswith("\\"):
                style = "text-pane--note"
            else:
                style = "text-pane--dim"
            out.append((line, style))
        if len(lines) > DIFF_LINES:
            out.append((f"… {len(lines) - DIFF_LINES:,} more diff lines", "text-pane--note"))
        self.set_lines(out)
