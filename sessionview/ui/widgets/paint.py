"""The primitives of drawing the transcript: its colours (component classes read into a :class:`Palette`), and a
:class:`Canvas` that turns escaped, wrapped, clipped text into ``Strip``s at a width. :mod:`.blocks` draws records
with it and :mod:`.toolviews` draws tool calls and results.

Everything that comes from a file is escaped with :func:`~sessionview.core.text.escape_control` and put
into plain ``rich.text.Text`` objects: no markup is ever parsed, no control sequence reaches the terminal.
"""

from __future__ import annotations

from typing import Any, Iterable

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from sessionview.core.text import escape_control
from sessionview.core.values import Value
from sessionview.core.view.humanize import human_size

COMPONENT_RULES = """
        & > .transcript--user { color: $text-primary; }
        & > .transcript--assistant { color: $text-success; }
        & > .transcript--tool { color: $text-warning; }
        & > .transcript--system { color: $text-secondary; }
        & > .transcript--role { color: $text-accent; }
        & > .transcript--dim { color: $text-muted; }
        & > .transcript--reasoning { color: $text-muted; text-style: italic; }
        & > .transcript--invalid { color: $text-error; }
        & > .transcript--warning { color: $text-warning; }
        & > .transcript--meta { color: $text-muted; }
        & > .transcript--compaction { color: $text-secondary; }
        & > .transcript--tool-name { color: $text-warning; }
        & > .transcript--link { color: $text-accent; }
        & > .transcript--match { background: $warning 45%; color: $foreground; }
        & > .transcript--pending { color: $text-muted; text-style: italic; }
        & > .transcript--note { color: $text-muted; text-style: italic; }
        & > .transcript--added { color: $text-success; }
        & > .transcript--removed { color: $text-error; }
        & > .transcript--hunk { color: $text-accent; }
"""

COMPONENTS = (
    "transcript--user",
    "transcript--assistant",
    "transcript--tool",
    "transcript--system",
    "transcript--role",
    "transcript--dim",
    "transcript--reasoning",
    "transcript--invalid",
    "transcript--warning",
    "transcript--meta",
    "transcript--compaction",
    "transcript--tool-name",
    "transcript--link",
    "transcript--match",
    "transcript--pending",
    "transcript--note",
    "transcript--added",
    "transcript--removed",
    "transcript--hunk",
    "transcript--cursor",
    "transcript--gutter-cursor",
    "transcript--scrollbar",
    "transcript--scrollbar-thumb",
    "transcript--marker",
    "transcript--range",
    "transcript--gutter-range",
)

ROLE_CLASS = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "toolResult": "tool",
    "system": "system",
    "developer": "system",
}

TAB = 4


class Palette(Value):
    """Rich styles for the transcript's parts, read from the widget's component classes."""

    __slots__ = ("base", "styles", "code_theme")
    base: Style
    styles: dict[str, Style]
    code_theme: str  # the pygments theme of highlighted code (Rich Syntax)

    def __init__(self, base: Style, styles: dict[str, Style] | None = None, code_theme: str = "monokai") -> None:
        self.base = base
        self.styles = {} if styles is None else styles
        self.code_theme = code_theme

    def __getitem__(self, name: str) -> Style:
        return self.styles.get(name, Style())

    def role(self, role: str | None) -> Style:
        return self["transcript--" + ROLE_CLASS.get(role or "", "role")]


def read_palette(widget: Widget, names: Iterable[str]) -> Palette:
    """The styles of ``widget``'s component classes ``names``: colours in full (as the widget's
    background resolves them), background and text style only where the class sets them."""
    styles: dict[str, Style] = {}
    for name in names:
        full = widget.get_component_rich_style(name)
        part = widget.get_component_rich_style(name, partial=True)
        styles[name] = Style(
            color=full.color,
            bgcolor=full.bgcolor if part.bgcolor is not None else None,
            bold=part.bold,
            italic=part.italic,
            underline=part.underline,
        )
    try:
        dark = widget.app.current_theme.dark
    except Exception:
        dark = True
    return Palette(Style(), styles, "monokai" if dark else "default")


def gutter(pal: Palette, style: Style, is_cursor: bool, in_range: bool, role_style: Style | None, bar: str) -> list[Segment]:
    """The two cells left of a transcript line: the cursor's or the marked range's bar, else the record's colour
    (``role_style``; None: the pending line's) and, on its first line, its token ``bar``."""
    if is_cursor or in_range:
        return [Segment("▌ " if is_cursor else "┃ ", style + pal["transcript--gutter-cursor" if is_cursor else "transcript--gutter-range"])]
    return [Segment("▎", style + (role_style or pal["transcript--pending"])), Segment(bar, style + pal["transcript--dim"])]


def one_line(text: str, limit: int) -> str:
    """A single-line, escaped summary of ``text`` at most ``limit`` characters long."""
    s = escape_control(text[: limit * 4], one_line=True).replace("\\n", " ⏎ ")
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: max(1, limit - 1)] + "…"


