"""Backups as hard links to the replaced inode (core/store/backup_copy.py): they restore exactly, a later
save never writes through to them, and every case where a link is not safe or not possible falls back to a
copy that is just as exact."""

from __future__ import annotations

import errno
import itertools
import os
import pathlib
import stat
import subprocess
import sys

import pytest

from sessionview.core.doc.document import Document, Line
from sessionview.core.errors import AnotherWriter, HardLinked
from sessionview.core.store import backup_copy, backups, restore, retention, save
from sessionview.core.store.stamp import stamp_document

OLD = b'{"role":"user","content":"hello"}\n{"role":"assistant","content":"hi"}\n'


def save_edit(path, raw: bytes, **kw) -> save.SaveResult:
    doc = Document.load(path)
    try:
        stamp = stamp_document(doc)
        new = doc.splice(1, 1, [Line(raw)])
        return save.save(path, lambda a: itertools.chain(new.iter_bytes(), [a]), stamp, root=os.path.dirname(path), **kw)
    finally:
        doc.close()


@pytest.fixture
def session(tmp_path):
    d = tmp_path / "sessions"
    d.mkdir()
    p = d / "s.jsonl"
    p.write_bytes(OLD)
    return p


@pytest.fixture
def state(tmp_path):
    return tmp_path / "state"


def test_the_backup_is_the_replaced_inode_and_restores_exactly(session, state):
    before = os.stat(session)
    r = save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state)
    b = r.backup
    assert b is not None and b.linked
    st = os.stat(b.path)
    assert (st.st_dev, st.st_ino) == (before.st_dev, before.st_ino)  # no byte copied
    assert st.st_nlink == 1 and stat.S_IMODE(st.st_mode) == 0o600  # only the backup names it now; private
    assert pathlib.Path(b.path).read_bytes() == OLD
    assert backup_copy.read_record(b.path) == (len(OLD), "xxh3-128", __import__("xxhash").xxh3_128(OLD).hexdigest())
    restore.restore(session, root=session.parent, state_dir=state, backup=b)
    assert session.read_bytes() == OLD
    assert pathlib.Path(b.path).read_bytes() == OLD  # restoring reads the backup, never moves it into place


def test_a_later_save_never_writes_through_to_the_backup(session, state):
    first = save_edit(session, b'{"role":"user","content":"one"}', state_dir=state).backup
    after_first = session.read_bytes()
    for i in range(3):
        r = save_edit(session, b'{"role":"user","content":"again %d"}' % i, state_dir=state)
        now = os.stat(session)
        for b in backups.list_backups(session, state_dir=state):
            assert b.inode != (now.st_dev, now.st_ino)  # the session file is always a fresh inode
        assert r.backup is not None and r.backup.linked
    with open(session, "ab") as f:  # an agent appends to the session as it is now
        f.write(b'{"role":"user","content":"appended"}\n')
    assert pathlib.Path(first.path).read_bytes() == OLD
    newest = backups.list_backups(session, state_dir=state)
    assert pathlib.Path(newest[-1].path).read_bytes() == OLD
    assert pathlib.Path(newest[-2].path).read_bytes() == after_first


def test_a_backup_that_changed_is_not_restored(session, state):
    b = save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state).backup
    edited = session.read_bytes()
    with open(b.path, "r+b") as f:  # someone wrote into the old inode after all
        f.write(b'{"role":"user","content":"HELLO"}')
    with pytest.raises(backup_copy.BackupChanged):
        restore.restore(session, root=session.parent, state_dir=state, backup=b)
    assert session.read_bytes() == edited


@pytest.mark.parametrize("changed", [False, True])
def test_a_backup_recorded_by_an_older_version_is_checked_against_its_sha256(session, state, changed):
    import hashlib

    b = save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state).backup
    edited = session.read_bytes()
    os.unlink(b.path + backup_copy.RECORD)  # as an older version recorded it: <name>.bak.sha256, "<size> <hex>"
    pathlib.Path(b.path + ".sha256").write_text(f"{len(OLD)} {hashlib.sha256(OLD).hexdigest()}\n")
    assert backup_copy.read_record(b.path) == (len(OLD), "sha256", hashlib.sha256(OLD).hexdigest())
    if changed:
        with open(b.path, "r+b") as f:
            f.write(b"{")
            f.write(b'"role":"user","content":"HELLO"}')
        with pytest.raises(backup_copy.BackupChanged, match="sha256"):
            restore.restore(session, root=session.parent, state_dir=state, backup=b)
        assert session.read_bytes() == edited
    else:
        restore.restore(session, root=session.parent, state_dir=state, backup=b)
        assert session.read_bytes() == OLD


