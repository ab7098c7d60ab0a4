"""Where a transcript's view is: an anchor ``(row, line)``, the first screen line being line ``line`` of
the entry at ``row``. The arithmetic here needs only the height of an entry (``height_of(row)``), so it
walks over the entries near the view and never over the whole session."""

from __future__ import annotations

from typing import Callable

Anchor = tuple[int, int]  # (row, line within that row's entry)
Heights = Callable[[int], int]


def layout(anchor: Anchor, total: int, height: int, height_of: Heights) -> list[Anchor | None]:
    """What each of ``height`` screen lines shows from ``anchor`` on (None below the last entry)."""
    out: list[Anchor | None] = []
    row, line = anchor
    while len(out) < height and row < total:
        lines = height_of(row)
        while line < lines and len(out) < height:
            out.append((row, line))
            line += 1
        row += 1
        line = 0
    out.extend([None] * (height - len(out)))
    return out


def bottom(total: int, height: int, height_of: Heights) -> Anchor:
    """The anchor that shows the end of the last entry on the last screen line."""
    need = height
    row = total - 1
    while row >= 0 and need > 0:
        h = height_of(row)
        if h >= need:
            return (row, h - need)
        need -= h
        row -= 1
    return (0, 0)


def ending_at(row: int, height: int, height_of: Heights) -> Anchor:
    """The anchor that shows entry ``row`` ending on the last screen line (or its start, if it is taller)."""
    h = height_of(row)
    if h >= height:
        return (row, 0)
    need = height - h
    r = row - 1
    while r >= 0:
        hr = height_of(r)
        if hr >= need:
            return (r, hr - need)
        need -= hr
        r -= 1
    return (0, 0)


def clamp(anchor: Anchor, total: int, height: int, height_of: Heights) -> Anchor:
    """``anchor`` moved inside the entries there are, and not past the bottom."""
    if total == 0:
        return (0, 0)
    row, line = anchor
    row = max(0, min(row, total - 1))
    line = max(0, min(line, height_of(row) - 1))
    return min((row, line), bottom(total, height, height_of))


def scrolled(anchor: Anchor, delta: int, total: int, height: int, height_of: Heights) -> Anchor:
    """``anchor`` moved ``delta`` screen lines (down when positive), not past the bottom nor the top."""
    row, line = anchor
    line += delta
    if delta > 0:
        end = bottom(total, height, height_of)
        while row < total - 1 and line >= height_of(row):
            line -= height_of(row)
            row += 1
            if (row, line) >= end:
                break
        return min((row, line), end)
    while line < 0 and row > 0:
        row -= 1
        line += height_of(row)
    return (row, max(0, line))


def revealing(anchor: Anchor, row: int, height: int, height_of: Heights) -> Anchor:
    """``anchor``, or the nearest one that shows entry ``row`` (its start, or its end at the bottom)."""
    top_row, top_line = anchor
    if row < top_row or (row == top_row and top_line > 0):
        return (row, 0)
    if row - top_row > height:
        return ending_at(row, height, height_of)
    used = -top_line
    for r in range(top_row, row + 1):
        used += height_of(r)
    if used > height:
        return ending_at(row, height, height_of)
    return anchor


def centered(row: int, total: int, height: int, height_of: Heights) -> Anchor:
    """An anchor that shows entry ``row`` a third of the way down the screen."""
    anchor = (row, 0)
    back = height // 3
    r = row
    while back > 0 and r > 0:
        r -= 1
        back -= height_of(r)
    if r < row:
        anchor = (r, max(0, -back))
    anchor = min(anchor, bottom(total, height, height_of))
    return revealing(anchor, row, height, height_of)
