"""Drawing tool calls and results as a person reads them: a command and its exit code, a file write with its
content highlighted (Rich Syntax, by file extension), an edit as a coloured unified diff, a read with numbered
lines, a todo list as a checklist, anything else as pretty JSON with multi-line strings as blocks.

What a call *is* comes from :mod:`sessionview.core.view.tools`; this module only draws. Every string from the
file is escaped before it is drawn, and every segment Rich produces is checked again (see :mod:`.markdown`).
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from sessionview.core.doc.model import ToolCall, ToolResult
from sessionview.core.text import escape_control
from sessionview.core.view import tools as T
from sessionview.core.view.humanize import human_size
from sessionview.ui.widgets.markdown import lexer_for_path, safe_segment
from sessionview.ui.widgets.paint import Canvas, more_note, one_line

CALL_LINES = 60  # lines of a call's body when its record is unfolded (enter)
RESULT_LINES = 12  # lines of a result shown under its call
INDENT = 4
_TODO_MARK = {"completed": "☑", "done": "☑", "in_progress": "◐", "active": "◐", "cancelled": "☒", "canceled": "☒"}


def summary(r: T.Rendering, limit: int) -> str:
    """The folded call's one line: what it does, in plain words."""
    if isinstance(r, T.CommandCall):
        return one_line("$ " + r.command, limit)
    if isinstance(r, T.FileWrite):
        n = r.content.count("\n") + (0 if r.content.endswith("\n") or not r.content else 1)
        return one_line(f"{r.path} · {n:,} line{'s' if n != 1 else ''}", limit)
    if isinstance(r, T.FileEdit):
        return one_line(f"{r.path or 'patch'}  +{r.added} −{r.removed}", limit)
    if isinstance(r, T.FileRead):
        where = f" from line {r.start}" if r.start else ""
        return one_line(f"{r.path}{where}", limit)
    if isinstance(r, T.Todo):
        done = sum(1 for i in r.items if i.status in ("completed", "done"))
        return one_line(f"{len(r.items)} items · {done} done", limit)
    return ""


def code_lines(p: Canvas, code: str, path: str, indent: int, max_lines: int, start: int = 1, numbers: bool = True, hint: str = "") -> list[Strip]:
    """``code`` highlighted by ``path``'s extension (plain text when unknown), numbered from ``start``."""
    lines = code.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    shown = lines[:max_lines]
    from rich.syntax import Syntax  # with pygments: loaded when the first code is drawn

    lexer = lexer_for_path(path)
    syntax = Syntax(
        "\n".join(escape_control(x).expandtabs(4) for x in shown),
        lexer,
        theme=p.pal.code_theme,
        line_numbers=numbers,
        start_line=start,
        word_wrap=True,
        background_color="default",
    )
    width = max(10, p.width - indent)
    rendered = p.console.render_lines(syntax, p.console.options.update(width=width, height=None), pad=False, new_lines=False)
    rendered = rendered[: max_lines * 3]
    out: list[Strip] = []
    for line in rendered:
        segs = [s for s in (safe_segment(seg) for seg in line) if s is not None]
        strip = Strip(segs).adjust_cell_length(width, p.pal.base)
        out.append(Strip.join([Strip.blank(indent, p.pal.base), strip]) if indent else strip)
    if len(lines) > len(shown):
        rest = "\n".join(lines[len(shown) :])
        out.extend(p.wrap(Text(more_note(rest, hint), style=p.pal["transcript--note"]), indent)[0])
    return out


def diff_lines(p: Canvas, diff: tuple[T.DiffLine, ...], indent: int, max_lines: int, hint: str = "") -> list[Strip]:
    style = {
        "add": p.pal["transcript--added"],
        "del": p.pal["transcript--removed"],
        "hunk": p.pal["transcript--hunk"],
        "file": p.pal["transcript--tool-name"] + Style(bold=True),
        "note": p.pal["transcript--note"],
        "ctx": p.pal.base,
    }
    out: list[Strip] = []
    for d in diff[:max_lines]:
        text = escape_control(d.text).expandtabs(4)
        out.extend(p.wrap(Text(text, style=style.get(d.kind, p.pal.base)), indent)[0])
    if len(diff) > max_lines:
        rest = "\n".join(d.text for d in diff[max_lines:])
        out.extend(p.wrap(Text(more_note(rest, hint), style=p.pal["transcript--note"]), indent)[0])
    return out


def json_lines(p: Canvas, g: T.Generic, indent: int, max_lines: int, term: str = "", hint: str = "") -> list[Strip]:
    out: list[Strip] = []
    for line in g.lines[:max_lines]:
        if line.block:
            t = Text("│ ", style=p.pal["transcript--dim"])
            t.append(escape_control(line.text).expandtabs(4), style=p.pal.base)
        else:
            t = Text(escape_control(line.text, one_line=True), style=p.pal["transcript--meta"])
        if term:
            t.highlight_words([escape_control(term)], p.pal["transcript--match"], case_sensitive=False)
        out.extend(p.wrap(t, indent + line.indent)[0])
    hidden = len(g.lines) - max_lines + g.more
    if hidden > 0:
        out.extend(p.wrap(Text(f"… {hidden:,} more lines" + (f" · {hint}" if hint else ""), style=p.pal["transcript--note"]), indent)[0])
    return out


