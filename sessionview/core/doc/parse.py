"""Classify and parse one record's bytes, for display only. Never raises.

orjson is tried first. If it fails, or would lose information (an integer beyond 64 bits), the stdlib
parser is used, which accepts NaN, lone surrogates and big integers exactly. Nesting depth is checked with
a byte scan before either parser runs, and records over a size cap are never parsed.
"""

from __future__ import annotations

import json
import re
from enum import Enum
from typing import Any

import orjson

from sessionview.core.values import Value

DEFAULT_CAP = 16 * 1024 * 1024
MAX_DEPTH = 512  # deeper than this is "too deep": neither parser is asked to recurse into it
PREVIEW = 200


class Status(str, Enum):
    OK = "ok"
    BLANK = "blank"
    INVALID_JSON = "invalid JSON"
    NOT_UTF8 = "not UTF-8"
    OVERSIZED = "oversized"
    TOO_DEEP = "too deep"
    DUPLICATE_KEYS = "duplicate keys"
    PARTIAL = "partial"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value

    @property
    def parsed(self) -> bool:
        """Whether a value is available for this status."""
        return self in (Status.OK, Status.DUPLICATE_KEYS)


class Parsed(Value):  # not frozen: a frozen one's ``__init__`` costs more (every record has one)
    __slots__ = ("status", "value", "error", "notes", "size", "depth_bound")
    _uncompared = ("depth_bound",)
    status: Status
    value: Any
    error: str  # the parser's message, or why the record was not parsed
    notes: tuple[str, ...]  # e.g. "NaN", "integer beyond 64 bits", "lone surrogate"
    size: int
    #: an upper bound on the nesting depth (the containers of the value, or the brackets of the bytes; -1: unknown)
    depth_bound: int

    def __init__(self, status: Status, value: Any = None, error: str = "", notes: tuple[str, ...] = (), size: int = 0, depth_bound: int = -1) -> None:
        self.status = status
        self.value = value
        self.error = error
        self.notes = notes
        self.size = size
        self.depth_bound = depth_bound

    @property
    def ok(self) -> bool:
        return self.status.parsed


_BIG_DIGITS = re.compile(rb"\d{19}")
_NON_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
_WHITESPACE = b" \t\n\r\x0b\x0c"  # what ``bytes.strip`` strips


def _outside_strings(raw: bytes) -> list[bytes]:
    """The parts of ``raw`` outside JSON strings (escaped backslashes and quotes removed first)."""
    s = raw.replace(b"\\\\", b"").replace(b'\\"', b"") if raw.find(b"\\") != -1 else raw
    return s.split(b'"')[::2]


