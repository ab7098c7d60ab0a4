"""The views of a file read once (``show`` of a big file) are those of the indexed session, record for record."""

import glob
import os

import pytest

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
