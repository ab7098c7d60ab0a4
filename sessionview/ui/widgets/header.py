"""What the session screen says about itself: the header (path, format, counts, tokens, live state) and
the status line (file events, progress, search, filter, follow state, position). Text from files is
escaped; everything is plain ``Content``, never markup.

Both are widgets with reactive attributes, bound (``data_bind``) to the session screen's own: setting
``screen.state`` or ``screen.busy`` redraws what shows it. ``revision`` counts changes inside the model
(records appended, stats computed) and ``position`` moves of the transcript's cursor, range or follow state."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from sessionview.core.text import escape_control
from sessionview.core.view import timing
from sessionview.core.view.humanize import human_count, human_size
from sessionview.core.view.stats import Stats
from sessionview.ui.widgets.transcript import TranscriptView
from sessionview.ui.wording import plural

REASONS = {
    "truncated": "the file shrank or was rewritten with other content; reloaded",
    "compacted": "the agent compacted the session; reloaded",
    "replaced": "a new file is at this path; reloaded and following it",
    "deleted": "the file was removed; what it had stays on screen",
    "changed": "the document changed; reloaded",
}


def compaction_text(markers: tuple[str, ...], before: int | None, after: int | None, replaced: bool) -> str:
    """``by the agent ([compacted:summary]): 40 messages → 7; reloaded`` (follows the word "compacted")."""
    names = ", ".join(f"[compacted:{escape_control(m, one_line=True)}]" for m in markers)
    who = "in a new file at this path" if replaced else "by the agent"

    def messages(n: int) -> str:
        return f"{n:,} message{'s' if n != 1 else ''}"

    if before is not None and after is not None:
        counts = f": {messages(before)} → {after:,}"
    elif after is not None:
        counts = f": now {messages(after)}"
    else:
        counts = ""
    return f"{who} ({names}){counts}; reloaded"


def spread(left: Content, right: Content, width: int) -> Content:
    """``left`` and ``right`` on one line ``width`` cells wide (``left`` is cut first)."""
    gap = width - left.cell_length - right.cell_length
    if gap < 1:
        left = left.truncate(max(0, width - right.cell_length - 1), ellipsis=True)
        gap = max(1, width - left.cell_length - right.cell_length)
    return Content.assemble(left, " " * gap, right)


def header_content(model: Any, display_path: str, state_name: str, read_only: bool, width: int, stats_auto_limit: int) -> Content:
    """Two lines: the path and the live state; the format, counts and approximate tokens."""
    path = escape_control(display_path, one_line=True)
    state = {
        "live": ("● live", "bold $text-success"),
        "idle": ("○ idle", "$text-muted"),
        "deleted": ("✗ deleted", "bold $text-error"),
        "opening": ("… opening", "$text-muted"),
        "error": ("✗ cannot open", "bold $text-error"),
    }[state_name]
    line1 = Content.assemble(("sessionview ", "bold $text-accent"), (path, "bold"))
    read_only = read_only or bool(model is not None and getattr(model.session, "read_only_reason", None))
    right1 = Content.assemble(*([("read-only  ", "$text-muted")] if read_only else []), state)
    parts: list[tuple[str, str] | str] = []
    if model is not None:
        parts.append((model.session.format_title, "$text-secondary"))
        count = len(model)
        word = "record" if model.lines else "message"
        if model.indexed:
            parts.append(f" · {plural(count, word)}")
        else:
            parts.append(f" · last {plural(count, 'record')} (indexing)")
        parts.append(f" · {human_size(model.size)}")
        stats = model.stats
        if stats is not None:
            parts.extend(overview_parts(stats))
        elif model.indexed and model.lines and model.size > stats_auto_limit:
            parts.append((" · ~? tok (f counts)", "$text-muted"))
        else:
            parts.append((" · … · ~… tok", "$text-muted"))
    line2 = Content.assemble(*parts)
    if line2.cell_length > width:
        line2 = line2.truncate(width, ellipsis=True)
    top = spread(line1, right1, width)
    return Content("\n").join([top, line2])


def overview_parts(stats: Stats) -> list[tuple[str, str] | str]:
    """The run in brief: model(s), duration, tool calls, errors, invalid records and tokens (the usage the
    file records where it records any, else an estimate marked ``~``)."""
    parts: list[tuple[str, str] | str] = []
    models = sorted(stats.usage.models.items(), key=lambda kv: -kv[1])
    if models:
        names = ", ".join(escape_control(m, one_line=True) for m, _ in models[:2])
        more = f" +{len(models) - 2}" if len(models) > 2 else ""
        parts.append((f" · {names}{more}", "$text-secondary"))
    took = stats.timing.duration
    if took is not None:
        parts.append(f" · {timing.duration(took)}")
    if stats.tool_calls:
        parts.append(f" · {plural(stats.tool_calls, 'tool call')}")
    if stats.errors:
        parts.append((f" · {plural(stats.errors, 'error')}", "bold $text-error"))
    if stats.invalid:
        parts.append((f" · {stats.invalid:,} invalid", "$text-error"))
    u = stats.usage
    if u.recorded:
        s = u.sum
        cache = s.cache_read + s.cache_write
        text = f" · {human_count(s.input)} in · {human_count(s.output)} out"
        parts.append((text + (f" · {human_count(cache)} cached tok" if cache else " tok"), "bold"))
    else:
        parts.append((f" · ~{human_count(stats.tokens)} tok", "bold"))
    return parts


def status_content(s: "SessionStatus", t: TranscriptView, width: int) -> Content:
    """One line: file events, progress, search and filter on the left; follow state and position right."""
    model = s.model
    left: list[tuple[str, str] | str] = []
    busy = s.busy
    if busy:
        left.append((f"{busy}…  ", "bold $text-accent"))
    edit_status = s.edit_status
    if edit_status:
        good = edit_status.startswith("saved")
        left.append((escape_control(edit_status, one_line=True) + "  ", "$text-success" if good else "bold $text-warning"))
    marked = t.marked_range if model is not None else None
    if marked is not None:
        assert model is not None
        a, b = (model.line_number(marked[0]), model.line_number(marked[1]))
        where = f"#{a:,}-#{b:,}" if a is not None and b is not None else "…"
        count = marked[1] - marked[0] + 1
        left.append((f"range {where} ({plural(count, 'record')}) · d deletes · c compacts · esc drops  ", "bold $text-accent"))
    if s.notice in REASONS:
        style = "bold $text-error" if s.notice in ("deleted", "truncated") else "bold $text-warning"
        left.append((f"{s.notice}", style))
        if s.notice == "compacted" and s.notice_detail:
            left.append((f" {s.notice_detail}  ", "$text-muted"))
        else:
            left.append((f": {REASONS[s.notice]}  ", "$text-muted"))
    elif s.notice:
        left.append((escape_control(s.notice, one_line=True) + "  ", "$text-error"))
    if s.index_progress is not None:
        left.append((f"indexing {s.index_progress:.0%}  ", "$text-muted"))
    if s.search_status:
        left.append((s.search_status + "  ", "$text-accent"))
    if model is not None and model.filter.active:
        left.append(("filter: ", "$text-muted"))
        left.append((escape_control(model.filter.describe(), one_line=True) + "  ", "bold $text-accent"))
    if model is not None and model.pending is not None:
        left.append((f"pending line: {human_size(model.pending.size)}  ", "$text-muted italic"))
    right: list[tuple[str, str] | str] = []
    if model is not None:
        if t.follow:
            right.append(("following", "$text-success"))
        else:
            right.append(("paused", "$text-warning"))
            if t.new_count:
                right.append((f" · {t.new_count:,} new", "bold $text-warning"))
        n = t.cursor_number
        line = model.line_number(n) if n is not None else None
        total = t.total_rows()  # the rows of the list, the pending line's too
        if t.is_pending_row(t.cursor):
            # the partial last line is not a record yet: say where it is
            records = model.row_count()
            last = model.line_number(model.number_at(records - 1)) if records else None
            right.append((f"  pending line after #{last:,}" if last is not None else "  pending line", "bold"))
        else:
            right.append((f"  #{line:,}" if line is not None else "  #…", "bold"))
        right.append((f"  {t.cursor + 1 if total else 0:,}/{total:,}", "$text-muted"))
    return spread(Content.assemble(*left), Content.assemble(*right), width)


class SessionHeader(Widget):
    """The session's header (two lines)."""

    model: reactive[Any] = reactive(None, always_update=True)
    state: reactive[str] = reactive("opening")
    revision: reactive[int] = reactive(0)

    def __init__(self, display_path: str, read_only: bool, stats_auto_limit: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.display_path = display_path
        self.read_only = read_only
        self.stats_auto_limit = stats_auto_limit

    def render(self) -> Content:
        width = max(20, self.content_size.width)
        return header_content(self.model, self.display_path, self.state, self.read_only, width, self.stats_auto_limit)


class SessionStatus(Widget):
    """The session's status line; its right half shows the state of ``transcript`` (set by the screen)."""

    model: reactive[Any] = reactive(None, always_update=True)
    notice: reactive[str] = reactive("")
    notice_detail: reactive[str] = reactive("")
    index_progress: reactive[float | None] = reactive(None)
    search_status: reactive[str] = reactive("")
    busy: reactive[str] = reactive("")
    edit_status: reactive[str] = reactive("")
    revision: reactive[int] = reactive(0)
    position: reactive[int] = reactive(0)

    def __init__(self, transcript: TranscriptView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.transcript = transcript

    def render(self) -> Content:
        return status_content(self, self.transcript, max(20, self.content_size.width))
