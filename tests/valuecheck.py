"""The check that a value class (sessionview.core.values) behaves as the dataclass it stands for (``frozen=True,
slots=True`` for a :class:`Frozen`, ``slots=True, unsafe_hash=True`` for a :class:`Value`): same constructor, repr,
equality, hash, immutability, pickling and copying. Used by the core's tests and the UI's (``tests/`` is on
sys.path: its conftest's directory)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from sessionview.core.values import Frozen


def reference(cls: type) -> type:
    """The dataclass that ``cls`` stands for: its fields and defaults, from its ``__init__``."""
    fields = []
    for p in inspect.signature(cls).parameters.values():
        compare = p.name not in cls._uncompared
        if p.default is not p.empty:
            fields.append((p.name, object, dataclasses.field(default=p.default, compare=compare)))
        else:
            fields.append((p.name, object, dataclasses.field(compare=compare)))
    frozen = issubclass(cls, Frozen)
    ref = dataclasses.make_dataclass(cls.__name__, fields, frozen=frozen, slots=True, unsafe_hash=not frozen)
    ref.__qualname__ = cls.__qualname__
    return ref


def sample(cls: type, shift: int = 0) -> list:
    return [(i + 1 + shift, f"v{i}") if i % 2 else i + shift for i in range(len(cls.__slots__))]


def check_value_class(cls: type) -> None:
    ref = reference(cls)
    assert cls.__slots__ == tuple(f.name for f in dataclasses.fields(ref)) == cls.__match_args__
    args = sample(cls)
    a, b, r = cls(*args), cls(*args), ref(*args)
    assert repr(a) == repr(r)
    assert a == b and not (a != b) and hash(a) == hash(b) == hash(r)
    assert a.__eq__(r) is NotImplemented and a != r  # another class is never equal, as with dataclasses
    if args:
        assert a != cls(*sample(cls, 1))
        kwargs = {name: v for name, v in zip(cls.__slots__, args, strict=True)}
        assert cls(**kwargs) == a
        if issubclass(cls, Frozen):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(a, cls.__slots__[0], "changed")
            with pytest.raises(dataclasses.FrozenInstanceError):
                delattr(a, cls.__slots__[0])
            assert getattr(a, cls.__slots__[0]) == args[0]
        else:
            c, rc = cls(*args), ref(*args)
            setattr(c, cls.__slots__[0], "changed")
            setattr(rc, cls.__slots__[0], "changed")
            assert repr(c) == repr(rc) and hash(c) == hash(rc) and c != a
    with pytest.raises(AttributeError):
        a.not_a_field = 1  # no __dict__: slots only
    with pytest.raises(TypeError):
        cls(*args, "one too many")
    for p in range(2 if not issubclass(cls, Frozen) else 0, pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(a, protocol=p)) == a
    assert copy.copy(a) == a and copy.deepcopy(a) == a
