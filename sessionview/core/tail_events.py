"""The events a :class:`~sessionview.core.tail.Follower` reports (re-exported by :mod:`sessionview.core.tail`): frozen
values, as ``@dataclass(frozen=True, slots=True)`` would make them (:class:`~sessionview.core.values.Frozen`)."""

from __future__ import annotations

from itertools import pairwise

from sessionview.core.values import Frozen

_set = object.__setattr__  # the events are frozen (sessionview.core.values: no dataclass to build at import)


class Appended(Frozen):
    """New complete lines: they start at ``starts`` and the last one ends at ``end`` (after its terminator)."""

    __slots__ = ("starts", "end", "data", "rewritten")
    starts: tuple[int, ...]
    end: int
    data: bytes | None  # the bytes [starts[0], end) when at most tail.DATA_LIMIT
    rewritten: bool  # the file was rewritten, and the rewrite kept what had been reported

    def __init__(self, starts: tuple[int, ...], end: int, data: bytes | None = None, rewritten: bool = False) -> None:
        _set(self, "starts", starts)
        _set(self, "end", end)
        _set(self, "data", data)
        _set(self, "rewritten", rewritten)

    @property
    def start(self) -> int:
        return self.starts[0] if self.starts else self.end

    @property
    def count(self) -> int:
        return len(self.starts)

    def lines(self) -> list[bytes]:
        """The new lines, terminators included (needs ``data``)."""
        if self.data is None:
            raise ValueError("the appended bytes were too big to keep; read them from the file")
        base = self.start
        bounds = [s - base for s in self.starts] + [self.end - base]
        return [self.data[a:b] for a, b in pairwise(bounds)]


class Pending(Frozen):
    """The file ends with ``size`` bytes of a line that has no newline yet (0: no pending line any more)."""

    __slots__ = ("offset", "size", "preview")
    offset: int
    size: int
    preview: bytes  # the first bytes of the pending line

    def __init__(self, offset: int, size: int, preview: bytes = b"") -> None:
        _set(self, "offset", offset)
        _set(self, "size", size)
        _set(self, "preview", preview)


class Truncated(Frozen):
    """What was reported is gone: the file shrank or was rewritten with other content. Reload."""

    __slots__ = ("size", "reason")
    size: int
    reason: str  # "shrank" or "rewritten"

    def __init__(self, size: int, reason: str) -> None:
        _set(self, "size", size)
        _set(self, "reason", reason)


class Replaced(Frozen):
    """A different file now sits at the path (rotation, atomic replace, or deleted and created again)."""

    __slots__ = ("reason",)
    reason: str

    def __init__(self, reason: str = "a new file at the same path") -> None:
        _set(self, "reason", reason)


class Compacted(Frozen):
    """The file was rewritten (or replaced, ``replaced``) and now holds compaction markers that were not in
    what was reported: the agent compacted its history. Reload, like :class:`Truncated`.

    ``markers`` are the new markers' names in order (``summary``, ``tool_results``, ``sliding_window``);
    ``before`` is the number of complete lines reported before (None when the follower started at an
    offset too big to count), ``after`` the number of complete lines now (None when not all read yet).
    """

    __slots__ = ("size", "markers", "before", "after", "replaced")
    size: int
    markers: tuple[str, ...]
    before: int | None
    after: int | None
    replaced: bool

    def __init__(self, size: int, markers: tuple[str, ...], before: int | None, after: int | None, replaced: bool = False) -> None:
        _set(self, "size", size)
        _set(self, "markers", markers)
        _set(self, "before", before)
        _set(self, "after", after)
        _set(self, "replaced", replaced)


class Renamed(Frozen):
    """A new file sits at the path and starts with everything reported (a temp file renamed over the path
    that kept the content): the follower follows it from the same offset. ``ident`` is its (device, inode);
    its new lines follow as :class:`Appended` with ``rewritten``. Readers of the old file should switch."""

    __slots__ = ("ident",)
    ident: tuple[int, int]

    def __init__(self, ident: tuple[int, int]) -> None:
        _set(self, "ident", ident)


class Deleted(Frozen):
    """The path is gone. What was read stays readable through the follower's open descriptor."""

    __slots__ = ()


Event = Appended | Pending | Truncated | Compacted | Renamed | Replaced | Deleted
