"""Brute records rendered straight from their bytes, for ``sessionview show`` of a big file: the bytes that
:func:`~sessionview.core.view.render.view_text` (or ``view_json``) gives for the record's view, encoded as UTF-8,
without building the view.

:class:`BruteRender` takes a record's bytes and gives its rendering, or says it is not sure (``text`` returns
False, ``json`` None): then the caller builds the view (:func:`~sessionview.core.session.build_view`) and renders that. It is sure only
of a record that parses as plain JSON into an object with Brute's keys whose view would carry no problem: the
same checks as :func:`~sessionview.core.doc.parse.parse_record` (no duplicate keys, no float, nesting far below
the limits) and Brute's loader (``Brute::Message.new`` would not raise), done while the record is walked once:

* ``role`` a non-empty string; ``content`` a string (not a compaction marker) or null; ``reasoning`` absent or
  null; ``tool_call_id`` a string or null;
* ``tool_calls`` absent, null or a list of objects, each with a string ``id`` and ``name`` and ``arguments``
  absent, null or an object;
* no float anywhere (a big integer becomes one), fewer than 100 containers, and no duplicate key: the bytes
  are what ``orjson.dumps`` writes for the value, or their colons are accounted for by the keys and the strings
  (the test :func:`parse_record` makes before its exact one).

This is a second validation next to ``parse_record``, kept here on purpose: it decides only "sure" or "not
sure", and every "sure" is a case where ``parse_record`` finds the record OK without a note.

Text is escaped by :func:`~sessionview.core.text.escape_control` only where a byte scan of its UTF-8 finds a
character it would change, and indented on its bytes (both in :mod:`~sessionview.core.view.fastbytes`). A call's
arguments are orjson's indented JSON wherever ``tools.generic`` writes the same (no float, no block of text,
not deeply nested). :meth:`BruteRender.text` runs for every record ``show`` prints: it checks and renders in one
pass; :meth:`BruteRender.json` takes the same checks from ``_read``.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from sessionview.core.doc.pairing import Pairing
from sessionview.core.formats.brute_message import KEYS, TOOL_CALL_KEYS
from sessionview.core.text import escape_control
from sessionview.core.view import render
from sessionview.core.view.fastbytes import (
    DROP, INDENT2, PRINTABLE_LINES, indent, indent_into, line, line_cached, safe_bytes, text_bytes,
)
from sessionview.core.view.tools import LINES_CAP

__all__ = ["BruteRender", "indent", "indent_into", "replay", "result_link", "safe_bytes", "text_bytes"]

MAX_CONTAINERS = 100  # more may be nested deeper than Ruby's JSON.parse allows: the view path checks

_KEYS = frozenset(KEYS)
_CALL_KEYS = frozenset(TOOL_CALL_KEYS)


def _call_head(c: Any) -> tuple[str, str] | None:
    """``(id, name)`` of a tool call both paths (:meth:`BruteRender.text`, :meth:`BruteRender._read`) are sure
    of: a dict of Brute's call keys with a string id and name; None otherwise."""
    if type(c) is not dict or "id" not in c or "name" not in c or not _CALL_KEYS.issuperset(c):
        return None
    cid, name = c["id"], c["name"]
    return (cid, name) if type(cid) is str and type(name) is str else None


# the same for render's JSON: DEL, C1, U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, U+2028, U+2029
_JSON_UNSAFE_UTF8 = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]")
_JSON_OPTIONS = orjson.OPT_NON_STR_KEYS

#: ``(number, ((call id, name), ...), (result's call id, ...))``: what a record tells the running pairing
Event = tuple[int, tuple[tuple[Any, str], ...], tuple[Any, ...]]


class _Unsure(Exception):
    """The record is not one this module renders: the caller takes the view path."""


def _escaped_colon(raw: bytes) -> bool:
    """Whether ``raw`` holds ``\\u003a`` or ``\\u003A`` (by one search for the common part)."""
    i = raw.find(b"\\u003")
    while i != -1:
        if raw[i + 5:i + 6] in (b"a", b"A"):
            return True
        i = raw.find(b"\\u003", i + 5)
    return False


def _counts(v: Any) -> tuple[int, int, int, bool]:
    """Keys, colons in string values and containers of a parsed value (as the key-and-colon walk the parse once used), and whether a
    string in it is a block of text for ``tools.generic`` (a newline inside); raises :class:`_Unsure` on a float."""
    keys = colons = containers = 0
    blocks = False
    stack = [v]
    pop, push = stack.pop, stack.extend
    while stack:
        x = pop()
        t = type(x)
        if t is str:
            colons += x.count(":")
            if not blocks and "\n" in x and "\n" in x.strip("\n"):
                blocks = True
        elif t is dict:
            keys += len(x)
            containers += 1
            push(x.values())
        elif t is list:
            containers += 1
            push(x)
        elif t is float:
            raise _Unsure
    return keys, colons, containers, blocks


