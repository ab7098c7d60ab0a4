"""The quote helper (:mod:`sessionview.core.doc.quotes`) against a file rewritten in place under a pass, and
what a pass leaves behind: the reader parses the very bytes the helper counted (so a record with a repeated key
is marked whatever the file holds by then), and a pass that ends, or a session closed mid-pass, leaves no child
process and no descriptor."""

import os
import threading

from test_quote_helper import _children, _fds, _helper_on, _served_blocks, _to_helper_start, _wait_served, needs_fork

from sessionview.core.doc import quotes
from sessionview.core.session import JsonlSession

# every line the same length, so a line can be swapped for the other form without moving any offset
PLAIN = b'{"role":"user","content":"m%05d","n":1234567}'  # no repeated key: 10 unescaped quotes, 5 strings
TWICE = b'{"role":"user","content":"m%05d","n":1,"n":2}'  # "n" twice: 12 quotes; its value has 5 strings too
LINES = 2000


def _file(target: int | None) -> bytes:
    return b"".join((TWICE if i == target else PLAIN) % i + b"\n" for i in range(LINES))


def _rewrite_in_place(path, data: bytes) -> None:
    """What Brute's SessionLog does: ``File.open(path, "w")`` (truncate, same inode), then write the lines."""
    ino = os.stat(path).st_ino
    with open(path, "wb") as f:
        f.write(data)
    assert os.stat(path).st_ino == ino


def _duplicate(view) -> bool:
    return any(p.kind == "duplicate keys" for p in view.problems)


def _pass_across_a_rewrite(tmp_path, monkeypatch, before: bool, after: bool):
    """A pass with a helper over the file with the repeated-key form at a line of the block after the reader's
    (``before``) or not, rewritten in place with it there (``after``) or not once the helper has read and
    counted that block, before the reader reaches it: the views, the line swapped, and whether the reader took
    that block from the helper."""
    taken = _helper_on(monkeypatch)
    p = tmp_path / "s.jsonl"
    p.write_bytes(_file(None))
    s = JsonlSession.load(p, digest=False)
    first, _ = _to_helper_start(s)  # where the pass starts its helper: the same line in a file of the same layout
    nxt = quotes.block_end(s.doc.source.starts, first, quotes.CELL)
    target = nxt + 5  # a line of the block the helper reads ahead
    s.close()
    p.write_bytes(_file(target if before else None))
    s = JsonlSession.load(p, digest=False)
    r, w = _served_blocks(monkeypatch)
    again, views = _to_helper_start(s)
    assert again == first
    os.close(w)
    _wait_served(r, nxt)  # the helper has read and counted the block of ``target``
    os.close(r)
    _rewrite_in_place(p, _file(target if after else None))
    views += [s.view(n, keep=False) for n in range(first + 2, len(s) + 1)]
    s.close()
    return views, target, nxt in taken


def _consistent(views) -> None:
    """Every view is marked exactly when the record it shows repeats a key (``n`` is 2 only in that form)."""
    for v in views:
        assert _duplicate(v) == (v.value["n"] == 2), v.number


@needs_fork
def test_a_line_rewritten_with_a_repeated_key_after_the_helper_counted_it(tmp_path, monkeypatch):
    """The helper counted the plain line (10 quotes, as many as the repeated-key form's value has strings): had
    the reader read the rewritten line itself and taken that count, the repeated key would go unmarked. It
    parses the bytes the helper counted instead: the plain record, rightly unmarked."""
    views, target, took = _pass_across_a_rewrite(tmp_path, monkeypatch, False, True)
    assert took
    _consistent(views)
    assert views[target].value["n"] == 1234567 and not _duplicate(views[target])
    s = JsonlSession.load(tmp_path / "s.jsonl", digest=False)  # the file as rewritten: the line is marked
    assert _duplicate(s.view(target + 1, keep=False))
    s.close()


@needs_fork
def test_a_line_with_a_repeated_key_rewritten_after_the_helper_counted_it_is_still_marked(tmp_path, monkeypatch):
    views, target, took = _pass_across_a_rewrite(tmp_path, monkeypatch, True, False)
    assert took
    _consistent(views)
    assert views[target].value["n"] == 2 and _duplicate(views[target])


