"""Edit operations on sessions: pure, previewable, undoable.

Each ``plan_*`` function takes a session and returns a :class:`Change`: the records it replaces, the new
lines, and the inverse. Untouched records keep their bytes (the document is a piece table over the
loaded source). Nothing here writes a file: :mod:`sessionview.core.store.save` does that.

``N`` is always what ``show`` prints as ``#N``: the 1-based line number for JSONL, the 1-based message
index for a LittleGhost document.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from sessionview.core import rubyjson
from sessionview.core.formats import brute_message as brute
from sessionview.core.doc.document import Document, Line
from sessionview.core.doc.model import Kind, View
from sessionview.core.doc.pairing import Pairing
from sessionview.core.doc.parse import Status

COMPACT_PREFIX = "[compacted:summary] "
#: formats whose lines we can write. Claude Code, Codex and pi link lines through uuids/parents, so
#: only in-place edits of a message's text are offered there, never new lines.
EDIT_FORMATS = {"brute", "openai", "anthropic", "littleghost-jsonl", "jsonl", "claude-code", "codex", "pi", "littleghost"}
COMPACT_FORMATS = {"brute", "openai", "anthropic", "littleghost-jsonl", "jsonl", "littleghost"}


class Refused(Exception):
    """An operation that would damage the session. ``suggestion`` is the nearest valid range."""

    exit_code = 1

    def __init__(self, message: str, *, ids: Iterable[str] = (), suggestion: tuple[int, int] | None = None):
        super().__init__(message)
        self.ids = tuple(ids)
        self.suggestion = suggestion


class InvalidEdit(ValueError):
    """The new message is not valid (bad JSON, or a message the format's reader would reject)."""

    exit_code = 2


@dataclass(frozen=True)
class Change:
    """Replace records ``first..last`` (1-based, inclusive; ``last = first - 1`` inserts) with ``lines``."""

    description: str
    first: int
    last: int
    lines: tuple[Line, ...]
    old_lines: tuple[Line, ...] = field(default=(), repr=False)
    values: tuple[Any, ...] = field(default=(), repr=False)  # parsed values of ``lines`` (LittleGhost)
    anchor: bytes | None = field(default=None, repr=False)  # raw of record ``first - 1`` when planned

    def with_anchor(self, session: Any) -> "Change":
        """This change with the record before it remembered, so it can be placed again later."""
        anchor = session.doc.record(self.first - 1).raw if 1 < self.first <= len(session) + 1 else None
        return replace(self, anchor=anchor)

    def apply(self, doc: Document) -> Document:
        return doc.splice(self.first, self.last, self.lines)

    @property
    def inverse(self) -> "Change":
        return Change(
            f"undo {self.description}",
            self.first,
            self.first + len(self.lines) - 1,
            self.old_lines,
            self.lines,
            anchor=self.anchor,
        )


# --------------------------------------------------------------------------------------------------
# range helpers


def parse_range(text: str, count: int | None = None) -> tuple[int, int]:
    """``N`` or ``N:M`` (1-based, inclusive). ``N:`` runs to the end when ``count`` is known."""
    try:
        if ":" in text:
            a, b = text.split(":", 1)
            first = int(a)
            last = int(b) if b else (count if count is not None else -1)
        else:
            first = last = int(text)
    except ValueError:
        raise InvalidEdit(f"not a record number or range: {text!r} (use N or N:M)") from None
    if first < 1 or last < first:
        raise InvalidEdit(f"bad range {text!r}: records are numbered from 1 and N:M needs M >= N")
    if count is not None and last > count:
        raise InvalidEdit(f"range {first}:{last} is past the end: the session has {count} records")
    return first, last


def _check_range(session: Any, first: int, last: int, force: bool) -> None:
    n = len(session)
    if not (1 <= first <= last <= n):
        raise InvalidEdit(f"range {first}:{last} is outside 1:{n}")
    if not force and hasattr(session, "doc") and last == n and session.doc.record(n).partial:
        raise Refused(
            f"record #{n} is a partial last line that may still be being written; it is kept as it is. "
            "Leave it out of the range, or use --force"
        )


# --------------------------------------------------------------------------------------------------
# serialisation of new lines


def _terminator_for(session: Any, number: int) -> bytes:
    rec = session.doc.record(number)
    if rec.terminator:
        return rec.terminator
    # an unterminated last line: keep it unterminated
    return b""


def _original_numbers(raw: bytes) -> set[str]:
    texts: set[str] = set()
    try:
        value = rubyjson.loads_preserving(raw)
    except Exception:
        return texts
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (rubyjson.RawInt, rubyjson.RawFloat)):
            texts.add(v.text)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return texts


