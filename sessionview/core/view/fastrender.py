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
character it would change. A call's arguments are orjson's indented JSON wherever ``tools.generic`` writes the
same (no float, no block of text, not deeply nested).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from sessionview.core.doc.pairing import Pairing
from sessionview.core.formats.brute_message import KEYS, TOOL_CALL_KEYS
from sessionview.core.text import escape_control
from sessionview.core.view import render
from sessionview.core.view.tools import LINES_CAP

__all__ = ["BruteRender", "indent", "indent_into", "replay", "safe_bytes", "text_bytes"]

MAX_CONTAINERS = 100  # more may be nested deeper than Ruby's JSON.parse allows: the view path checks

_KEYS = frozenset(KEYS)
_CALL_KEYS = frozenset(TOOL_CALL_KEYS)
_PRINTABLE = bytes(range(0x20, 0x7F))
_PRINTABLE_LINES = _PRINTABLE + b"\n\t"
# The bytes of a UTF-8 text that can belong to a character escape_control changes (C0 but newline and tab,
# DEL, C1 and soft hyphen U+0080-U+00AD, U+061C, U+200B-U+200F, U+2028-U+202E, U+2066-U+2069, U+FEFF): the
# controls, every lead byte (so that no two characters run together once the rest is deleted) and the
# continuation bytes those characters use. What is left of a text is short; a pattern finds them in it.
_KEEP = set(range(0x20)) - {0x09, 0x0A} | {0x7F} | set(range(0x80, 0xA0)) | set(range(0xA6, 0xAF)) | {0xBB, 0xBF} | set(range(0xC0, 0x100))
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_NOT_CONTROL = bytes(b for b in range(256) if not (b < 0x20 and b not in (0x09, 0x0A) or b == 0x7F))
_UNSAFE_UTF8 = re.compile(rb"\xc2[\x80-\x9f\xad]|\xd8\x9c|\xe2\x80[\x8b-\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]|\xef\xbb\xbf")
_E280 = re.compile(rb"\xe2\x80[\x8b-\x8f\xa8-\xae]")
_C2 = re.compile(rb"\xc2[\x80-\x9f\xad]")
# the same for render's JSON: DEL, C1, U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, U+2028, U+2029
_JSON_UNSAFE_UTF8 = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]")
_JSON_OPTIONS = orjson.OPT_NON_STR_KEYS
_INDENT = render.INDENT.encode()
_INDENT2 = _INDENT * 2
_NL_INDENT = b"\n" + _INDENT
_EMPTY_LINE = b"\n" + _INDENT + b"\n"
_PARAGRAPH = b"\n\n" + _INDENT

#: ``(number, ((call id, name), ...), (result's call id, ...))``: what a record tells the running pairing
Event = tuple[int, tuple[tuple[Any, str], ...], tuple[Any, ...]]


def text_bytes(s: str) -> bytes:
    """``escape_control(s).encode()``, by a byte scan where nothing needs escaping."""
    if s.isascii():
        b = s.encode("ascii")
        return b if not b.translate(None, _PRINTABLE_LINES) else escape_control(s).encode("ascii")
    try:
        b = s.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return escape_control(s).encode("utf-8")
    return escape_control(s).encode("utf-8") if _unsafe_utf8(b) else b


def _unsafe_utf8(b: bytes) -> bool:
    """Whether non-ASCII UTF-8 ``b`` may hold a character escape_control changes (no false negative): what is
    left after :data:`_DROP`, searched for each lead byte's sequences by a literal search first."""
    rest = b.translate(None, _DROP)
    if not rest:
        return False
    if rest.translate(None, _NOT_CONTROL):
        return True
    if b"\xe2" in rest:
        if b"\xe2\x80" in rest and _E280.search(rest):
            return True
        if b"\xe2\x81" in rest and _UNSAFE_UTF8.search(rest):
            return True
    if b"\xc2" in rest and _C2.search(rest):
        return True
    return b"\xd8\x9c" in rest or b"\xef\xbb\xbf" in rest


def safe_bytes(b: bytes) -> bytes:
    """``escape_control(b.decode()).encode()`` of UTF-8 bytes, by a byte scan where nothing needs escaping."""
    if b.isascii():
        return b if not b.translate(None, _PRINTABLE_LINES) else escape_control(b.decode("ascii")).encode("ascii")
    return escape_control(b.decode("utf-8")).encode("utf-8") if _unsafe_utf8(b) else b


def _line(s: str) -> bytes:
    """``escape_control(s, one_line=True).encode()``."""
    if s.isascii():
        b = s.encode("ascii")
        if not b.translate(None, _PRINTABLE):
            return b
    return escape_control(s, one_line=True).encode("utf-8")


_LINES: dict[str, bytes] = {}  # roles and tool names: few, and on every record


def _line_cached(s: str) -> bytes:
    b = _LINES.get(s)
    if b is None:
        b = _line(s)
        if len(_LINES) < 4096:
            _LINES[s] = b
    return b


def indent(b: bytes, prefix: bytes = _INDENT) -> bytes:
    """:func:`render._indent` on UTF-8 bytes (the same steps: only newlines and the ASCII prefix are touched)."""
    out = prefix + b.replace(b"\n", b"\n" + prefix)
    bare = prefix.rstrip()
    if bare == prefix:
        return out
    if b"\n\n" in b:
        empty, short = b"\n" + prefix + b"\n", b"\n" + bare + b"\n"
        out = out.replace(empty, short).replace(empty, short)
    if not b or b[:1] == b"\n":
        out = bare + out[len(prefix):]
    if b and b[-1:] == b"\n":
        out = out[: len(out) - len(prefix)] + bare
    return out


def indent_into(out: list[bytes], b: bytes) -> None:
    """Append :func:`indent` of non-empty ``b`` with the prefix :data:`render.INDENT` to ``out`` (in pieces)."""
    if b"\n" not in b:
        out.append(_INDENT)
        out.append(b)
        return
    body = None
    if b"\n\n" in b:
        # Paragraphs: each indented alone, joined by an empty line (cheaper than fixing the empty lines after),
        # unless a run of empty lines (an empty paragraph, or one that starts with a newline) is there.
        parts = b.split(b"\n\n")
        for p in parts[1:]:
            if not p or p[:1] == b"\n":
                break
        else:
            body = _PARAGRAPH.join([p.replace(b"\n", _NL_INDENT) for p in parts])
        if body is None:
            body = b.replace(b"\n", _NL_INDENT).replace(_EMPTY_LINE, b"\n\n").replace(_EMPTY_LINE, b"\n\n")
    else:
        body = b.replace(b"\n", _NL_INDENT)
    if b[-1:] == b"\n":
        body = body[: len(body) - len(_INDENT)]
    if b[:1] != b"\n":
        out.append(_INDENT)
    out.append(body)


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


_ARGS_INDENT = _INDENT2 + b"  "
_BLOCK = _INDENT2 + b"    | "
_NL_INDENT2 = b"\n" + _INDENT2
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
            return indent(text_bytes(render.arguments_text(args)), _INDENT2), keys, colons, containers
    if not blocks:
        b = orjson.dumps(args, option=_PRETTY)
        if b.count(b"\n") < LINES_CAP:
            return _INDENT2 + safe_bytes(b).replace(b"\n", _NL_INDENT2), keys, colons, containers
    elif flat:
        got = _flat_blocks(args)
        if got is not None:
            return got, keys, colons, containers
    return indent(text_bytes(render.arguments_text(args)), _INDENT2), keys, colons, containers


_KEY_BYTES: dict[str, bytes] = {}  # the keys of arguments as _flat_blocks writes them: few, on many calls


