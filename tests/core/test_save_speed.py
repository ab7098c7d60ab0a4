"""The speed-ups of the save path keep every byte: writeback started while copying, the SHA-256 of a
loaded file taken in the background, and the id search in threads."""

from __future__ import annotations

import errno
import os

import pytest

from sessionview.core.store import fsio


def _pair(tmp_path, data: bytes) -> tuple[int, int]:
    src = tmp_path / "src"
    src.write_bytes(data)
    s = os.open(src, os.O_RDONLY)
    d = os.open(tmp_path / "dst", os.O_RDWR | os.O_CREAT, 0o600)
    return s, d


@pytest.mark.parametrize("kernel", [True, False])
def test_copy_span_in_many_chunks_with_writeback_copies_exactly(tmp_path, monkeypatch, kernel):
    data = os.urandom(300_000)
    monkeypatch.setattr(fsio, "KERNEL_CHUNK", 4096 * 7)
    monkeypatch.setattr(fsio, "CHUNK", 4096)
    calls = []
    real = fsio.start_writeback
    monkeypatch.setattr(fsio, "start_writeback", lambda fd, pos, n: (calls.append((pos, n)), real(fd, pos, n)))
    if not kernel:
        def refuse(*a):
            raise OSError(errno.EXDEV, "cross-device")
        monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    s, d = _pair(tmp_path, data)
    try:
        os.pwrite(d, b"head", 0)
        how = fsio.copy_span(s, 1000, 250_000, d, 4)
        os.fsync(d)
    finally:
        os.close(s)
        os.close(d)
    assert how == ("copy_file_range" if kernel and hasattr(os, "copy_file_range") else "copy")
    assert (tmp_path / "dst").read_bytes() == b"head" + data[1000:251_000]
    assert calls, "writeback was started while copying"
    assert all(4 <= pos and pos + n <= 250_004 for pos, n in calls)  # only ever on the bytes just copied


def test_start_writeback_on_a_bad_descriptor_is_only_a_hint(tmp_path):
    fsio.start_writeback(987654, 0, 4096)  # EBADF: ignored
    fsio.start_writeback(-1, 0, 0)


# -- the load's hash taken in the background ---------------------------------------------------------

import xxhash  # noqa: E402

from proofhelpers import settle_at_once_or_skip  # noqa: E402

from sessionview.core.edit import writeback  # noqa: E402
from sessionview.core.edit.change import Change, open_editable  # noqa: E402
from sessionview.core.doc.document import Line  # noqa: E402
from sessionview.core.errors import Conflict  # noqa: E402
from sessionview.core.store import backup_copy, backups, proof, stamp  # noqa: E402

LINES = [b'{"role":"user","content":"line %d %s"}\n' % (i, b"x" * (i % 50)) for i in range(400)]
OLD = b"".join(LINES)


@pytest.fixture
def big(tmp_path, monkeypatch):
    """A session that counts as big and at rest: its digest is deferred (skip where ctime is not kept)."""
    p = tmp_path / "s.jsonl"
    p.write_bytes(OLD)
    settle_at_once_or_skip(p, monkeypatch)
    monkeypatch.setattr(stamp, "DEFER_MIN", 1)
    monkeypatch.setenv(backups.STATE_ENV, str(tmp_path / "state"))
    return p


def _edit(n: int, text: bytes) -> Change:
    return Change(f"edit #{n}", n, n, (Line(b'{"role":"user","content":"%s"}' % text, b"\n"),), (Line(LINES[n - 1][:-1], b"\n"),))


def test_the_background_hash_equals_xxh3_over_the_file(big):
    s = open_editable(str(big))
    try:
        assert isinstance(s.stamp.digest, stamp.Digest)  # loaded without it, hashed in the background
        assert s.doc.source.hexdigest is None
        assert s.stamp.hexdigest == xxhash.xxh3_128(OLD).hexdigest()
    finally:
        s.close()


def test_a_small_or_unsettled_file_is_hashed_while_loading(big, monkeypatch):
    monkeypatch.setattr(stamp, "DEFER_MIN", len(OLD) + 1)
    s = open_editable(str(big))
    try:
        assert isinstance(s.stamp.digest, str) and s.stamp.hexdigest == xxhash.xxh3_128(OLD).hexdigest()
    finally:
        s.close()
    monkeypatch.setattr(stamp, "DEFER_MIN", 1)
    monkeypatch.setattr(proof, "SETTLE_NS", 10**18)  # nothing is ever settled
    s = open_editable(str(big))
    try:
        assert isinstance(s.stamp.digest, str) and s.doc.source.hexdigest is not None
    finally:
        s.close()


def test_a_deferred_hash_records_the_hard_linked_backup_which_restores_exactly(big):
    from sessionview.core import ops

    s = open_editable(str(big))
    try:
        out = writeback.commit(s, _edit(3, b"EDITED"), root=str(big.parent))
    finally:
        s.close()
    assert out.changed and out.result is not None and out.result.backup is not None
    b = out.result.backup
    assert backup_copy.read_record(b.path) == (len(OLD), "xxh3-128", xxhash.xxh3_128(OLD).hexdigest())
    assert big.read_bytes() == b"".join(LINES[:2]) + b'{"role":"user","content":"EDITED"}\n' + b"".join(LINES[3:])
    ops.restore_newest(str(big))
    assert big.read_bytes() == OLD


