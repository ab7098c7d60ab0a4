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


def test_a_child_reaped_elsewhere_gives_none_not_an_error():
    """With SIGCHLD ignored the kernel reaps the child at once: its exit is unknown, so its bytes are not
    trusted (the caller does that work itself) and nothing is raised (it used to be ChildProcessError)."""
    import signal

    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        assert in_a_child(lambda: b"theirs", lambda: "mine") == ("mine", None)
    finally:
        signal.signal(signal.SIGCHLD, old)


def test_a_child_says_nothing_on_this_processs_streams(capfd):
    def noisy() -> bytes:
        os.write(1, b"child stdout")
        os.write(2, b"child stderr")
        return b"ok"

    assert in_a_child(noisy, lambda: 1) == (1, b"ok")
    out, err = capfd.readouterr()
    assert "child" not in out and "child" not in err
