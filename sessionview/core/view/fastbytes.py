"""The byte-level steps of :mod:`~sessionview.core.view.fastrender`: text escaped as
:func:`~sessionview.core.text.escape_control` would escape it, by byte scans where nothing needs it, and
indented as :func:`~sessionview.core.view.render._indent` indents it, on UTF-8 bytes.

Where CPython's byte methods run: a one-byte search or replace is ``memchr``'s (many GB/s), a longer
pattern's search and ``bytes.translate`` about 1 GB/s, a paragraph split pays for an object per paragraph. The
steps here are chosen by those costs (measured on the seeded bench sessions, see bench/README.md). A search
is ``b.find(x) != -1``, not ``x in b``: CPython 3.11's ``bytes.__contains__`` first tries ``x`` as an integer,
and the TypeError it raises and clears (its message formatted each time) costs more than the search.

Tried and measured without a gain (callgrind on a 20 MB sample, CPU of ``show`` of the 100 MB bench file):
indenting by marking each newline that precedes a newline with a byte escaped text cannot hold (``\\x00``)
and three replaces instead of the paragraph split (the same time: the two-byte search is what costs); one
replace then a fix of the empty lines (13% slower); a regex for the controls instead of ``translate`` (3x
slower); the child's blocks written by ``pwritev`` of their pieces instead of joined (1-2% more CPU);
``gc.disable()`` next to ``gc.freeze()`` (1.4% more instructions); orjson's output of arguments checked for DEL
alone (JSON escapes C0), 0.2% fewer instructions: most of ``translate``'s share is the text's own scan.
"""

from __future__ import annotations

import re
from itertools import repeat

from sessionview.core.text import escape_control
from sessionview.core.view import render

__all__ = ["indent", "indent_into", "line", "line_cached", "safe_bytes", "text_bytes", "unsafe_utf8"]

PRINTABLE = bytes(range(0x20, 0x7F))
PRINTABLE_LINES = PRINTABLE + b"\n\t"
# The bytes of a UTF-8 text that can belong to a character escape_control changes (C0 but newline and tab,
# DEL, C1 and soft hyphen U+0080-U+00AD, U+061C, U+200B-U+200F, U+2028-U+202E, U+2066-U+2069, U+FEFF): the
# controls, every lead byte (so that no two characters run together once the rest is deleted) and the
# continuation bytes those characters use. What is left of a text is short; a pattern finds them in it.
_KEEP = set(range(0x20)) - {0x09, 0x0A} | {0x7F} | set(range(0x80, 0xA0)) | set(range(0xA6, 0xAF)) | {0xBB, 0xBF} | set(range(0xC0, 0x100))
DROP = bytes(b for b in range(256) if b not in _KEEP)
_NOT_CONTROL = bytes(b for b in range(256) if not (b < 0x20 and b not in (0x09, 0x0A) or b == 0x7F))
_UNSAFE_UTF8 = re.compile(rb"\xc2[\x80-\x9f\xad]|\xd8\x9c|\xe2\x80[\x8b-\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]|\xef\xbb\xbf")
_E280 = re.compile(rb"\xe2\x80[\x8b-\x8f\xa8-\xae]")
_C2 = re.compile(rb"\xc2[\x80-\x9f\xad]")

INDENT = render.INDENT.encode()
INDENT2 = INDENT * 2
NL_INDENT = b"\n" + INDENT


def text_bytes(s: str) -> bytes:
    """``escape_control(s).encode()``, by a byte scan where nothing needs escaping."""
    if s.isascii():
        b = s.encode("ascii")
        return b if not b.translate(None, PRINTABLE_LINES) else escape_control(s).encode("ascii")
    try:
        b = s.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return escape_control(s).encode("utf-8")
    return escape_control(s).encode("utf-8") if unsafe_utf8(b) else b