def test_a_big_file_edited_through_a_symlink_is_hashed_and_saved(big):
    """The background hash opens the name given: a symlink is followed (the stat proves the very inode)."""
    link = big.parent / "link.jsonl"
    link.symlink_to(big.name)
    s = open_editable(str(link))
    try:
        assert isinstance(s.stamp.digest, stamp.Digest)
        assert s.stamp.hexdigest == xxhash.xxh3_128(OLD).hexdigest()
        out = writeback.commit(s, _edit(3, b"EDITED"), root=str(big.parent))
    finally:
        s.close()
    assert out.changed and out.result is not None
    assert big.read_bytes() == b"".join(LINES[:2]) + b'{"role":"user","content":"EDITED"}\n' + b"".join(LINES[3:])
    assert link.is_symlink()


def test_a_load_that_could_not_defer_its_hash_leaves_no_descriptor_open(big, monkeypatch):
    """The file moved during the first load: it is loaded again with its hash, and the first load's descriptor
    is closed (it was left open once per attempt)."""
    from sessionview.core.edit import change

    monkeypatch.setattr(change, "deferred", lambda doc: False)
    before = len(os.listdir("/proc/self/fd"))
    s = open_editable(str(big))
    try:
        assert s.stamp.hexdigest == xxhash.xxh3_128(OLD).hexdigest()
    finally:
        s.close()
        s.doc.close()
    import threading

    for t in threading.enumerate():  # the early hash, not used, closes its own descriptor when it ends
        if t.name.startswith("sv-"):
            t.join(30)
    assert len(os.listdir("/proc/self/fd")) == before


def test_no_thread_to_be_had_means_a_hash_while_loading_and_no_descriptor_left(big, monkeypatch):
    import threading

    real = threading.Thread.start

    def refuse(self):
        if self.name.startswith("sv-"):
            raise RuntimeError("can't start new thread")
        real(self)

    monkeypatch.setattr(threading.Thread, "start", refuse)
    before = len(os.listdir("/proc/self/fd"))
    s = open_editable(str(big), scan_ids=True)
    try:
        assert s.stamp.hexdigest == xxhash.xxh3_128(OLD).hexdigest()
    finally:
        s.close()
        s.doc.close()
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_file_rewritten_while_it_is_hashed_is_a_conflict_and_nothing_is_written(big, monkeypatch):
    gate = __import__("threading").Event()
    real = stamp.Digest._hash

    def slow(self, fd):
        gate.wait(10)
        real(self, fd)

    monkeypatch.setattr(stamp.Digest, "_hash", slow)
    s = open_editable(str(big))
    try:
        assert isinstance(s.stamp.digest, stamp.Digest)
        data = bytearray(OLD)
        data[40:41] = b"Z"  # in place, the same size
        with open(big, "r+b") as f:
            f.write(bytes(data))
        gate.set()
        with pytest.raises(Conflict):
            writeback.commit(s, _edit(3, b"EDITED"), root=str(big.parent))
        assert big.read_bytes() == bytes(data)
        assert not backups.list_backups(str(big))
    finally:
        gate.set()
        s.close()


def test_an_append_during_the_background_hash_is_a_conflict_then_a_retry_keeps_it(big, monkeypatch):
    """The hash of a deferred stamp cannot prove the loaded prefix once the file grew before it was done: the
    commit is refused, nothing is written, and the retry of ops loads the file again and keeps the line."""
    from sessionview.core import ops

    appended = b'{"role":"assistant","content":"appended"}\n'
    tries = []
    gate = __import__("threading").Event()
    real = stamp.Digest._hash

    def slow(self, fd):
        gate.wait(10)
        real(self, fd)

    monkeypatch.setattr(stamp.Digest, "_hash", slow)

    def plan(session):
        tries.append(isinstance(session.stamp.digest, stamp.Digest))
        if len(tries) == 1:
            with open(big, "ab") as f:
                f.write(appended)
        gate.set()
        return _edit(3, b"EDITED")

    out = ops.run_with_retry(str(big), plan, lambda s, c: writeback.commit(s, c, root=str(big.parent)))
    assert out.changed
    assert tries[0] is True and len(tries) == 2
    assert big.read_bytes() == b"".join(LINES[:2]) + b'{"role":"user","content":"EDITED"}\n' + b"".join(LINES[3:]) + appended


# -- started before the load: the hash, and the escapes the id search needs --------------------------------

from sessionview.core.edit import idscan  # noqa: E402
from sessionview.core.session import JsonlSession  # noqa: E402

