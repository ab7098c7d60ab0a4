"""What a change will do, shown before it is written: the transcript as it will be (preview rows) and the
unified diff of the file (a dry run). Pure: the user interface and the CLI draw what these return.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterator

from sessionview.core.doc.document import Document
from sessionview.core.doc.model import Kind, View
from sessionview.core.edit.change import Change, Editable, counts
from sessionview.core.session import JsonlSession
from sessionview.core.text import decode_for_display, escape_control
from sessionview.core.text import plural

CONTEXT = 2  # records of context shown before and after a change
SHOWN = 6  # removed or added records shown at most (the first and the last ones)
DIFF_CONTEXT = 3  # lines of context in a unified diff


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


def after(session: Editable, change: Change) -> JsonlSession:
    """The records as ``change`` leaves them, readable like a session (views, numbers)."""
    return JsonlSession(change.apply(session.doc), adapter=session.adapter)


def _safe_view(session: Editable, n: int) -> View:
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


def preview(session: Editable, change: Change, context: int = CONTEXT, shown: int = SHOWN) -> list[PreviewRow]:
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
            rows.append(PreviewRow("…", None, None, None, f"{plural(item[0], 'more record', grouped=True)} removed"))
        else:
            rows.append(PreviewRow("-", item, None, _safe_view(session, item)))
    for item in _sample(range(change.first, change.first + added), shown):
        if isinstance(item, tuple):
            rows.append(PreviewRow("…", None, None, None, f"{plural(item[0], 'more record', grouped=True)} added"))
        else:
            rows.append(PreviewRow("+", None, item, _safe_view(new, item)))
    for k in range(change.last + 1, min(n, change.last + context) + 1):
        rows.append(PreviewRow(" ", k, k + delta, _safe_view(session, k)))
    return rows


# -- diffs ---------------------------------------------------------------------------------------------


def diff(session: Editable, change: Change, path: str) -> str:
    """The dry-run diff. A LittleGhost document is one line, so its messages are diffed instead."""
    text = unified_diff(session.doc, change, path)
    if session.capabilities.whole_document:
        text = (
            f"# {_name(path)} is one JSON document: the diff shows its messages, one per line (#N = message index).\n"
            "# The document is rewritten whole with its digest recomputed.\n" + text
        )
    return text


def _name(path: str) -> str:
    """A path for a diff header: control characters, C1 and bidi overrides escaped like message content."""
    return escape_control(path, one_line=True)


def _show(raw: bytes, terminator: bytes) -> str:
    text = decode_for_display(raw)
    if terminator == b"\r\n":
        text += "\\r"
    return text


def unified_diff(old: Document, change: Change, path: str) -> str:
    """A unified diff of the file for ``change``, built from the changed range only (fast at any size)."""
    n = len(old)
    lo = max(1, change.first - DIFF_CONTEXT)
    hi = min(n, change.last + DIFF_CONTEXT)
    before = old.records(lo, change.first - 1)
    removed = old.records(change.first, change.last) if change.last >= change.first else []
    after = old.records(change.last + 1, hi)
    old_count = len(before) + len(removed) + len(after)
    new_count = len(before) + len(change.lines) + len(after)
    old_start = lo if old_count else max(0, lo - 1)
    new_start = lo if new_count else max(0, lo - 1)
    name = _name(path)
    lines = [f"--- a/{name}", f"+++ b/{name}", f"@@ -{old_start},{old_count} +{new_start},{new_count} @@ {change.description}"]
    lines += [" " + _show(r.raw, r.terminator) for r in before]
    lines += ["-" + _show(r.raw, r.terminator) for r in removed]
    lines += ["+" + _show(line.raw, line.terminator) for line in change.lines]
    lines += [" " + _show(r.raw, r.terminator) for r in after]
    if (after and after[-1].number == n and not after[-1].terminator) or (
        change.last >= n and change.lines and not change.lines[-1].terminator
    ):
        lines.append("\\ No newline at end of file")
    return "\n".join(lines) + "\n"


def bytes_diff(old: bytes, new: bytes, path: str) -> str:
    """A unified diff of two small whole files (LittleGhost documents, pretty-printed for reading)."""
    a = decode_for_display(old).split("\n")
    b = decode_for_display(new).split("\n")
    return "".join(
        line + ("" if line.endswith("\n") else "\n")
        for line in difflib.unified_diff(a, b, f"a/{_name(path)}", f"b/{_name(path)}", lineterm="")
    )
