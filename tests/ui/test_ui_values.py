"""The UI's value classes (sessionview.core.values: no dataclass to build while the first screen waits) behave as
the dataclasses they replace, and a field left out is a new empty one, as a ``default_factory`` gives."""

from __future__ import annotations

import pytest
from rich.style import Style
from valuecheck import check_value_class

from sessionview.core.doc.model import Kind, View
from sessionview.ui.widgets.blocks import Entry, Links
from sessionview.ui.widgets.paint import Palette


@pytest.mark.parametrize("cls", [Links, Entry, Palette], ids=lambda c: c.__name__)
def test_a_ui_value_class_behaves_as_its_dataclass(cls):
    check_value_class(cls)


def test_the_defaults_are_the_dataclasses():
    view = View(1, Kind.MESSAGE, "user", "hi")
    e, f = Entry(view, 1), Entry(view, 1)
    assert e == f and e.expanded is False and e.term == "" and e.markdown is True and e.when == ""
    assert e.links == Links() and e.results == {} and e.results is not f.results and e.calls is not f.calls
    a, b = Links(), Links()
    assert a.results == a.calls == a.names == {} and a.results is not b.results
    p = Palette(Style(bold=True))
    assert p.styles == {} and p.code_theme == "monokai" and p.styles is not Palette(Style()).styles
    assert p["missing"] == Style()
