"""Turn one record's :class:`~sessionview.core.doc.model.View` into styled terminal lines (``Strip``s).

Everything that comes from a file is escaped with :func:`~sessionview.core.text.escape_control` and put
into plain ``rich.text.Text`` objects: no markup is ever parsed, no control sequence reaches the terminal.
Long texts are clipped before wrapping (so a 16 MB message costs what a screenful costs) and end with a
note saying how much is hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from sessionview.ui.wording import compaction_label, plural, problem_text
from sessionview.core.doc.model import Kind, ToolCall, ToolResult, View
from sessionview.core.view import tools as T
from sessionview.ui.widgets import toolviews
from sessionview.ui.widgets.markdown import markdown_lines
from sessionview.core.tail import Pending
from sessionview.core.text import approx_tokens, decode_for_display, escape_control
from sessionview.core.view.humanize import human_count, human_size
from sessionview.core.view.stats import view_tokens

#: the colours of the transcript's component classes, shared by every widget that paints entries
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

MARKDOWN_ROLES = {"user", "human", "assistant", "model", "ai"}
MESSAGE_LINES = 40  # display lines of a message before it is folded
RESULT_LINES = 8  # display lines of a tool result before it is folded
RAW_LINES = 3
EXPANDED_LINES = 2000
TAB = 4


@dataclass
class Palette:
    """Rich styles for the transcript's parts, read from the widget's component classes."""

    base: Style
    styles: dict[str, Style] = field(default_factory=dict)
    code_theme: str = "monokai"  # the pygments theme of highlighted code (Rich Syntax)

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


@dataclass(frozen=True)
class Links:
    """Where the partners of a record's tool calls and results are (true line numbers)."""

    results: dict[str, int | None] = field(default_factory=dict)  # call id -> line of its result
    calls: dict[str, int | None] = field(default_factory=dict)  # call id -> line of the call
    names: dict[str, str] = field(default_factory=dict)  # call id -> tool name


@dataclass(frozen=True)
class Entry:
    """What to draw for one row: the view and how."""

    view: View
    number: int | None  # the true line number (None while the index is being built)
    expanded: bool = False
    term: str = ""
    links: Links = Links()
    record_size: int | None = None
    markdown: bool = True  # user and assistant text drawn as Markdown (m shows it raw)
    results: dict[str, tuple[int | None, ToolResult]] = field(default_factory=dict)  # call id -> (line, result): drawn under the unfolded call
    calls: dict[str, ToolCall] = field(default_factory=dict)  # result's call id -> the call (how to read the result)


def number_label(number: int | None) -> str:
    return f"#{number:,}" if number is not None else "#…"


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


