"""``LinesAhead``: a window of lines read at once gives exactly what ``Source.line`` gives, in any order,
and a file that changed under it is read line by line as before (each line there is still read)."""

import os
import random

import pytest

from sessionview.core.doc.ahead import LinesAhead
from sessionview.core.doc.document import Document
from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.session import JsonlSession


def _data(seed: int) -> bytes:
    rnd = random.Random(seed)
    lines = []
    for _ in range(300):
        body = b'{"role":"user","content":"' + b"x" * rnd.choice([0, 1, 5, 40, 3000]) + b'"}'
        lines.append(rnd.choice([b"", b"  ", body, body]) + rnd.choice([b"\n", b"\r\n", b"\n"]))
    return b"".join(lines) + rnd.choice([b"", b'{"role":"user","con', b"\r"])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("window", [1, 64, 4096, 1 << 20])
def test_lines_ahead_are_the_source_lines_in_any_order(tmp_path, seed, window):
    p = tmp_path / "s.jsonl"
    p.write_bytes(_data(seed))
    doc = Document.load(p, digest=False)
    src = doc.source
    expected = [src.line(i)[:2] for i in range(src.count)]
    ahead = LinesAhead(src, window)
    assert [ahead.line(i) for i in range(src.count)] == expected  # one pass
    rnd = random.Random(seed)
    order = list(range(src.count)) * 2
    rnd.shuffle(order)
    for i in order[:200] + list(range(10, 40)):
        assert ahead.line(i) == expected[i]
    doc.close()


def test_a_truncated_file_reads_its_lines_one_by_one(tmp_path):
    p = tmp_path / "s.jsonl"
    data = b"".join(b'{"n":%d}\n' % i for i in range(1000))
    p.write_bytes(data)
    doc = Document.load(p, digest=False)
    src = doc.source
    ahead = LinesAhead(src, 1 << 20)
    assert ahead.line(0) == (b'{"n":0}', b"\n")
    cut = src.starts[500]
    os.truncate(p, cut)  # the window from line 1 on can no longer be read whole
    assert ahead.line(1) == (b'{"n":1}', b"\n")
    assert ahead.line(499) == (b'{"n":499}', b"\n")
    with pytest.raises(SourceChanged):
        ahead.line(500)
    doc.close()


def test_a_pass_of_views_reads_windows_and_scattered_views_read_lines(tmp_path, monkeypatch):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(b'{"role":"user","content":"m%d"}\n' % i for i in range(2000)))
    s = JsonlSession.load(p)
    reads = []
    real = s.doc.source._read
    monkeypatch.setattr(s.doc.source, "_read", lambda o, n: reads.append(n) or real(o, n))
    texts = [s.view(n, keep=False).text for n in range(1, len(s) + 1)]
    assert texts == [f"m{i}" for i in range(2000)]
    assert len(reads) <= 3  # the first line, then one window
    s.close()
    s = JsonlSession.load(p)
    reads.clear()
    real = s.doc.source._read
    monkeypatch.setattr(s.doc.source, "_read", lambda o, n: reads.append(n) or real(o, n))
    for n in (5, 900, 17, 1500, 6):
        s.view(n, keep=False)
    assert reads and max(reads) < 100  # each line alone (not a window; the first lines are parsed already)
    s.close()