def _normalise_numbers(value: Any, keep: set[str]) -> Any:
    """Numbers whose text appeared in the original record keep it; others become what the writer emits."""
    if isinstance(value, rubyjson.RawInt):
        return value if value.text in keep else int(value)
    if isinstance(value, rubyjson.RawFloat):
        return value if value.text in keep else float(value)
    if isinstance(value, dict):
        return {k: _normalise_numbers(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise_numbers(v, keep) for v in value]
    return value


def _littleghost_message(session: Any, value: Any) -> Any:
    """``LittleGhost::Message#to_h``: role, content as typed blocks, metadata. Refuses what coerce rejects."""
    if not isinstance(value, dict):
        raise InvalidEdit("a LittleGhost message must be a JSON object")
    content = value.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    elif isinstance(content, dict):
        content = [content]
    elif isinstance(content, list):
        content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in content]
    out = {"role": value.get("role"), "content": content, "metadata": value.get("metadata", {})}
    for k in value:
        if k not in out:
            out[k] = value[k]
    problems = session.adapter.schema_problems(0, out)
    if problems:
        raise InvalidEdit(f"LittleGhost would reject this message: {problems[0].message}")
    return out


def encode_value(session: Any, value: Any) -> bytes:
    """The bytes of one record as the format's writer would produce them."""
    if session.format in ("littleghost", "littleghost-jsonl"):
        value = _littleghost_message(session, value)
    if session.format == "brute":
        try:
            value = brute.Message.from_h(value).to_h()
        except brute.BruteSchemaError as exc:
            raise InvalidEdit(f"Brute would reject this message: {exc}") from None
    try:
        return rubyjson.generate(value, keep_raw_numbers=True)
    except rubyjson.RubyJSONError as exc:
        raise InvalidEdit(f"cannot write this value exactly: {exc}") from None


def parse_user_json(text: str | bytes) -> Any:
    try:
        return rubyjson.loads_preserving(text, reject_duplicates=True)
    except rubyjson.DuplicateKeyError as exc:
        raise InvalidEdit(f"duplicate key: {exc}") from None
    except ValueError as exc:
        raise InvalidEdit(f"invalid JSON: {exc}") from None


# --------------------------------------------------------------------------------------------------
# content location per format


def _content_holder(fmt: str, value: Any) -> tuple[Any, str] | None:
    """The object and key that hold a message's content in ``value``."""
    if not isinstance(value, dict):
        return None
    if fmt in ("claude-code", "pi"):
        msg = value.get("message")
        return (msg, "content") if isinstance(msg, dict) and "content" in msg else None
    if fmt == "codex":
        payload = value.get("payload")
        if isinstance(payload, dict) and "content" in payload:
            return payload, "content"
        if isinstance(payload, dict) and isinstance(payload.get("message"), str):
            return payload, "message"
        return (value, "content") if "content" in value else None
    return (value, "content") if "content" in value or "role" in value else None


_TEXT_TYPES = ("text", "input_text", "output_text")


def set_text(fmt: str, value: Any, text: str) -> Any:
    """A copy of ``value`` with its message text set to ``text``; refuses when there is no single text."""
    import copy

    value = copy.deepcopy(value)
    holder = _content_holder(fmt, value)
    if holder is None:
        raise InvalidEdit("this record has no message content to set; use --json to replace it whole")
    obj, key = holder
    content = obj.get(key)
    if content is None or isinstance(content, str):
        obj[key] = text
        return value
    if isinstance(content, list):
        texts = [b for b in content if isinstance(b, dict) and b.get("type") in _TEXT_TYPES and isinstance(b.get("text"), str)]
        if len(texts) == 1:
            texts[0]["text"] = text
            return value
        raise InvalidEdit(
            f"the content has {len(texts)} text blocks, so there is no single text to set; use --json to edit the blocks"
        )
    raise InvalidEdit("the content is not text; use --json to replace the message")


# --------------------------------------------------------------------------------------------------
# plans


