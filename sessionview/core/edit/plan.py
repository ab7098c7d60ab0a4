"""The planners: each ``plan_*`` function takes a session and returns a :class:`~.change.Change` (the
records it replaces, the new lines, and the inverse), refused where it would damage the session.

Untouched records keep their bytes (the document is a piece table over the loaded source). Nothing here
writes a file: :mod:`sessionview.core.edit.writeback` does that. What a format allows is asked of the
session (:attr:`capabilities`) and its adapter (how a message is encoded), never guessed from its name.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sessionview.core import rubyjson
from sessionview.core.doc.document import Line
from sessionview.core.edit.change import Change, Editable
from sessionview.core.edit.encode import encode, normalise_numbers, original_numbers, parse_user_json, write_refusal
from sessionview.core.edit.integrity import check_integrity, unlinked_result_warnings
from sessionview.core.errors import InvalidEdit, Refused
from sessionview.core.text import plural


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
        raise InvalidEdit(f"range {first}:{last} is past the end: the session has {plural(count, 'record')}")
    return first, last


def _check_range(session: Editable, first: int, last: int, force: bool) -> None:
    n = len(session)
    if not (1 <= first <= last <= n):
        raise InvalidEdit(f"record {first} is outside 1:{n}" if first == last else f"range {first}:{last} is outside 1:{n}")
    if not force and hasattr(session, "doc") and last == n and session.doc.record(n).partial:
        raise Refused(
            f"record #{n} is a partial last line that may still be being written; it is kept as it is. "
            "Leave it out of the range",
            forceable=True,
        )


def plan_edit(
    session: Editable,
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
    if not session.capabilities.editable:
        raise Refused(f"editing {session.format_title} files is not supported")
    rec = session.doc.record(number)
    if rec.partial and not force:
        raise Refused(f"record #{number} is a partial last line that may still be being written", forceable=True)
    keep = original_numbers(rec.raw)
    if content is not None:
        parsed = session.parsed(number)
        if not parsed.status.parsed:
            raise Refused(f"record #{number} is {parsed.status.value}; replace it whole with --json")
        original = rubyjson.loads_preserving(rec.raw)
        new_value = session.adapter.set_text(original, content)
    elif json_text is not None:
        new_value = normalise_numbers(parse_user_json(json_text), keep)
    else:
        new_value = value
    encoded = encode(session, new_value)
    raw, new_value, warnings = encoded.raw, encoded.value, encoded.warnings
    write_refusal(session, new_value, force)
    parsed = session.parsed(number)
    if parsed.status.parsed:
        warnings = (*warnings, *unlinked_result_warnings(session, number, parsed.value, new_value))
    if raw == rec.raw:  # the same bytes: a change that is a no-op (see change.is_noop)
        return Change(
            f"edit #{number} (no change)", number, number, (Line(rec.raw, rec.terminator),), (Line(rec.raw, rec.terminator),),
            warnings=warnings,
        )
    line = Line(raw, rec.terminator)
    change = Change(f"edit #{number}", number, number, (line,), (Line(rec.raw, rec.terminator),), (new_value,), warnings=warnings)
    check_integrity(session, change, force=force)
    return change.with_anchor(session)


def _integrity(session: Editable, change: Change, *, force: bool, widen: str, defer: bool) -> Change:
    """``change`` once its tool-call integrity check passed, or with the check left to its commit (``defer``:
    :attr:`Change.unchecked`), which runs it while the new file is written and refuses as the check would."""
    if defer and not force:
        return replace(change.with_anchor(session), unchecked=widen)
    check_integrity(session, change, force=force, widen=widen)
    return change.with_anchor(session)


def plan_delete(session: Editable, first: int, last: int, *, force: bool = False, defer: bool = False) -> Change:
    _check_range(session, first, last, force)
    old = tuple(Line(r.raw, r.terminator) for r in session.doc.records(first, last))
    change = Change(
        f"delete #{first}" if first == last else f"delete #{first}-#{last}", first, last, (), old, warnings=_emptied(session, first, last)
    )
    return _integrity(session, change, force=force, widen="both", defer=defer)


def plan_truncate(session: Editable, keep: int, *, force: bool = False, defer: bool = False) -> Change:
    n = len(session)
    if keep < 0:
        raise InvalidEdit("--keep must be 0 or more")
    if keep >= n:
        return Change(f"truncate to {keep} (no change)", n + 1, n, ())
    if keep == 0 and not force:
        raise Refused(f"keeping no record would empty the session (all {plural(n, 'record')} removed)", forceable=True)
    _check_range(session, keep + 1, n, force)
    old = tuple(Line(r.raw, r.terminator) for r in session.doc.records(keep + 1, n))
    change = Change(f"truncate after #{keep}", keep + 1, n, (), old, warnings=_emptied(session, keep + 1, n))
    return _integrity(session, change, force=force, widen="down", defer=defer)


def _emptied(session: Editable, first: int, last: int) -> tuple[str, ...]:
    """The warning of a change that removes every record: the session is left empty."""
    n = len(session)
    if first > 1 or last < n:
        return ()
    return (f"this empties the session: all {plural(n, 'record')} are removed, and the agent starts again from nothing",)


def plan_compact(
    session: Editable, first: int, last: int, summary: str, *, force: bool = False, defer: bool = False
) -> Change:
    """Replace records ``first..last`` with one summary message at ``first``."""
    _check_range(session, first, last, force)
    capabilities = session.capabilities
    if not capabilities.compactable:
        raise Refused(
            f"compaction is not supported for {session.format_title}: {capabilities.not_compactable}. "
            "Use delete, or edit a message's text"
        )
    if not summary.strip():
        raise InvalidEdit("the summary is empty")
    encoded = encode(session, session.adapter.summary_value(summary))
    raw, value, warnings = encoded.raw, encoded.value, encoded.warnings
    write_refusal(session, value, force)
    old = tuple(Line(r.raw, r.terminator) for r in session.doc.records(first, last))
    term = old[0].terminator or b"\n"
    if last == len(session) and not old[-1].terminator:
        term = b""
    change = Change(f"compact #{first}-#{last}", first, last, (Line(raw, term),), old, (value,), warnings=warnings)
    return _integrity(session, change, force=force, widen="both", defer=defer)