def _flat_blocks(args: dict[str, Any]) -> bytes | None:
    """What ``tools.generic`` gives for a flat object of scalars and blocks of text, indented by 8 spaces; None
    over its cap of lines."""
    lines = [_INDENT2 + b"{"]
    last = len(args) - 1
    count = 2
    for i, (k, v) in enumerate(args.items()):
        key = _KEY_BYTES.get(k)
        if key is None:
            key = safe_bytes(orjson.dumps(k))
            if len(_KEY_BYTES) < 4096:
                _KEY_BYTES[k] = key
        if type(v) is str and "\n" in v.strip("\n"):  # a block of text, without its comma
            b = text_bytes(v)
            count += 2 + b.count(b"\n")
            lines.append(_ARGS_INDENT + key + b": \xe2\x8f\x8e")  # ⏎
            lines.append(indent(b, _BLOCK))
            continue
        lines.append(_ARGS_INDENT + key + b": " + safe_bytes(orjson.dumps(v)) + (b"," if i < last else b""))
        count += 1
    if count > LINES_CAP:
        return None
    lines.append(_INDENT2 + b"}")
    return b"\n".join(lines)


_Read = tuple[str, Any, list[tuple[str, str, Any]], "str | None", bool, int]
_EMPTY = _INDENT2 + b"{}"  # the arguments of a call without any
_NULL = _INDENT2 + b"null"


