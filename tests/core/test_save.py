"""The saving layer: atomic replacement, conflict checks, appends during a save, crashes, refusals."""

from __future__ import annotations

import errno
import fnmatch
import itertools
import json
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import sys
import time

import pytest

import xxhash

from sessionview.core.store import backups, paths, save, tmpfiles, writers, steps as save_steps
from sessionview.core.store.stamp import stamp_bytes, stamp_document, stamp_file
from sessionview.core.doc.document import Document, Line
from sessionview.core.errors import (
    AnotherWriter,
    Conflict,
    HardLinked,
    Locked,
    Outside,
    SaveError,
    WriteFailed,
)

CHILD = pathlib.Path(__file__).with_name("save_child.py")
OLD = b'{"role":"user","content":"hello"}\n{"role":"assistant","content":"hi"}\n'


def child(mode: str, cfg: dict, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(CHILD), mode, json.dumps(cfg)], capture_output=True, text=True, timeout=60, **kw
    )


def start_child(mode: str, cfg: dict) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, str(CHILD), mode, json.dumps(cfg)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready"
    return p


def stop_child(p: subprocess.Popen) -> None:
    try:
        if p.stdin:
            p.stdin.close()
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()


def temps(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if tmpfiles.TMP_MARK in n)


@pytest.fixture
def hook():
    """Install a save step hook for one test."""
    installed = []

    def install(fn):
        installed.append(fn)
        save_steps.hook = fn

    yield install
    save_steps.hook = None


@pytest.fixture
def session(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(OLD)
    return p


def load(path):
    doc = Document.load(path)
    return doc, stamp_document(doc)


def edit_first(doc: Document, raw: bytes) -> Document:
    return doc.splice(1, 1, [Line(raw)])


RENDER = {"how": "bytes"}


def pytest_generate_tests(metafunc):
    """Every test that saves through :func:`renderer` runs twice: the new content as bytes, and as the
    document's layout (the kept runs as spans of the loaded file, copied in the kernel)."""
    if "renderer" in metafunc.definition.function.__code__.co_names:
        metafunc.parametrize("_render_how", ["bytes", "spans"], indirect=True)


@pytest.fixture(autouse=True)
def _render_how(request):
    RENDER["how"] = getattr(request, "param", "bytes")
    yield RENDER["how"]
    RENDER["how"] = "bytes"


def renderer(doc: Document):
    pieces = doc.layout if RENDER["how"] == "spans" else doc.iter_bytes
    return lambda appended: itertools.chain(pieces(), [appended])


# -- stamps ----------------------------------------------------------------------------------------


def test_stamp_document_matches_the_bytes(session):
    doc, st = load(session)
    s = os.stat(session)
    assert (st.dev, st.ino, st.size, st.mtime_ns) == (s.st_dev, s.st_ino, len(OLD), s.st_mtime_ns)
    assert st.hexdigest == xxhash.xxh3_128(OLD).hexdigest()
    assert st.real_path == str(session.resolve())
    assert stamp_bytes(session, OLD) == st
    assert stamp_file(session) == st
    doc.close()


# -- the atomic write ------------------------------------------------------------------------------


def test_atomic_write_keeps_mode_owner_and_leaves_no_temp(session, tmp_path, hook):
    os.chmod(session, 0o640)
    if os.geteuid() == 0:
        os.chown(session, 1234, 2345)
    try:
        os.setxattr(session, "user.sv-test", b"kept")
        has_xattr = True
    except OSError:
        has_xattr = False
    before = os.stat(session)
    doc, st = load(session)
    seen = []

    def check(step):
        names = os.listdir(tmp_path)
        seen.append(step)
        sessions = [n for n in names if fnmatch.fnmatch(n, "*.jsonl") or fnmatch.fnmatch(n, "*.json")]
        assert sessions == ["s.jsonl"], (step, names)

    hook(check)
    new = edit_first(doc, b'{"role":"user","content":"HELLO"}')
    r = save.save(session, renderer(new), st, root=tmp_path, new_stamp=True)
    assert r.changed and r.backup is not None
    assert "rename" in seen and "write" in seen
    after = os.stat(session)
    assert stat.S_IMODE(after.st_mode) == 0o640
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert after.st_ino != before.st_ino
    if has_xattr:
        assert os.getxattr(session, "user.sv-test") == b"kept"
    assert session.read_bytes() == new.to_bytes()
    assert temps(tmp_path) == []
    assert r.stamp == stamp_file(session)
    assert r.stamp.hexdigest == xxhash.xxh3_128(session.read_bytes()).hexdigest()
    assert r.size == len(session.read_bytes())
    doc.close()


def test_no_op_save_writes_nothing(session, tmp_path):
    before = os.stat(session)
    doc, st = load(session)
    r = save.save(session, renderer(doc), st, root=tmp_path)
    after = os.stat(session)
    assert not r.changed and r.backup is None
    key = lambda s: (s.st_ino, s.st_mtime_ns, s.st_ctime_ns)  # noqa: E731
    assert key(after) == key(before)
    assert backups.list_backups(session) == []
    assert temps(tmp_path) == []
    doc.close()


def test_temp_names_never_look_like_sessions(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for base in ["a.jsonl", "b.json", "x" * 250 + ".jsonl"]:
            tfd, name = tmpfiles.create_tmp(fd, base)
            os.close(tfd)
            assert not fnmatch.fnmatch(name, "*.jsonl") and not fnmatch.fnmatch(name, "*.json")
            assert tmpfiles.is_temp_name(name) and len(name) < 255
    finally:
        os.close(fd)


def test_render_failure_removes_the_temp_file(session, tmp_path):
    doc, st = load(session)

    def bad(appended):
        yield b"partial"
        raise ValueError("serializer refused")

    with pytest.raises(ValueError):
        save.save(session, bad, st, root=tmp_path)
    assert session.read_bytes() == OLD
    assert temps(tmp_path) == []
    doc.close()


# -- checks against the stamp ----------------------------------------------------------------------


def test_rebase_onto_appends(session, tmp_path):
    doc, st = load(session)
    with open(session, "ab") as f:
        f.write(b'{"role":"user","content":"appended"}\n{"partial"')
    new = edit_first(doc, b'{"role":"user","content":"edited"}')
    got = []

    def render(appended):
        got.append(appended)
        return [new.to_bytes(), appended]

    r = save.save(session, render, st, root=tmp_path)
    assert got == [b'{"role":"user","content":"appended"}\n{"partial"']
    assert r.rebased_bytes == len(got[0])
    assert session.read_bytes() == new.to_bytes() + got[0]
    doc.close()


def test_divergent_rewrite_is_refused(session, tmp_path):
    doc, st = load(session)
    rewritten = b'{"role":"user","content":"brute rewrote this turn"}\n'
    with open(session, "wb") as f:  # Brute: truncate in place, then write
        f.write(rewritten)
    ino = os.stat(session).st_ino
    with pytest.raises(Conflict) as e:
        save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
    assert "conflict" in str(e.value) and "changed on disk" in str(e.value)
    assert e.value.exit_code == 1
    assert session.read_bytes() == rewritten and os.stat(session).st_ino == ino
    assert temps(tmp_path) == [] and backups.list_backups(session) == []
    doc.close()


def test_same_size_rewrite_is_refused(session, tmp_path):
    doc, st = load(session)
    with open(session, "r+b") as f:
        f.write(b"X")
    with pytest.raises(Conflict, match="changed on disk"):
        save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
    assert session.read_bytes() == b"X" + OLD[1:]
    doc.close()


def test_shorter_file_is_refused(session, tmp_path):
    doc, st = load(session)
    os.truncate(session, 10)
    with pytest.raises(Conflict, match="conflict.*changed on disk"):
        save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
    assert session.read_bytes() == OLD[:10]
    doc.close()


def test_inode_change_is_refused(session, tmp_path):
    doc, st = load(session)
    other = tmp_path / "other"
    other.write_bytes(OLD)  # same bytes, another file
    os.replace(other, session)
    with pytest.raises(Conflict, match="changed on disk"):
        save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
    assert session.read_bytes() == OLD
    doc.close()


def test_deleted_file_is_refused(session, tmp_path):
    doc, st = load(session)
    session.unlink()
    with pytest.raises(Conflict, match="changed on disk"):
        save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
    assert not session.exists() and temps(tmp_path) == []
    doc.close()


def test_rewrite_during_the_save_is_refused(session, tmp_path, hook):
    """The re-check right before the rename (through the backup copy) sees an in-place rewrite."""
    doc, st = load(session)
    other = b'{"role":"user","content":"HELLO"}\n{"role":"assistant","content":"yo"}\n'

    def rewrite(step):
        if step == "fsync":
            with open(session, "r+b") as f:
                f.write(other)

    hook(rewrite)
    for use_backup in (True, False):
        session.write_bytes(OLD)
        doc, st = load(session)
        with pytest.raises(Conflict, match="changed on disk during the save"):
            save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path, backup=use_backup)
        assert session.read_bytes() == other
        assert temps(tmp_path) == []
        doc.close()
    assert backups.list_backups(session) == []


def test_rewrite_right_after_the_rename_is_put_back(session, tmp_path, hook):
    """A rewrite of the old inode that lands after the rename: its version is restored, Conflict."""
    doc, st = load(session)
    other = b'{"role":"user","content":"brute"}\n'
    fds = []

    def racer(step):
        if step == "recheck":  # Brute opens the file (the old inode) just before our rename...
            fds.append(os.open(session, os.O_WRONLY))
        if step == "rename":  # ...and truncates and writes it just after
            os.ftruncate(fds[0], 0)
            os.pwrite(fds[0], other, 0)
            os.close(fds[0])

    hook(racer)
    with pytest.raises(Conflict, match="changed on disk during the save") as e:
        save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
    assert "put back" in str(e.value)
    assert session.read_bytes() == other
    assert temps(tmp_path) == []
    doc.close()


# -- appends during the save -----------------------------------------------------------------------


def test_appends_during_the_save_are_carried_in_order(session, tmp_path, hook):
    doc, st = load(session)
    fds = []

    def appender(step):
        if step == "write":  # before the rename: caught up into the temp file
            with open(session, "ab") as f:
                f.write(b'{"n":1}\n')
        if step == "recheck":
            fds.append(os.open(session, os.O_WRONLY | os.O_APPEND))
        if step == "rename":  # a writer that opened the old inode writes after the rename
            os.write(fds[0], b'{"n":2}\n{"n":3}\n')
            os.close(fds[0])

    hook(appender)
    new = edit_first(doc, b'{"edited":true}')
    r = save.save(session, renderer(new), st, root=tmp_path, new_stamp=True)
    assert session.read_bytes() == new.to_bytes() + b'{"n":1}\n{"n":2}\n{"n":3}\n'
    assert r.carried_bytes == 16 and r.lost_partial_bytes == 0
    assert r.stamp.size == r.size == len(session.read_bytes())
    assert r.stamp.hexdigest == xxhash.xxh3_128(session.read_bytes()).hexdigest()
    doc.close()


def test_late_append_is_ordered_before_appends_to_the_new_file(session, tmp_path, hook):
    doc, st = load(session)
    fds = []

    def racer(step):
        if step == "recheck":
            fds.append(os.open(session, os.O_WRONLY | os.O_APPEND))
        if step == "rename":
            os.write(fds[0], b'{"n":1}\n')  # late write to the old inode
            os.close(fds[0])
            with open(session, "ab") as f:  # the next line already goes to the new file
                f.write(b'{"n":2}\n')

    hook(racer)
    new = edit_first(doc, b'{"edited":true}')
    r = save.save(session, renderer(new), st, root=tmp_path)
    assert session.read_bytes() == new.to_bytes() + b'{"n":1}\n{"n":2}\n'
    assert r.carried_bytes == 8
    assert temps(tmp_path) == []
    doc.close()


def test_unfinished_line_of_a_writer_still_writing_is_reported(session, tmp_path, hook):
    doc, st = load(session)
    fds = []

    def racer(step):
        if step == "recheck":
            fds.append(os.open(session, os.O_WRONLY | os.O_APPEND))
        if step == "rename":
            os.write(fds[0], b'{"n":1}\n{"par')  # and it keeps the file open

    hook(racer)
    try:
        new = edit_first(doc, b'{"edited":true}')
        r = save.save(session, renderer(new), st, root=tmp_path, settle_timeout=0.05)
    finally:
        os.close(fds[0])
    assert session.read_bytes() == new.to_bytes() + b'{"n":1}\n'
    assert r.carried_bytes == 8 and r.lost_partial_bytes == 5
    assert any("unfinished last line" in w for w in r.warnings)
    doc.close()


def test_late_bytes_that_cannot_be_merged_are_kept_aside(session, tmp_path, hook):
    """The new file is rewritten right after the rename while late bytes wait: they go to the state dir."""
    doc, st = load(session)
    fds = []
    other = b'{"rewritten":"by brute, right after our save"}\n'

    def racer(step):
        if step == "recheck":
            fds.append(os.open(session, os.O_WRONLY | os.O_APPEND))
        if step == "rename":
            os.write(fds[0], b'{"late":1}\n')
            os.close(fds[0])
            with open(session, "wb") as f:  # truncates our new file in place
                f.write(other)

    hook(racer)
    r = save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
    assert session.read_bytes() == other
    assert r.lost_partial_bytes == len(b'{"late":1}\n')
    (warning,) = r.warnings
    assert "could not be merged" in warning
    kept = warning.rsplit("kept in ", 1)[1]
    assert pathlib.Path(kept).read_bytes() == b'{"late":1}\n'
    assert temps(tmp_path) == []
    doc.close()


@pytest.mark.slow
def test_writer_appending_1000_lines_per_second_loses_nothing(tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_bytes(b'{"h":0}\n')
    stop = tmp_path / "stop"
    w = start_child("writer", {"path": str(path), "stop": str(stop), "rate": 1000})
    try:
        results = []
        for i in range(1, 21):
            doc, st = load(path)
            new = edit_first(doc, b'{"h":%d}' % i)
            results.append(save.save(path, renderer(new), st, root=tmp_path))
            doc.close()
            time.sleep(0.03)  # pacing only: let lines arrive between saves
    finally:
        stop.touch()
        assert w.stdout is not None
        out = w.stdout.read()
        w.wait(timeout=10)
    count = int(out.split()[-1])
    lines = path.read_bytes().split(b"\n")
    assert lines[0] == b'{"h":20}' and lines[-1] == b""
    assert lines[1:-1] == [b"w%07d" % n for n in range(count)]
    assert all(r.changed for r in results)
    assert sum(r.rebased_bytes for r in results) > 0
    assert temps(tmp_path) == []


# -- a crash at every step -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("locked,linked", [(False, True), (True, True), (False, False)])
def test_crash_at_every_step_leaves_old_or_new(tmp_path, locked, linked):
    state = tmp_path / "state"
    d = tmp_path / "sessions"
    d.mkdir()
    path = d / "s.jsonl"
    new = OLD.replace(b"hello", b"HELLO there, a longer line") + b'{"role":"user","content":"more"}\n'
    n = 0
    outcomes = {}
    while True:
        n += 1
        assert n < 200
        if path.exists():
            path.unlink()
        path.write_bytes(OLD)
        cfg = {"path": str(path), "root": str(d), "new": new.hex(), "crash_at": n, "state_dir": str(state)}
        if locked:
            cfg["lock_path"] = str(d / "s.lock")
        if not linked:
            cfg["no_link"] = True
        p = child("crash", cfg)
        crashed = p.returncode == -9
        assert crashed or p.returncode == 0, p.stderr
        content = path.read_bytes()
        assert content in (OLD, new), f"step {n}: a mix"
        outcomes[n] = (p.stdout.split()[1] if crashed else "done", content == new)
        # restart: the app cleans up stale temp files
        now = time.time() + 1
        tmpfiles.cleanup_temp_files(d, older_than=now)
        assert temps(d) == []
        for b in backups.list_backups(path, state_dir=state):
            assert pathlib.Path(b.path).read_bytes() in (OLD, new)
        bdir = backups.backup_dir(path, state_dir=state)
        if os.path.isdir(bdir):
            tmpfiles.cleanup_temp_files(bdir)
            assert temps(bdir) == []
        if not crashed:
            assert content == new
            break
    steps = [s for s, _ in outcomes.values()]
    backup_steps = ("backup:record", "backup:link") if linked else ("backup:write", "backup:link")
    for must in ("open", "check", "create", "write", "fsync", *backup_steps, "rename", "dir_fsync"):
        assert must in steps
    # the file switches from old to new exactly at the rename, never before
    first_new = min(k for k, (s, is_new) in outcomes.items() if is_new)
    assert outcomes[first_new][0] == "rename"
    assert all(not is_new for k, (s, is_new) in outcomes.items() if k < first_new)
    assert all(is_new for k, (s, is_new) in outcomes.items() if k >= first_new)


def test_cleanup_keeps_a_temp_file_in_use(tmp_path):
    live = tmp_path / ".s.jsonl.sv-tmp-0123456789ab"
    stale = tmp_path / ".s.jsonl.sv-tmp-ba9876543210"
    stale.write_bytes(b"x")
    live.write_bytes(b"y")
    # not sessionview's own temp names: never touched
    others = [".s.jsonl.sv-tmp-live", "s.jsonl.sv-tmp-0123456789ab", ".s.jsonl.sv-tmp-0123456789ab.x", "keep.jsonl"]
    for name in others:
        (tmp_path / name).write_bytes(b"z")
    p = start_child("hold", {"path": str(live), "flock": True})
    try:
        assert tmpfiles.cleanup_temp_files(tmp_path, older_than=0) == []  # both too new for that cut-off
        removed = tmpfiles.cleanup_temp_files(tmp_path)
    finally:
        stop_child(p)
    assert removed == [str(stale)]
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, *others])


# -- write failures --------------------------------------------------------------------------------


@pytest.mark.parametrize("thread", [False, True])
def test_file_size_limit_is_no_space(tmp_path, thread):
    path = tmp_path / "s.jsonl"
    path.write_bytes(OLD * 5)
    cfg = {
        "path": str(path),
        "root": str(tmp_path),
        "new_size": 5000,
        "limit": 2000,
        "state_dir": str(tmp_path / "state"),
        "thread": thread,
    }
    p = child("fsize", cfg)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["error"] == "WriteFailed", out
    assert "no space" in out["message"] and out["exit_code"] == 2
    assert out["sigxfsz"] == int(signal.SIG_DFL)  # restored after the write
    assert path.read_bytes() == OLD * 5
    assert temps(tmp_path) == []


def _mount(*args) -> str | None:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return "needs root and mount(8)"
    p = subprocess.run(["mount", *args], capture_output=True, text=True)
    return None if p.returncode == 0 else f"mount failed: {p.stderr.strip() or p.returncode}"


def _umount(path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


def test_full_file_system_is_no_space(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    why = _mount("-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", str(mnt))
    if why:
        pytest.skip(f"cannot mount a small tmpfs: {why}")
    try:
        path = mnt / "s.jsonl"
        old = b'{"a":"' + b"o" * 40000 + b'"}\n'
        path.write_bytes(old)
        doc, st = load(path)
        with pytest.raises(WriteFailed) as e:
            save.save(path, lambda a: [b'{"a":"' + b"n" * 40000 + b'"}\n', a], st, root=mnt)
        assert "no space" in str(e.value) and e.value.exit_code == 2 and e.value.errno == errno.ENOSPC
        assert path.read_bytes() == old
        assert temps(mnt) == []
        doc.close()
    finally:
        _umount(mnt)


def test_immutable_file_is_permission_denied(session, tmp_path):
    if not shutil.which("chattr"):
        pytest.skip("chattr(1) not installed")
    p = subprocess.run(["chattr", "+i", str(session)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"chattr +i does not work here: {p.stderr.strip()}")
    try:
        doc, st = load(session)
        with pytest.raises(WriteFailed) as e:
            save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
        assert "permission denied" in str(e.value) and e.value.exit_code == 2
        assert temps(tmp_path) == []
        doc.close()
    finally:
        subprocess.run(["chattr", "-i", str(session)], capture_output=True)
    assert session.read_bytes() == OLD


def test_read_only_mount_is_read_only(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    path = d / "s.jsonl"
    path.write_bytes(OLD)
    why = _mount("--bind", str(d), str(d))
    if why:
        pytest.skip(f"cannot bind-mount: {why}")
    try:
        why = _mount("-o", "remount,ro,bind", str(d))
        if why:
            pytest.skip(f"cannot remount read-only: {why}")
        doc, st = load(path)
        with pytest.raises(WriteFailed) as e:
            save.save(path, renderer(edit_first(doc, b"{}")), st, root=d)
        assert "read-only" in str(e.value) and e.value.errno == errno.EROFS
        doc.close()
    finally:
        _umount(d)
    assert path.read_bytes() == OLD and temps(d) == []


# -- another writer --------------------------------------------------------------------------------


def test_another_writer_is_refused_unless_forced(session, tmp_path):
    doc, st = load(session)
    p = start_child("hold", {"path": str(session)})
    try:
        with pytest.raises(AnotherWriter) as e:
            save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
        assert f"pid {p.pid}" in str(e.value) and "save_child.py" in str(e.value)
        assert e.value.writers[0][0] == p.pid and e.value.exit_code == 1
        assert session.read_bytes() == OLD
        assert [w.pid for w in writers.find_writers(session)] == [p.pid]
        r = save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path, force=True)
        assert r.changed and any(str(p.pid) in w for w in r.warnings)
        assert session.read_bytes() == b"{}\n" + OLD.split(b"\n", 1)[1]
    finally:
        stop_child(p)
    doc.close()


def test_readers_and_our_own_process_are_not_writers(session):
    fd = os.open(session, os.O_WRONLY | os.O_APPEND)  # our own pid is skipped
    try:
        code = f"import sys; f=open({str(session)!r},'rb'); print('ready', flush=True); sys.stdin.read()"
        p = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert p.stdout.readline().strip() == "ready"
        try:
            assert writers.find_writers(session) == []
            assert [w.pid for w in writers.find_writers(session, include_self=True)] == [os.getpid()]
        finally:
            stop_child(p)
    finally:
        os.close(fd)


# -- links -----------------------------------------------------------------------------------------


def test_symlink_inside_root_replaces_the_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "data" / "s.jsonl"
    real.parent.mkdir()
    real.write_bytes(OLD)
    link = tmp_path / "link.jsonl"
    link.symlink_to(os.path.join("data", "s.jsonl"))
    doc, st = load(link)
    assert st.real_path == str(real)
    r = save.save(link, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
    assert r.real_path == str(real)
    assert link.is_symlink() and os.readlink(link) == os.path.join("data", "s.jsonl")
    assert real.read_bytes().startswith(b"{}\n")
    assert temps(tmp_path) == [] and temps(real.parent) == []
    doc.close()


def test_symlink_outside_root_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "s.jsonl"
    target.write_bytes(OLD)
    root = tmp_path / "root"
    root.mkdir()
    link = root / "s.jsonl"
    link.symlink_to(target)
    doc, st = load(link)
    with pytest.raises(Outside) as e:
        save.save(link, renderer(edit_first(doc, b"{}")), st, root=root)
    assert "outside" in str(e.value) and e.value.exit_code == 1
    assert target.read_bytes() == OLD and link.is_symlink()
    assert paths.default_root(link) == str(root)
    doc.close()


def test_hard_link_is_refused(session, tmp_path):
    os.link(session, tmp_path / "twin.jsonl")
    doc, st = load(session)
    with pytest.raises(HardLinked) as e:
        save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path)
    assert "hard link" in str(e.value) and e.value.exit_code == 1
    assert session.read_bytes() == OLD and os.stat(session).st_nlink == 2
    doc.close()


# -- the LittleGhost lock --------------------------------------------------------------------------


def test_store_lock_is_taken_and_created_private(session, tmp_path, hook):
    lock = tmp_path / "s.lock"
    doc, st = load(session)
    steps = []
    hook(steps.append)
    save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path, lock_path=lock)
    assert steps[0] == "lock"
    assert stat.S_IMODE(os.stat(lock).st_mode) == 0o600
    doc.close()


def test_held_store_lock_is_locked(session, tmp_path):
    lock = tmp_path / "s.lock"
    doc, st = load(session)
    p = start_child("hold", {"path": str(lock), "flock": True})
    try:
        t = time.monotonic()
        with pytest.raises(Locked) as e:
            save.save(session, renderer(edit_first(doc, b"{}")), st, root=tmp_path, lock_path=lock, lock_timeout=0.2)
        assert time.monotonic() - t < 5
        assert "locked" in str(e.value) and e.value.exit_code == 1
        assert session.read_bytes() == OLD
    finally:
        stop_child(p)
    doc.close()


def test_errors_share_a_base_and_exit_codes():
    for cls in (Conflict, AnotherWriter, Outside, HardLinked, Locked, backups.NoBackup):
        assert issubclass(cls, SaveError) and cls("x").exit_code == 1
    assert issubclass(WriteFailed, SaveError) and WriteFailed("x").exit_code == 2
    from sessionview.core.errors import reason_for

    assert reason_for(errno.ENOSPC) == "no space"
    assert reason_for(errno.EFBIG).startswith("no space")
    assert reason_for(errno.EACCES) == reason_for(errno.EPERM) == "permission denied"
    assert "read-only" in reason_for(errno.EROFS)
    assert reason_for(errno.EIO) == os.strerror(errno.EIO)
