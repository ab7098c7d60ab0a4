"""The quotes counted ahead (:mod:`sessionview.core.doc.quotes`): the count of many lines at once is each line's
own (:func:`unescaped_quotes`), a count handed to :func:`parse_record` changes nothing in what it finds, and a
pass over a big file with a forked helper gives the same views as one without it."""

import os
import platform
import random
import select

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_parse_duplicates import records

from sessionview.core.doc import ahead as ahead_mod
from sessionview.core.doc import quotes
from sessionview.core.doc.parse import parse_record, unescaped_quotes
from sessionview.core.session import JsonlSession


def _exact_unescaped(raw: bytes) -> int:
    """Quotes preceded by an even run of backslashes, one byte at a time."""
    n = run = 0
    for b in raw:
        if b == 0x5C:
            run += 1
            continue
        if b == 0x22 and run % 2 == 0:
            n += 1
        run = 0
    return n


lines = st.lists(
    st.lists(st.sampled_from([b'"', b"\\", b"\\\\", b'\\"', b"a", b"\0", b"\\u0022", b":"]), max_size=12).map(b"".join),
    max_size=8,
)


@settings(max_examples=400, deadline=None)
@given(lines, st.sampled_from([b"\n", b"\r\n"]), st.booleans())
def test_the_counts_of_a_block_are_the_counts_of_its_lines(parts, end, last_ended):
    """Lines ending in a backslash (which escape_decode would join to the next) and an unterminated last line
    ending in one (which it refuses) included: the block is then counted by replacing, with the same result."""
    ends = [end] * len(parts)
    if parts and not last_ended:
        ends[-1] = b""
    data = b"".join(p + e for p, e in zip(parts, ends, strict=True))
    offsets = [0]
    for p, e in zip(parts, ends, strict=True):
        offsets.append(offsets[-1] + len(p) + len(e))
    got = list(quotes.unescaped_quotes_of_lines(data, offsets))
    assert got == [unescaped_quotes(p) for p in parts] == [_exact_unescaped(p) for p in parts]
    assert got == list(quotes._by_replacing(data, offsets))


@settings(max_examples=400, deadline=None)
@given(records())
def test_a_count_handed_in_changes_nothing(raw):
    assert unescaped_quotes(raw) == _exact_unescaped(raw)
    plain = _key(parse_record(raw))
    for hint in (unescaped_quotes(raw), -1, unescaped_quotes(raw) + 2, 0):  # also wrong ones: the exact test decides
        assert _key(parse_record(raw, quotes=hint)) == plain, raw


def _key(p):
    return p.status, repr(p.value), p.error, p.notes, p.size, p.depth_bound  # repr: NaN is not NaN


def _hostile_lines(n: int, seed: int) -> list[bytes]:
    rnd = random.Random(seed)
    pool = [
        b'{"role":"user","content":"x"}',
        b'{"role":"user","content":"a \\"quoted\\" \\\\ word","role":"user"}',  # a repeated key
        b'{"role":"tool","tool_call_id":"c1","content":"\\u0022 \\\\\\" end\\\\"}',
        b'{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"n","arguments":{"a":"\\"","a":1}}]}',
        b'{"role":"user","content":"big 123456789012345678901234567890","n":123456789012345678901234567890}',
        b'{"role":"user","content":NaN}',
        b'{"role":"user","content":"\\ud800"}',
        b'{"role":"user","content":"\xff"}',
        b'{"role":"user","content":',
        b"",
        b'   ',
        b'[' * 600 + b']' * 600,
    ]
    return [rnd.choice(pool) + rnd.choice([b"", b" " * rnd.randint(0, 5000)]) for _ in range(n)]


needs_fork = pytest.mark.skipif(
    not (hasattr(os, "fork") and (os.cpu_count() or 1) > 1 and platform.machine() in ("x86_64", "AMD64")),
    reason="needs fork, two cores and x86-64",
)


def _helper_on(monkeypatch, cell: int = 4096) -> list[int]:
    """A helper for any pass of a few kilobytes, on a grid of ``cell`` bytes: the first lines of the blocks the
    reader took from it are listed."""
    monkeypatch.setattr(quotes, "_load", lambda: 0.0)  # whatever the machine's load
    monkeypatch.setattr(quotes, "MIN_BYTES", 1)
    monkeypatch.setattr(quotes, "CELL", cell)  # many blocks
    monkeypatch.setattr(ahead_mod, "RUN", 4)
    taken: list[int] = []
    real = quotes.QuoteHelper.take

    def take(self, i, stop, size):
        got = real(self, i, stop, size)
        if got is not None:
            taken.append(i)
        return got

    monkeypatch.setattr(quotes.QuoteHelper, "take", take)
    return taken


def _children() -> set[int]:
    """The processes this one forked that are not reaped yet (zombies included)."""
    pids: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            pids.update(int(p) for p in f.read().split())
    return pids


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _served_blocks(monkeypatch) -> tuple[int, int]:
    """A pipe the helper (forked later) writes the first line of each block it hands over to: reading it, a
    test knows without a sleep that the helper read and counted a block. Close the write end once the helper
    runs: a helper gone ends the read (EOF) instead of hanging it."""
    r, w = os.pipe()
    monkeypatch.setattr(quotes, "_served", lambda i, at: os.write(w, i.to_bytes(8, "little")))
    return r, w


