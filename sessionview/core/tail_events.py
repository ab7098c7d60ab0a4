"""The events a :class:`~sessionview.core.tail.Follower` reports (re-exported by :mod:`sessionview.core.tail`)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise


@dataclass(frozen=True, slots=True)
class Appended:
    """New complete lines: they start at ``starts`` and the last one ends at ``end`` (after its terminator)."""

    starts: tuple[int, ...]
    end: int
    data: bytes | None = None  # the bytes [starts[0], end) when at most tail.DATA_LIMIT
    rewritten: bool = False  # the file was rewritten, and the rewrite kept what had been reported

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


@dataclass(frozen=True, slots=True)
class Pending:
    """The file ends with ``size`` bytes of a line that has no newline yet (0: no pending line any more)."""

    offset: int
    size: int
    preview: bytes = b""  # the first bytes of the pending line


@dataclass(frozen=True, slots=True)
class Truncated:
    """What was reported is gone: the file shrank or was rewritten with other content. Reload."""

    size: int
    reason: str  # "shrank" or "rewritten"


@dataclass(frozen=True, slots=True)
class Replaced:
    """A different file now sits at the path (rotation, atomic replace, or deleted and created again)."""

    reason: str = "a new file at the same path"


@dataclass(frozen=True, slots=True)
class Compacted:
    """The file was rewritten (or replaced, ``replaced``) and now holds compaction markers that were not in
    what was reported: the agent compacted its history. Reload, like :class:`Truncated`.

    ``markers`` are the new markers' names in order (``summary``, ``tool_results``, ``sliding_window``);
    ``before`` is the number of complete lines reported before (None when the follower started at an
    offset too big to count), ``after`` the number of complete lines now (None when not all read yet).
    """

    size: int
    markers: tuple[str, ...]
    before: int | None
    after: int | None
    replaced: bool = False


@dataclass(frozen=True, slots=True)
class Renamed:
    """A new file sits at the path and starts with everything reported (a temp file renamed over the path
    that kept the content): the follower follows it from the same offset. ``ident`` is its (device, inode);
    its new lines follow as :class:`Appended` with ``rewritten``. Readers of the old file should switch."""

    ident: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Deleted:
    """The path is gone. What was read stays readable through the follower's open descriptor."""


Event = Appended | Pending | Truncated | Compacted | Renamed | Replaced | Deleted
