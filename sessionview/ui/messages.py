"""Messages that workers post back to the screens. ``generation`` ties a message to the file opening it
belongs to: after a reload, late messages of the previous opening are ignored.

Each message is a class of annotated fields, as a dataclass would be (the same ``__init__``, ``__repr__`` and
``__eq__``), made by :class:`_Data` without a dataclass's cost at import: this module is imported before the
session screen's first frame."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessionview.core.catalog import Description

from array import array
from typing import Any, ClassVar

from textual.message import Message

from sessionview.core.doc.document import Source
from sessionview.core.tail import Event


class _Data(Message):
    """A message whose fields are its class's annotations (with their defaults), in order, like a dataclass's."""

    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    __hash__ = None  # as a dataclass with eq: equal by its fields, so not hashable

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = tuple(cls.__dict__.get("__annotations__", {}))
        cls._fields = names
        cls._defaults = {n: cls.__dict__[n] for n in names if n in cls.__dict__}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self._fields
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments but {len(args)} were given")
        values = dict(zip(names, args, strict=False))  # fewer arguments than fields: the rest from defaults
        for name, value in kwargs.items():
            if name not in names or name in values:
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated argument {name!r}")
            values[name] = value
        for name in names:
            if name in values:
                setattr(self, name, values[name])
            elif name in self._defaults:
                setattr(self, name, self._defaults[name])
            else:
                raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
        super().__init__()

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self._fields)})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._fields)


class Opened(_Data):
    generation: int
    model: Any  # TranscriptModel
    reason: str = ""  # why it was (re)opened: "", "truncated", "replaced"


class OpenFailed(_Data):
    generation: int
    error: str


class FollowEvents(_Data):
    generation: int
    events: list[Event]


class IndexProgress(_Data):
    generation: int
    fraction: float

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress)


class IndexBuilt(_Data):
    generation: int
    source: Source


class StatsReady(_Data):
    generation: int
    stats: Any  # Stats


class SearchProgress(_Data):
    generation: int
    fraction: float

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SearchProgress)


class SearchDone(_Data):
    generation: int
    term: str
    number: int | None
    forward: bool
    from_number: int


class FilterDone(_Data):
    generation: int
    filter: Any  # Filter
    rows: array
    count: int  # records 1..count were looked at


class CursorMoved(_Data):
    """The transcript's selected record changed (``number`` is a record number of the model, or None)."""

    view: Any  # TranscriptView
    number: int | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CursorMoved)

    @property
    def control(self) -> Any:
        return self.view


class FollowChanged(_Data):
    """The transcript started or stopped following the end (``new_count``: records that came in since)."""

    view: Any  # TranscriptView
    follow: bool
    new_count: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FollowChanged)

    @property
    def control(self) -> Any:
        return self.view


class CatalogScanned(_Data):
    catalog: Any  # Catalog, from the scanning thread


class CatalogLoaded(_Data):
    """The first listing is on screen."""


class CatalogChanged(_Data):
    paths: set[str]


class Described(_Data):
    """Descriptions of session files: ``(path, size, mtime, description)`` each."""

    items: list[tuple[str, int, float, Description]]
