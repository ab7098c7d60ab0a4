import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionview.core.doc.document import BOM, Document, Line, NotRegularFile, Source, open_regular
from sessionview.core.doc.linescan import tail_line_starts


def lines_of(doc):
    return [(r.raw, r.terminator) for r in doc]


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", []),
        (b"a", [(b"a", b"")]),
        (b"a\n", [(b"a", b"\n")]),
        (b"a\r\nb", [(b"a", b"\r\n"), (b"b", b"")]),
        (b"\n\n", [(b"", b"\n"), (b"", b"\n")]),
        (b"a\rb\n", [(b"a\rb", b"\n")]),  # a lone CR is content, never a line break
        ("x\u2028y\n".encode(), [("x\u2028y".encode(), b"\n")]),  # never str.splitlines
    ],
)
def test_records_keep_their_terminators(data, expected):
    doc = Document.from_bytes(data)
    assert lines_of(doc) == expected
    assert doc.to_bytes() == data
    assert doc.size() == len(data)


def test_bom_is_kept_apart_and_moves_to_the_new_first_line():
    data = BOM + b'{"a":1}\n{"b":2}\n'
    doc = Document.from_bytes(data)
    assert doc.bom == BOM
    assert doc.record(1).raw == b'{"a":1}'
    assert doc.to_bytes() == data
    assert doc.splice(1, 1, []).to_bytes() == BOM + b'{"b":2}\n'


def test_splice_replace_delete_insert_and_untouched_bytes():
    doc = Document.from_bytes(b"1\r\n2\n3\n4")
    assert doc.splice(2, 3, [Line(b"X")]).to_bytes() == b"1\r\nX\n4"
    assert doc.splice(1, 4, []).to_bytes() == b""
    assert doc.splice(5, 4, [Line(b"5", b"")]).to_bytes() == b"1\r\n2\n3\n45"
    assert doc.splice(1, 0, [Line(b"0")]).to_bytes() == b"0\n1\r\n2\n3\n4"
    edited = doc.splice(2, 2, [Line(b"two")])
    assert edited.record(3).start == doc.record(3).start  # untouched records still come from the source
    assert edited.record(2).start is None
    assert edited.edited and not doc.edited
    with pytest.raises(IndexError):
        doc.splice(3, 6, [])


@settings(max_examples=300)
@given(st.binary(max_size=400))
def test_any_bytes_round_trip(data):
    doc = Document.from_bytes(data)
    assert doc.to_bytes() == data
    assert b"".join(doc.bom + b"".join(r.data for r in doc) for _ in [0]) == data


@settings(max_examples=150)
@given(st.lists(st.sampled_from([b"{}", b'{"a":"\xc3\xa9"}', b"", b"\r", b"x\xff", b"\xef\xbb\xbf", b"\n"]), max_size=20))
def test_structured_bytes_round_trip_through_a_file(tmp_path_factory, parts):
    data = b"\n".join(parts)
    path = tmp_path_factory.mktemp("rt") / "s.jsonl"
    path.write_bytes(data)
    doc = Document.load(path)
    try:
        assert doc.to_bytes() == data
        assert doc.source_digest() == __import__("xxhash").xxh3_128(data).hexdigest()
    finally:
        doc.close()


@settings(max_examples=200)
@given(st.binary(max_size=200), st.integers(1, 5))
def test_tail_line_starts_match_the_full_index(data, count):
    src = Source.from_bytes(data)
    read = lambda o, n: data[o : o + n]  # noqa: E731
    want = list(src.starts[-count:]) if src.count else []
    assert tail_line_starts(read, len(src.bom), len(data), count) == want


def test_index_scans_across_chunk_boundaries(tmp_path, monkeypatch):
    import sessionview.core.doc.linescan as linescan

    monkeypatch.setattr(linescan, "CHUNK", 7)
    data = b"".join(b'{"n":%d}\n' % i for i in range(100)) + b"tail"
    p = tmp_path / "x.jsonl"
    p.write_bytes(data)
    doc = Document.load(p)
    assert len(doc) == 101
    assert doc.record(101).raw == b"tail" and doc.record(101).partial
    assert doc.to_bytes() == data
    doc.close()


def test_short_read_after_truncation_is_an_error_not_garbage(tmp_path):
    from sessionview.core.doc.linescan import SourceChanged

    p = tmp_path / "s.jsonl"
    p.write_bytes(b"aaaa\nbbbb\n")
    doc = Document.load(p)
    with open(p, "r+b") as f:
        f.truncate(3)
    with pytest.raises(SourceChanged):
        doc.record(2)
    doc.close()


def test_open_regular_refuses_directories_and_fifos_without_blocking(tmp_path):
    with pytest.raises(NotRegularFile, match="a directory"):
        open_regular(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match="a FIFO"):
        open_regular(fifo)  # O_NONBLOCK: would hang forever otherwise


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf", b"one\n", b"\xef\xbb\xbfa\nbb\n\nccc", b"x\n" * 40 + b"tail"])
@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 20])
def test_the_hash_taken_while_indexing_is_xxh3_of_every_byte_in_order(monkeypatch, data, chunk):
    import xxhash

    from sessionview.core.doc import linescan
    from sessionview.core.doc.document import Source

    monkeypatch.setattr(linescan, "CHUNK", chunk)  # line ends and the BOM across chunk boundaries
    source = Source.from_reader(lambda offset, size: data[offset : offset + size], len(data))
    assert source.hexdigest == xxhash.xxh3_128(data).hexdigest()
    assert Source.from_reader(lambda offset, size: data[offset : offset + size], len(data), digest=False).hexdigest is None
