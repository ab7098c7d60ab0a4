"""The value classes (sessionview.core.values) behave as the dataclasses they replace (``frozen=True, slots=True``
for :class:`Frozen`, ``slots=True, unsafe_hash=True`` for :class:`Value`): same constructor, repr, equality, hash,
immutability, pickling and copying."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from valuecheck import check_value_class

from sessionview.core import tail_events, tail_open
from sessionview.core.doc import branches, document, model, pairing, parse
from sessionview.core.formats import base, brute_message
from sessionview.core.store import stamp
from sessionview.core.values import Value
from sessionview.core.view import filter, stats, timing, tools, usage

MODULES = (tail_events, tools, document, model, brute_message, branches, parse, usage, stamp, pairing, timing, stats,
           filter, tail_open, base)
CLASSES = [c for m in MODULES for c in vars(m).values()
           if inspect.isclass(c) and issubclass(c, Value) and c.__module__ == m.__name__]


def test_the_modules_hold_the_classes():
    names = {c.__name__ for c in CLASSES}
    assert {"Appended", "Pending", "Deleted", "DiffLine", "ResultInfo", "Numbered", "Line", "Record", "ToolCall", "Problem",
            "Message", "Block", "Branch", "Parsed", "Usage", "LoadStamp", "Pairing", "Timing", "Stats", "UsageTotals",
            "Branches", "Filter", "TailOpen", "Capabilities", "Encoded"} <= names
    assert not [c for c in CLASSES if dataclasses.is_dataclass(c)]
    assert dataclasses.is_dataclass(model.View)  # dataclasses.replace and fields() are used on it


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__.rsplit('.', 1)[1]}.{c.__name__}")
def test_a_value_class_behaves_as_its_dataclass(cls):
    check_value_class(cls)


def test_defaults_are_the_dataclasses():
    assert tail_events.Appended((1,), 5) == tail_events.Appended((1,), 5, None, False)
    assert tail_events.Pending(3, 4).preview == b""
    assert tail_events.Replaced().reason == "a new file at the same path"
    assert repr(tail_events.Deleted()) == "Deleted()" and tail_events.Deleted() == tail_events.Deleted()
    assert tools.Generic(()).more == 0 and tools.JsonLine(0, "x").block is False
    assert hash(tools.CommandCall("ls")) == hash(("ls", None, None))
    assert base.Capabilities() == base.Capabilities(False, False, base.Capabilities().not_compactable, False)
    assert filter.Filter() == filter.Filter(frozenset(), frozenset()) and not filter.Filter().active


def test_a_field_left_out_is_a_new_empty_one_as_a_default_factory_gives():
    a, b = stats.Stats(), stats.Stats()
    assert a == b and a.roles == {} and a.roles is not b.roles and a.timing is not b.timing and a.usage is not b.usage
    a.roles["user"] = 1
    assert b.roles == {} and a != b
    p, q = pairing.Pairing(), pairing.Pairing()
    assert p.calls is not q.calls and p.orphans is not q.orphans and p.orphans == [] and p.interrupted == []
    t = timing.Timing()
    assert t.gaps == [] and t._open == {} and t.gaps is not timing.Timing().gaps and t.open_limit == 10000
    u = usage.UsageTotals()
    assert u.sum == usage.Usage() and u.models == {} and u.models is not usage.UsageTotals().models and u.keep == 256
    assert branches.Branches().on is not branches.Branches().on and not branches.Branches()


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