def _wait_served(r: int, want: int | None = None, after: int | None = None) -> int:
    """Until the helper has handed over the block that starts at line ``want`` (or the first block after line
    ``after``): that block's first line."""
    while True:
        ready, _, _ = select.select([r], [], [], 60)
        assert ready, "the helper handed over no block for a minute"
        got = os.read(r, 8)
        assert len(got) == 8, "the helper is gone"
        i = int.from_bytes(got, "little")
        if i == want or (after is not None and i > after):
            return i


def _to_helper_start(s: JsonlSession) -> tuple[int, list]:
    """View the records of ``s`` in order until the pass starts its helper: the line it started at, and the
    views. The helper reads from the block after that line's, and the reader is still in that line's block,
    so the helper is sure to hand over the next block before the reader moves on."""
    views = []
    while s._ahead is None or s._ahead._helper is None:
        views.append(s.view(len(views) + 1, keep=False))
    return s._ahead._helper.first, views


@needs_fork
def test_a_pass_with_the_helper_gives_the_views_of_one_without(tmp_path, monkeypatch):
    taken = _helper_on(monkeypatch)
    p = tmp_path / "s.jsonl"
    body = _hostile_lines(1200, 7)
    p.write_bytes(b"\xef\xbb\xbf" + b"\n".join(body[:600]) + b"\r\n" + b"\r\n".join(body[600:]))
    with_helper = JsonlSession.load(p, digest=False)
    r, w = _served_blocks(monkeypatch)
    first, views = _to_helper_start(with_helper)
    os.close(w)
    nxt = quotes.block_end(with_helper.doc.source.starts, first, quotes.CELL)
    _wait_served(r, nxt)  # the helper handed over the block after the reader's
    os.close(r)  # (its next hand-overs fail with EPIPE: it stops, and the reader reads the rest itself)
    views += [with_helper.view(n, keep=False) for n in range(first + 2, len(with_helper) + 1)]
    assert nxt in taken  # and the reader took it
    assert with_helper._ahead._helper is None and not _children()  # reaped at the pass's last window
    monkeypatch.setattr(quotes, "ENABLED", False)
    plain = JsonlSession.load(p, digest=False)
    expected = [plain.view(n, keep=True) for n in range(1, len(plain) + 1)]
    assert [repr(v) for v in views] == [repr(v) for v in expected]  # repr: NaN is not NaN
    with_helper.close()
    plain.close()


def test_no_helper_on_a_busy_machine_or_beside_a_thread(monkeypatch):
    import threading

    monkeypatch.setattr(quotes, "_load", lambda: float(os.cpu_count() or 1))
    assert not quotes.can_fork()
    monkeypatch.setattr(quotes, "_load", lambda: 0.0)
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not quotes.can_fork()
    finally:
        stop.set()
        t.join()


@needs_fork
def test_the_helper_stops_when_its_reader_exits(tmp_path):
    """A pass cut short by the reader's exit (``show | head``) leaves no helper counting the rest of the file."""
    import subprocess
    import sys
    import time

    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"role":"user","content":"\\"x\\" \\\\"}\n' * 400_000)  # ~16 MB
    script = (
        "import os, sys\n"
        "from sessionview.core.doc import quotes, ahead\n"
        "quotes._load = lambda: 0.0; quotes.MIN_BYTES = 1; quotes.CELL = 4096; ahead.RUN = 4\n"
        "from sessionview.core.session import JsonlSession\n"
        "s = JsonlSession.load(sys.argv[1], digest=False)\n"
        "for n in range(1, 60000): s.view(n, keep=False)\n"
        "h = s._ahead._helper\n"
        "print(h._pid if h else 0, flush=True)\n"
        "os._exit(0)\n"  # no cleanup: the helper is left to notice
    )
    out = subprocess.run([sys.executable, "-c", script, str(p)], capture_output=True, text=True, timeout=60)
    pid = int(out.stdout.strip() or 0)
    assert pid, out.stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and os.path.exists(f"/proc/{pid}"):
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}")


def test_no_fork_to_spare_means_no_helper(tmp_path, monkeypatch):
    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(quotes, "_load", lambda: 0.0)
    monkeypatch.setattr(quotes, "MIN_BYTES", 1)
    monkeypatch.setattr(ahead_mod, "RUN", 4)
    monkeypatch.setattr(os, "fork", no_fork)
    p = tmp_path / "s.jsonl"
    pad = b"y" * 1000  # three windows of lines, so the pass tries to start a helper
    p.write_bytes(b"".join(b'{"role":"user","content":"%d \\" %s","role":"user"}\n' % (i, pad) for i in range(3000)))
    tried = []
    monkeypatch.setattr(quotes, "QuoteHelper", lambda *a: tried.append(a) or (_ for _ in ()).throw(OSError("no fork")))
    s = JsonlSession.load(p, digest=False)
    views = [s.view(n, keep=False) for n in range(1, len(s) + 1)]
    assert tried and s._ahead._helper is None
    assert all(v.problems and v.problems[0].kind == "duplicate keys" for v in views)
