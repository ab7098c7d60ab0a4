"""The searchable text of each record, through the format adapters (the same views the app shows).

A record's text is its message text, reasoning, compaction summary, each tool call's name and arguments
and each tool result's content. A record that is not valid JSON, or not UTF-8, is indexed by what can be
read of it: bytes that are not UTF-8 become U+FFFD, and when the rest still parses its fields are indexed,
otherwise its raw text is. A field longer than :data:`PART_CAP` characters is indexed by its first
:data:`PART_CAP` (the huge base64 and log dumps of tool results). Nothing here raises on hostile input.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Iterator

import orjson

from sessionview.core.doc.model import Kind, View
from sessionview.core.doc.parse import parse_record
from sessionview.core.formats.base import Adapter
from sessionview.core.index.model import Doc

PART_CAP = 256 * 1024
LEAF_CAP = 64 * 1024  # text taken from the string leaves of a record of no known kind
BIG_LINE = 1 << 20  # a longer line is parsed by the standard library (see _loads)


def epoch_of(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if when.tzinfo is None:
        from datetime import timezone

        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def _leaves(value: Any, limit: int = LEAF_CAP) -> str:
    out: list[str] = []
    size = 0
    stack = [value]
    while stack and size < limit:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
            size += len(v)
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
    return "\n".join(out)[:limit]


def _args_text(call: Any) -> str:
    if call.raw_arguments is not None:
        return call.raw_arguments
    args = call.arguments
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    try:
        return orjson.dumps(args).decode()
    except TypeError:
        return _leaves(args)


def view_doc(view: View, offset: int, length: int, names: dict[str, str]) -> Doc:
    """The doc of one view. ``names`` maps call ids to tool names (grows with this record's calls)."""
    parts: list[str] = []
    if view.text:
        parts.append(view.text[:PART_CAP])
    if view.reasoning:
        parts.append(view.reasoning[:PART_CAP])
    tools: list[str] = []
    calls: list[tuple[str, str]] = []
    for c in view.tool_calls:
        name = c.name if isinstance(c.name, str) else str(c.name)
        tools.append(name)
        parts.append(name)
        parts.append(_args_text(c)[:PART_CAP])
        if c.id:
            names[c.id] = name
            calls.append((c.id, name))
    for r in view.tool_results:
        name = r.name or names.get(r.call_id or "", "")
        if name:
            tools.append(name)
        content = r.content if isinstance(r.content, str) else str(r.content)
        if content != view.text:  # a tool message's text is often its result
            parts.append(content[:PART_CAP])
    if view.kind in (Kind.UNKNOWN, Kind.META) and not parts and view.value is not None:
        parts.append(_leaves(view.value))
    if view.kind is Kind.INVALID and view.raw is not None:
        parts.append(view.raw[:PART_CAP].decode("utf-8", "replace"))
    role = view.role or (view.label if view.kind is not Kind.MESSAGE else None) or view.kind.value
    tool = ",".join(dict.fromkeys(t.replace(",", " ") for t in tools if t))
    return Doc(view.number, offset, length, str(role), tool, view.timestamp, epoch_of(view.timestamp), "\n".join(p for p in parts if p), tuple(calls))


def _safe_view(adapter: Adapter, n: int, value: Any) -> View:
    try:
        view = adapter.view(n, value)
    except Exception:  # an adapter must never take the indexer down
        return View(n, Kind.UNKNOWN, label="unreadable", value=value)
    if view.timestamp is None:
        try:
            view.timestamp = adapter.timestamp_of(value)
        except Exception:
            view.timestamp = None
    return view


def _loads(raw: bytes, terminated: bool) -> tuple[Any, bool, bytes | None]:
    """``(value, ok, raw_text)``: the parsed value, or what can be read when it does not parse. A line over
    :data:`BIG_LINE` bytes is parsed by the standard library: orjson needs about 16 times the line's size
    while it parses a long non-ASCII string (80 MB for a 5 MB tool result), ``json`` a third of that."""
    if len(raw) > BIG_LINE:
        try:
            return json.loads(raw), True, None
        except (ValueError, RecursionError):
            pass
    try:
        return orjson.loads(raw), True, None
    except orjson.JSONDecodeError:
        pass
    parsed = parse_record(raw, terminated=terminated)
    if parsed.ok:
        return parsed.value, True, None
    if not raw.strip():
        return None, False, b""
    text = raw.decode("utf-8", "replace")
    try:
        return orjson.loads(text), True, None  # only the bytes that were not UTF-8 were wrong
    except orjson.JSONDecodeError:
        return None, False, raw


def _brute_doc(adapter: Adapter, n: int, value: Any, offset: int, length: int, names: dict[str, str]) -> Doc | None:
    """The doc :func:`view_doc` makes of Brute's view of ``value``, straight from the parsed dict (no view,
    no ``brute.load``); None for the values it leaves to the adapter (reasoning, block content, odd shapes).
    A test checks it gives the same docs as the adapter path over every fixture."""
    if type(value) is not dict:
        return None
    role = value.get("role")
    content = value.get("content")
    raw_calls = value.get("tool_calls")
    if type(role) is not str or value.get("reasoning") is not None or not (content is None or type(content) is str) \
            or not (raw_calls is None or type(raw_calls) is list):
        return None
    text = content or ""
    parts: list[str] = [text[:PART_CAP]] if text else []
    tools: list[str] = []
    calls: list[tuple[str, str]] = []
    if raw_calls:
        for c in raw_calls:
            if type(c) is not dict:
                continue
            cid = c.get("id")
            name = c.get("name", "")
            name = name if type(name) is str else str(name)
            args = c.get("arguments", {})
            if args is None:
                args_text = ""
            elif type(args) is str:
                args_text = args
            else:
                try:
                    args_text = orjson.dumps(args).decode()
                except TypeError:
                    args_text = _leaves(args)
            tools.append(name)
            parts.append(name)
            parts.append(args_text[:PART_CAP])
            if cid is not None and type(cid) is not str:
                cid = str(cid)
            if cid:
                names[cid] = name
                calls.append((cid, name))
    if role == "tool":
        cid = value.get("tool_call_id")
        if cid is not None and type(cid) is not str:
            cid = str(cid)
        name = names.get(cid or "", "")
        if name:
            tools.append(name)
    stamp = adapter.timestamp_of(value)
    tool = ",".join(dict.fromkeys(t.replace(",", " ") for t in tools if t)) if tools else ""
    return Doc(n, offset, length, role, tool, stamp, epoch_of(stamp), "\n".join(p for p in parts if p), tuple(calls))


FAST = {"brute": _brute_doc}  # format name -> a direct extractor (see :func:`_brute_doc`)


def value_doc(adapter: Adapter, n: int, value: Any, offset: int, length: int, names: dict[str, str]) -> Doc:
    """The doc of parsed record ``value``: by the format's direct extractor where it has one and takes the
    value, else through the adapter's view."""
    fast = FAST.get(adapter.name)
    if fast is not None:
        try:
            doc = fast(adapter, n, value, offset, length, names)
        except Exception:
            doc = None
        if doc is not None:
            return doc
    return view_doc(_safe_view(adapter, n, value), offset, length, names)


def line_doc(adapter: Adapter, n: int, raw: bytes, offset: int, names: dict[str, str], terminated: bool = True,
             fast: bool = True) -> Doc | None:
    """The doc of JSONL record ``n`` (``raw`` without its newline, CR or BOM); None for a blank line.
    ``fast=False`` always goes through the adapter's view (the reference the direct extractors match)."""
    value, ok, rest = _loads(raw, terminated)
    length = len(raw)
    if ok:
        if fast:
            return value_doc(adapter, n, value, offset, length, names)
        return view_doc(_safe_view(adapter, n, value), offset, length, names)
    if rest == b"":
        return None
    view = View(n, Kind.INVALID, label="invalid", raw=rest)
    return view_doc(view, offset, length, names)


def line_docs(adapter: Adapter, data: bytes, start: int, first: int, names: dict[str, str], fast: bool = True) -> Iterator[Doc]:
    """Docs of the complete lines in ``data`` (read from byte ``start``; its first line is #``first``)."""
    pos = 0
    n = first
    size = len(data)
    while pos < size:
        nl = data.find(b"\n", pos)
        stop = size if nl == -1 else nl
        raw = data[pos:stop]
        begin = pos
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if start + pos == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
            begin += 3
        doc = line_doc(adapter, n, raw, start + begin, names, terminated=nl != -1, fast=fast)
        if doc is not None:
            yield doc
        n += 1
        pos = stop + 1