class BruteRender:
    """Renderings of Brute records from their bytes (see the module). ``pairing`` is the running pairing the
    view path shares, updated as :meth:`RunningPairing.see` would; ``log``, if given, gets
    ``(number, ((call id, name), ...), (result's call id, ...))`` of each record with calls or results that
    :meth:`text` renders (what :func:`replay` needs to update another pairing the same way)."""

    def __init__(self, pairing: Pairing, log: list[Event] | None = None) -> None:
        self.pairing = pairing
        self.log = log

    @staticmethod
    def _read(raw: bytes, rendered: bool) -> _Read | None:
        """``(role, text, calls, result call id, is a tool result, length of the text)`` of a record this module is sure of; each
        call ``(id, name, arguments)``. ``rendered``: the text is :func:`text_bytes` of it and the arguments
        their rendering (see :func:`_arguments`); else both as parsed."""
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
        text: Any
        # The bytes as orjson writes the value: then they hold no duplicate key (the test parse_record makes
        # is not needed). It also leaves each string's UTF-8 in the string, which makes encoding it a copy.
        try:
            canonical = orjson.dumps(value) == raw
        except orjson.JSONEncodeError:  # pragma: no cover - what orjson reads it can write
            canonical = False
        colons = 0
        if content is None:
            text = b"" if rendered else ""
        elif type(content) is str:
            if content.startswith("[compacted:"):
                return None
            if not rendered:
                text = content
            elif content.isascii():  # text_bytes, inline for the common case
                text = content.encode("ascii")
                if text.translate(None, _PRINTABLE_LINES):
                    text = escape_control(content).encode("ascii")
            else:
                text = text_bytes(content)
        else:
            return None
        keys = len(value)
        containers = 1
        calls: list[tuple[str, str, Any]] = []
        raw_calls = value.get("tool_calls")
        if raw_calls is not None:
            if type(raw_calls) is not list:
                return None
            containers += 1
            for c in raw_calls:
                if type(c) is not dict or "id" not in c or "name" not in c or not _CALL_KEYS.issuperset(c):
                    return None
                cid, name = c["id"], c["name"]
                if type(cid) is not str or type(name) is not str:
                    return None
                keys += len(c)
                containers += 1
                if "arguments" not in c:
                    calls.append((cid, name, _EMPTY if rendered else {}))
                    continue
                args = c["arguments"]
                if args is not None and type(args) is not dict:
                    return None
                if rendered:
                    got = _arguments(args, not canonical)
                    if got is None:
                        return None
                    calls.append((cid, name, got[0]))
                    keys, colons, containers = keys + got[1], colons + got[2], containers + got[3]
                else:
                    try:
                        k2, c2, n2, _ = _counts(args)
                    except _Unsure:
                        return None
                    keys, colons, containers = keys + k2, colons + c2, containers + n2
                    calls.append((cid, name, args))
        if containers > MAX_CONTAINERS:
            return None
        if not canonical:
            found = raw.count(b":")
            if found > keys:
                colons += role.count(":") + (call_id.count(":") if call_id else 0)
                colons += sum(cid.count(":") + name.count(":") for cid, name, _ in calls)
                colons += (text.count(b":") if rendered else text.count(":")) if content else 0
                if found - colons > keys or (raw.find(b"\\u003") != -1 and _escaped_colon(raw)):
                    return None  # maybe a duplicate key: parse_record decides
        return role, text, calls, call_id, role == "tool", len(content) if content else 0

    def text(self, number: int, raw: bytes, out: list[bytes]) -> bool:
        """Append to ``out`` the pieces of what ``view_text`` gives for record ``number`` (``raw``: its bytes),
        UTF-8; False (``out`` untouched): not sure."""
        got = self._read(raw, True)
        if got is None:
            return False
        role, text, calls, call_id, is_result, length = got
        p = self.pairing
        pc = p.calls  # RunningPairing.see
        for cid, name, _ in calls:
            if cid not in pc:
                pc[cid] = number
                p.names[cid] = name
        if is_result and call_id is not None and call_id in pc:
            p.results.setdefault(call_id, []).append(number)
        if self.log is not None and (calls or is_result):
            self.log.append((number, tuple((c[0], c[1]) for c in calls), (call_id,) if is_result else ()))
        head = b"#%d %s" % (number, _line_cached(role))
        if text:
            tokens = (length + 3) // 4
            head += b"  (~%d token%s)" % (tokens, b"" if tokens == 1 else b"s")
        out.append(head)
        if is_result:
            out.append(b"\n    <- result of %s%s" % (_line(call_id or "(no id)"), result_link(p, call_id)))
        if text:
            out.append(b"\n")
            indent_into(out, text)
        for cid, name, args in calls:
            out.append(b"\n    -> tool call %s [%s]%s\n" % (_line_cached(name), _line(cid or "(no id)"), call_link(p, cid)))
            out.append(args)
        return True

    def json(self, number: int, raw: bytes) -> bytes | None:
        """What ``view_json`` gives for record ``number``, UTF-8; None: not sure."""
        got = self._read(raw, False)
        if got is None:
            return None
        role, text, calls, call_id, is_result, _ = got
        d: dict[str, Any] = {"n": number, "kind": "message", "timestamp": None, "role": role, "text": text}
        if calls:
            d["tool_calls"] = [{"id": cid, "name": name, "arguments": args} for cid, name, args in calls]
        if is_result:
            d["tool_results"] = [{"call_id": call_id, "content": text, "is_error": None}]
        try:
            b = orjson.dumps(d, option=_JSON_OPTIONS)
        except (TypeError, orjson.JSONEncodeError):
            return None
        if b"\x7f" not in b if b.isascii() else not _JSON_UNSAFE_UTF8.search(b.translate(None, _DROP)):
            return b
        return render._JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", b.decode("utf-8")).encode("utf-8")


def result_link(p: Pairing, call_id: str | None) -> bytes:
    """What follows ``<- result of ID`` in ``view_text``: the tool's name and the call's record."""
    call_at = p.call_of(call_id)
    name = p.names.get(call_id or "", "")
    link = b" from #%d" % call_at if call_at is not None else b" (no matching call)"
    return (b" " + _line(name) + link) if name else link


def call_link(p: Pairing, call_id: str) -> bytes:
    """What follows ``-> tool call NAME [ID]`` in ``view_text`` while the file is read: its result's record."""
    at = p.result_of(call_id) if call_id else None
    return b" -> result #%d" % at if at is not None else b""


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