def nesting_depth(raw: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings, by a byte scan (no recursion)."""
    brackets = b"".join(_outside_strings(raw)).translate(None, _NON_BRACKET)
    depth = best = 0
    for b in brackets:
        if b == 0x5B or b == 0x7B:
            depth += 1
            if depth > best:
                best = depth
        else:
            depth -= 1
    return best



def _shape(value: Any) -> tuple[int, bool, int]:
    """One pass over a parsed value, looking at types only: its strings (keys and string values), whether it
    holds a float, and its containers.

    The strings decide whether the bytes repeat a key (:func:`_quote_duplicates`); the containers bound the
    nesting depth."""
    t = type(value)
    if t is not dict and t is not list:
        return int(t is str), t is float, 0
    strings = containers = 0
    floats = False
    stack = [value]
    pop = stack.pop
    push = stack.append
    while stack:
        v = pop()
        containers += 1
        if type(v) is dict:
            strings += len(v)
            v = v.values()
        for x in v:
            t = type(x)
            if t is str:
                strings += 1
            elif t is dict or t is list:
                push(x)
            elif t is float:
                floats = True
    return strings, floats, containers


def _quote_duplicates(raw: bytes, value: Any, strings: int) -> bool:
    """Whether valid JSON ``raw``, whose parsed ``value`` holds ``strings`` strings (keys included), repeats a
    key in an object.

    Count the quotes. Each string of the bytes is one string of the value, except those a repeated key dropped
    (at least its key), and has two quotes that are not escaped; every other quote of the bytes is an escaped
    one, ``\\"``, which is a quote in a string of the value (or of a dropped one). So, with ``q`` quotes in the
    bytes and ``e`` quotes in the values' strings: without duplicates ``q`` is ``2 * strings`` plus the escaped
    quotes, which are ``e`` when no ``\\u0022`` spells a quote and no key holds one; with them ``q`` is at least
    ``2 * strings + 2 + e``."""
    quotes = raw.count(b'"')
    if quotes < 2 * strings + 2:
        return False  # even with no quote escaped, the bytes hold no more strings than the value
    if quotes == 2 * strings + _value_quotes(value) and raw.find(b"\\u0022") == -1:
        return False
    return _escaped_quote_duplicates(raw, quotes, strings)


def _value_quotes(value: Any) -> int:
    """The quotes in the string values of a parsed value (not in its keys)."""
    t = type(value)
    if t is str:
        return value.count('"')
    if t is not dict and t is not list:
        return 0
    quotes = 0
    stack = [value]
    pop = stack.pop
    push = stack.append
    while stack:
        v = pop()
        for x in v.values() if type(v) is dict else v:
            t = type(x)
            if t is str:
                quotes += x.count('"')
            elif t is dict or t is list:
                push(x)
    return quotes


def _escaped_quote_duplicates(raw: bytes, quotes: int, strings: int) -> bool:
    """:func:`_quote_duplicates` by the bytes alone: the quotes that are not escaped are twice the strings."""
    if raw.find(b"\\") == -1:
        return quotes > 2 * strings
    s = raw.replace(b"\\\\", b"") if raw.find(b"\\\\") != -1 else raw  # without escaped backslashes, each \\" left is an escaped quote
    return quotes - s.count(b'\\"') > 2 * strings





def _stdlib_loads(text: str) -> tuple[Any, list[str]]:
    notes: list[str] = []

    def constant(name: str) -> float:
        if "NaN/Infinity" not in notes:
            notes.append("NaN/Infinity")
        return float(name.replace("-", "")) * (-1 if name.startswith("-") else 1)

    def parse_int(s: str) -> int:
        v = int(s)
        if not -(2**63) <= v < 2**64 and "integer beyond 64 bits" not in notes:
            notes.append("integer beyond 64 bits")
        return v

    value = json.loads(text, parse_constant=constant, parse_int=parse_int)
    if "\\u" in text and _has_lone_surrogate(value):
        notes.append("lone surrogate")
    return value, notes


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _LONE_SURROGATE.search(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def preview(raw: bytes, limit: int = PREVIEW) -> str:
    return raw[:limit].decode("utf-8", "replace") + ("…" if len(raw) > limit else "")


def parse_record(
    raw: bytes,
    *,
    terminated: bool = True,
    cap: int = DEFAULT_CAP,
    max_depth: int = MAX_DEPTH,
    quotes: int = -1,
) -> Parsed:
    """Classify one record. ``raw`` excludes the terminator (and a BOM). Never raises.

    ``quotes``, when known (``>= 0``), is :func:`unescaped_quotes` of ``raw``, computed elsewhere (by the helper
    of :mod:`sessionview.core.doc.quotes`): it saves the duplicate-key test its scans of the bytes. The result is
    the same either way."""
    try:
        return _parse(raw, terminated, cap, max_depth, quotes)
    except RecursionError:
        return Parsed(Status.TOO_DEEP, error="nesting too deep for the parser", size=len(raw))
    except Exception as exc:  # classifying must never raise
        return Parsed(Status.INVALID_JSON, error=f"{type(exc).__name__}: {exc}", size=len(raw))


def _parse(raw: bytes, terminated: bool, cap: int, max_depth: int, quotes: int = -1) -> Parsed:
    size = len(raw)
    if size > cap:
        return Parsed(Status.OVERSIZED, error=f"{size} bytes, over the {cap} byte cap", size=size)
    if (not raw or raw[0] in _WHITESPACE) and not raw.strip():
        if not terminated:
            return Parsed(Status.PARTIAL, error="unterminated empty last line", size=size)
        return Parsed(Status.BLANK, error="blank line", size=size)
    value: Any = None
    notes: list[str] | tuple[()] = ()
    try:
        value = _loads(raw)  # orjson does not recurse without bound: the depth is checked after it
        strings, floats, containers = _shape(value)
        if floats and _BIG_DIGITS.search(raw):
            raise ValueError("integer beyond 64 bits")
        if containers <= max_depth:
            if quotes == 2 * strings:  # the common case, when the quotes were counted
                return Parsed(_OK, value, "", (), size, containers)
            # not counted: the bytes orjson writes for the value hold each of its keys once (a third of the cost
            # of the count and the exact test, on the bench sessions; a record written otherwise takes those)
            if quotes < 0 and _canonical(value, raw):
                return Parsed(_OK, value, "", (), size, containers)
    except (orjson.JSONDecodeError, ValueError) as first_error:
        if _brackets(raw) > max_depth and nesting_depth(raw) > max_depth:
            return Parsed(Status.TOO_DEEP, error=f"nesting deeper than {max_depth}", size=size)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Parsed(Status.NOT_UTF8, error=f"invalid UTF-8 at byte {exc.start}", size=size)
        try:
            value, notes = _stdlib_loads(text)
        except json.JSONDecodeError as exc:
            where = f"{exc.msg.removesuffix(' at')} at column {exc.colno}"
            if not terminated:
                return Parsed(Status.PARTIAL, error=f"unterminated last line: {where}", size=size)
            return Parsed(Status.INVALID_JSON, error=where, size=size)
        except RecursionError:
            raise
        except Exception as exc:  # e.g. ValueError from int() digit limits
            return Parsed(Status.INVALID_JSON, error=f"{first_error}; {exc}", size=size)
        strings, _, containers = _shape(value)
        quotes = -1
    # each string of the bytes has two quotes not escaped, and is one string of the value unless a repeated key
    # dropped it: so as many strings as the value's say no duplicate; anything else, the exact test decides
    duplicates = quotes != 2 * strings and _quote_duplicates(raw, value, strings)
    # the containers bound the depth, unless a duplicate key dropped some: then the brackets of the bytes do
    bound = _brackets(raw) if duplicates else containers
    if bound > max_depth and nesting_depth(raw) > max_depth:
        return Parsed(Status.TOO_DEEP, error=f"nesting deeper than {max_depth}", size=size)
    if duplicates:
        return Parsed(Status.DUPLICATE_KEYS, value, "duplicate keys (the last one wins)", tuple(notes), size, bound)
    return Parsed(Status.OK, value, "", tuple(notes), size, bound)


_loads = orjson.loads
_OK = Status.OK


def _canonical(value: Any, raw: bytes) -> bool:
    """Whether ``raw`` is what ``orjson.dumps`` writes for ``value`` (its parse): then no key of it is repeated."""
    try:
        return _dumps(value) == raw
    except orjson.JSONEncodeError:  # nested deeper than orjson writes
        return False


_dumps = orjson.dumps


def unescaped_quotes(raw: bytes) -> int:
    """The quotes of ``raw`` that no backslash escapes: in valid JSON, two per string (see
    :func:`unescaped_quotes_of_lines`, which counts them for many lines at once)."""
    if raw.find(b"\\") == -1:
        return raw.count(b'"')
    s = raw.replace(b"\\\\", b"") if raw.find(b"\\\\") != -1 else raw
    return raw.count(b'"') - s.count(b'\\"')


def _brackets(raw: bytes) -> int:
    return raw.count(b"[") + raw.count(b"{")
