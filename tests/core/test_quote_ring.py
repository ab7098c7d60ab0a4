"""The quote helper's ring (:mod:`sessionview.core.doc.quotes`): a block of several cells (a long line), and one
that wraps past the ring's end, are handed over whole with the counts of their own bytes, a block longer than the
ring is left to the reader, and the helper writes a block only where the reader's is not."""

import os
import random
import select

from test_quote_helper import _children, _helper_on, _hostile_lines, _served_blocks, _wait_served, needs_fork

from sessionview.core.doc import quotes
from sessionview.core.session import JsonlSession


def _long(size: int, repeated: bool) -> bytes:
    """A line of about ``size`` bytes, dense with escaped quotes and backslashes; ``repeated``: a key twice."""
    body = b'\\"q\\" \\\\ x' * (size // 10)
    tail = b',"role":"tool"' if repeated else b""
    return b'{"role":"user","content":"' + body + b'"' + tail + b"}"


def _lines(seed: int, longer: bool) -> list[bytes]:
    rnd = random.Random(seed)
    cell = quotes.CELL
    short = iter(_hostile_lines(3000, seed))
    out: list[bytes] = []
    while len(out) < 1500:
        if rnd.random() < 0.08:  # a line of one to five cells
            out.append(_long(rnd.randint(cell, 5 * cell), rnd.random() < 0.3))
        else:
            out.append(next(short))
    if longer:
        out[700] = _long(quotes.SLOTS * cell + 5000, True)  # longer than the ring
    return out


def _blocks(starts, size: int, first: int) -> dict[int, tuple[int, int]]:
    """The blocks the helper reads, after line ``first``'s: ``{first line: (start, end)}``."""
    blocks = {}
    i = quotes.block_end(starts, first, quotes.CELL)
    while i < len(starts):
        stop = quotes.block_end(starts, i, quotes.CELL)
        blocks[i] = (starts[i], starts[stop] if stop < len(starts) else size)
        i = stop
    return blocks


def _in_lockstep(monkeypatch) -> tuple[list[tuple[int, int]], list[int]]:
    """Before the reader posts a block the helper may write (by its rule, given the block posted before), wait
    until the helper has handed it over: the pass then takes every such block, whatever the machine's speed.
    Returns the ``(block, reader's line)`` pairs the helper reported, as they come, and the helpers' first lines."""
    r, w = os.pipe()
    monkeypatch.setattr(quotes, "_served", lambda i, at: os.write(w, i.to_bytes(8, "little") + at.to_bytes(8, "little")))
    served: list[tuple[int, int]] = []
    posted: list[int] = []
    firsts: list[int] = []
    every: dict[int, dict[int, tuple[int, int]]] = {}  # a helper's first line: its blocks
    real = quotes.QuoteHelper.post

    def post(self, i):
        if self.first not in firsts:
            firsts.append(self.first)
            every[self.first] = _blocks(self.source.starts, self.source.size, self.first)
        ring = quotes.SLOTS * quotes.CELL
        blocks = every[self.first]
        reading = self.source.starts[max(posted[-1] if posted else 0, self.first)]
        if i in blocks:
            start, end = blocks[i]
            if end - start <= ring and start // quotes.CELL - reading // quotes.CELL < quotes.SLOTS and end - reading <= ring:
                while all(j != i for j, _ in served):
                    ready, _, _ = select.select([r], [], [], 60)
                    assert ready, f"the helper handed over no block for a minute (waiting for {i})"
                    got = os.read(r, 16)
                    assert len(got) == 16, "the helper is gone"
                    served.append((int.from_bytes(got[:8], "little"), int.from_bytes(got[8:], "little")))
        posted.append(i)
        real(self, i)

    monkeypatch.setattr(quotes.QuoteHelper, "post", post)
    return served, firsts


@needs_fork
def test_long_blocks_and_blocks_that_wrap_the_ring_are_handed_over_whole(tmp_path, monkeypatch):
    taken = _helper_on(monkeypatch)
    served, firsts = _in_lockstep(monkeypatch)
    ring = quotes.SLOTS * quotes.CELL
    body = _lines(11, longer=False)
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(body) + b"\n")
    with_helper = JsonlSession.load(p, digest=False)
    views = [with_helper.view(n, keep=False) for n in range(1, len(with_helper) + 1)]
    assert with_helper._ahead._helper is None and not _children()  # reaped at the pass's last window
    starts, size = with_helper.doc.source.starts, with_helper.doc.source.size
    assert len(firsts) == 1
    first = firsts[0]
    blocks = _blocks(starts, size, first)
    spans = {i: blocks[i] for i in taken}
    assert any(end - start > 2 * quotes.CELL for start, end in spans.values())  # a long line's block, of several cells
    assert any(start % ring + end - start > ring for start, end in spans.values())  # one that goes on past the ring's end
    assert set(taken) == {i for i, _ in served}  # each block handed over was taken (the lockstep)
    for i, at in served:  # written only where the reader's block (from line ``at``, or ``first``) was not
        start, end = blocks[i]
        reading = starts[max(at, first)]
        assert at < i and end - reading <= ring and start // quotes.CELL - reading // quotes.CELL < quotes.SLOTS
    monkeypatch.setattr(quotes, "ENABLED", False)
    plain = JsonlSession.load(p, digest=False)
    expected = [plain.view(n, keep=True) for n in range(1, len(plain) + 1)]
    assert [repr(v) for v in views] == [repr(v) for v in expected]  # repr: NaN is not NaN
    for line, v in zip(body, views, strict=True):
        if line.startswith(b'{"role":"user","content":"\\"q'):  # the long ones: marked exactly when a key repeats
            assert any(x.kind == "duplicate keys" for x in v.problems) == line.endswith(b',"role":"tool"}')
    with_helper.close()
    plain.close()


@needs_fork
def test_a_block_longer_than_the_ring_is_left_to_the_reader_and_the_helper_goes_on(tmp_path, monkeypatch):
    """The helper skips the block of a line longer than its ring, waits for the reader to read past it (the
    next block would take bytes of the ring the reader still needs), and hands over blocks after it."""
    taken = _helper_on(monkeypatch)
    body = _lines(5, longer=True)
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(body) + b"\n")
    s = JsonlSession.load(p, digest=False)
    r, w = _served_blocks(monkeypatch)
    starts = s.doc.source.starts
    cell = quotes.CELL
    assert quotes.block_end(starts, 700, cell) == 701  # the long line ends its block
    after = quotes.block_end(starts, 701, cell)
    views = [s.view(n, keep=False) for n in range(1, after + 1)]  # through line 701's block: the reader posted 701
    os.close(w)
    # the first block the helper hands over after the long line (the one after 701's, or the next, as the helper
    # was at the reader's block or behind it)
    served = _wait_served(r, after=701)
    os.close(r)
    views += [s.view(n, keep=False) for n in range(after + 1, len(s) + 1)]
    assert served in taken
    assert not any(i <= 700 < quotes.block_end(starts, i, cell) for i in taken)  # the long line's block: read here
    assert any(p.kind == "duplicate keys" for p in views[700].problems)
    monkeypatch.setattr(quotes, "ENABLED", False)
    plain = JsonlSession.load(p, digest=False)
    assert [repr(v) for v in views] == [repr(plain.view(n, keep=True)) for n in range(1, len(plain) + 1)]
    s.close()
    plain.close()
    assert not _children()
