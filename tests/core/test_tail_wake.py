"""The follow thread's wait between polls: woken by inotify when the followed file changes (core.tail_wake)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from sessionview.core import tail_wake
from sessionview.core.tail import Appended, Follower
from sessionview.core.tail_wake import Wake, poll_loop

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def _session(tmp_path, text: str = '{"role":"user","content":"hi"}\n') -> str:
    path = str(tmp_path / "s.jsonl")
    with open(path, "w") as f:
        f.write(text)
    return path


def _later(action) -> threading.Thread:
    """Run ``action`` in a thread once the main thread waits (no sleep: the wait does not depend on it)."""
    t = threading.Thread(target=action)
    t.start()
    return t


@linux
def test_an_append_wakes_the_wait(tmp_path):
    path = _session(tmp_path)
    wake = Wake()
    assert wake.watch(path)

    def append():
        with open(path, "a") as f:
            f.write('{"role":"assistant","content":"yes"}\n')

    t = _later(append)
    assert wake.wait(30) is True  # (long before the time is up)
    t.join()
    wake.close()


@linux
def test_another_file_in_the_directory_does_not_wake(tmp_path):
    path = _session(tmp_path)
    wake = Wake()
    assert wake.watch(path)
    (tmp_path / "other.jsonl").write_text("{}\n")
    assert wake.wait(0.05) is False
    wake.close()


@linux
@pytest.mark.parametrize("change", ["rename over", "delete", "truncate", "touch"])
def test_changes_to_the_name_or_the_file_wake(tmp_path, change):
    path = _session(tmp_path)
    wake = Wake()
    assert wake.watch(path)
    if change == "rename over":
        tmp = tmp_path / "s.jsonl.tmp"
        tmp.write_text('{"role":"user","content":"hi"}\n{}\n')
        os.replace(tmp, path)
    elif change == "delete":
        os.unlink(path)
    elif change == "truncate":
        os.truncate(path, 0)
    else:
        os.utime(path, (1, 1))
    assert wake.wait(30) is True
    wake.close()


@linux
def test_a_write_through_another_hard_link_wakes(tmp_path):
    path = _session(tmp_path)
    elsewhere = tmp_path / "sub"
    elsewhere.mkdir()
    link = elsewhere / "link.jsonl"
    os.link(path, link)
    wake = Wake()
    assert wake.watch(path)
    with open(link, "a") as f:
        f.write("{}\n")
    assert wake.wait(30) is True
    wake.close()


@pytest.mark.parametrize("watching", [True, False])
def test_set_ends_a_wait_from_another_thread(tmp_path, watching):
    path = _session(tmp_path)
    wake = Wake()
    if watching:
        wake.watch(path)
    t = _later(wake.set)
    assert wake.wait(30) is False
    assert wake.is_set()
    t.join()
    wake.close()


def test_poll_loop_reports_appends_while_watching(tmp_path):
    path = _session(tmp_path)
    follower = Follower(path)
    wake = Wake()
    wake.armed = True
    seen: list = []

    def post(events):
        seen.extend(events)
        if len(seen) == 1:  # the file as it was; now an agent appends
            with open(path, "a") as f:
                f.write('{"role":"assistant","content":"yes"}\n')
        elif any(isinstance(e, Appended) and e.start > 0 for e in events):
            wake.set()

    poll_loop(wake, follower, path, 0.015, post)
    follower.close()
    wake.close()
    appended = [e for e in seen if isinstance(e, Appended)]
    assert [e.count for e in appended] == [1, 1]


class _Unreported:
    """A follower whose file changes without the kernel saying so (a network file system): every poll
    after the first finds news."""

    settled = True
    ident = (0, 0)

    def __init__(self, stop_after: int) -> None:
        self.polls = 0
        self.stop_after = stop_after

    def poll(self) -> list:
        self.polls += 1
        return [] if self.polls == 1 else [Appended((self.polls,), self.polls + 1)]


@linux
def test_changes_the_watch_never_reports_end_the_watching(tmp_path, monkeypatch):
    monkeypatch.setattr(tail_wake, "WATCHED_POLL", 0.01)
    monkeypatch.setattr(tail_wake, "MISS_GRACE", 0.0)
    path = _session(tmp_path)
    wake = Wake()
    wake.armed = True
    follower = _Unreported(6)
    watched: list[bool] = []

    def post(events):
        watched.append(wake.watching)
        if follower.polls >= follower.stop_after:
            wake.set()

    poll_loop(wake, follower, path, 0.001, post)
    wake.close()
    # watching started after the first poll, and ended with the MISSES-th unreported change
    assert watched[: tail_wake.MISSES] == [True] * (tail_wake.MISSES - 1) + [False]
    assert watched[-1] is False


def test_without_inotify_the_loop_polls(tmp_path, monkeypatch):
    monkeypatch.setattr(Wake, "watch", lambda self, path: False)
    path = _session(tmp_path)
    wake = Wake()
    wake.armed = True
    follower = _Unreported(4)

    def post(events):
        if follower.polls >= follower.stop_after:
            wake.set()

    poll_loop(wake, follower, path, 0.001, post)
    assert follower.polls == 4 and not wake.watching


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_no_descriptor_left_for_the_pipe_means_no_watch_and_no_leak(tmp_path, monkeypatch):
    path = _session(tmp_path)
    wake = Wake()

    def no_pipe():
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(tail_wake.os, "pipe", no_pipe)
    before = len(os.listdir("/proc/self/fd"))
    assert wake.watch(path) is False and not wake.watching
    assert len(os.listdir("/proc/self/fd")) == before  # the inotify descriptor was closed again


def test_the_parse_cache_holds_a_bounded_number_of_line_bytes():
    """A followed session parses and draws every new record: the parses kept are bounded by the bytes of
    their lines, not only by their count (a long follow kept 2048 parsed records, tens of MB)."""
    from sessionview.core.doc.parse import Parsed, Status
    from sessionview.core.session import JsonlSession

    line = b'{"role":"user","content":"' + b"x" * 1000 + b'"}\n'
    s = JsonlSession.from_bytes(line * 200)
    s._cache_bytes = 20 * len(line)
    for n in range(1, 201):
        assert s.view(n).text == "x" * 1000
    assert len(s._cache) == 20  # the last 20
    assert s._cached == sum(p.size for p in s._cache.values())
    s._keep((0, None), Parsed(Status.OVERSIZED, error='big', size=1 << 30))  # (holds nothing: evicts nothing)
    assert len(s._cache) == 21
    assert s.view(200).text == "x" * 1000 and s.view(1).text == "x" * 1000  # (parsed again when needed)
