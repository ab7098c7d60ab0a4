"""The newline index on two cores (``linescan.scan_newlines_split``): the offsets of a forked child's half
follow this process's, exactly those one scan finds, wherever the middle falls; a child that fails leaves its
half to this process."""

import os
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionview.core.doc import linescan
from sessionview.core.doc.document import Document

pytestmark = pytest.mark.skipif(not linescan._may_fork(), reason="needs fork on Linux with two cores")


def _reader(data: bytes):
    return lambda o, n: data[o : o + n]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([b"", b"\n", b"\r\n", b"x", b"{}", b"\n\n", b"y" * 50]), max_size=60), st.integers(0, 3))
def test_the_split_scan_finds_what_one_scan_finds(parts, start):
    data = b"".join(parts)
    start = min(start, len(data))
    linescan_min, linescan.SPLIT_MIN = linescan.SPLIT_MIN, 0
    try:
        one, two = array("q"), array("q")
        linescan.scan_newlines(_reader(data), start, len(data), one)
        linescan.scan_newlines_split(_reader(data), start, len(data), two)
    finally:
        linescan.SPLIT_MIN = linescan_min
    assert two == one


def test_a_child_that_fails_leaves_its_half_to_the_parent(monkeypatch):
    data = b"".join(b"line %d\n" % i for i in range(5000))
    parent = os.getpid()

    def read(o, n):
        if os.getpid() != parent:
            raise linescan.SourceChanged("in the child only")
        return data[o : o + n]

    monkeypatch.setattr(linescan, "SPLIT_MIN", 0)
    got, expected = array("q"), array("q")
    linescan.scan_newlines_split(read, 0, len(data), got)
    linescan.scan_newlines(_reader(data), 0, len(data), expected)
    assert got == expected


def test_a_document_loaded_on_two_cores_has_the_same_lines(tmp_path, monkeypatch):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + b"".join(b'{"n":%d}%s' % (i, b"\r\n" if i % 3 else b"\n") for i in range(20000)) + b"tail")
    one = Document.load(p, digest=False)
    monkeypatch.setattr(linescan, "SPLIT_MIN", 0)
    two = Document.load(p, digest=False)
    assert two.source.starts == one.source.starts and len(two) == 20001
    assert [r.data for r in two] == [r.data for r in one]
    assert two.to_bytes() == p.read_bytes()
    one.close()
    two.close()


def test_no_fork_to_spare_means_one_scan(monkeypatch):
    data = b"".join(b"line %d\n" % i for i in range(3000))

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(linescan, "SPLIT_MIN", 0)
    monkeypatch.setattr(os, "fork", no_fork)
    got, expected = array("q"), array("q")
    linescan.scan_newlines_split(_reader(data), 0, len(data), got)
    linescan.scan_newlines(_reader(data), 0, len(data), expected)
    assert got == expected