def test_pruning_a_backup_removes_its_record_of_either_version(session, state):
    old = save_edit(session, b'{"role":"user","content":"one"}', state_dir=state).backup
    pathlib.Path(old.path + ".sha256").write_text("1 " + "0" * 64 + "\n")  # left by an older version too
    save_edit(session, b'{"role":"user","content":"two"}', state_dir=state)
    report = retention.prune(retention=retention.Retention(1, 0), state_dir=state)
    assert [b.path for b in report.removed] == [old.path]
    assert not any(os.path.exists(old.path + suffix) for suffix in ("", backup_copy.RECORD, ".sha256"))


def test_bytes_appended_to_the_old_inode_after_the_record_are_not_restored(session, state):
    b = save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state).backup
    with open(b.path, "ab") as f:  # a writer that opened the file by name just before the rename
        f.write(b'{"role":"user","content":"late"}\n')
    restore.restore(session, root=session.parent, state_dir=state, backup=b)
    assert session.read_bytes() == OLD


def _no_link(monkeypatch, code):
    real = os.link

    def link(src, dst, *args, **kwargs):
        if str(src).startswith("/proc/self/fd/"):
            raise OSError(code, os.strerror(code))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", link)


@pytest.mark.parametrize("code", [errno.EXDEV, errno.EPERM, errno.EMLINK])
def test_a_link_that_fails_falls_back_to_an_exact_copy(session, state, monkeypatch, code):
    _no_link(monkeypatch, code)
    before = os.stat(session)
    b = save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state).backup
    assert b is not None and not b.linked
    st = os.stat(b.path)
    assert (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino)
    assert pathlib.Path(b.path).read_bytes() == OLD and stat.S_IMODE(st.st_mode) == 0o600
    assert backup_copy.read_record(b.path)[0] == len(OLD)
    restore.restore(session, root=session.parent, state_dir=state, backup=b)
    assert session.read_bytes() == OLD


@pytest.mark.parametrize("how", ["copy_file_range", "copy"])
def test_every_copy_method_is_exact(session, state, monkeypatch, how):
    _no_link(monkeypatch, errno.EXDEV)
    monkeypatch.setattr(backup_copy, "_clone", lambda src, dst: False)  # no reflinks here anyway (ext4)
    if how == "copy":
        monkeypatch.delattr(os, "copy_file_range")
    b = save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state).backup
    assert pathlib.Path(b.path).read_bytes() == OLD and not b.linked


def test_a_group_writable_file_is_copied_not_linked(session, state):
    os.chmod(session, 0o664)  # a link would share the mode, and such a backup is untrusted
    b = save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state).backup
    assert not b.linked and not backups.list_backups(session, state_dir=state)[0].untrusted


def test_with_a_writer_holding_the_file_open_a_forced_save_copies(session, state):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; f = open(sys.argv[1], 'ab'); print('ready', flush=True); sys.stdin.read()", str(session)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline() == b"ready\n"
        with pytest.raises(AnotherWriter):
            save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state)
        r = save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state, force=True)
        assert not r.backup.linked  # its later writes go to the old inode: that must not be the backup
        assert pathlib.Path(r.backup.path).read_bytes() == OLD
    finally:
        holder.stdin.close()
        holder.wait()


def test_a_save_stopped_between_link_and_rename_does_not_make_the_file_hard_linked(session, state, tmp_path):
    d = backups.backup_dir(session, state)
    os.makedirs(d, mode=0o700)
    os.chmod(state, 0o700)
    fd = os.open(session, os.O_RDONLY)
    try:
        backups.write_backup(fd, str(session), state_dir=state, verify=(len(OLD), __import__("xxhash").xxh3_128(OLD).hexdigest()), link=True)
    finally:
        os.close(fd)
    assert os.stat(session).st_nlink == 2  # as a save killed right after its link leaves it
    r = save_edit(session, b'{"role":"user","content":"edited"}', state_dir=state)
    assert r.changed
    other = tmp_path / "other-name"
    os.link(r.real_path, other)  # a real second name is still refused
    with pytest.raises(HardLinked):
        save_edit(session, b'{"role":"user","content":"again"}', state_dir=state)


def test_retention_counts_an_inode_once_and_not_while_it_has_a_name_elsewhere(session, state, tmp_path):
    big = b'{"role":"user","content":"%s"}\n' % (b"x" * 5000)
    session.write_bytes(big)
    save_edit(session, b'{"role":"user","content":"one"}', state_dir=state)
    found = backups.list_backups(session, state_dir=state)
    assert retention.usage(state) == len(big)
    os.link(found[0].path, tmp_path / "elsewhere")  # the inode has a name outside the backups: removing frees nothing
    assert retention.usage(state) == 0
    os.unlink(tmp_path / "elsewhere")
    os.link(found[0].path, found[0].path.replace("-0.bak", "-7.bak"))  # two backups of one inode
    assert retention.usage(state) == len(big)
