"""Make untrusted text safe to show: control characters become visible escapes.

C0 controls (except newline and tab), DEL, C1 controls, bidirectional overrides and isolates, lone
surrogates and other invisible format characters that can reorder or hide text are replaced by a visible
escape such as ``\\x1b`` or ``\\u202e``. The result never contains an escape sequence a terminal would
act on (ESC, CSI, OSC...), so it can be printed or rendered as plain text.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_INVISIBLE = "\u2028\u2029\ufeff\u200b\u00ad"
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + _INVISIBLE + "\ud800-\udfff]"
)
_UNSAFE_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f" + _BIDI + _INVISIBLE + "\ud800-\udfff]")

_PRINTABLE = bytes(range(0x20, 0x7F))
_PRINTABLE_LINES = _PRINTABLE + b"\n\t"


def _escape(m: re.Match[str]) -> str:
    c = m.group(0)
    o = ord(c)
    if o < 0x100:
        return {"\r": "\\r", "\n": "\\n", "\t": "\\t"}.get(c, f"\\x{o:02x}")
    return f"\\u{o:04x}"


def escape_control(text: str, *, one_line: bool = False) -> str:
    """``text`` with unsafe characters shown as escapes. ``one_line`` escapes newlines and tabs too."""
    if text.isascii() and not text.encode("ascii").translate(None, _PRINTABLE if one_line else _PRINTABLE_LINES):
        return text  # the common case, by a byte scan several times faster than the pattern's
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    return pattern.sub(_escape, text)


def decode_for_display(raw: bytes) -> str:
    """Bytes as text for display: invalid UTF-8 bytes shown as ``\\xNN``, controls escaped."""
    return escape_control(raw.decode("utf-8", "backslashreplace"))


def approx_tokens(text: str) -> int:
    """A rough token count (about 4 characters a token), as agents' own estimates do."""
    return (len(text) + 3) // 4


#: plurals that are not the word + s
IRREGULAR = {"match": "matches", "summary": "summaries", "entry": "entries", "this": "these", "branch": "branches"}


def plural(n: int, word: str, many: str | None = None, *, grouped: bool = False) -> str:
    """``1 record``, ``2 records``, ``3 summaries`` (``many`` for a plural that is neither word + s nor in
    :data:`IRREGULAR`); ``grouped`` writes ``1,024``."""
    count = f"{n:,}" if grouped else str(n)
    return f"{count} {word if n == 1 else (many or IRREGULAR.get(word) or word + 's')}"