def plan_edit(
    session: Any,
    number: int,
    *,
    value: Any = None,
    json_text: str | bytes | None = None,
    content: str | None = None,
    force: bool = False,
) -> Change:
    """Replace the message in record ``number``."""
    _check_range(session, number, number, force=True)
    if session.read_only_reason:
        raise Refused(f"this session is read-only: {session.read_only_reason}")
    if session.format not in EDIT_FORMATS:
        raise Refused(f"editing {session.format_title} files is not supported")
    rec = session.doc.record(number)
    if rec.partial and not force:
        raise Refused(f"record #{number} is a partial last line that may still be being written; use --force")
    keep = _original_numbers(rec.raw)
    if content is not None:
        parsed = session.parsed(number)
        if not parsed.status.parsed:
            raise Refused(f"record #{number} is {parsed.status.value}; replace it whole with --json")
        original = rubyjson.loads_preserving(rec.raw)
        new_value = set_text(session.format, original, content)
    elif json_text is not None:
        new_value = _normalise_numbers(parse_user_json(json_text), keep)
    else:
        new_value = value
    raw = encode_value(session, new_value)
    if raw == rec.raw:
        return Change(f"edit #{number} (no change)", number, number, (Line(rec.raw, rec.terminator),), (Line(rec.raw, rec.terminator),))
    line = Line(raw, rec.terminator)
    change = Change(f"edit #{number}", number, number, (line,), (Line(rec.raw, rec.terminator),), (new_value,))
    check_integrity(session, change, force=force)
    return change.with_anchor(session)


def plan_delete(session: Any, first: int, last: int, *, force: bool = False) -> Change:
    _check_range(session, first, last, force)
    old = tuple(Line(r.raw, r.terminator) for r in session.doc.records(first, last))
    change = Change(f"delete #{first}" if first == last else f"delete #{first}-#{last}", first, last, (), old)
    check_integrity(session, change, force=force, widen="both")
    return change.with_anchor(session)


def plan_truncate(session: Any, keep: int, *, force: bool = False) -> Change:
    n = len(session)
    if keep < 0:
        raise InvalidEdit("--keep must be 0 or more")
    if keep >= n:
        return Change(f"truncate to {keep} (no change)", n + 1, n, ())
    _check_range(session, keep + 1, n, force)
    old = tuple(Line(r.raw, r.terminator) for r in session.doc.records(keep + 1, n))
    change = Change(f"truncate after #{keep}", keep + 1, n, (), old)
    check_integrity(session, change, force=force, widen="down")
    return change.with_anchor(session)


def summary_value(session: Any, text: str) -> Any:
    fmt = session.format
    if fmt in ("brute", "openai", "jsonl", "anthropic"):
        body = text if brute.compaction_marker(text) else COMPACT_PREFIX + text
        return {"role": "user", "content": body}
    if fmt in ("littleghost-jsonl", "littleghost"):
        return {"role": "user", "content": [{"type": "text", "text": text}], "metadata": {}}
    raise Refused(
        f"compaction is not supported for {session.format_title}: its lines are linked by ids and parents, "
        "so a new summary line would break the format. Use delete, or edit a message's text"
    )


def plan_compact(session: Any, first: int, last: int, summary: str, *, force: bool = False) -> Change:
    """Replace records ``first..last`` with one summary message at ``first``."""
    _check_range(session, first, last, force)
    if session.format not in COMPACT_FORMATS:
        summary_value(session, summary)  # raises with the reason
    if not summary.strip():
        raise InvalidEdit("the summary is empty")
    value = summary_value(session, summary)
    raw = encode_value(session, value)
    old = tuple(Line(r.raw, r.terminator) for r in session.doc.records(first, last))
    term = old[0].terminator or b"\n"
    if last == len(session) and not old[-1].terminator:
        term = b""
    change = Change(f"compact #{first}-#{last}", first, last, (Line(raw, term),), old, (value,))
    check_integrity(session, change, force=force, widen="both")
    return change.with_anchor(session)


# --------------------------------------------------------------------------------------------------
# integrity


def _views_of_lines(session: Any, lines: Iterable[Line], first: int) -> list[View]:
    from sessionview.core.doc.parse import parse_record

    out = []
    for i, line in enumerate(lines):
        p = parse_record(line.raw, terminated=bool(line.terminator))
        if p.status in (Status.OK, Status.DUPLICATE_KEYS):
            out.append(session.adapter.view(first + i, p.value))
    return out


