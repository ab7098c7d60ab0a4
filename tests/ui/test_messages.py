"""The workers' messages are made without dataclasses (their import comes before the first frame) but behave as
the dataclasses they were: fields in order from the class's annotations, defaults, keywords, repr, equality."""

from __future__ import annotations

import dataclasses

import pytest
from textual.message import Message

from sessionview.ui import messages as msg

CLASSES = [c for c in vars(msg).values() if isinstance(c, type) and issubclass(c, msg._Data) and c is not msg._Data]


def as_dataclass(cls: type) -> type:
    """The dataclass the message class was: the same annotations and defaults."""
    ns = {n: cls.__dict__[n] for n in cls.__annotations__ if n in cls.__dict__}
    return dataclasses.dataclass(type(cls.__name__, (), {"__annotations__": dict(cls.__annotations__), **ns, "__qualname__": cls.__qualname__}))


def test_every_message_is_one():
    assert len(CLASSES) == 15 and all(issubclass(c, Message) for c in CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_a_message_behaves_as_its_dataclass(cls):
    old = as_dataclass(cls)
    names = [f.name for f in dataclasses.fields(old)]
    assert list(cls._fields) == names
    required = [f.name for f in dataclasses.fields(old) if f.default is dataclasses.MISSING]
    values = {n: (i, f"v{i}") for i, n in enumerate(names)}
    new, was = cls(*values.values()), old(*values.values())
    assert repr(new) == repr(was) and all(getattr(new, n) == getattr(was, n) for n in names)
    assert cls(**values) == new
    if names:
        assert cls(*[("other", n) for n in names]) != new
    if required:
        short = [values[n] for n in required]
        assert repr(cls(*short)) == repr(old(*short))  # the rest from the defaults
        with pytest.raises(TypeError):
            cls(*short[:-1])
    with pytest.raises(TypeError):
        cls(*values.values(), "one too many")
    with pytest.raises(TypeError):
        hash(new)  # equal by its fields, so unhashable (as the dataclass was)
    assert hasattr(new, "_sender") and hasattr(new, "_no_default_action")  # Message.__init__ ran
