"""Value classes that cost nothing to define: what ``@dataclass(slots=True, unsafe_hash=True)`` (:class:`Value`) and
``@dataclass(frozen=True, slots=True)`` (:class:`Frozen`) give a class, for classes that spell out their
``__slots__`` (the fields, in order) and ``__init__``.

``dataclass`` writes the source of each method and compiles it when the class is defined: 0.5–1.5 ms per
class, paid by every start of the app for the classes its first screen imports. A subclass here gets the same
behaviour from methods defined once: equality with an instance of the same class only (the fields as a
tuple), the hash of that tuple, the repr ``Name(field=value, ...)``, ``__match_args__``; a :class:`Frozen`
one also ``FrozenInstanceError`` on assignment and deletion, and pickling and copying through its fields.
Its ``__init__`` sets the fields with ``object.__setattr__``, as a frozen dataclass's does. A field left out
of equality and the hash (``field(compare=False)``) is named in ``_uncompared``. (No ``dataclasses.fields``
or ``replace`` for these: code that needs them uses a dataclass.)
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from operator import attrgetter
from typing import Any, Callable, ClassVar

__all__ = ["Frozen", "FrozenInstanceError", "Value"]


def _none(obj: object) -> tuple:
    return ()


def _key_of(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    if not names:
        return _none
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)  # a tuple of the fields (read from the class: not a method)


class Value:
    __slots__: tuple[str, ...] = ()
    _key: ClassVar[Callable[[Any], tuple]] = _none
    _uncompared: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names: tuple[str, ...] = cls.__slots__
        cls.__match_args__ = tuple(names)  # type: ignore[misc,attr-defined]  # as a dataclass has it
        key = cls._key = _key_of(tuple(n for n in names if n not in cls._uncompared))

        # equality and the hash of each class, with its key at hand (no lookup through the class per call)
        def __eq__(self: Any, other: object) -> bool:
            if other.__class__ is self.__class__:
                return key(self) == key(other)
            return NotImplemented

        def __hash__(self: Any) -> int:
            return hash(key(self))

        cls.__eq__ = __eq__  # type: ignore[method-assign]
        cls.__hash__ = __hash__  # type: ignore[method-assign]

    def __eq__(self, other: object) -> bool:  # (each subclass has its own, made above)
        cls = self.__class__
        if other.__class__ is cls:
            return cls._key(self) == cls._key(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.__class__._key(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{self.__class__.__qualname__}({fields})"


class Frozen(Value):
    __slots__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self) -> list:
        return [getattr(self, name) for name in self.__slots__]

    def __setstate__(self, state: list) -> None:
        for name, value in zip(self.__slots__, state, strict=False):
            object.__setattr__(self, name, value)
