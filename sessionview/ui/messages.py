"""Messages that workers post back to the screens. ``generation`` ties a message to the file opening it
belongs to: after a reload, late messages of the previous opening are ignored."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessionview.core.catalog import Description

from array import array
from dataclasses import dataclass
from typing import Any

from textual.message import Message

from sessionview.core.doc.document import Source
from sessionview.core.tail import Event


@dataclass
class Opened(Message):
    generation: int
    model: Any  # TranscriptModel
    reason: str = ""  # why it was (re)opened: "", "truncated", "replaced"


@dataclass
class OpenFailed(Message):
    generation: int
    error: str


@dataclass
class FollowEvents(Message):
    generation: int
    events: list[Event]


@dataclass
class IndexProgress(Message):
    generation: int
    fraction: float

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress)


@dataclass
class IndexBuilt(Message):
    generation: int
    source: Source


@dataclass
class StatsReady(Message):
    generation: int
    stats: Any  # Stats


@dataclass
class SearchProgress(Message):
    generation: int
    fraction: float

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SearchProgress)


@dataclass
class SearchDone(Message):
    generation: int
    term: str
    number: int | None
    forward: bool
    from_number: int


@dataclass
class FilterDone(Message):
    generation: int
    filter: Any  # Filter
    rows: array
    count: int  # records 1..count were looked at


@dataclass
class CursorMoved(Message):
    """The transcript's selected record changed (``number`` is a record number of the model, or None)."""

    view: Any  # TranscriptView
    number: int | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CursorMoved)

    @property
    def control(self) -> Any:
        return self.view


@dataclass
class FollowChanged(Message):
    """The transcript started or stopped following the end (``new_count``: records that came in since)."""

    view: Any  # TranscriptView
    follow: bool
    new_count: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FollowChanged)

    @property
    def control(self) -> Any:
        return self.view


@dataclass
class CatalogScanned(Message):
    catalog: Any  # Catalog, from the scanning thread


@dataclass
class CatalogLoaded(Message):
    """The first listing is on screen."""


@dataclass
class CatalogChanged(Message):
    paths: set[str]


@dataclass
class Described(Message):
    """Descriptions of session files: ``(path, size, mtime, description)`` each."""

    items: list[tuple[str, int, float, Description]]