def unsafe_utf8(b: bytes) -> bool:
    """Whether non-ASCII UTF-8 ``b`` may hold a character escape_control changes (no false negative): what is
    left after :data:`DROP`, searched for each lead byte's sequences by a literal search first."""
    rest = b.translate(None, DROP)
    if not rest:
        return False
    if rest.translate(None, _NOT_CONTROL):
        return True
    if rest.find(b"\xe2") != -1:
        if rest.find(b"\xe2\x80") != -1 and _E280.search(rest):
            return True
        if rest.find(b"\xe2\x81") != -1 and _UNSAFE_UTF8.search(rest):
            return True
    if rest.find(b"\xc2") != -1 and _C2.search(rest):
        return True
    return rest.find(b"\xd8\x9c") != -1 or rest.find(b"\xef\xbb\xbf") != -1


def safe_bytes(b: bytes) -> bytes:
    """``escape_control(b.decode()).encode()`` of UTF-8 bytes, by a byte scan where nothing needs escaping."""
    if b.isascii():
        return b if not b.translate(None, PRINTABLE_LINES) else escape_control(b.decode("ascii")).encode("ascii")
    return escape_control(b.decode("utf-8")).encode("utf-8") if unsafe_utf8(b) else b


def line(s: str) -> bytes:
    """``escape_control(s, one_line=True).encode()``. A printable string (``str.isprintable``: every character
    escape_control changes is a control, a format character, a separator or a surrogate, none printable) is
    left as it is."""
    if s.isprintable():
        return s.encode("utf-8")
    return escape_control(s, one_line=True).encode("utf-8")


_LINES: dict[str, bytes] = {}  # roles and tool names: few, and on every record


def line_cached(s: str) -> bytes:
    """:func:`line`, kept for the strings seen first (roles and tool names repeat)."""
    b = _LINES.get(s)
    if b is None:
        b = line(s)
        if len(_LINES) < 4096:
            _LINES[s] = b
    return b


# A search for two newlines by ``re`` rather than ``bytes.find``/``split``: CPython 3.11's two-byte search stops
# at each newline of a text that has many (about 1 GB/s), the regular expression's literal search runs twice
# as fast on the bench sessions' texts (measured: indenting every text of the 100 MB file 0.205 -> 0.142 s).
_EMPTY_LINE = re.compile(rb"\n\n")


def _body(b: bytes, prefix: bytes, bare: bytes) -> bytes:
    """``b`` with ``prefix`` after each newline, ``bare`` instead where the line after it is empty (the first
    line is the caller's)."""
    nl = b"\n" + prefix
    if _EMPTY_LINE.search(b) is None:
        body = b.replace(b"\n", nl)  # b itself without a newline
    else:
        # Paragraphs: each indented alone, joined by an empty line (one split: cheaper than the two searches
        # for an empty line after), unless a run of empty lines (an empty paragraph, or one that starts with a
        # newline) is there. No Python loop over the paragraphs: the least of them is empty or starts with a
        # newline if any is (a tab, the only byte below a newline that escaped text holds, takes the slow way).
        parts = _EMPTY_LINE.split(b)
        least = min(parts[1:])
        if not least or least[:1] <= b"\n":
            empty, short = nl + b"\n", b"\n" + bare + b"\n"
            body = b.replace(b"\n", nl).replace(empty, short).replace(empty, short)
        else:
            body = (b"\n" + bare + nl).join(map(bytes.replace, parts, repeat(b"\n"), repeat(nl)))
    if b[-1:] == b"\n":
        body = body[: len(body) - len(prefix)] + bare
    return body


def indent(b: bytes, prefix: bytes = INDENT) -> bytes:
    """:func:`render._indent` on UTF-8 bytes (the same steps: only newlines and the ASCII prefix are touched)."""
    bare = prefix.rstrip()
    if not b:
        return bare
    return (bare if b[:1] == b"\n" else prefix) + _body(b, prefix, bare)


def indent_into(out: list[bytes], b: bytes) -> None:
    """Append :func:`indent` of non-empty ``b`` with the prefix :data:`render.INDENT` to ``out`` (in pieces)."""
    if b[:1] != b"\n":
        out.append(INDENT)
    out.append(_body(b, INDENT, b""))
