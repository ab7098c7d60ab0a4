"""A scrollable, wrapped, read-only text pane (Line API). Used for the record detail.

Lines are plain strings with a component-class name for their style; they are escaped by the caller and
folded here to the pane's width, so very long lines never reach the terminal whole.
"""

from __future__ import annotations

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

PANE_COMPONENTS = (
    "text-pane--title",
    "text-pane--label",
    "text-pane--dim",
    "text-pane--error",
    "text-pane--warning",
    "text-pane--note",
    "text-pane--json",
)


def fold(text: str, width: int) -> list[str]:
    """``text`` (one logical line, no newline) cut into pieces at most ``width`` cells wide."""
    width = max(1, width)
    if text.isascii():
        if len(text) <= width:
            return [text]
        return [text[i : i + width] for i in range(0, len(text), width)]
    if cell_len(text) <= width:
        return [text]
    return chop_cells(text, width)


class TextPane(ScrollView, can_focus=True):
    COMPONENT_CLASSES = set(PANE_COMPONENTS)

    DEFAULT_CSS = """
    TextPane {
        background: $surface;
        & > .text-pane--title { color: $text-accent; text-style: bold; }
        & > .text-pane--label { color: $text-primary; }
        & > .text-pane--dim { color: $text-muted; }
        & > .text-pane--error { color: $text-error; }
        & > .text-pane--warning { color: $text-warning; }
        & > .text-pane--note { color: $text-muted; text-style: italic; }
        & > .text-pane--json { color: $foreground; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._source: list[tuple[str, str]] = []
        self._folded: list[tuple[str, str]] = []
        self._folded_width = -1

    @property
    def text(self) -> str:
        """All the logical lines (for tests)."""
        return "\n".join(t for t, _ in self._source)

    def set_lines(self, lines: list[tuple[str, str]]) -> None:
        self._source = lines
        self._folded_width = -1
        self._refold()
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _refold(self) -> None:
        width = max(4, self.scrollable_content_region.width or self.size.width or 80)
        if width == self._folded_width:
            return
        out: list[tuple[str, str]] = []
        for text, style in self._source:
            for piece in fold(text.expandtabs(4), width):
                out.append((piece, style))
        self._folded = out
        self._folded_width = width
        self.virtual_size = Size(width, len(out))

    def on_resize(self) -> None:
        self._refold()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        self._refold()
        index = y + int(self.scroll_offset.y)
        width = self.scrollable_content_region.width or self.size.width
        base = self.rich_style
        if index >= len(self._folded):
            return Strip.blank(width, base)
        text, comp = self._folded[index]
        style = base
        if comp:
            try:
                part = self.get_component_rich_style(comp)
                style = base + Style(color=part.color, bold=part.bold, italic=part.italic)
            except KeyError:
                pass
        return Strip([Segment(text, style)]).adjust_cell_length(width, base)