def summarize_arguments(args: Any, limit: int = 80) -> str:
    """``key=value`` pairs of a tool call's arguments, short."""
    if isinstance(args, dict):
        parts = []
        for k, v in args.items():
            if isinstance(v, str):
                val = v
            else:
                try:
                    import orjson

                    val = orjson.dumps(v).decode()
                except TypeError:
                    val = repr(v)
            parts.append(f"{k}={val[:limit]}")
            if sum(map(len, parts)) > limit * 2:
                break
        return one_line("  ".join(parts), limit)
    if args is None:
        return ""
    if isinstance(args, str):
        return one_line(args, limit)
    try:
        import orjson

        return one_line(orjson.dumps(args).decode(), limit)
    except TypeError:
        return one_line(repr(args), limit)

def more_note(rest: str, hint: str = "") -> str:
    """``… 1,234 more lines, 56.0 KB`` for what is not shown (``… 5.7 MB more`` for part of one line)."""
    size = human_size(len(rest.encode("utf-8", "surrogatepass")))
    lines = rest.count("\n") + (0 if rest.endswith("\n") else 1)
    text = f"… {lines:,} more line{'s' if lines != 1 else ''}, {size}" if lines > 1 else f"… {size} more"
    return text + (f" · {hint}" if hint else "")


class Canvas:
    """Draws text at a width with a palette. Stateless apart from its settings."""

    def __init__(self, palette: Palette, console: Console, width: int) -> None:
        self.pal = palette
        self.console = console
        self.width = max(10, width)

    # -- primitives -------------------------------------------------------------------------------
    def strip(self, text: Text, width: int | None = None) -> Strip:
        width = self.width if width is None else width
        if text.spans or not text.style:
            segments = list(text.render(self.console, end=""))
        else:  # rich leaves the base style to the console when there are no spans
            segments = [Segment(text.plain, self.console.get_style(text.style))]
        return Strip(segments).adjust_cell_length(width, self.pal.base)

    def wrap(self, text: Text, indent: int = 0, limit: int | None = None) -> tuple[list[Strip], int]:
        """Wrap ``text`` (no newlines expected) at the width minus ``indent``; at most ``limit`` lines.
        Returns the strips and how many characters they hold."""
        avail = max(4, self.width - indent)
        lines = text.wrap(self.console, avail, overflow="fold", justify="left")
        out: list[Strip] = []
        used = 0
        pad = Text(" " * indent, style=self.pal.base) if indent else None
        for line in lines:
            if limit is not None and len(out) >= limit:
                break
            used += len(line.plain)
            out.append(self.strip(Text.assemble(pad, line) if pad else line))
        if not out:
            out.append(self.strip(Text(" " * indent)))
        return out, used

    def paragraph(
        self,
        text: str,
        style: Style,
        max_lines: int,
        indent: int = 0,
        term: str = "",
        hint: str = "enter expands",
    ) -> list[Strip]:
        """An escaped, wrapped, clipped block of text with a "… N more" note when clipped."""
        if not text:
            return []
        avail = max(4, self.width - indent)
        budget = max_lines * avail + 1
        head = text[:budget]
        logical = head.split("\n")
        if len(logical) > max_lines:
            logical = logical[:max_lines]
        out: list[Strip] = []
        consumed = 0
        cut = False
        for raw_line in logical:
            room = max_lines - len(out)
            if room <= 0:
                cut = True
                break
            shown = escape_control(raw_line).expandtabs(TAB)
            t = Text(shown, style=style)
            if term:
                t.highlight_words([escape_control(term)], self.pal["transcript--match"], case_sensitive=False)
            strips, used = self.wrap(t, indent, room)
            out.extend(strips)
            if used < len(shown):
                consumed += _approx_consumed(raw_line, used, len(shown))
                cut = True
                break
            consumed += len(raw_line) + 1
        consumed = min(consumed, len(text))
        if not cut and consumed >= len(text):
            return out
        rest = text[consumed:]
        if not rest.strip():
            return out
        note = more_note(rest, hint)
        out.extend(self.wrap(Text(note, style=self.pal["transcript--note"]), indent)[0])
        return out

    def header(self, left: Text, right: Text) -> Strip:
        room = self.width - right.cell_len - 1
        if room < 8:
            right = Text("")
            room = self.width
        if left.cell_len > room:
            left.truncate(room, overflow="ellipsis")
        gap = max(1, self.width - left.cell_len - right.cell_len)
        return self.strip(Text.assemble(left, " " * gap, right))

    # -- entries ----------------------------------------------------------------------------------


def _approx_consumed(raw_line: str, used_shown: int, len_shown: int) -> int:
    """Characters of ``raw_line`` behind ``used_shown`` characters of its escaped, tab-expanded form."""
    if len_shown == len(raw_line):
        return used_shown
    return int(len(raw_line) * used_shown / max(1, len_shown))


def plain_lines(strips: Iterable[Strip]) -> list[str]:
    """The text of rendered strips (for tests and debugging)."""
    return [s.text.rstrip() for s in strips]