def call_body(p: Canvas, call: ToolCall, r: T.Rendering, term: str) -> list[Strip]:
    """The unfolded call's lines (below its header)."""
    pal = p.pal
    hint = "i shows the record"
    if isinstance(r, T.CommandCall):
        out: list[Strip] = []
        if r.description:
            out.extend(p.wrap(Text(escape_control(r.description, one_line=True), style=pal["transcript--dim"] + Style(italic=True)), INDENT)[0])
        if r.cwd:
            out.extend(p.wrap(Text("in " + escape_control(r.cwd, one_line=True), style=pal["transcript--dim"]), INDENT)[0])
        lines = r.command.split("\n")
        for i, line in enumerate(lines[:CALL_LINES]):
            t = Text("$ " if i == 0 else "  ", style=pal["transcript--tool-name"] + Style(bold=True))
            t.append(escape_control(line).expandtabs(4), style=pal.base + Style(bold=True))
            out.extend(p.wrap(t, INDENT)[0])
        if len(lines) > CALL_LINES:
            out.extend(p.wrap(Text(more_note("\n".join(lines[CALL_LINES:]), hint), style=pal["transcript--note"]), INDENT)[0])
        return out
    if isinstance(r, T.FileWrite):
        size = human_size(len(r.content.encode("utf-8", "surrogatepass")))
        head = p.wrap(Text(f"write {escape_control(r.path, one_line=True)} · {size}", style=pal["transcript--tool-name"]), INDENT)[0]
        return head + code_lines(p, r.content, r.path, INDENT, CALL_LINES, hint=hint)
    if isinstance(r, T.FileEdit):
        title: list[Strip] = []
        if r.path:
            title = p.wrap(Text(f"edit {escape_control(r.path, one_line=True)}  +{r.added} −{r.removed}", style=pal["transcript--tool-name"]), INDENT)[0]
        return title + diff_lines(p, r.diff, INDENT, CALL_LINES * 4, hint)
    if isinstance(r, T.FileRead):
        where = ""
        if r.start or r.limit:
            where = f" · from line {r.start or 1}" + (f", {r.limit} lines" if r.limit else "")
        return p.wrap(Text(f"read {escape_control(r.path, one_line=True)}{where}", style=pal["transcript--tool-name"]), INDENT)[0]
    if isinstance(r, T.Todo):
        out = []
        for item in r.items[:CALL_LINES]:
            mark = _TODO_MARK.get(item.status, "☐")
            done = item.status in ("completed", "done", "cancelled", "canceled")
            style = pal["transcript--dim"] + Style(strike=item.status in ("cancelled", "canceled")) if done else pal.base
            if item.status in ("in_progress", "active"):
                style = pal["transcript--tool-name"] + Style(bold=True)
            t = Text(f"{mark} ", style=style)
            t.append(escape_control(item.text, one_line=True), style=style)
            out.extend(p.wrap(t, INDENT)[0])
        return out
    assert isinstance(r, T.Generic)
    return json_lines(p, r, INDENT, T.LINES_CAP, term, hint)


def result_header(p: Canvas, info: T.ResultInfo, at: int | None, indent: int) -> Text:
    pal = p.pal
    err = pal["transcript--invalid"] + Style(bold=True)
    t = Text(" " * indent + "└ result", style=err if info.error else pal["transcript--dim"])
    if at is not None:
        t.append(f" #{at:,}", style=pal["transcript--link"])
    if info.exit_code is not None:
        t.append(f"  exit {info.exit_code}", style=err if info.exit_code else pal["transcript--dim"])
    if info.error:
        t.append("  ✗ error", style=err)
    return t


def result_body(p: Canvas, info: T.ResultInfo, call: T.Rendering | None, indent: int, max_lines: int, term: str = "", hint: str = "enter expands") -> list[Strip]:
    """A result's text: a read's as numbered (highlighted) lines, an error's behind a red bar."""
    pal = p.pal
    if isinstance(call, T.FileRead) and not info.error and info.text and not info.text.startswith("[compacted:"):
        num = T.numbered_lines(info.text, call.start)
        out = code_lines(p, "\n".join(num.lines), call.path, indent, max_lines, num.first, hint=hint)
        if num.rest:
            out.extend(p.paragraph("\n".join(num.rest), pal["transcript--dim"], 3, indent, term, hint))
        return out
    if isinstance(call, (T.FileEdit, T.FileWrite)) and not info.error and _is_diff(info.text):
        return diff_lines(p, tuple(T.unified_lines(info.text)), indent, max_lines, hint)
    text = info.text.rstrip("\n")
    if not text:
        return p.wrap(Text("(empty)", style=pal["transcript--dim"]), indent)[0]
    lines = p.paragraph(text, pal.base, max_lines, indent + (2 if info.error else 0), term, hint)
    if info.error:
        bar = Strip([Segment(" " * indent, pal.base), Segment("▌ ", pal["transcript--invalid"])])
        lines = [Strip.join([bar, line.crop(indent + 2, p.width)]) for line in lines]
    return lines


def _is_diff(text: str) -> bool:
    head = text[:200]
    return head.startswith(("--- ", "diff --git", "@@ ")) or "\n@@ " in head


def result_of(call: ToolCall, result: ToolResult) -> tuple[T.Rendering, T.ResultInfo]:
    r = T.classify(call)
    return r, T.result_info(result, command=isinstance(r, T.CommandCall))


def any_error(results: Any) -> bool:
    return any(T.is_error_result(r) for r in results)
