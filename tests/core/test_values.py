"""The value classes (sessionview.core.values) behave as the dataclasses they replace (``frozen=True, slots=True``
for :class:`Frozen`, ``slots=True, unsafe_hash=True`` for :class:`Value`): same constructor, repr, equality, hash,
immutability, pickling and copying."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from sessionview.core import tail_events
from sessionview.core.doc import branches, document, model, parse
from sessionview.core.formats import brute_message
from sessionview.core.store import stamp
from sessionview.core.values import Frozen, Value
from sessionview.core.view import tools, usage

MODULES = (tail_events, tools, document, model, brute_message, branches, parse, usage, stamp)
CLASSES = [c for m in MODULES for c in vars(m).values()
           if inspect.isclass(c) and issubclass(c, Value) and c.__module__ == m.__name__]


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


def test_the_modules_hold_the_classes():
    names = {c.__name__ for c in CLASSES}
    assert {"Appended", "Pending", "Deleted", "DiffLine", "ResultInfo", "Numbered", "Line", "Record", "ToolCall", "Problem",
            "Message", "Block", "Branch", "Parsed", "Usage", "LoadStamp"} <= names
    assert not [c for c in CLASSES if dataclasses.is_dataclass(c)]
    assert dataclasses.is_dataclass(model.View)  # dataclasses.replace and fields() are used on it


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__.rsplit('.', 1)[1]}.{c.__name__}")
def test_a_value_class_behaves_as_its_dataclass(cls):
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


def test_defaults_are_the_dataclasses():
    assert tail_events.Appended((1,), 5) == tail_events.Appended((1,), 5, None, False)
    assert tail_events.Pending(3, 4).preview == b""
    assert tail_events.Replaced().reason == "a new file at the same path"
    assert repr(tail_events.Deleted()) == "Deleted()" and tail_events.Deleted() == tail_events.Deleted()
    assert tools.Generic(()).more == 0 and tools.JsonLine(0, "x").block is False
    assert hash(tools.CommandCall("ls")) == hash(("ls", None, None))


def test_a_field_that_holds_a_list_makes_it_unhashable_as_with_a_dataclass():
    n = tools.Numbered(1, ["a"], [])
    assert n == tools.Numbered(1, ["a"], [])
    with pytest.raises(TypeError):
        hash(n)


def test_a_field_left_out_of_equality_is_left_out_of_the_hash_too():
    a = brute_message.Message("user", "hi", notes=("reasoning dropped",))
    b = brute_message.Message("user", "hi")
    assert a == b and hash(a) == hash(b) and a.notes == ("reasoning dropped",)
    assert repr(a) == "Message(role='user', content='hi', tool_calls=None, tool_call_id=None, reasoning=None, notes=('reasoning dropped',))"
