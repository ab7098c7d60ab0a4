"""Saves that copy the kept runs of the file in the kernel, and the stat proof that the file did not change.

The kernel copy (``copy_file_range``) must fall back to a read/write copy wherever it is refused or copies
nothing; the stat proof (:mod:`sessionview.core.store.proof`) must never stand in for the hash when it does
not hold: a ctime that was not settled at load, a file system that does not keep ctime, a shared writable
mapping, or any write since load (ctime moves even when the size and the mtime are put back).
"""

from __future__ import annotations

import errno
import mmap
import os

import pytest

import xxhash
from proofhelpers import settle_at_once_or_skip

from sessionview.core.doc.document import Document, Line
from sessionview.core.edit import writeback
from sessionview.core.edit.change import Change, open_editable
from sessionview.core.errors import Conflict, Rewriting
from sessionview.core.store import backups, fsio, merge, proof, save, staging, steps as save_steps
from sessionview.core.store.stamp import stamp_document, stamp_file

LINES = [b'{"role":"user","content":"hello %d"}\n' % i for i in range(40)]
OLD = b"".join(LINES)


@pytest.fixture
def session(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(OLD)
    return p


@pytest.fixture
def state(tmp_path, monkeypatch):
    d = tmp_path / "state"
    monkeypatch.setenv(backups.STATE_ENV, str(d))
    return d


@pytest.fixture
def settled_now(monkeypatch, session):
    """Make a ctime count as settled as soon as the clock has passed it (no 2 s wait in a test); skip where
    the test directory's file system does not keep ctime (the proof is never used there)."""
    settle_at_once_or_skip(session, monkeypatch)


@pytest.fixture
def hashes(monkeypatch):
    """Count the SHA-256 passes a save takes over the old file (the check and the recheck)."""
    calls: list[str] = []
    real_prefix, real_matches = save.hash_prefix, save.prefix_matches

    def prefix(fd, size):
        calls.append("check")
        return real_prefix(fd, size)

    def matches(fd, size, digest):
        calls.append("recheck")
        return real_matches(fd, size, digest)

    def merged(fd, size, digest):
        calls.append("merge")
        return real_matches(fd, size, digest)

    monkeypatch.setattr(save, "hash_prefix", prefix)
    monkeypatch.setattr(save, "prefix_matches", matches)
    monkeypatch.setattr(merge, "prefix_matches", merged)
    return calls


@pytest.fixture
def hook():
    yield lambda fn: setattr(save_steps, "hook", fn)
    save_steps.hook = None


def load(path):
    doc = Document.load(path)
    return doc, stamp_document(doc)


def spans(doc: Document):
    return lambda appended: [*doc.layout(), appended]


def edit(doc: Document, number: int, raw: bytes) -> Document:
    return doc.splice(number, number, [Line(raw)])


# -- the layout --------------------------------------------------------------------------------------------


def test_layout_joins_to_the_document_bytes_with_a_bom_and_edits(tmp_path):
    p = tmp_path / "b.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + OLD)
    doc = Document.load(p)
    new = doc.splice(3, 5, [Line(b'{"x":1}')]).splice(40 - 2, 38, [])
    parts = list(new.layout())
    assert any(isinstance(x, tuple) for x in parts)
    data = p.read_bytes()
    joined = b"".join(x if isinstance(x, bytes) else data[x[0] : x[1]] for x in parts)
    assert joined == new.to_bytes()
    doc.close()


# -- the kernel copy and its fallback -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, "zero", "partial", "missing"],
)
def test_kernel_copy_falls_back_to_a_plain_copy(session, monkeypatch, failure):
    real = getattr(os, "copy_file_range", None)
    used = []

    def refused(src, dst, count, offset_src=None, offset_dst=None):
        used.append(count)
        if failure == "zero":
            return 0
        if failure == "partial":  # copies a few bytes, then is refused mid-span
            if len(used) == 1 and real is not None:
                return real(src, dst, min(count, 7), offset_src, offset_dst)
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        raise OSError(failure, os.strerror(failure))

    if failure == "missing":
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    else:
        monkeypatch.setattr(os, "copy_file_range", refused)
    doc, st = load(session)
    new = edit(doc, 20, b'{"role":"user","content":"EDITED"}')
    r = save.save(session, spans(new), st, root=session.parent, new_stamp=True)
    assert session.read_bytes() == new.to_bytes()
    assert r.stamp is not None and r.stamp.hexdigest == xxhash.xxh3_128(new.to_bytes()).hexdigest()
    assert (failure == "missing") == (not used)
    doc.close()


