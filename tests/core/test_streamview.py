"""The views of a file read once (``show`` of a big file) are those of the indexed session, record for record."""

import glob
import os
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionview.core import streamview
from sessionview.core.session import JsonlSession, open_session
from sessionview.core.streamview import StreamedSession, open_stream

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")
FIXTURES = sorted(
    p for p in glob.glob(os.path.join(FIX, "**", "*"), recursive=True) if os.path.isfile(p)
)


def _both(path, **kw):
    stream = open_stream(path, **kw)
    session = open_session(path, digest=False, **kw)
    return stream, session


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, FIX))
def test_a_streamed_file_has_the_views_of_the_indexed_one(path):
    stream, session = _both(path)
    try:
        if not isinstance(session, JsonlSession):
            assert stream is None  # a whole JSON document or a LittleGhost store: read indexed
            return
        if session.adapter.tree or session.adapter.updates_by_id:
            assert stream is None  # records linked by id across the file (pi branches, Gemini copies): read indexed
            return
        assert stream is not None
        assert (stream.format, stream.format_title, stream.read_only_reason) == (
            session.format, session.format_title, session.read_only_reason,
        )
        assert [repr(v) for v in stream.views()] == [repr(v) for v in session.stream()]  # repr: NaN != NaN
        assert stream.count == len(session)
    finally:
        session.close()
        if stream is not None:
            stream.close()


def _lines_case(tmp_path, data: bytes, monkeypatch, cap=None, chunk=None):
    if chunk is not None:
        monkeypatch.setattr(streamview, "CHUNK", chunk)
    p = tmp_path / "s.jsonl"
    p.write_bytes(data)
    kw = {"cap": cap} if cap is not None else {}
    stream = open_stream(str(p), **kw)
    session = JsonlSession.load(str(p), digest=False, **kw)
    try:
        assert [repr(v) for v in stream.views()] == [repr(v) for v in session.stream()]  # repr: NaN != NaN
        assert stream.count == len(session)
    finally:
        stream.close()
        session.close()


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_lines_cut_by_the_reads_bom_crlf_blank_partial_and_over_the_cap(tmp_path, monkeypatch, chunk):
    big = b'{"role":"user","content":"' + b"x" * 300 + b'"}'
    data = (
        b"\xef\xbb\xbf" + b'{"role":"system","content":"hi"}\r\n' + b"\n" + big + b"\n" + b"{oops\n"
        + b'{"role":"assistant","content":"a","content":"b"}\n' + big + b"\r\n" + b'{"role":"user","content":"cut'
    )
    _lines_case(tmp_path, data, monkeypatch, cap=100, chunk=chunk)


def test_an_oversized_last_line_without_a_terminator(tmp_path, monkeypatch):
    data = b'{"role":"user","content":"hi"}\n' + b'{"role":"user","content":"' + b"y" * 5000
    _lines_case(tmp_path, data, monkeypatch, cap=100, chunk=64)


def test_empty_and_bom_only_files(tmp_path, monkeypatch):
    _lines_case(tmp_path, b"", monkeypatch)
    _lines_case(tmp_path, b"\xef\xbb\xbf", monkeypatch)


def test_too_few_valid_records_to_hold_falls_back_to_the_index(tmp_path, monkeypatch):
    monkeypatch.setattr(streamview, "HEAD_BUDGET", 10)
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"nope\n" * 50)
    assert open_stream(str(p)) is None


def test_a_file_that_shrinks_while_read_raises_source_changed(tmp_path):
    from sessionview.core.doc.linescan import SourceChanged

    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"role":"user","content":"hi"}\n' * 10)
    fd = os.open(p, os.O_RDONLY)
    try:
        with pytest.raises(SourceChanged):  # the format is detected from the first records, in the constructor
            list(StreamedSession(fd, str(p), 10_000).views())
    finally:
        os.close(fd)


def _model_lines(data: bytes, start: int):
    """What LineReader gives, whatever the reads: ``(line's bytes, terminator, size)`` of each line."""
    if start == 0 and data.startswith(b"\xef\xbb\xbf"):
        start = 3
    body = data[start:]
    pieces = body.split(b"\n")
    last = pieces.pop()
    out = []
    for p in pieces:
        if p.endswith(b"\r"):
            out.append((p[:-1], b"\r\n", len(p) + 1))
        else:
            out.append((p, b"\n", len(p) + 1))
    if last:
        out.append((last, b"", len(last)))
    return out


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", b"\xef\xbb\xbf", b"x" * 9]), max_size=40).map(b"".join),
    chunk=st.integers(1, 24),
    cap=st.integers(0, 12),
    preview=st.integers(1, 8),
    start=st.integers(0, 3),
)
def test_line_reader_gives_every_line_whatever_the_reads(tmp_path, data, chunk, cap, preview, start):
    """Lines joined across reads, CRLF split by a read, lines over the cap as a preview (a prefix of at least
    the preview's size) with their whole size, the last line unterminated."""
    p = tmp_path / "lines"
    p.write_bytes(data)
    start = min(start, len(data))
    fd = os.open(p, os.O_RDONLY)
    try:
        with mock.patch.object(streamview, "CHUNK", chunk), mock.patch.object(streamview, "RAW_PREVIEW", preview):
            got = list(streamview.LineReader(fd, start, len(data), cap))
    finally:
        os.close(fd)
    want = _model_lines(data, start)
    assert [size for _, _, size in got] == [size for _, _, size in want]
    for (raw, term, size), (line, wterm, _) in zip(got, want, strict=True):
        if size <= cap + 2:
            assert (raw, term) == (line, wterm)
        else:  # over the cap: its whole size, and at least a preview of its bytes
            whole = line + b"\r" if wterm == b"\r\n" else line  # (the CR may be in the preview)
            assert whole.startswith(raw) and len(raw) >= min(len(line), preview)
            assert term == wterm or term == b"\n" != wterm  # (a CR before it may be in the preview)