@needs_fork
def test_a_full_pass_leaves_no_child_and_no_descriptor(tmp_path, monkeypatch):
    _helper_on(monkeypatch)
    started = []
    real = quotes.QuoteHelper.__init__
    monkeypatch.setattr(quotes.QuoteHelper, "__init__", lambda self, *a: started.append(self) or real(self, *a))
    p = tmp_path / "s.jsonl"
    p.write_bytes(_file(LINES // 2))
    fds = _fds()
    s = JsonlSession.load(p, digest=False)
    (doc_fd,) = _fds() - fds
    views = [s.view(n, keep=False) for n in range(1, len(s) + 1)]
    assert started and not started[0].running  # a helper ran, and is reaped
    assert not _children()
    try:
        os.waitpid(-1, os.WNOHANG)
        raise AssertionError("a child is left")
    except ChildProcessError:
        pass
    assert _fds() == fds | {doc_fd}  # only the session's own file
    assert [v.number for v in views if _duplicate(v)] == [LINES // 2 + 1]
    s.close()
    assert _fds() == fds
    s.close()  # again: nothing


@needs_fork
def test_a_session_closed_mid_pass_reaps_its_helper_from_any_thread(tmp_path, monkeypatch):
    _helper_on(monkeypatch)
    p = tmp_path / "s.jsonl"
    p.write_bytes(_file(None))
    fds = _fds()
    s = JsonlSession.load(p, digest=False)
    for n in range(1, len(s) // 2):
        s.view(n, keep=False)
    helper = s._ahead._helper
    assert helper is not None and helper.running
    assert helper._pid in _children()
    closers = [threading.Thread(target=s.close) for _ in range(3)]
    for t in closers:
        t.start()
    for t in closers:
        t.join()
    assert not helper.running and not _children()
    assert _fds() == fds


def test_close_with_nothing_started(tmp_path):
    JsonlSession.from_bytes(PLAIN % 1 + b"\n").close()
    p = tmp_path / "s.jsonl"
    p.write_bytes(_file(None))
    fds = _fds()
    s = JsonlSession.load(p, digest=False)
    assert s.view(3).value["n"] == 1234567
    s.close()
    s.close()
    assert _fds() == fds and not _children()
    with JsonlSession.load(p, digest=False) as s:
        assert len(_fds() - fds) == 1 and s.view(2).value["n"] == 1234567
    assert _fds() == fds


@needs_fork
def test_a_block_is_taken_with_the_counts_of_its_own_bytes_and_never_while_written(tmp_path, monkeypatch):
    from sessionview.core.doc.parse import unescaped_quotes

    _helper_on(monkeypatch)
    p = tmp_path / "s.jsonl"
    p.write_bytes(_file(LINES // 2))
    s = JsonlSession.load(p, digest=False)
    r, w = _served_blocks(monkeypatch)
    first, _ = _to_helper_start(s)
    os.close(w)
    helper = s._ahead._helper
    starts = s.doc.source.starts
    nxt = quotes.block_end(starts, first, quotes.CELL)
    stop = quotes.block_end(starts, nxt, quotes.CELL)
    size = starts[stop] - starts[nxt]
    _wait_served(r, nxt)
    os.close(r)
    slot = starts[nxt] // quotes.CELL % quotes.SLOTS
    helper._tags[slot] = -1  # as the helper marks a slot it is writing
    assert helper.take(nxt, stop, size) is None
    helper._tags[slot] = nxt + 1
    data, counts = helper.take(nxt, stop, size)
    assert data == p.read_bytes()[starts[nxt] : starts[stop]]
    assert counts == [unescaped_quotes(data[a - starts[nxt] : b - starts[nxt]]) for a, b in zip(starts[nxt:stop], starts[nxt + 1 : stop + 1], strict=True)]
    assert helper.take(nxt + 1, stop, size - (starts[nxt + 1] - starts[nxt])) is None  # not a block's first line
    s.close()
    assert helper.take(nxt, stop, size) is None and not _children()  # closed: nothing to take, nothing left
