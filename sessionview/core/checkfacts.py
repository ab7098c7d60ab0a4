"""The per-record facts ``check`` needs, read straight from a Brute record's bytes where that is sure, without a
:class:`~sessionview.core.doc.model.View`.

``check`` keeps of each record its problems, whether it is a message, its tool calls' ids and names, its
results' call ids, and whether it is a user's own message (:func:`~sessionview.core.doc.pairing.is_user_words`,
for the rule of a user message between a call and its result): :func:`~sessionview.core.session_base.record_facts`
of its view. For a Brute record that :class:`~sessionview.core.view.fastrender.BruteRender` is sure of (it
parses as plain JSON into an object with Brute's keys, well-formed tool calls with string ids and names, no
reasoning, no compaction marker, no float, fewer than 100 containers and no duplicate key) the view is the one
:meth:`BruteAdapter.plain_view` builds and carries no problem, so the facts are read from the parsed value:
a message, its calls ``(id, name)``, for role ``tool`` one result of its ``tool_call_id``, and for role
``user`` without calls a user's own message. Every other record (one over the size cap, of another format,
any doubt) takes the view path, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from sessionview.core.doc.ahead import LinesAhead
from sessionview.core.doc.parse import parse_record
from sessionview.core.session import build_view
from sessionview.core.session_base import RecordFacts, record_facts
from sessionview.core.view.fastrender import BruteRender

if TYPE_CHECKING:
    from sessionview.core.session import JsonlSession

__all__ = ["collect", "sure_facts"]

_read = BruteRender._read  # the checks show makes before it renders a record from its bytes


def sure_facts(raw: bytes) -> tuple[tuple[tuple[str, str], ...], tuple[str | None, ...], bool] | None:
    """``(calls, result call ids, a user's own message)`` of a Brute record's bytes, or None: not sure (the
    caller builds its view)."""
    got = _read(raw, False)
    if got is None:
        return None
    role, _, calls, call_id, is_result, _ = got
    found = tuple((c[0], c[1]) for c in calls) if calls else ()
    return found, (call_id,) if is_result else (), role == "user" and not found


def _raw_of(raw: bytes, n: int, preview: Callable[[int, int], bytes]) -> Callable[[int | None], bytes]:
    """What ``JsonlSession.view`` hands ``build_view``: the record's bytes, or its first ``limit`` bytes."""
    return lambda limit: raw if limit is None else preview(n, limit)


def collect(session: "JsonlSession", facts: RecordFacts, first: int, last: int) -> None:
    """:func:`record_facts` of the views of records ``first..last`` (one pass, as ``session.stream``), from the
    bytes where :func:`sure_facts` is sure (a Brute file, not edited)."""
    doc = session.doc
    if session.adapter.name != "brute" or doc.edited or session.adapter.tree or session.adapter.updates_by_id:
        for v in session.stream(first, last):
            record_facts(facts, v)
        return
    source = doc.source
    starts = source.starts
    count = len(starts)
    ahead = LinesAhead(source)
    line = ahead.line
    cap = session.cap
    view = session.view
    size = source.size
    tools, user = facts.tools, facts.user
    adapter, linked, preview = session.adapter, session.linked, session.raw_preview
    sure = 0
    for n in range(max(first, 1), last + 1):
        i = n - 1
        length = (starts[i + 1] if i + 1 < count else size) - starts[i]
        if length > cap:
            record_facts(facts, view(n, keep=False))
            continue
        raw, term = line(i)
        got = sure_facts(raw)
        if got is None:  # the view path, as ``session.view(n, keep=False)`` (without reading the line again)
            parsed = parse_record(raw, terminated=term != b"", cap=cap)
            v = build_view(adapter, n, parsed, length, _raw_of(raw, n, preview))
            record_facts(facts, linked(v, parsed.value) if parsed.ok else v)
            continue
        sure += 1
        calls, results, own = got
        if calls or results:
            tools(n, calls, results)
        elif own:
            user(n)
    facts.count += sure
    if sure:
        facts.messages = True
