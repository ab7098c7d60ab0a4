"""The tool pairing of a few ids, from the records that mention them: found by a byte search of the file,
so the integrity check of a local change never parses the whole session.

A record can only pair through an id whose bytes it contains. An id is searched for as a whole token (the
bytes either side are not id characters), so ``call_1`` does not find ``call_10`` and a number id (``17``,
which the formats read as ``"17"``) is found unquoted too. JSON could still spell an id character as a
``\\u00XX`` escape (no common writer does so for letters, digits, ``_``, ``-``): every record holding an
escaped ASCII character (``\\u0020``-``\\u007f``) is parsed as well. Ids that a byte search cannot find
reliably (other characters, only digits, many ids without a common prefix) and sessions that are not one
unedited JSONL file fall back to the full pairing (:meth:`Session.pairing`).
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, Iterable

from sessionview.core.doc.document import Source
from sessionview.core.doc.pairing import Pairing, pair

if TYPE_CHECKING:
    from sessionview.core.edit.change import Editable
    from sessionview.core.session import JsonlSession

__all__ = ["IdPairing", "lines_mentioning", "searchable"]

CHUNK = 16 * 1024 * 1024  # bytes searched at a time
MAX_SEPARATE = 8  # ids searched one by one; more are searched by their common prefix
MIN_PREFIX = 3  # the shortest common prefix worth a search of its own, for many ids
LONG_PREFIX = 7  # a common prefix this long is rare enough to search for instead of each id
_ID = re.compile(r"[A-Za-z0-9_:+=~-]{1,512}\Z")
_NUMBERISH = re.compile(r"[0-9+-]+\Z")  # a JSON number read as an id may be spelled otherwise (-0, 1e2)
_TOKEN = re.compile(rb"[A-Za-z0-9_:+=~-]*")
_ID_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:+=~-")
_ASCII_ESCAPE = re.compile(rb"\\u00[2-7]")  # \u0020-\u007f: an escaped printable ASCII character


def searchable(ids: Iterable[str]) -> bool:
    return all(_ID.match(i) and not _NUMBERISH.match(i) for i in ids)


def _common_prefix(ids: list[bytes]) -> bytes:
    lo, hi = min(ids), max(ids)
    n = 0
    while n < min(len(lo), len(hi)) and lo[n] == hi[n]:
        n += 1
    return lo[:n]


def lines_mentioning(source: Source, ids: Iterable[str]) -> set[int] | None:
    """The indices of the source lines that may mention one of ``ids`` (a superset), or None when a byte
    search cannot answer for these ids."""
    wanted = sorted({i.encode() for i in ids})
    if not wanted:
        return set()
    if not searchable(i.decode() for i in wanted):
        return None
    prefix = _common_prefix(wanted)
    if len(wanted) == 1:
        needles, whole = wanted, True
    elif len(prefix) >= LONG_PREFIX or (len(wanted) > MAX_SEPARATE and len(prefix) >= MIN_PREFIX):
        needles, whole = [prefix], False  # one pass: ids of one turn share most of their characters
    elif len(wanted) <= MAX_SEPARATE:
        needles, whole = wanted, True
    else:
        return None
    members = set(wanted)
    overlap = max(len(n) for n in wanted) + 8
    found: set[int] = set()
    starts = source.starts
    pos, end = (starts[0] if len(starts) else 0), source.size
    before = 0  # the byte before ``pos`` (0: none)

    def line_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    while pos < end:
        size = min(CHUNK, end - pos)
        buf = source.read(pos, min(size + overlap, end - pos))
        for needle in needles:
            k = len(needle)
            i = buf.find(needle)
            while 0 <= i < size:
                prev = buf[i - 1] if i else before
                if prev not in _ID_BYTES:
                    j = i + k
                    if whole:
                        ok = j >= len(buf) or buf[j] not in _ID_BYTES
                    else:
                        m = _TOKEN.match(buf, j)
                        ok = buf[i : m.end() if m else j] in members
                    if ok:
                        found.add(line_of(pos + i))
                i = buf.find(needle, i + 1)
        for m in _ASCII_ESCAPE.finditer(buf, 0, size + 5):  # one C pass; a hit is rare
            if m.start() < size:
                found.add(line_of(pos + m.start()))
        before = buf[size - 1]
        pos += size
    return found


class IdPairing:
    """The pairing entries of the ids asked for so far (:meth:`cover`), exactly as the whole session's
    pairing has them: every record that mentions one of them is viewed, in order."""

    def __init__(self, session: "Editable") -> None:
        self.session = session
        self._covered: set[str] = set()
        self._lines: set[int] = set()
        self._pairing = Pairing()
        self._full: Pairing | None = None

    def _jsonl(self) -> "JsonlSession | None":
        from sessionview.core.session import JsonlSession

        s = self.session
        return s if type(s) is JsonlSession and not s.doc.edited else None

    def cover(self, ids: Iterable[str]) -> Pairing:
        """A pairing that is right for ``ids`` (and every id covered before)."""
        if self._full is not None:
            return self._full
        missing = set(ids) - self._covered
        if not missing:
            return self._pairing
        jsonl = self._jsonl()
        lines = lines_mentioning(jsonl.doc.source, missing) if jsonl is not None else None
        if jsonl is None or lines is None:
            self._full = self.session.pairing()
            return self._full
        self._covered |= missing
        if lines - self._lines:
            self._lines |= lines
            self._pairing = pair(jsonl.view(i + 1, keep=False) for i in sorted(self._lines))
        return self._pairing
