"""Drop a tool result's content: the result stays (its ``tool_call_id`` too, so the call keeps its answer)
but its content becomes Brute's marker, ``[compacted:tool_results] Result dropped to free context. Call
<tool> again if you still need it.`` This is what Brute's own compaction writes, and what ``aichat trim``
does in batch. Other formats get the same words in their own result field (the adapter says where:
:meth:`~sessionview.core.formats.base.Adapter.drop_results`), or a refusal that says why.
"""

from __future__ import annotations

from sessionview.core import rubyjson
from sessionview.core.doc.document import Line
from sessionview.core.edit.change import Change, Editable
from sessionview.core.edit.encode import encode, write_refusal
from sessionview.core.edit.integrity import check_integrity
from sessionview.core.errors import InvalidEdit, Refused

MARK = "[compacted:tool_results]"


def marker_text(tool: str | None) -> str:
    """Brute's words for a dropped result of ``tool``."""
    return f"{MARK} Result dropped to free context. Call {tool or 'the tool'} again if you still need it."


def is_dropped(content: str) -> bool:
    return content.lstrip().startswith(MARK)


def plan_drop_results(session: Editable, first: int, last: int | None = None, *, force: bool = False) -> Change:
    """Replace the content of every tool result in records ``first..last`` by the marker; records of the
    range that hold no result (or only dropped ones) keep their bytes. Refused when none is left to drop."""
    last = first if last is None else last
    n = len(session)
    if not (1 <= first <= last <= n):
        raise InvalidEdit(f"range {first}:{last} is outside 1:{n}")
    if session.read_only_reason:
        raise Refused(f"this session is read-only: {session.read_only_reason}")
    if not session.capabilities.editable:
        raise Refused(f"editing {session.format_title} files is not supported")
    names = session.pairing().names
    old: list[Line] = []
    new: list[Line] = []
    values: list[object] = []
    warnings: list[str] = []
    dropped = 0
    reasons: list[str] = []
    for number in range(first, last + 1):
        rec = session.doc.record(number)
        line = Line(rec.raw, rec.terminator)
        old.append(line)
        view = session.view(number)
        live = [r for r in view.tool_results if not is_dropped(r.content or "")]
        if not live:
            if view.tool_results:
                reasons.append(f"#{number}: already dropped")
            new.append(line)
            values.append(None)
            continue
        if rec.partial and not force:
            raise Refused(f"record #{number} is a partial last line that may still be being written; use --force")
        try:
            original = rubyjson.loads_preserving(rec.raw)
        except Exception as exc:
            raise Refused(f"record #{number} is not valid JSON ({exc})") from None

        on_result: dict[str | None, str | None] = {r.call_id: r.name for r in view.tool_results if r.name}

        def marker(call_id: str | None, on_result: dict[str | None, str | None] = on_result) -> str:
            return marker_text(names.get(call_id or "") or on_result.get(call_id))

        try:
            value = session.adapter.drop_results(original, view, marker)
        except Refused as exc:
            raise Refused(f"record #{number}: {exc}") from None
        encoded = encode(session, value)
        write_refusal(session, encoded.value, force)
        warnings.extend(encoded.warnings)
        new.append(Line(encoded.raw, rec.terminator))
        values.append(encoded.value)
        dropped += 1
    if not dropped:
        what = f"#{first}" if first == last else f"#{first}-#{last}"
        why = "; ".join(reasons) if reasons else "no tool result there"
        raise Refused(f"nothing to drop in {what}: {why}")
    where = f"#{first}" if first == last else f"#{first}-#{last}"
    count = f" ({dropped} results)" if dropped > 1 else ""
    change = Change(f"drop the tool result of {where}{count}", first, last, tuple(new), tuple(old), tuple(values), warnings=tuple(warnings))
    check_integrity(session, change, force=force)
    return change.with_anchor(session)