_ARGS_INDENT = INDENT2 + b"  "
_BLOCK = INDENT2 + b"    | "
_NL_INDENT2 = b"\n" + INDENT2
_PRETTY = orjson.OPT_INDENT_2
MAX_ARGS_CONTAINERS = 64  # tools.generic shows what is nested deeper than 64 as a note: not done here


def _arguments(args: Any, colons_needed: bool = True) -> tuple[bytes, int, int, int] | None:
    """``indent(text_bytes(render.arguments_text(args)), 8 spaces)`` with the keys, string colons (0 of a flat
    object unless ``colons_needed``) and containers of ``args`` (a parsed object, or None), or None on a float. Without a block of text (a string
    with a newline inside), ``tools.generic`` writes what orjson's indented JSON is (the same escapes, the same
    layout); a flat object with blocks is rendered here; anything else by ``render``."""
    if args is None:
        return _NULL, 0, 0, 0
    flat = True
    colons = 0
    blocks = False
    for v in args.values():
        t = type(v)
        if t is str:
            if colons_needed:
                colons += v.count(":")
            if not blocks and "\n" in v and "\n" in v.strip("\n"):
                blocks = True
        elif t is dict or t is list:
            flat = False
            break
        elif t is float:
            return None
    if flat:
        keys, containers = len(args), 1
    else:
        try:
            keys, colons, containers, blocks = _counts(args)
        except _Unsure:
            return None
        if containers > MAX_ARGS_CONTAINERS:
            return indent(text_bytes(render.arguments_text(args)), INDENT2), keys, colons, containers
    if not blocks:
        b = orjson.dumps(args, option=_PRETTY)
        if len(b) < 2 * LINES_CAP or b.count(b"\n") < LINES_CAP:  # a line of it is never empty
            return INDENT2 + safe_bytes(b).replace(b"\n", _NL_INDENT2), keys, colons, containers
    elif flat:
        got = _flat_blocks(args)
        if got is not None:
            return got, keys, colons, containers
    return indent(text_bytes(render.arguments_text(args)), INDENT2), keys, colons, containers


_KEY_BYTES: dict[str, bytes] = {}  # the keys of arguments as _flat_blocks writes them: few, on many calls


def _flat_blocks(args: dict[str, Any]) -> bytes | None:
    """What ``tools.generic`` gives for a flat object of scalars and blocks of text, indented by 8 spaces; None
    over its cap of lines."""
    lines = [INDENT2 + b"{"]
    last = len(args) - 1
    count = 2  # the lines, or more (a block's bytes: counted only if that passes the cap)
    texts: list[bytes] = []
    for i, (k, v) in enumerate(args.items()):
        key = _KEY_BYTES.get(k)
        if key is None:
            key = safe_bytes(orjson.dumps(k))
            if len(_KEY_BYTES) < 4096:
                _KEY_BYTES[k] = key
        if type(v) is str and "\n" in v.strip("\n"):  # a block of text, without its comma
            b = text_bytes(v)
            count += 2 + len(b)
            texts.append(b)
            lines.append(_ARGS_INDENT + key + b": \xe2\x8f\x8e")  # ⏎
            lines.append(indent(b, _BLOCK))
            continue
        lines.append(_ARGS_INDENT + key + b": " + safe_bytes(orjson.dumps(v)) + (b"," if i < last else b""))
        count += 1
    if count > LINES_CAP and count - sum(len(b) - b.count(b"\n") for b in texts) > LINES_CAP:
        return None
    lines.append(INDENT2 + b"}")
    return b"\n".join(lines)


_Read = tuple[str, Any, list[tuple[str, str, Any]], "str | None", bool]
_EMPTY = INDENT2 + b"{}"  # the arguments of a call without any
_NULL = INDENT2 + b"null"
_loads, _dumps, _DecodeError, _EncodeError = orjson.loads, orjson.dumps, orjson.JSONDecodeError, orjson.JSONEncodeError


