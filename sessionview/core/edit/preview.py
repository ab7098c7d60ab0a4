"""What an interactive editor needs around :mod:`edits`, :mod:`writeback` and :mod:`history`: the
transcript as a change will leave it (a preview), the text of a message alone, the inputs of a
compaction summary, and whether a loaded session is still the file on disk.

Pure (stdlib and the core only): the user interface draws what these functions return.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator

from sessionview.core import rubyjson
from sessionview.core.edit import plan as edits, summary
from sessionview.core.edit.plan import Change
from sessionview.core.doc.model import Kind, View
from sessionview.core.session import JsonlSession
from sessionview.core.session_base import Session

CONTEXT = 2  # records of context shown before and after a change
SHOWN = 6  # removed or added records shown at most (the first and the last ones)


@dataclass(frozen=True)
class PreviewRow:
    """One entry of a preview: ``mark`` is ``" "`` (context), ``"-"`` (removed), ``"+"`` (new) or
    ``"…"`` (records left out of the preview, ``note`` says how many). ``old`` is the record's number in
    the file as it is, ``new`` its number once the change is written."""

    mark: str
    old: int | None
    new: int | None
    view: View | None
    note: str = ""


def after(session: Session, change: Change) -> JsonlSession:
    """The records as ``change`` leaves them, readable like a session (views, numbers)."""
    return JsonlSession(change.apply(session.doc), adapter=session.adapter)


def is_noop(change: Change) -> bool:
    """Whether writing ``change`` would leave the records as they are."""
    if change.last < change.first and not change.lines:
        return True
    return [(line.raw, line.terminator) for line in change.lines] == [
        (line.raw, line.terminator) for line in change.old_lines
    ]


def counts(change: Change) -> tuple[int, int]:
    """(records removed, records added) by ``change``."""
    return max(0, change.last - change.first + 1), len(change.lines)


def describe(change: Change) -> str:
    """``"2 records removed, 1 added"`` for ``change``."""
    removed, added = counts(change)
    if removed == added == 1:
        return "1 record replaced"
    parts = []
    if removed:
        parts.append(f"{removed:,} record{'s' if removed != 1 else ''} removed")
    if added:
        parts.append(f"{added:,} {'record' if added == 1 else 'records'} added" if not removed else f"{added:,} added")
    return ", ".join(parts) or "no change"


def _safe_view(session: Session, n: int) -> View:
    try:
        return session.view(n)
    except Exception as exc:  # a preview must never fail on a record it only shows
        return View(n, Kind.INVALID, label="unreadable", text=f"{type(exc).__name__}: {exc}")


def _sample(numbers: range, shown: int) -> Iterator[int | tuple[int, int]]:
    """The numbers of ``numbers``, or its first and last ``shown // 2`` with ``(skipped, at)`` between."""
    if len(numbers) <= shown:
        yield from numbers
        return
    half = max(1, shown // 2)
    yield from numbers[:half]
    yield (len(numbers) - 2 * half, numbers[half])
    yield from numbers[-half:]


def preview(session: Session, change: Change, context: int = CONTEXT, shown: int = SHOWN) -> list[PreviewRow]:
    """The area ``change`` touches, as it will be: context before, the removed records, the new ones,
    context after (numbers of the new file)."""
    n = len(session)
    new = after(session, change)
    removed, added = counts(change)
    delta = added - removed
    rows: list[PreviewRow] = []
    for k in range(max(1, change.first - context), min(change.first, n + 1)):
        rows.append(PreviewRow(" ", k, k, _safe_view(session, k)))
    for item in _sample(range(change.first, change.last + 1), shown):
        if isinstance(item, tuple):
            rows.append(PreviewRow("…", None, None, None, f"{item[0]:,} more record{'s' if item[0] != 1 else ''} removed"))
        else:
            rows.append(PreviewRow("-", item, None, _safe_view(session, item)))
    for item in _sample(range(change.first, change.first + added), shown):
        if isinstance(item, tuple):
            rows.append(PreviewRow("…", None, None, None, f"{item[0]:,} more record{'s' if item[0] != 1 else ''} added"))
        else:
            rows.append(PreviewRow("+", None, item, _safe_view(new, item)))
    for k in range(change.last + 1, min(n, change.last + context) + 1):
        rows.append(PreviewRow(" ", k, k + delta, _safe_view(session, k)))
    return rows


def number_after(change: Change, n: int) -> int:
    """Where record ``n`` of the file before ``change`` is once it is written (the nearest record when
    ``n`` itself is removed)."""
    removed, added = counts(change)
    if n < change.first:
        return n
    if n > change.last:
        return n + added - removed
    if added:
        return change.first + min(n - change.first, added - 1)
    return max(1, change.first - 1) if change.first > 1 else 1


# -- messages ----------------------------------------------------------------------------------------


def content_text(session: Session, number: int) -> str | None:
    """The text of message ``number`` alone, when it has one text to edit (what ``plan_edit(content=)``
    replaces); None when it has none or several text blocks."""
    try:
        value = rubyjson.loads_preserving(session.doc.record(number).raw)
    except Exception:
        return None
    holder = edits._content_holder(session.format, value)
    if holder is None:
        return None
    obj, key = holder
    content = obj.get(key)
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") in edits._TEXT_TYPES and isinstance(b.get("text"), str)
        ]
        if len(texts) == 1:
            return texts[0]
    return None


# -- compaction --------------------------------------------------------------------------------------


def range_bytes(session: Session, first: int, last: int) -> int:
    return sum(session.doc.record_size(k) for k in range(first, last + 1))


def range_records(session: Session, first: int, last: int) -> list[bytes]:
    """The raw records ``first..last`` (what a summarizer command reads on its stdin)."""
    return [session.doc.record(k).raw for k in range(first, last + 1)]


def range_digest(session: Session, first: int, last: int) -> str:
    """The built-in extractive digest of records ``first..last``."""
    return summary.digest(list(session.views(first, last)), range_bytes(session, first, last))


# -- the file on disk --------------------------------------------------------------------------------


def is_current(session: Session, path: str) -> bool:
    """Whether ``session`` still is the file at ``path`` (same inode, size and modification time)."""
    try:
        st = os.stat(path)
        stamp = session.stamp  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return False
    except Exception:
        return False
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (stamp.dev, stamp.ino, stamp.size, stamp.mtime_ns)


def same_record(session: Session, number: int, raw: bytes | None) -> bool:
    """Whether record ``number`` of ``session`` holds ``raw`` (None: not known, taken as yes)."""
    if raw is None:
        return True
    try:
        return 1 <= number <= len(session) and session.doc.record(number).raw == raw
    except Exception:
        return False


def modified_ago(path: str, now: float) -> float | None:
    """Seconds since ``path`` was last modified (None if it cannot be read)."""
    try:
        return now - os.stat(path).st_mtime
    except OSError:
        return None


def describe_outcome(outcome: Any) -> str:
    """What a save did beyond the edit: appends carried over, a partial line left out."""
    result = getattr(outcome, "result", None)
    parts = []
    rebased = getattr(result, "rebased_bytes", 0) + getattr(result, "carried_bytes", 0)
    if rebased:
        parts.append(f"{rebased:,} bytes appended meanwhile kept")
    lost = getattr(result, "lost_partial_bytes", 0)
    if lost:
        parts.append(f"an unfinished last line of {lost:,} bytes was kept aside")
    parts.extend(getattr(result, "warnings", ()) or ())
    return "; ".join(parts)
