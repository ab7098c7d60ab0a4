"""What a :class:`~sessionview.ui.widgets.transcript.TranscriptView` draws for each row, kept in LRU caches:
the lines of an entry (by record, width, folding and search term) and the colour of its gutter (by record).
Only the rows that are drawn or scrolled over are ever painted. And the "N new messages" marker."""

from __future__ import annotations

import bisect
from typing import Callable

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.strip import Strip

from sessionview.core.doc.model import Kind, ToolCall, ToolResult, View
from sessionview.core.view import timing
from sessionview.core.view.stats import view_tokens
from sessionview.core.view.transcript import TranscriptModel
from sessionview.ui.widgets.blocks import Entry, Links, Painter, Palette
from sessionview.ui.widgets.toolviews import any_error

CACHE_SIZE = 512
LINES_CACHE_SIZE = 128  # entries whose drawn lines are kept (a screen shows about ten; each may be 50 lines)
#: the gutter's token bar: a record's (estimated) tokens, one glyph per step, so a big record stands out
TOKEN_STEPS = (100, 500, 1_000, 2_000, 5_000, 10_000, 20_000)
TOKEN_BARS = "▁▂▃▄▅▆▇█"


def token_bar(tokens: int) -> str:
    """The gutter glyph for a record of ``tokens``: ▁ under 100 … █ from 20k."""
    return TOKEN_BARS[bisect.bisect_right(TOKEN_STEPS, tokens)]


class EntryCache:
    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.lines: LRUCache[tuple, list[Strip]] = LRUCache(min(size, LINES_CACHE_SIZE))
        self.role_styles: LRUCache[int, Style] = LRUCache(size)
        self.bars: LRUCache[int, str] = LRUCache(size)

    def clear(self) -> None:
        self.lines.clear()
        self.role_styles.clear()
        self.bars.clear()

    def forget(self, numbers: set[int]) -> bool:
        """Forget the drawn lines of records ``numbers``; whether any were drawn."""
        keys = [k for k in self.lines.keys() if k[0] in numbers]
        for key in keys:
            self.lines.discard(key)
        return bool(keys)

    def drop_pending(self) -> None:
        """Forget the drawn pending line (it grew or was completed)."""
        for key in [k for k in self.lines.keys() if k[0] == "pending"]:
            self.lines.discard(key)

    def pending(self, m: TranscriptModel, painter: Painter) -> list[Strip]:
        """The lines of the pending (unterminated) last line."""
        key: tuple = ("pending", painter.width, m.pending)
        hit = self.lines.get(key)
        if hit is None:
            assert m.pending is not None
            hit = painter.pending(m.pending, pending_view(m), m.line_number(len(m) + 1))
            self.lines.set(key, hit)
        return hit

    def entry(
        self, m: TranscriptModel, n: int, expanded: bool, term: str, links: Callable[[View], Links], painter: Painter, markdown: bool = True
    ) -> list[Strip]:
        """The lines of record ``n``."""
        key = (n, painter.width, expanded, term, markdown)
        hit = self.lines.get(key)
        if hit is not None:
            return hit
        view = m.view(n)
        found = links(view)
        size = m.record_size(n) if view.kind is Kind.INVALID else None
        entry = Entry(
            view, m.line_number(n), expanded, term, found, size, markdown,
            partner_results(m, view, found) if expanded else {}, partner_calls(m, view, found), when=timing.note(m, n, view),
        )
        lines = painter.render(entry)
        self.lines.set(key, lines)
        return lines

    def role_style(self, m: TranscriptModel, n: int, pal: Palette) -> Style:
        """The gutter's colour for record ``n``: its role, or what kind of record it is."""
        style = self.role_styles.get(n)
        if style is None:
            style = _role_style(m.view(n), pal)
            self.role_styles.set(n, style)
        return style

    def token_bar(self, m: TranscriptModel, n: int) -> str:
        """The token bar in record ``n``'s gutter (its first line)."""
        bar = self.bars.get(n)
        if bar is None:
            view = m.view(n)
            bar = token_bar(view_tokens(view) or 0) if view.kind is not Kind.INVALID else " "
            self.bars.set(n, bar)
        return bar


def partner_results(m: TranscriptModel, view: View, links: Links) -> dict[str, tuple[int | None, ToolResult]]:
    """The results of ``view``'s calls, to draw under each unfolded call: call id -> (its line, the result)."""
    out: dict[str, tuple[int | None, ToolResult]] = {}
    for call in view.tool_calls:
        line = links.results.get(call.id or "")
        n = m.record_of_line(line) if line is not None else None
        if n is None or call.id is None:
            continue
        result = next((r for r in _safe_view(m, n).tool_results if r.call_id == call.id), None)
        if result is not None:
            out[call.id] = (line, result)
    return out


def partner_calls(m: TranscriptModel, view: View, links: Links) -> dict[str, ToolCall]:
    """The calls that ``view``'s results answer (how to read each result: a read's lines, a command's exit code)."""
    out: dict[str, ToolCall] = {}
    for result in view.tool_results:
        line = links.calls.get(result.call_id or "")
        n = m.record_of_line(line) if line is not None else None
        if n is None or result.call_id is None:
            continue
        call = next((c for c in _safe_view(m, n).tool_calls if c.id == result.call_id), None)
        if call is not None:
            out[result.call_id] = call
    return out


def _safe_view(m: TranscriptModel, n: int) -> View:
    try:
        return m.view(n)
    except (IndexError, ValueError):
        return View(n, Kind.INVALID)


def _role_style(view: View, pal: Palette) -> Style:
    if view.tool_results and any_error(view.tool_results):
        return pal["transcript--invalid"]
    if view.kind is Kind.INVALID:
        return pal["transcript--invalid"]
    if view.kind is Kind.COMPACTION:
        return pal["transcript--compaction"]
    if view.kind in (Kind.META, Kind.UNKNOWN):
        return pal["transcript--dim"]
    return pal.role(view.role)


def pending_view(m: TranscriptModel) -> View | None:
    """The pending line as a record, when all of it is known and it parses already."""
    if m.pending is None or m.pending.size > len(m.pending.preview):
        return None
    from sessionview.core.doc.parse import parse_record

    parsed = parse_record(m.pending.preview.rstrip(b"\r"), terminated=False)
    if not parsed.ok or m.adapter is None:
        return None
    try:
        return m.adapter.view(len(m) + 1, parsed.value)
    except Exception:
        return None



def new_marker(n: int, width: int, base: Style, pal: Palette, console: Console) -> Strip:
    """The bottom line while paused with ``n`` records come in: "↓ n new messages · F follows", centred."""
    label = f" ↓ {n:,} new message{'s' if n != 1 else ''} · F follows "
    pad = max(0, (width - len(label)) // 2)
    t = Text(" " * pad, style=base)
    t.append(label, style=base + pal["transcript--marker"])
    return Strip(list(t.render(console, end=""))).adjust_cell_length(width, base)