class BruteRender:
    """Renderings of Brute records from their bytes (see the module). ``pairing`` is the running pairing the
    view path shares, updated as :meth:`RunningPairing.see` would; ``log``, if given, gets
    ``(number, ((call id, name), ...), (result's call id, ...))`` of each record with calls or results that
    :meth:`text` renders (what :func:`replay` needs to update another pairing the same way)."""

    def __init__(self, pairing: Pairing, log: list[Event] | None = None) -> None:
        self.pairing = pairing
        self.log = log

    def text(self, number: int, raw: bytes, out: list[bytes]) -> bool:
        """Append to ``out`` the pieces of what ``view_text`` gives for record ``number`` (``raw``: its bytes),
        UTF-8; False (``out`` untouched): not sure. The checks of :meth:`_read`, done as the record is rendered
        (one pass, no intermediate tuple: this runs for every record of ``show``)."""
        try:
            value = _loads(raw)
        except _DecodeError:
            return False
        if type(value) is not dict or not _KEYS.issuperset(value):
            return False
        get = value.get
        role = get("role")
        content = get("content")
        call_id = get("tool_call_id")
        if type(role) is not str or not role or get("reasoning") is not None:
            return False
        if call_id is not None and type(call_id) is not str:
            return False
        # The bytes as orjson writes the value: then they hold no duplicate key (the test parse_record makes
        # is not needed). It also leaves each string's UTF-8 in the string, which makes encoding it a copy.
        try:
            canonical = _dumps(value) == raw
        except _EncodeError:  # pragma: no cover - what orjson reads it can write
            canonical = False
        if content is None:
            text = b""
        elif type(content) is str:
            if content[:1] == "[" and content.startswith("[compacted:"):  # startswith parses its arguments slowly
                return False
            length = len(content)
            if content.isascii():  # text_bytes, inline for the common case
                text = content.encode("ascii")
                if text.translate(None, PRINTABLE_LINES):
                    text = escape_control(content).encode("ascii")
            else:
                text = text_bytes(content)
        else:
            return False
        raw_calls = get("tool_calls")
        calls: list[tuple[str, str, bytes]] | tuple[()] = ()
        if raw_calls is not None:
            got = self._calls(raw_calls, raw, canonical, len(value), role, call_id, text)
            if got is None:
                return False
            calls = got
        elif not canonical and not _colons_ok(raw, len(value), 0, role, call_id, text, ()):
            return False
        p = self.pairing
        is_result = role == "tool"
        if calls:
            pc = p.calls  # RunningPairing.see
            for cid, name, _ in calls:
                if cid not in pc:
                    pc[cid] = number
                    p.names[cid] = name
        if is_result and call_id is not None and call_id in p.calls:
            p.results.setdefault(call_id, []).append(number)
        if self.log is not None and (calls or is_result):
            self.log.append((number, tuple((c[0], c[1]) for c in calls), (call_id,) if is_result else ()))
        if text:
            tokens = (length + 3) // 4
            out.append(b"#%d %s  (~%d token%s)" % (number, line_cached(role), tokens, b"" if tokens == 1 else b"s"))
        else:
            out.append(b"#%d %s" % (number, line_cached(role)))
        if is_result:
            out.append(b"\n    <- result of %s%s" % (line(call_id or "(no id)"), result_link(p, call_id)))
        if text:
            out.append(b"\n")
            indent_into(out, text)
        for cid, name, args in calls:
            at = p.result_of(cid) if cid else None  # what follows in view_text while the file is read: its result's record
            out.append(b"\n    -> tool call %s [%s]%s\n" % (
                line_cached(name), line(cid or "(no id)"), b" -> result #%d" % at if at is not None else b""))
            out.append(args)
        return True

    @staticmethod
    def _calls(
        raw_calls: Any, raw: bytes, canonical: bool, keys: int, role: str, call_id: str | None, text: bytes,
    ) -> list[tuple[str, str, bytes]] | None:
        """The calls of a record :meth:`text` renders, each ``(id, name, rendered arguments)``; None: not sure."""
        if type(raw_calls) is not list:
            return None
        containers = 2
        colons = 0
        calls: list[tuple[str, str, bytes]] = []
        for c in raw_calls:
            head = _call_head(c)
            if head is None:
                return None
            cid, name = head
            keys += len(c)
            containers += 1
            if "arguments" not in c:
                calls.append((cid, name, _EMPTY))
                continue
            args = c["arguments"]
            if args is not None and type(args) is not dict:
                return None
            got = _arguments(args, not canonical)
            if got is None:
                return None
            calls.append((cid, name, got[0]))
            keys, colons, containers = keys + got[1], colons + got[2], containers + got[3]
        if containers > MAX_CONTAINERS:
            return None
        if not canonical and not _colons_ok(raw, keys, colons, role, call_id, text, calls):
            return None
        return calls

    @staticmethod
    def _read(raw: bytes) -> _Read | None:
        """``(role, text, calls, result call id, is a tool result)`` of a record this module is sure of, as
        parsed; each call ``(id, name, arguments)`` (the checks of :meth:`text`)."""
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        if type(value) is not dict or not _KEYS.issuperset(value):
            return None
        role = value.get("role")
        content = value.get("content")
        call_id = value.get("tool_call_id")
        if type(role) is not str or not role or value.get("reasoning") is not None:
            return None
        if call_id is not None and type(call_id) is not str:
            return None
        try:
            canonical = orjson.dumps(value) == raw
        except orjson.JSONEncodeError:  # pragma: no cover - what orjson reads it can write
            canonical = False
        if content is None:
            text = ""
        elif type(content) is str:
            if content.startswith("[compacted:"):
                return None
            text = content
        else:
            return None
        keys = len(value)
        containers = 1
        colons = 0
        calls: list[tuple[str, str, Any]] = []
        raw_calls = value.get("tool_calls")
        if raw_calls is not None:
            if type(raw_calls) is not list:
                return None
            containers += 1
            for c in raw_calls:
                head = _call_head(c)
                if head is None:
                    return None
                cid, name = head
                keys += len(c)
                containers += 1
                if "arguments" not in c:
                    calls.append((cid, name, {}))
                    continue
                args = c["arguments"]
                if args is not None and type(args) is not dict:
                    return None
                try:
                    k2, c2, n2, _ = _counts(args)
                except _Unsure:
                    return None
                keys, colons, containers = keys + k2, colons + c2, containers + n2
                calls.append((cid, name, args))
        if containers > MAX_CONTAINERS:
            return None
        if not canonical and not _colons_ok(raw, keys, colons, role, call_id, text, calls):
            return None
        return role, text, calls, call_id, role == "tool"

    def json(self, number: int, raw: bytes) -> bytes | None:
        """What ``view_json`` gives for record ``number``, UTF-8; None: not sure."""
        got = self._read(raw)
        if got is None:
            return None
        role, text, calls, call_id, is_result = got
        d: dict[str, Any] = {"n": number, "kind": "message", "timestamp": None, "role": role, "text": text}
        if calls:
            d["tool_calls"] = [{"id": cid, "name": name, "arguments": args} for cid, name, args in calls]
        if is_result:
            d["tool_results"] = [{"call_id": call_id, "content": text, "is_error": None}]
        try:
            b = orjson.dumps(d, option=_JSON_OPTIONS)
        except (TypeError, orjson.JSONEncodeError):
            return None
        if b.find(b"\x7f") == -1 if b.isascii() else not _JSON_UNSAFE_UTF8.search(b.translate(None, DROP)):
            return b
        return render._JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", b.decode("utf-8")).encode("utf-8")


