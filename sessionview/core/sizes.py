"""Sizes in bytes as people write them: ``"2GiB"``, ``"500 MiB"``, ``"100MB"``, and back (``1.5 KiB``)."""

from __future__ import annotations

import re

__all__ = ["SIZE_HELP", "parse_size", "format_size"]

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1}
for _i, _p in enumerate("kmgt", 1):
    _UNITS[_p] = _UNITS[_p + "i"] = _UNITS[_p + "ib"] = 1024**_i
    _UNITS[_p + "b"] = 1000**_i
SIZE_HELP = 'a number of bytes, or a size such as "500MiB" or "2GiB" (K, M, G, T: powers of 1024; KB, MB...: of 1000)'


def parse_size(value: object, what: str = "size") -> int:
    """Bytes from an int, or a string such as ``"2GiB"``, ``"500 MiB"``, ``"1.5G"``, ``"100MB"``; else ValueError."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{what} must not be negative (got {value})")
        return value
    if isinstance(value, str):
        m = _SIZE.match(value)
        if m and m.group(2).lower() in _UNITS:
            return int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    raise ValueError(f"{what} must be {SIZE_HELP}; got {value!r}")


def format_size(n: int) -> str:
    """``512 B``, ``1.5 KiB``, ``2.0 GiB``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover
