"""Backups: where they go, that they are byte-exact and ordered, and that restore is an undoable save."""

from __future__ import annotations

import hashlib
import itertools
import os
import pathlib
import stat

import pytest

from sessionview.core.store import backups, restore, save
from sessionview.core.store import steps as save_steps
from sessionview.core.store.stamp import stamp_document
from sessionview.core.doc.document import Document, Line
from sessionview.core.errors import Conflict, Outside

WEIRD = (
    b"\xef\xbb\xbf"  # a BOM
    + b'{"role":"user","content":"caf\\u00e9"}\r\n'  # CRLF, escapes
    + b"\n"  # a blank line
    + b'{"big":123456789012345678901234567890}\n'
    + b"\xff\xfe not utf-8\n"
    + b'{"role":"assistant","content":"no final newline"}'
)


def save_edit(path, root, raw: bytes, **kw) -> save.SaveResult:
    doc = Document.load(path)
    try:
        stamp = stamp_document(doc)
        new = doc.splice(1, 1, [Line(raw)])
        return save.save(path, lambda a: itertools.chain(new.iter_bytes(), [a]), stamp, root=root, **kw)
    finally:
        doc.close()


@pytest.fixture
def session(tmp_path):
    d = tmp_path / "sessions"
    d.mkdir()
    p = d / "s.jsonl"
    p.write_bytes(WEIRD)
    return p


def key(path) -> str:
    return hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:16]


def test_location_with_sessionview_state_dir(session, tmp_path, monkeypatch):
    state = tmp_path / "custom-state"
    monkeypatch.setenv("SESSIONVIEW_STATE_DIR", str(state))
    r = save_edit(session, session.parent, b"{}")
    assert backups.backups_root() == str(state)
    d = state / key(session)
    assert r.backup.path.startswith(str(d) + os.sep)
    assert (d / "path").read_bytes() == os.fsencode(str(session))
    assert pathlib.Path(r.backup.path).read_bytes() == WEIRD
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(r.backup.path).st_mode) == 0o600
    assert os.listdir(session.parent) == ["s.jsonl"]  # never next to the session


def test_location_with_xdg_state_home(session, tmp_path, monkeypatch):
    monkeypatch.delenv("SESSIONVIEW_STATE_DIR", raising=False)
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_STATE_HOME", str(xdg))
    r = save_edit(session, session.parent, b"{}")
    assert os.path.dirname(r.backup.path) == str(xdg / "sessionview" / "backups" / key(session))
    assert pathlib.Path(r.backup.path).read_bytes() == WEIRD


def test_location_default_under_home(session, tmp_path, monkeypatch):
    monkeypatch.delenv("SESSIONVIEW_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert backups.backups_root() == str(tmp_path / "home" / ".local" / "state" / "sessionview" / "backups")
    r = save_edit(session, session.parent, b"{}")
    assert r.backup.path.startswith(str(tmp_path / "home" / ".local" / "state" / "sessionview" / "backups"))


def test_state_dir_argument_wins(session, tmp_path):
    r = save_edit(session, session.parent, b"{}", state_dir=tmp_path / "arg")
    assert r.backup.path.startswith(str(tmp_path / "arg" / key(session)))
    assert backups.list_backups(session, state_dir=tmp_path / "arg")[0] == r.backup
    assert backups.list_backups(session) == []


def test_backups_are_byte_exact_and_newest_first(session):
    versions = [WEIRD]
    for i in range(3):
        save_edit(session, session.parent, b'{"v":%d}' % i)
        versions.append(session.read_bytes())
    found = backups.list_backups(session)
    assert len(found) == 3
    assert [pathlib.Path(b.path).read_bytes() for b in found] == versions[2::-1]
    assert [b.size for b in found] == [len(v) for v in versions[2::-1]]
    assert all(b.original == str(session) for b in found)
    assert [b.created for b in found] == sorted((b.created for b in found), reverse=True)
    names = [os.path.basename(b.path) for b in found]
    assert names == sorted(names, reverse=True)
    for name in names:
        assert name.endswith(".bak") and "T" in name


def test_backups_of_a_link_belong_to_the_real_file(tmp_path):
    real = tmp_path / "real.jsonl"
    real.write_bytes(WEIRD)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    save_edit(link, tmp_path, b"{}")
    assert [b.original for b in backups.list_backups(link)] == [str(real)]
    assert backups.list_backups(real) == backups.list_backups(link)


def test_restore_twice_undoes_the_undo(session):
    save_edit(session, session.parent, b'{"edited":1}')
    edited = session.read_bytes()
    assert edited != WEIRD
    r = restore.restore(session, root=session.parent)
    assert r.changed and session.read_bytes() == WEIRD
    assert pathlib.Path(r.backup.path).read_bytes() == edited  # the restore backed up first
    r = restore.restore(session, root=session.parent)
    assert r.changed and session.read_bytes() == edited
    r = restore.restore(session, root=session.parent)
    assert session.read_bytes() == WEIRD
    assert len(backups.list_backups(session)) == 4


def test_restore_keeps_lines_appended_during_it(session, monkeypatch):
    save_edit(session, session.parent, b'{"edited":1}')

    def hook(step):
        if step == "check":
            with open(session, "ab") as f:
                f.write(b'\n{"late":1}\n')

    monkeypatch.setattr(save_steps, "hook", hook)
    r = restore.restore(session, root=session.parent)
    assert session.read_bytes() == WEIRD + b'\n{"late":1}\n'
    assert r.rebased_bytes + r.carried_bytes == len(b'\n{"late":1}\n')


def test_restore_conflicts_with_a_concurrent_rewrite(session, monkeypatch):
    save_edit(session, session.parent, b'{"edited":1}')

    def hook(step):
        if step == "fsync":
            with open(session, "r+b") as f:
                f.write(b"REWRITTEN")

    monkeypatch.setattr(save_steps, "hook", hook)
    with pytest.raises(Conflict, match="changed on disk"):
        restore.restore(session, root=session.parent)
    assert session.read_bytes().startswith(b"REWRITTEN")


def test_restore_without_backup_or_outside_root(session, tmp_path):
    with pytest.raises(backups.NoBackup):
        restore.restore(session, root=session.parent)
    other = tmp_path / "elsewhere"
    other.mkdir()
    with pytest.raises(Outside):
        restore.restore(session, root=other)


def test_no_op_restore_writes_nothing(session):
    save_edit(session, session.parent, b'{"edited":1}')
    restore.restore(session, root=session.parent)
    newest = backups.list_backups(session)[0]
    r = restore.restore(session, root=session.parent, backup=backups.list_backups(session)[-1])  # == current
    assert not r.changed and backups.list_backups(session)[0] == newest


def test_failed_backup_copy_leaves_no_bak(session, tmp_path):
    """A backup whose verification fails is never given a .bak name."""
    fd = os.open(session, os.O_RDONLY)
    try:
        with pytest.raises(Conflict):
            backups.write_backup(fd, str(session), verify=(len(WEIRD), "0" * 64))
    finally:
        os.close(fd)
    d = backups.backup_dir(session)
    assert sorted(os.listdir(d)) == ["path"]
