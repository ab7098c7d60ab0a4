"""Records linked by their ``id``: the branches of a tree by ``id``/``parentId`` (pi sessions), and earlier
copies of a record appended again under the same ``id`` (Gemini CLI JSONL, :func:`superseded`).

A record whose ``id`` is the ``parentId`` of more than one record is a **branch point**; each of its
children starts a branch (numbered 1, 2... in file order), and every record below that child is on that
branch (the innermost branch point wins). A file where every record has at most one child has no branches,
and nothing is marked.

The tree is read cheaply: pi writes ``{"type":…,"id":…,"parentId":…`` first on every line, so a line's first
bytes are matched with a regular expression; any other line is parsed whole.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

import orjson

from sessionview.core.values import Frozen, Value

_set = object.__setattr__

#: how many bytes of a line are read for its ids (pi puts them first)
HEAD = 512
_HEAD = re.compile(rb'^\{"type":"[^"\\]*","id":"([^"\\]*)","parentId":(?:null|"([^"\\]*)")')
_ID_FIRST = re.compile(rb'^\{"id":"([^"\\]*)"[,}]')  # Gemini CLI writes a message record's id first


class Branch(Frozen):
    """Record is on branch ``index`` of ``count`` that start at branch point ``point`` (a record number)."""

    __slots__ = ("point", "index", "count")
    point: int
    index: int
    count: int

    def __init__(self, point: int, index: int, count: int) -> None:
        _set(self, "point", point)
        _set(self, "index", index)
        _set(self, "count", count)


class Branches(Value):
    """The branch of each record (``on``) and the number of branches at each branch point (``points``)."""

    __slots__ = ("on", "points")
    on: dict[int, Branch]
    points: dict[int, int]

    def __init__(self, on: dict[int, Branch] | None = None, points: dict[int, int] | None = None) -> None:
        self.on = {} if on is None else on
        self.points = {} if points is None else points

    def __bool__(self) -> bool:
        return bool(self.points)


def ids_of(raw: bytes, parse: Callable[[bytes], Any] = orjson.loads) -> tuple[str | None, str | None]:
    """``(id, parentId)`` of a record's raw bytes (its head suffices for what pi writes)."""
    m = _HEAD.match(raw)
    if m is not None:
        parent = m.group(2)
        return m.group(1).decode("utf-8", "replace"), (parent.decode("utf-8", "replace") if parent is not None else None)
    if raw.find(b'"parentId"', 0, HEAD) == -1:
        m = _ID_FIRST.match(raw)
        if m is not None:
            return m.group(1).decode("utf-8", "replace"), None
    try:
        value = parse(raw)
    except Exception:
        return None, None
    return value_ids(value)


def value_ids(value: Any) -> tuple[str | None, str | None]:
    if not isinstance(value, dict):
        return None, None
    rid, parent = value.get("id"), value.get("parentId")
    return (rid if isinstance(rid, str) else None), (parent if isinstance(parent, str) else None)


def build(entries: Iterable[tuple[int, str | None, str | None]]) -> Branches:
    """The branches of records given as ``(number, id, parentId)`` in file order."""
    number_of: dict[str, int] = {}
    parent_of: dict[int, int] = {}
    children: dict[int, list[int]] = {}
    order: list[int] = []
    for number, rid, parent in entries:
        order.append(number)
        if rid is not None and rid not in number_of:
            number_of[rid] = number
        p = number_of.get(parent) if parent is not None else None
        if p is not None and p != number:
            parent_of[number] = p
            children.setdefault(p, []).append(number)
    out = Branches()
    for p, kids in children.items():
        if len(kids) > 1:
            out.points[p] = len(kids)
    if not out.points:
        return out
    # a parent comes before its children in the file (pi appends), so one pass in file order suffices;
    # a child listed before its parent (a broken file) simply inherits nothing
    for number in order:
        p = parent_of.get(number)
        if p is None:
            continue
        if p in out.points:
            out.on[number] = Branch(p, children[p].index(number) + 1, out.points[p])
        elif p in out.on:
            out.on[number] = out.on[p]
    return out


def superseded(entries: Iterable[tuple[int, str | None, str | None]]) -> dict[int, int]:
    """Records whose ``id`` appears again later (Gemini CLI appends a changed message again): record number →
    the number of the last record with that id, the one that counts."""
    last: dict[str, int] = {}
    numbers: list[tuple[int, str]] = []
    for number, rid, _ in entries:
        if rid is not None:
            last[rid] = number
            numbers.append((number, rid))
    return {n: last[rid] for n, rid in numbers if last[rid] != n}


def label(branch: Branch | None, points: int = 0, number: Callable[[int], int | None] = lambda n: n) -> str:
    """``branch 2/3 from #5``, ``branch point: 3 branches``, both, or ``""``. ``number`` maps a record
    number to the ``#N`` shown (None: unknown yet, and the ``from #N`` is left out)."""
    parts = []
    if branch is not None:
        at = number(branch.point)
        parts.append(f"branch {branch.index}/{branch.count}" + (f" from #{at}" if at is not None else ""))
    if points:
        parts.append(f"branch point: {points} branches")
    return " · ".join(parts)
