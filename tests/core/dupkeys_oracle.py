"""The earlier duplicate-key test of :mod:`sessionview.core.doc.parse`, by the keys and colons of the bytes:
kept here as an independent oracle for the quote-count test that ``parse_record`` uses (it is no longer
production code)."""

from __future__ import annotations

from typing import Any


def _raw_key_count(raw: bytes) -> int:
    """Keys in the bytes: strings followed (after whitespace) by a colon."""
    s = raw.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in raw else raw
    return sum(1 for p in s.split(b'"')[2::2] if p.lstrip(b" \t\r\n").startswith(b":"))


def has_duplicate_keys(raw: bytes, value: Any) -> bool:
    """Whether ``raw``, which parses to ``value``, repeats a key in an object: by the keys and the colons of the
    bytes (an independent test of what :func:`parse_record` finds from the quotes, see :func:`_shape`)."""
    parsed, _, string_colons, _ = _walk(value)
    return _duplicates(raw, value, parsed, string_colons)


def _walk(value: Any) -> tuple[int, bool, int, int]:
    """One pass over a parsed value: its keys, whether it holds a float, the colons in its string values (not in
    its keys: an undercount only sends :func:`_duplicates` to the exact test more often), and its containers."""
    keys = colons = containers = 0
    floats = False
    stack = [value]
    pop = stack.pop
    push = stack.extend
    while stack:
        v = pop()
        t = type(v)
        if t is str:
            colons += v.count(":")
        elif t is dict:
            keys += len(v)
            containers += 1
            push(v.values())
        elif t is list:
            containers += 1
            push(v)
        elif t is float:
            floats = True
    return keys, floats, colons, containers


def _duplicates(raw: bytes, value: Any, parsed: int, string_colons: int) -> bool:
    colons = raw.count(b":")
    if colons <= parsed:
        return False  # every key needs a colon: this upper bound on the keys in the bytes was all parsed
    if b"\\u003a" not in raw and b"\\u003A" not in raw and colons - string_colons <= parsed:
        # Without a \u003a escape, each colon in the parsed strings is a distinct colon inside a string of
        # the bytes (duplicates only drop strings), so the rest bounds the keys in the bytes.
        return False
    return _raw_key_count(raw) != parsed
