"""Small formatting helpers for the UI (sizes, ages, counts). Pure functions."""

from __future__ import annotations


def human_size(n: int | None) -> str:
    if n is None:
        return "…"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def human_age(seconds: float) -> str:
    """``now``, ``12s ago``, ``5m ago``, ``3h ago``, ``4d ago``, ``2y ago``."""
    s = max(0.0, seconds)
    if s < 1:
        return "now"
    if s < 60:
        return f"{int(s)}s ago"
    if s < 3600:
        return f"{int(s // 60)}m ago"
    if s < 86400:
        return f"{int(s // 3600)}h ago"
    if s < 86400 * 365:
        return f"{int(s // 86400)}d ago"
    return f"{int(s // (86400 * 365))}y ago"


def human_count(n: int | None) -> str:
    if n is None:
        return "…"
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