def _colons_ok(
    raw: bytes, keys: int, colons: int, role: str, call_id: str | None, text: Any, calls: Any,
) -> bool:
    """For bytes that are not orjson's: whether their colons are accounted for by the ``keys`` and the colons
    of the strings (``colons`` of the arguments', and the role's, ids', names' and text's counted here), with
    no escaped colon (``\\u003a``) either; False: maybe a duplicate key, which ``parse_record`` decides."""
    found = raw.count(b":")
    if found <= keys:
        return True
    colons += role.count(":") + (call_id.count(":") if call_id else 0)
    colons += sum(cid.count(":") + name.count(":") for cid, name, _ in calls)
    colons += text.count(b":" if type(text) is bytes else ":")
    return not (found - colons > keys or (raw.find(b"\\u003") != -1 and _escaped_colon(raw)))


def result_link(p: Pairing, call_id: str | None) -> bytes:
    """What follows ``<- result of ID`` in ``view_text``: the tool's name and the call's record."""
    call_at = p.call_of(call_id)
    name = p.names.get(call_id or "", "")
    link = b" from #%d" % call_at if call_at is not None else b" (no matching call)"
    return (b" " + line(name) + link) if name else link


def replay(p: Pairing, log: list[Event]) -> None:
    """Update ``p`` with a log of :class:`BruteRender` (or of views: the same tuples), as ``see`` would have."""
    pc, names, results = p.calls, p.names, p.results
    for number, calls, call_ids in log:
        for cid, name in calls:
            if cid is not None and cid not in pc:
                pc[cid] = number
                names[cid] = name
        for call_id in call_ids:
            if call_id is not None and call_id in pc:
                results.setdefault(call_id, []).append(number)
