"""The detail of one record: where it is in the file, its problems, and its JSON pretty-printed.

Text from the file is escaped; at most ``limit`` bytes are shown unless all is asked for (``a``), and a
record over the parse cap is shown as raw bytes, never parsed.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding

from sessionview.ui.wording import problem_text
from sessionview.core.doc.model import Kind, View
from sessionview.core.view.render import pretty
from sessionview.core.text import decode_for_display, escape_control
from sessionview.core.view import timing, usage
from sessionview.core.view.humanize import human_size
from sessionview.core.view.transcript import TranscriptModel
from sessionview.ui.widgets.text_pane import TextPane

LIMIT = 1 << 20  # bytes of text shown before "a" asks for all
FULL_LIMIT = 16 << 20


class DetailPane(TextPane):
    """Shows a record of a :class:`TranscriptModel`."""

    BINDINGS = [
        Binding("a", "show_all", "Show all", id="detail.all"),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.number: int | None = None
        self.full = False
        self._model: TranscriptModel | None = None

    def show(self, model: TranscriptModel | None, number: int | None, full: bool = False) -> None:
        self._model = model
        self.number = number
        self.full = full
        self.set_lines(detail_lines(model, number, FULL_LIMIT if full else LIMIT) if model is not None else [])

    def action_show_all(self) -> None:
        self.show(self._model, self.number, full=True)


def _esc_lines(text: str, style: str) -> list[tuple[str, str]]:
    return [(line, style) for line in escape_control(text).split("\n")]


def detail_lines(model: TranscriptModel, number: int | None, limit: int) -> list[tuple[str, str]]:
    if number is None:
        if model.pending is not None:
            p = model.pending
            out = [(f"pending line · starts at byte {p.offset:,} · {human_size(p.size)} so far", "text-pane--title")]
            out.append(("waiting for its newline; it is not a record yet", "text-pane--note"))
            out += _esc_lines(decode_for_display(p.preview), "text-pane--dim")
            return out
        return [("nothing selected", "text-pane--note")]
    view = model.view(number)
    line_no = model.line_number(number)
    label = f"#{line_no:,}" if line_no is not None else "#… (line number pending: indexing)"
    kind = view.role or view.label or view.kind.value
    out: list[tuple[str, str]] = [(f"{label} · {escape_control(kind, one_line=True)} · {view.kind.value}", "text-pane--title")]
    record = model.record(number)
    size = model.record_size(number)
    if record is not None and record.start is not None:
        term = {b"\n": "LF", b"\r\n": "CRLF", b"": "no terminator"}.get(record.terminator, repr(record.terminator))
        out.append((f"bytes {record.start:,}–{record.end:,} ({human_size((record.end or 0) - record.start)}, {term})", "text-pane--label"))
    elif size is not None:
        out.append((f"{human_size(size)}", "text-pane--label"))
    out += time_and_usage_lines(model, number, view)
    for p in view.problems:
        style = "text-pane--error" if p.severity == "error" else "text-pane--warning"
        out += _esc_lines(f"⚠ {problem_text(p.kind, p.message)}", style)
    if len(view.numbers) > 1:
        out.append((f"merged records: {', '.join(str(n) for n in view.numbers)}", "text-pane--dim"))
    out.append(("", ""))
    if view.kind is Kind.INVALID or (view.value is None and record is not None):
        out.append(("raw bytes (escaped)", "text-pane--label"))
        raw = _raw(model, number, limit)
        out += _esc_lines(decode_for_display(raw), "text-pane--json")
        if size is not None and size > len(raw) + 2:
            out.append((f"… {size - len(raw):,} more bytes" + (" · a shows all" if limit < FULL_LIMIT else " not shown"), "text-pane--note"))
    else:
        out.append(("JSON", "text-pane--label"))
        text = pretty(view.value)
        shown = text[:limit]
        out += _esc_lines(shown, "text-pane--json")
        if len(text) > len(shown):
            more = len(text[len(shown) :].encode("utf-8", "surrogatepass"))
            out.append((f"… {more:,} more bytes" + (" · a shows all" if limit < FULL_LIMIT else " not shown"), "text-pane--note"))
    out += _document_extras(model)
    return out


def time_and_usage_lines(model: TranscriptModel, number: int, view: View) -> list[tuple[str, str]]:
    """The record's absolute time (local, with its zone), how far into the session, a call's duration, and
    the usage it records."""
    out: list[tuple[str, str]] = []
    t = timing.view_time(view)
    if t is not None:
        bits = [f"at {timing.absolute_full(t)}"]
        start = model.start_time()
        if start is not None:
            bits.append(f"{timing.relative(t, start)} into the session")
        took = timing.call_seconds(model, view)
        if took is not None:
            bits.append(f"the call took {timing.duration(took)}")
        bits.append(f"recorded as {escape_control(view.timestamp or '', one_line=True)}")
        out.append((" · ".join(bits), "text-pane--label"))
    found = usage.recorded(view)
    if found is not None:
        _, u, running = found
        text = f"usage (recorded): input {u.input:,} · output {u.output:,} · cache read {u.cache_read:,} · cache write {u.cache_write:,} · context {u.context:,}"
        if running is not None:
            text += f" · session total {running.total:,}"
        out.append((text, "text-pane--label"))
    return out


def _raw(model: TranscriptModel, number: int, limit: int) -> bytes:
    record_size = model.record_size(number)
    if record_size is not None and record_size > limit:
        rec_source_start = None
        try:
            src = model.source
            rec_source_start = src.starts[number - 1]
            return src.read(rec_source_start, limit)
        except Exception:
            pass
    record = model.record(number)
    if record is not None:
        return record.raw[:limit]
    view: View = model.view(number)
    return (view.raw or b"")[:limit]


def _document_extras(model: TranscriptModel) -> list[tuple[str, str]]:
    """State and metadata of a document session (LittleGhost), when it has them."""
    if model.lines:
        return []
    out: list[tuple[str, str]] = []
    for name in ("state", "metadata"):
        value: Any = getattr(model.session, name, None)
        if value is None:
            continue
        out.append(("", ""))
        out.append((f"session {name}", "text-pane--label"))
        try:
            out += _esc_lines(pretty(value), "text-pane--json")
        except Exception:
            out += _esc_lines(repr(value), "text-pane--json")
    for p in getattr(model.session, "document_problems", lambda: [])():
        out += _esc_lines(f"⚠ {problem_text(p.kind, p.message)}", "text-pane--error")
    return out
