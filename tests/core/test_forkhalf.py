import os

import pytest

from sessionview.core.doc.forkhalf import in_a_child

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def test_the_childs_bytes_come_back_beside_this_processs_result():
    assert in_a_child(lambda: b"x" * (3 << 20), lambda: 42) == (42, b"x" * (3 << 20))


def test_a_child_that_fails_gives_none():
    def fails() -> bytes:
        raise ValueError("the file shrank")

    assert in_a_child(fails, lambda: "mine") == ("mine", None)


@pytest.mark.parametrize("fails", ["pipe", "fork"])
def test_no_child_to_be_had_gives_none_and_leaves_no_descriptor(monkeypatch, fails):
    def refuse(*args):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, fails, refuse)
    before = len(os.listdir("/proc/self/fd"))
    assert in_a_child(lambda: b"never", lambda: 1) == (1, None)
    assert len(os.listdir("/proc/self/fd")) == before