def test_copy_span_refuses_a_source_that_ends_early(tmp_path):
    src = tmp_path / "src"
    src.write_bytes(b"0123456789")
    dst = tmp_path / "dst"
    s = os.open(src, os.O_RDONLY)
    d = os.open(dst, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        with pytest.raises(OSError):  # SourceChanged: the save reports it as a rewrite
            fsio.copy_span(s, 4, 20, d, 0)
    finally:
        os.close(s)
        os.close(d)


def test_a_span_outside_the_loaded_bytes_is_refused_and_nothing_is_written(session):
    doc, st = load(session)
    with pytest.raises(ValueError):
        save.save(session, lambda appended: [b"x\n", (0, len(OLD) + 1)], st, root=session.parent)
    assert session.read_bytes() == OLD
    doc.close()


def test_the_new_stamp_is_only_hashed_when_asked_for(session):
    doc, st = load(session)
    new = edit(doc, 2, b'{"a":1}')
    r = save.save(session, spans(new), st, root=session.parent)
    assert r.changed and r.stamp is None  # the spans never went through Python: no hash of them
    doc.close()
    doc, st = load(session)
    newer = edit(doc, 3, b'{"b":2}')
    r = save.save(session, spans(newer), st, root=session.parent, new_stamp=True)
    assert r.stamp == stamp_file(session)
    doc.close()


def test_the_unedited_layout_is_found_unchanged(session):
    doc, st = load(session)
    r = save.save(session, spans(doc), st, root=session.parent)
    assert not r.changed and r.stamp is not None and r.stamp.hexdigest == st.hexdigest
    same = edit(doc, 5, LINES[4].rstrip(b"\n"))  # the same bytes written from memory
    r = save.save(session, spans(same), st, root=session.parent)
    assert not r.changed
    doc.close()


def test_a_temp_file_of_spans_knows_when_it_was_rewritten(tmp_path):
    src = tmp_path / "src"
    src.write_bytes(OLD)
    s = os.open(src, os.O_RDONLY)
    fd = os.open(tmp_path / "t", os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    t = staging.TempFile(fd, "t")
    try:
        t.write(b"new line\n", fsio.NO_LIMIT)
        t.copy_from(s, 10, 200, fsio.NO_LIMIT)
        t.write(b"tail\n", fsio.NO_LIMIT)
        assert t.hash is None and t.intact()
        assert os.pread(fd, t.size, 0) == b"new line\n" + OLD[10:200] + b"tail\n"
        os.write(fd, b"appended by another\n")  # appends do not matter
        assert t.intact()
        w = os.open(tmp_path / "t", os.O_WRONLY)  # pwrite through an O_APPEND fd would append
        os.pwrite(w, b"X", 12)  # a span rewritten
        os.close(w)
        assert not t.intact()
        w = os.open(tmp_path / "t", os.O_WRONLY)
        os.pwrite(w, OLD[13:14], 12)  # put back
        assert t.intact()
        os.pwrite(w, b"N", 0)  # a byte written from memory rewritten
        os.close(w)
        assert not t.intact()
    finally:
        os.close(s)
        os.close(fd)


# -- the stat proof -----------------------------------------------------------------------------------------


def test_a_settled_unchanged_file_is_saved_without_hashing_it(session, settled_now, hashes, state):
    doc, st = load(session)
    assert st.settled
    new = edit(doc, 20, b'{"role":"user","content":"EDITED"}')
    r = save.save(session, spans(new), st, root=session.parent)
    assert r.changed and session.read_bytes() == new.to_bytes()
    assert hashes == []  # neither the check, the recheck nor the merge after the rename read the old file
    assert r.backup is not None and r.backup.linked
    fd = os.open(r.backup.path, os.O_RDONLY)
    try:  # the hard-linked backup is what was loaded, and its record proves it
        assert b"".join(backups.backup_copy.verified_chunks(r.backup.path, fd)) == OLD
    finally:
        os.close(fd)
    doc.close()


def test_a_file_written_just_before_load_is_hashed(session, hashes):
    """The real settle delay: a ctime of a moment ago is not settled, so the hash decides."""
    session.write_bytes(OLD)
    doc, st = load(session)
    assert not st.settled
    save.save(session, spans(edit(doc, 1, b"{}")), st, root=session.parent)
    assert "check" in hashes and "recheck" in hashes
    doc.close()


def test_a_same_size_rewrite_within_the_second_is_caught_by_the_hash(session, hashes):
    """Written, loaded and rewritten in place within the same second, its mtime put back: the stamp was not
    settled, so the hash check runs and sees it."""
    session.write_bytes(OLD)
    doc, st = load(session)
    before = os.stat(session)
    with open(session, "r+b") as f:
        f.write(b'{"role":"user","content":"HELLO 0"}')
    os.utime(session, ns=(before.st_atime_ns, before.st_mtime_ns))
    now = os.stat(session)
    assert (now.st_size, now.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    with pytest.raises(Conflict):
        save.save(session, spans(edit(doc, 3, b"{}")), st, root=session.parent)
    assert "check" in hashes
    assert session.read_bytes().startswith(b'{"role":"user","content":"HELLO 0"}')
    doc.close()


def test_a_same_size_rewrite_of_a_settled_file_moves_its_ctime_and_is_caught(session, settled_now, hashes):
    doc, st = load(session)
    assert st.settled
    before = os.stat(session)
    with open(session, "r+b") as f:
        f.write(b'{"role":"user","content":"HELLO 0"}')
    os.utime(session, ns=(before.st_atime_ns, before.st_mtime_ns))  # size and mtime as loaded: only ctime moved
    with pytest.raises(Conflict):
        save.save(session, spans(edit(doc, 3, b"{}")), st, root=session.parent)
    assert "check" in hashes
    doc.close()


def test_a_chmod_since_load_falls_back_to_the_hash_and_saves(session, settled_now, hashes):
    doc, st = load(session)
    os.chmod(session, 0o640)  # ctime moves, the content does not
    new = edit(doc, 3, b"{}")
    r = save.save(session, spans(new), st, root=session.parent)
    assert r.changed and session.read_bytes() == new.to_bytes()
    assert "check" in hashes
    doc.close()


def test_a_file_system_that_does_not_keep_ctime_is_hashed(session, settled_now, hashes, monkeypatch):
    monkeypatch.setattr(proof, "fs_type", lambda fd: 0x6969)  # NFS
    doc, st = load(session)
    save.save(session, spans(edit(doc, 3, b"{}")), st, root=session.parent)
    assert "check" in hashes and "recheck" in hashes
    doc.close()


def test_a_shared_writable_mapping_is_hashed(session, settled_now, hashes):
    doc, st = load(session)
    fd = os.open(session, os.O_RDWR)
    m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    try:
        assert proof.shared_writable_mapping(os.fstat(fd)) is True
        save.save(session, spans(edit(doc, 3, b"{}")), st, root=session.parent)
        assert "check" in hashes
    finally:
        m.close()
        os.close(fd)
    doc.close()


@pytest.mark.parametrize("at", ["copy", "fsync"])
def test_a_rewrite_during_a_proven_save_is_caught_by_the_recheck(session, settled_now, hook, at):
    doc, st = load(session)

    def rewrite(step):
        if step == at:
            hook(None)
            with open(session, "r+b") as f:
                f.write(b'{"role":"user","content":"HELLO 0"}')

    hook(rewrite)
    with pytest.raises(Rewriting):
        save.save(session, spans(edit(doc, 3, b"{}")), st, root=session.parent)
    assert session.read_bytes().startswith(b'{"role":"user","content":"HELLO 0"}')
    doc.close()


def test_lines_appended_to_a_settled_file_are_rebased(session, settled_now, hashes, state):
    """A pure append moves the stat: the loaded prefix is hashed (the rebase), the rest is copied in the kernel."""
    s = open_editable(str(session))
    assert s.stamp.settled
    with open(session, "ab") as f:
        f.write(b'{"role":"assistant","content":"appended"}\n')
    change = Change("edit #2", 2, 2, (Line(b'{"role":"user","content":"EDITED"}', b"\n"),), (Line(LINES[1][:-1], b"\n"),))
    out = writeback.commit(s, change, root=str(session.parent))
    assert out.result is not None and out.result.rebased_bytes == len(b'{"role":"assistant","content":"appended"}\n')
    assert session.read_bytes() == LINES[0] + b'{"role":"user","content":"EDITED"}\n' + b"".join(LINES[2:]) + (
        b'{"role":"assistant","content":"appended"}\n'
    )
    assert hashes.count("check") == 1
    s.close()


def test_a_rewrite_after_load_is_refused_by_commit(session, settled_now, state):
    s = open_editable(str(session))
    st = s.stamp
    data = bytearray(OLD)
    data[30:31] = b"X"
    with open(session, "r+b") as f:  # the same size, in place
        f.write(bytes(data))
    os.utime(session, ns=(os.stat(session).st_atime_ns, st.mtime_ns))
    change = Change("edit #2", 2, 2, (Line(b"{}", b"\n"),), (Line(LINES[1][:-1], b"\n"),))
    with pytest.raises(Conflict):
        writeback.commit(s, change, root=str(session.parent))
    assert session.read_bytes() == bytes(data)
    s.close()


@pytest.mark.parametrize("opened, at", [("backup:record", "backup:link"), ("recheck", "rename")])
def test_a_rewrite_of_the_replaced_file_after_its_backup_link_is_put_back(session, settled_now, hashes, hook, state, opened, at):
    """The hard link moves the replaced file's ctime; a write after it still moves its (settled) mtime, so the
    merge hashes the file, sees the rewrite and puts that version back."""
    doc, st = load(session)
    fds = []

    def rewrite(step):
        if step == opened and not fds:
            fds.append(os.open(session, os.O_WRONLY))  # a writer that opened the file just before the rename
        if step == at:
            hook(None)
            os.pwrite(fds[0], b'{"role":"user","content":"HELLO 0"}', 0)
            os.close(fds[0])

    hook(rewrite)
    with pytest.raises(Rewriting):
        save.save(session, spans(edit(doc, 3, b"{}")), st, root=session.parent)
    assert "merge" in hashes
    assert session.read_bytes() == b'{"role":"user","content":"HELLO 0"}' + OLD[len(b'{"role":"user","content":"hello 0"}') :]
    doc.close()
