"""The per-record facts ``check`` needs, read straight from a Brute record's parsed value where that is sure,
without a :class:`~sessionview.core.doc.model.View`.

``check`` keeps of each record its problems, whether it is a message, its tool calls' ids and names, its
results' call ids, and whether it is a user's own message (:func:`~sessionview.core.doc.pairing.is_user_words`,
for the rule of a user message between a call and its result): :func:`~sessionview.core.session_base.record_facts`
of its view. :func:`sure_facts` reads them from a record's bytes when its view is sure to be the one
:meth:`BruteAdapter.plain_view` builds, without a problem:

* :func:`~sessionview.core.doc.parse.parse_record` would find it OK without a note: orjson parses it, no float
  (a float sends ``parse_record`` to its big-integer test), and no duplicate key by ``parse_record``'s own test
  (:func:`~sessionview.core.doc.parse._quote_duplicates` over the strings :func:`~sessionview.core.doc.parse._shape`
  counts);
* at most 100 containers (so no warning of nesting deeper than Ruby's limit);
* the shape ``plain_view`` takes, narrowed: an object with Brute's keys only, a string role, a string or null
  content that is no compaction marker, no reasoning, tool calls absent, null or a list of objects with Brute's
  keys only, a string ``id`` and ``name`` and ``arguments`` absent, null or an object, ``tool_call_id`` a string
  or null.

Then the view is a message, its calls ``(id, name)`` are the calls', a ``tool`` record has one result of its
``tool_call_id``, and a ``user`` record without calls is a user's own message. Every other record (one over the
size cap, of another format, any doubt) takes the view path, as before. (``show``'s
:class:`~sessionview.core.view.fastrender.BruteRender` makes a similar decision, but by comparing the bytes with
``orjson.dumps`` of the value: for ``check`` that costs as much CPU and 18 MB more peak memory.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import orjson

from sessionview.core.doc.ahead import LinesAhead
from sessionview.core.doc.parse import _quote_duplicates, _shape, parse_record
from sessionview.core.formats.brute_message import KEYS, TOOL_CALL_KEYS
from sessionview.core.session import build_view
from sessionview.core.session_base import RecordFacts, record_facts

if TYPE_CHECKING:
    from sessionview.core.session import JsonlSession

__all__ = ["collect", "sure_facts"]

MAX_CONTAINERS = 100  # more may be nested deeper than Ruby's JSON.parse allows: the view path warns

_KEYS = frozenset(KEYS)
_CALL_KEYS = frozenset(TOOL_CALL_KEYS)
_loads = orjson.loads
_DecodeError = orjson.JSONDecodeError

Facts = tuple[tuple[tuple[str, str], ...], tuple["str | None", ...], bool]


def sure_facts(raw: bytes) -> Facts | None:
    """``(calls, result call ids, a user's own message)`` of a Brute record's bytes (within the size cap), or
    None: not sure (the caller builds its view)."""
    try:
        value = _loads(raw)
    except _DecodeError:
        return None
    if type(value) is not dict or not _KEYS.issuperset(value):
        return None
    role = value.get("role")
    if type(role) is not str or value.get("reasoning") is not None:
        return None
    content = value.get("content")
    if content is not None and (type(content) is not str or content.startswith("[compacted:")):
        return None
    calls: tuple[tuple[str, str], ...] = ()
    raw_calls = value.get("tool_calls")
    if raw_calls is not None:
        if type(raw_calls) is not list:
            return None
        found = []
        for c in raw_calls:
            if type(c) is not dict or not _CALL_KEYS.issuperset(c):
                return None
            cid, name, args = c.get("id"), c.get("name"), c.get("arguments")
            if type(cid) is not str or type(name) is not str or (args is not None and type(args) is not dict):
                return None
            found.append((cid, name))
        calls = tuple(found)
    results: tuple[str | None, ...] = ()
    if role == "tool":
        rid = value.get("tool_call_id")
        if rid is not None and type(rid) is not str:
            return None
        results = (rid,)
    strings, floats, containers = _shape(value)
    if floats or containers > MAX_CONTAINERS or _quote_duplicates(raw, value, strings):
        return None
    return calls, results, role == "user" and not calls


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