def broken_ids(session: Any, change: Change, pairing: Pairing | None = None) -> tuple[list[str], list[str]]:
    """Ids that the change would turn into (dangling calls, orphan results)."""
    pairing = pairing if pairing is not None else session.pairing()
    removed = [v for v in session.views(change.first, change.last) if v.kind is not Kind.INVALID]
    added = _views_of_lines(session, change.lines, change.first)
    lo, hi = change.first, change.last

    def inside(n: int) -> bool:
        return lo <= n <= hi

    calls_removed = {c.id for v in removed for c in v.tool_calls if c.id}
    results_removed = {r.call_id for v in removed for r in v.tool_results if r.call_id}
    calls_added = {c.id for v in added for c in v.tool_calls if c.id}
    results_added = {r.call_id for v in added for r in v.tool_results if r.call_id}
    dangling: list[str] = []
    orphans: list[str] = []
    for cid in sorted(calls_removed - calls_added):
        outside = [n for n in pairing.results.get(cid, []) if not inside(n)]
        if outside or cid in results_added:
            orphans.append(cid)
    for cid in sorted(results_removed - results_added):
        call_at = pairing.calls.get(cid)
        if call_at is None or inside(call_at):
            continue
        remaining = [n for n in pairing.results.get(cid, []) if not inside(n)]
        if not remaining:
            dangling.append(cid)
    for cid in sorted(calls_added - calls_removed):
        if cid not in pairing.results and cid not in results_added:
            dangling.append(cid)
    for cid in sorted(results_added - results_removed):
        call_at = pairing.calls.get(cid)
        if (call_at is None or inside(call_at)) and cid not in calls_added:
            orphans.append(cid)
    return dangling, orphans


def nearest_valid_range(session: Any, first: int, last: int, widen: str, pairing: Pairing) -> tuple[int, int] | None:
    """Widen ``first..last`` until no tool call or result is split from its partner."""
    n = len(session)
    for _ in range(64):
        change = Change("probe", first, last, ())
        dangling, orphans = broken_ids(session, change, pairing)
        if not dangling and not orphans:
            return first, last
        partners: list[int] = []
        for cid in dangling + orphans:
            if cid in pairing.calls:
                partners.append(pairing.calls[cid])
            partners.extend(pairing.results.get(cid, []))
        new_first = min([first, *partners])
        new_last = max([last, *partners]) if widen == "both" else last
        if widen == "down":
            new_last = n
        if (new_first, new_last) == (first, last):
            return None
        first, last = max(1, new_first), min(n, new_last)
    return None


def check_integrity(session: Any, change: Change, *, force: bool = False, widen: str | None = None) -> None:
    if force:
        return
    pairing = session.pairing()
    dangling, orphans = broken_ids(session, change, pairing)
    if not dangling and not orphans:
        return
    parts = []
    if dangling:
        parts.append(f"leave tool call{'s' if len(dangling) > 1 else ''} {', '.join(dangling)} without a result (dangling)")
    if orphans:
        parts.append(f"leave tool result{'s' if len(orphans) > 1 else ''} for {', '.join(orphans)} without its call (orphan)")
    suggestion = None
    hint = ""
    if widen:
        suggestion = nearest_valid_range(session, change.first, change.last, widen, pairing)
        if suggestion:
            if widen == "down":
                hint = f"; the nearest valid point is --keep {suggestion[0] - 1}"
            else:
                hint = f"; the nearest valid range is {suggestion[0]}:{suggestion[1]}"
    raise Refused(
        f"refused: {change.description} would {' and '.join(parts)}{hint}. Use --force to do it anyway",
        ids=dangling + orphans,
        suggestion=suggestion,
    )


def pretty_json(value: Any, indent: int = 2, _level: int = 0) -> str:
    """Pretty JSON that keeps every number's original text (for editing in an editor or a TextArea)."""
    import json

    pad = " " * (indent * (_level + 1))
    end = " " * (indent * _level)
    if isinstance(value, (rubyjson.RawInt, rubyjson.RawFloat)):
        return value.text
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {pretty_json(v, indent, _level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(pad + pretty_json(v, indent, _level + 1) for v in value) + "\n" + end + "]"
    return json.dumps(value, ensure_ascii=False)


def pretty_record(session: Any, number: int) -> str:
    """Record ``number`` as pretty JSON with its numbers' original text, for an editor."""
    rec = session.doc.record(number)
    try:
        value = rubyjson.loads_preserving(rec.raw)
    except Exception as exc:
        raise Refused(f"record #{number} is not valid JSON ({exc}); replace it with --json") from None
    return pretty_json(value) + "\n"
