"""Turn one record's :class:`~sessionview.core.doc.model.View` into styled terminal lines (``Strip``s).

Everything that comes from a file is escaped with :func:`~sessionview.core.text.escape_control` and put
into plain ``rich.text.Text`` objects: no markup is ever parsed, no control sequence reaches the terminal.
Long texts are clipped before wrapping (so a 16 MB message costs what a screenful costs) and end with a
note saying how much is hidden.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from sessionview.core.doc.branches import label as branch_label
from sessionview.core.doc.model import Kind, ToolCall, ToolResult, View
from sessionview.core.tail import Pending
from sessionview.core.text import approx_tokens, decode_for_display
from sessionview.core.values import Frozen
from sessionview.core.view import tools as T
from sessionview.core.view.humanize import human_count, human_size
from sessionview.core.view.stats import view_tokens
from sessionview.ui.widgets import toolviews
from sessionview.ui.widgets.markdown import markdown_lines, markdown_ready, markdown_theme, needs_markdown
from sessionview.ui.widgets.paint import (  # noqa: F401  (re-exported: other widgets import them from here)
    COMPONENT_RULES,
    COMPONENTS,
    ROLE_CLASS,
    Canvas,
    Palette,
    more_note,
    one_line,
    plain_lines,
    read_palette,
    summarize_arguments,
)
from sessionview.ui.wording import compaction_label, plural, problem_text

MARKDOWN_ROLES = {"user", "human", "assistant", "model", "ai"}
MESSAGE_LINES = 40  # display lines of a message before it is folded
RESULT_LINES = 8  # display lines of a tool result before it is folded
RAW_LINES = 3
EXPANDED_LINES = 2000


_set = object.__setattr__


# Links and Entry are frozen values (sessionview.core.values: no dataclass to build at import, which the first
# screen waits for); a field left out is a new empty dict.
class Links(Frozen):
    """Where the partners of a record's tool calls and results are (true line numbers)."""

    __slots__ = ("results", "calls", "names")
    results: dict[str, int | None]  # call id -> line of its result
    calls: dict[str, int | None]  # call id -> line of the call
    names: dict[str, str]  # call id -> tool name

    def __init__(
        self, results: dict[str, int | None] | None = None, calls: dict[str, int | None] | None = None,
        names: dict[str, str] | None = None,
    ) -> None:
        _set(self, "results", {} if results is None else results)
        _set(self, "calls", {} if calls is None else calls)
        _set(self, "names", {} if names is None else names)


_NO_LINKS = Links()


class Entry(Frozen):
    """What to draw for one row: the view and how."""

    __slots__ = ("view", "number", "expanded", "term", "links", "record_size", "markdown", "results", "calls", "when")
    view: View
    number: int | None  # the true line number (None while the index is being built)
    expanded: bool
    term: str
    links: Links
    record_size: int | None
    markdown: bool  # user and assistant text drawn as Markdown (m shows it raw)
    results: dict[str, tuple[int | None, ToolResult]]  # call id -> (line, result): drawn under the unfolded call
    calls: dict[str, ToolCall]  # result's call id -> the call (how to read the result)
    when: str  # its time: "+12:03" from the start, a gap before it, a call's duration (timing)

    def __init__(
        self, view: View, number: int | None, expanded: bool = False, term: str = "", links: Links = _NO_LINKS,
        record_size: int | None = None, markdown: bool = True,
        results: dict[str, tuple[int | None, ToolResult]] | None = None, calls: dict[str, ToolCall] | None = None,
        when: str = "",
    ) -> None:
        _set(self, "view", view)
        _set(self, "number", number)
        _set(self, "expanded", expanded)
        _set(self, "term", term)
        _set(self, "links", links)
        _set(self, "record_size", record_size)
        _set(self, "markdown", markdown)
        _set(self, "results", {} if results is None else results)
        _set(self, "calls", {} if calls is None else calls)
        _set(self, "when", when)


def number_label(number: int | None) -> str:
    return f"#{number:,}" if number is not None else "#…"


class Painter(Canvas):
    """Renders entries at a width with a palette. Stateless apart from its settings."""

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
        if v.branch is not None or v.branch_point:
            lines[1:1] = self.wrap(Text(f"⑂ {self._branch(e)}", style=self.pal["transcript--note"]))[0]
        if not (v.kind is Kind.META and T.is_housekeeping(v) and not e.expanded):
            lines.append(Strip.blank(self.width, self.pal.base))
        return lines

    @staticmethod
    def _branch(e: Entry) -> str:
        """The branch label, its branch point numbered as the row is (true line numbers)."""
        shift = None if e.number is None else e.number - e.view.number
        return branch_label(e.view.branch, e.view.branch_point, lambda n: None if shift is None else n + shift)

    def _right(self, e: Entry, tokens: int | None) -> Text:
        t = Text(f"{e.when} · " if e.when else "", style=self.pal["transcript--dim"])
        t.append(number_label(e.number), style=self.pal["transcript--dim"])
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
            if e.markdown and (v.role or "") in MARKDOWN_ROLES and needs_markdown(text) and markdown_ready():
                out.extend(self._markdown(text, limit_lines, e))
            else:
                out.extend(self._text(text, pal.base, limit_lines, e))
        hint = "i shows the record" if e.expanded else "enter expands"
        for r, (rendering, info) in zip(v.tool_results, infos, strict=True):
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
        pal = self.pal
        theme = markdown_theme(pal["transcript--role"], pal["transcript--dim"], pal["transcript--tool-name"] + Style(bold=True), pal["transcript--link"])
        lines, rest = markdown_lines(text, self.console, self.width, max_lines, pal.base, pal.code_theme, e.term, pal["transcript--match"], theme)
        if rest.strip():
            note = more_note(rest, "i shows the record" if e.expanded else "enter expands")
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

    def _call(self, call: ToolCall, e: Entry) -> list[Strip]:
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