class Painter:
    """Renders entries at a width with a palette. Stateless apart from its settings."""

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
        more_lines = rest.count("\n") + (0 if rest.startswith("\n") else 0)
        more_bytes = len(rest.encode("utf-8", "surrogatepass"))
        note = f"… {plural(more_bytes, 'more byte')}"
        if more_lines:
            note += f" ({plural(more_lines, 'more line')})"
        note += f" · {hint}" if hint else ""
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
    def render(self, e: Entry) -> list[Strip]:
        v = e.view
        if v.kind is Kind.INVALID:
            lines = self._invalid(e)
        elif v.kind is Kind.COMPACTION:
            lines = self._compaction(e)
        elif v.kind in (Kind.META, Kind.UNKNOWN):
            lines = self._meta(e)
        else:
            lines = self._message(e)
        if not (v.kind is Kind.META and T.is_housekeeping(v) and not e.expanded):
            lines.append(Strip.blank(self.width, self.pal.base))
        return lines

    def _right(self, e: Entry, tokens: int | None) -> Text:
        t = Text(number_label(e.number), style=self.pal["transcript--dim"])
        if tokens:
            t.append(f" · ~{human_count(tokens)} tok", style=self.pal["transcript--dim"])
        return t

    def _problems(self, v: View) -> list[Strip]:
        out: list[Strip] = []
        for p in v.problems[:5]:
            style = self.pal["transcript--invalid"] if p.severity == "error" else self.pal["transcript--warning"]
            t = Text(f"⚠ {one_line(problem_text(p.kind, p.message), 300)}", style=style)
            out.extend(self.wrap(t)[0])
        if len(v.problems) > 5:
            out.extend(self.wrap(Text(f"… {plural(len(v.problems) - 5, 'more problem')}", style=self.pal["transcript--note"]))[0])
        return out

    def _message(self, e: Entry) -> list[Strip]:
        v = e.view
        pal = self.pal
        role = v.role or "message"
        infos = [self._result_info(e, r) for r in v.tool_results]
        error = any(info.error for _, info in infos)
        err = pal["transcript--invalid"] + Style(bold=True)
        left = Text(one_line(role, 40), style=err if error else pal.role(v.role) + Style(bold=True))
        if v.compaction:
            left.append(f"  [compacted:{one_line(v.compaction, 30)}]", style=pal["transcript--compaction"])
        for r in v.tool_results:
            cid = r.call_id or ""
            name = r.name or e.links.names.get(cid, "")
            left.append("  ← ", style=pal["transcript--dim"])
            left.append(one_line(name or "result", 40), style=pal["transcript--tool-name"])
            call_at = e.links.calls.get(cid)
            if call_at is not None:
                left.append(f" of #{call_at:,}", style=pal["transcript--link"])
            elif cid:
                left.append(" (no call found)" if cid in e.links.calls else "", style=pal["transcript--warning"])
        for _, info in infos:
            if info.exit_code:
                left.append(f"  ✗ exit {info.exit_code}", style=err)
            elif info.error:
                left.append("  ✗ error", style=err)
        if len(v.numbers) > 1:
            left.append(f"  ({len(v.numbers)} lines)", style=pal["transcript--dim"])
        out = [self.header(left, self._right(e, view_tokens(v)))]
        limit_lines = EXPANDED_LINES if e.expanded else MESSAGE_LINES
        text = v.text or ""
        result_texts = [r.content for r in v.tool_results]
        is_result = bool(v.tool_results) and (text == "" or text in result_texts)
        if v.reasoning:
            out.extend(self._reasoning(e))
        if text and not is_result:
            if e.markdown and (v.role or "") in MARKDOWN_ROLES:
                out.extend(self._markdown(text, limit_lines, e))
            else:
                out.extend(self._text(text, pal.base, limit_lines, e))
        hint = "i shows the record" if e.expanded else "enter expands"
        for r, (rendering, info) in zip(v.tool_results, infos):
            if r.content:
                out.extend(toolviews.result_body(self, info, rendering, 0, EXPANDED_LINES if e.expanded else RESULT_LINES, e.term, hint))
        for call in v.tool_calls:
            out.extend(self._call(call, e))
        out.extend(self._problems(v))
        return out

    def _result_info(self, e: Entry, r: ToolResult) -> tuple[T.Rendering | None, T.ResultInfo]:
        """How to read result ``r``: the rendering of its call (when the call is known) and its text, exit code
        and error flag. An unknown call's result is read as a command's (exit codes are looked for)."""
        call = e.calls.get(r.call_id or "")
        rendering = T.classify(call) if call is not None else None
        return rendering, T.result_info(r, command=rendering is None or isinstance(rendering, T.CommandCall))

    def _markdown(self, text: str, max_lines: int, e: Entry) -> list[Strip]:
        lines, rest = markdown_lines(text, self.console, self.width, max_lines, self.pal.base, self.pal.code_theme, e.term, self.pal["transcript--match"])
        if rest.strip():
            note = toolviews.more_note(rest, "i shows the record" if e.expanded else "enter expands")
            lines.extend(self.wrap(Text(note, style=self.pal["transcript--note"]))[0])
        return lines

    def _text(self, text: str, style: Style, max_lines: int, e: Entry, indent: int = 0) -> list[Strip]:
        return self.paragraph(text, style, max_lines, indent, e.term, "i shows the record" if e.expanded else "enter expands")

    def _reasoning(self, e: Entry) -> list[Strip]:
        text = e.view.reasoning or ""
        pal = self.pal
        n_lines = text.count("\n") + 1
        if not e.expanded:
            t = Text("▸ reasoning", style=pal["transcript--reasoning"])
            t.append(f" · {n_lines:,} line{'s' if n_lines != 1 else ''} · ~{human_count(approx_tokens(text))} tok  ", style=pal["transcript--dim"])
            t.append(one_line(text, 60), style=pal["transcript--reasoning"])
            return self.wrap(t, 0, 1)[0]
        out = self.wrap(Text("▾ reasoning", style=pal["transcript--reasoning"]))[0]
        out.extend(self.paragraph(text, pal["transcript--reasoning"], EXPANDED_LINES, 2, e.term, "i shows the record"))
        return out

    def _call(self, call: Any, e: Entry) -> list[Strip]:
        pal = self.pal
        mark = "▾ " if e.expanded else "▸ "
        t = Text(mark, style=pal["transcript--dim"])
        t.append(one_line(call.name or "?", 40), style=pal["transcript--tool-name"] + Style(bold=True))
        link = e.links.results.get(call.id or "")
        right = Text("")
        if link is not None:
            right = Text(f" → #{link:,}", style=pal["transcript--link"])
        elif call.id is not None and call.id in e.links.results:
            right = Text(" (no result yet)", style=pal["transcript--dim"])
        rendering = T.classify(call)
        if not e.expanded:
            args = call.raw_arguments if call.arguments is None and call.raw_arguments is not None else call.arguments
            t.append("  ")
            room = self.width - t.cell_len - right.cell_len - 1
            summary = toolviews.summary(rendering, max(10, room)) or summarize_arguments(args, max(10, room))
            if term := e.term:
                st = Text(summary, style=pal["transcript--dim"])
                st.highlight_words([term], pal["transcript--match"], case_sensitive=False)
                t.append_text(st)
            else:
                t.append(summary, style=pal["transcript--dim"])
            return [self.header(t, right)]
        if call.id:
            t.append(f"  {one_line(call.id, 40)}", style=pal["transcript--dim"])
        out = [self.header(t, right)]
        out.extend(toolviews.call_body(self, call, rendering, e.term))
        found = e.results.get(call.id or "")
        if found is not None:
            at, result = found
            info = T.result_info(result, command=isinstance(rendering, T.CommandCall))
            out.append(self.header(toolviews.result_header(self, info, at, 2), Text("")))
            out.extend(toolviews.result_body(self, info, rendering, 4, toolviews.RESULT_LINES, e.term, "p jumps to the result"))
        return out

    def _compaction(self, e: Entry) -> list[Strip]:
        v = e.view
        pal = self.pal
        label = f" {compaction_label(one_line(v.compaction or v.label or 'summary', 30))} "
        right = f" {number_label(e.number)} "
        fill = max(2, self.width - len(label) - len(right) - 4)
        t = Text("──", style=pal["transcript--compaction"])
        t.append(label, style=pal["transcript--compaction"] + Style(bold=True))
        t.append("─" * fill, style=pal["transcript--compaction"])
        t.append(right, style=pal["transcript--dim"])
        t.append("──", style=pal["transcript--compaction"])
        out = [self.strip(t)]
        if v.role:
            pass
        lines = EXPANDED_LINES if e.expanded else RAW_LINES
        out.extend(self.paragraph(v.text or "", pal["transcript--dim"], lines, 0, e.term))
        out.extend(self._problems(v))
        return out

    def _meta(self, e: Entry) -> list[Strip]:
        v = e.view
        pal = self.pal
        label = v.label or v.kind.value
        if T.is_housekeeping(v) and not e.expanded:  # bookkeeping: one dim line, enter unfolds it
            left = Text(f"· {one_line(label, 40)}", style=pal["transcript--dim"])
            body = v.text or (decode_for_display(v.raw) if v.raw is not None else summarize_arguments(v.value, 200) if v.value is not None else "")
            if body:
                left.append("  " + one_line(body, max(10, self.width)), style=pal["transcript--dim"])
            return [self.header(left, Text(number_label(e.number), style=pal["transcript--dim"]))]
        left = Text(f"[{one_line(label, 40)}]", style=pal["transcript--meta"])
        if v.role:
            left.append(f" {one_line(v.role, 20)}", style=pal.role(v.role))
        out = [self.header(left, self._right(e, view_tokens(v) if v.text else None))]
        if v.text:
            out.extend(self.paragraph(v.text, pal["transcript--meta"], EXPANDED_LINES if e.expanded else RAW_LINES, 0, e.term))
        elif v.raw is not None:
            out.extend(self.paragraph(decode_for_display(v.raw), pal["transcript--meta"], EXPANDED_LINES if e.expanded else 2, 0, e.term))
        elif v.value is not None:
            out.extend(self.paragraph(summarize_arguments(v.value, 400), pal["transcript--meta"], 2, 0, e.term))
        for call in v.tool_calls:
            out.extend(self._call(call, e))
        out.extend(self._problems(v))
        return out

    def _invalid(self, e: Entry) -> list[Strip]:
        v = e.view
        pal = self.pal
        label = v.label or "invalid"
        left = Text(f"✗ {one_line(label, 40)}", style=pal["transcript--invalid"] + Style(bold=True))
        size = f" · {human_size(e.record_size)}" if e.record_size is not None else ""
        right = Text(f"{number_label(e.number)}{size}", style=pal["transcript--dim"])
        out = [self.header(left, right)]
        problem = v.problems[0].message if v.problems else v.text
        if problem:
            out.extend(self.wrap(Text(one_line(problem, 400), style=pal["transcript--invalid"]))[0])
        if v.raw is not None:
            raw = decode_for_display(v.raw)
            out.extend(self.paragraph(raw, pal["transcript--dim"], EXPANDED_LINES if e.expanded else RAW_LINES, 2, e.term))
            if e.record_size is not None and e.record_size > len(v.raw) + 2 and not raw.endswith("…"):
                more = e.record_size - len(v.raw)
                out.extend(self.wrap(Text(f"… {more:,} more bytes · i shows the record", style=pal["transcript--note"]), 2)[0])
        return out

    def pending(self, p: Pending, view: View | None, number: int | None) -> list[Strip]:
        """The partial last line: its first bytes, or its content if it already parses."""
        pal = self.pal
        left = Text("… pending", style=pal["transcript--pending"] + Style(bold=True))
        left.append(" · waiting for the line's newline", style=pal["transcript--dim"])
        right = Text(f"{number_label(number)} · {human_size(p.size)}", style=pal["transcript--dim"])
        out = [self.header(left, right)]
        if view is not None and view.kind is Kind.MESSAGE and view.text:
            out.extend(self.paragraph(view.text, pal["transcript--pending"], 6, 0))
        else:
            out.extend(self.paragraph(decode_for_display(p.preview), pal["transcript--pending"], 2, 0, hint=""))
        out.append(Strip.blank(self.width, pal.base))
        return out


def _approx_consumed(raw_line: str, used_shown: int, len_shown: int) -> int:
    """Characters of ``raw_line`` behind ``used_shown`` characters of its escaped, tab-expanded form."""
    if len_shown == len(raw_line):
        return used_shown
    return int(len(raw_line) * used_shown / max(1, len_shown))


def plain_lines(strips: Iterable[Strip]) -> list[str]:
    """The text of rendered strips (for tests and debugging)."""
    return [s.text.rstrip() for s in strips]