ESCAPED = [b'{"role":"user","content":"caf\\u00e9 %d"}\n' % i for i in range(300)]
ESCAPED[7] = b'{"role":"tool","tool_call_id":"\\u0063all_1","content":"x"}\n'
ESCAPED[150] = b'{"role":"user","content":"\\u007e"}\n'
ESCAPED[299] = b'{"role":"user","content":"at the end \\u0041"}\n'


def test_open_editable_starts_the_hash_and_the_escape_search_before_the_load(big, monkeypatch):
    monkeypatch.setattr(idscan, "CHUNK", 64)  # escapes across chunk borders
    big.write_bytes(b"".join(ESCAPED))
    started = []
    real = stamp.Digest.__init__

    def init(self, path, st=None, size=None, **kw):
        started.append(st is None)
        real(self, path, st, size, **kw)

    monkeypatch.setattr(stamp.Digest, "__init__", init)
    s = open_editable(str(big), scan_ids=True)
    try:
        assert started == [True]  # one hash, begun before the load, used by the stamp
        assert s.stamp.hexdigest == xxhash.xxh3_128(b"".join(ESCAPED)).hexdigest()
        if idscan._memmem_finder() is not None:
            assert s.doc.source in idscan._early
            assert idscan._early[s.doc.source].lines(s.doc.source) == {7, 150, 299}
        found = idscan.lines_mentioning(s.doc.source, ["call_1"])
    finally:
        s.close()
    plain = JsonlSession.from_bytes(b"".join(ESCAPED))
    assert found == idscan.lines_mentioning(plain.doc.source, ["call_1"]) == {7, 150, 299}


@pytest.mark.parametrize("scan_ids, check_deferred, apart", [(False, False, True), (True, True, True), (True, False, False)])
def test_the_hash_is_taken_in_a_forked_process_unless_an_escape_search_runs_in_a_thread(big, monkeypatch, scan_ids, check_deferred, apart):
    """An edit (no id search) and a deferred check keep this process to a single thread, so that its load may
    scan the file on two cores; a check before the commit searches escapes in a thread, and hashes in one too."""
    big.write_bytes(b"".join(ESCAPED))
    seen = []
    real = stamp.Digest.__init__

    def init(self, path, st=None, size=None, **kw):
        seen.append(kw.get("apart", False))
        real(self, path, st, size, **kw)

    monkeypatch.setattr(stamp.Digest, "__init__", init)
    s = open_editable(str(big), scan_ids=scan_ids, check_deferred=check_deferred)
    try:
        assert seen == [apart]
        assert s.stamp.hexdigest == xxhash.xxh3_128(b"".join(ESCAPED)).hexdigest()
    finally:
        s.close()


def test_what_was_started_for_another_version_of_the_file_is_not_used(big, monkeypatch):
    """The file is rewritten between the start of the early threads and the load: neither counts, the stamp
    hashes the file loaded, and the id search looks for escapes itself."""
    if idscan._memmem_finder() is None:
        pytest.skip("no libc memmem here")
    big.write_bytes(b"".join(ESCAPED))
    early = stamp.Digest(str(big))
    escapes = idscan.Escapes.start(str(big))
    assert escapes is not None
    other = b"".join(ESCAPED[:100]) + b'{"role":"user","content":"new \\u0042"}\n'
    big.write_bytes(other)
    s = JsonlSession.load(big, digest=False)
    try:
        assert not stamp.adopt(s.doc, early)
        assert not idscan.adopt(s.doc.source, s.doc.loaded_stat, escapes)
        assert s.stamp.hexdigest == xxhash.xxh3_128(other).hexdigest()
        assert idscan.lines_mentioning(s.doc.source, ["call_1"]) == {7, 100}
    finally:
        s.close()


def _held_escape_search(tmp_path):
    """A file of escaped ids and its escape search, held before its first find until ``gate`` is set."""
    finds = idscan._memmem_finder()
    if finds is None:
        pytest.skip("no libc memmem here")
    p = tmp_path / "e.jsonl"
    p.write_bytes(b"".join(ESCAPED))
    gate = __import__("threading").Event()

    def slow(buf, needle, lo, hi):
        gate.wait(10)
        return finds(buf, needle, lo, hi)

    return p, idscan.Escapes(str(p), slow), gate


def test_escapes_of_a_file_changed_during_their_search_do_not_count(tmp_path):
    p, e, gate = _held_escape_search(tmp_path)
    with open(p, "ab") as f:
        f.write(b'{"role":"user","content":"more"}\n')
    gate.set()
    source = JsonlSession.from_bytes(p.read_bytes()).doc.source
    assert e.lines(source) is None


def test_an_adopted_escape_search_that_does_not_count_is_done_again(tmp_path):
    p, e, gate = _held_escape_search(tmp_path)
    s = JsonlSession.load(p, digest=False)
    try:
        assert idscan.adopt(s.doc.source, s.doc.loaded_stat, e)
        with open(p, "ab") as f:
            f.write(b'{"role":"user","content":"appended"}\n')
        gate.set()
        assert e.lines(s.doc.source) is None
        assert idscan.lines_mentioning(s.doc.source, ["call_1"]) == {7, 150, 299}
    finally:
        s.close()
