"""A delete, truncate or compact whose integrity check runs while the new file is written (``defer=True``):
it refuses exactly as the planner would, leaves the file, the directory and the backups as they were, and a
file that changes during the check is planned again, as a change during the plan is."""

from __future__ import annotations

import gc
import json
import os
import threading

import pytest

import xxhash

from sessionview import cli
from sessionview.core import ops
from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.edit import integrity, plan as edits, writeback
from sessionview.core.edit.change import open_editable
from sessionview.core.errors import Conflict, Refused, WriteFailed
from sessionview.core.session import open_session
from sessionview.core.store import backups, save as _save, stamp, steps
from sessionview.core.store.backup_copy import verified_chunks

from convo import CONVO

LINES = [json.dumps(m, separators=(",", ":")).encode() + b"\n" for m in CONVO]
DATA = b"".join(LINES)
WAIT = 30  # seconds a test waits for an event that the code under test must set (never reached when it works)


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(DATA)
    return p


@pytest.fixture
def hook(monkeypatch):
    """The save's steps, in order (and whatever a test appends to the list)."""
    seen: list[str] = []
    monkeypatch.setattr(steps, "hook", seen.append)
    return seen


def _listing(directory) -> list[str]:
    return sorted(os.listdir(directory))


def _refusal(path, plan):
    with pytest.raises(Refused) as err:
        plan(open_session(path))
    return err.value


@pytest.mark.parametrize(
    "plan",
    [
        lambda s, **k: ops.plan_delete(s, 2, 2, **k),
        lambda s, **k: ops.plan_delete(s, 3, 3, **k),
        lambda s, **k: ops.plan_truncate(s, 2, **k),
        lambda s, **k: ops.plan_compact(s, 2, 2, ops.SummarySource(text="a summary"), **k),
    ],
    ids=["orphan", "dangling", "truncate", "compact"],
)
def test_a_deferred_refusal_is_the_planners_and_leaves_everything_as_it_was(path, hook, plan):
    expected = _refusal(path, plan)
    s = open_session(path)
    change = plan(s, defer=True)
    assert change.unchecked in ("both", "down")
    before, listing = os.stat(path), _listing(path.parent)
    with pytest.raises(Refused) as err:
        ops.commit(s, change)
    got = err.value
    assert (str(got), got.ids, got.suggestion, got.widen, got.forceable) == (
        str(expected), expected.ids, expected.suggestion, expected.widen, expected.forceable
    )
    assert "create" in hook and ("copy" in hook or "write" in hook)  # the new content was written meanwhile...
    assert not any(name.startswith("backup") or name == "rename" for name in hook)  # ...and went no further
    assert path.read_bytes() == DATA
    now = os.stat(path)
    assert (now.st_ino, now.st_mtime_ns, now.st_ctime_ns, now.st_nlink) == (
        before.st_ino, before.st_mtime_ns, before.st_ctime_ns, before.st_nlink
    )
    assert _listing(path.parent) == listing  # no temporary file left behind
    assert backups.list_backups(str(path)) == []
    s.close()


def test_the_check_runs_while_the_new_file_is_written_and_gates_the_backup(path, hook, monkeypatch):
    written = threading.Event()
    real_step = hook.append

    def on_step(name: str) -> None:
        real_step(name)
        if name in ("copy", "write"):
            written.set()

    monkeypatch.setattr(steps, "hook", on_step)
    real = integrity.check_integrity

    def slow_check(*a, **k):
        assert written.wait(WAIT), "the new content was not written while the check ran"
        real(*a, **k)
        hook.append("checked")

    monkeypatch.setattr(integrity, "check_integrity", slow_check)
    s = open_session(path)
    change = ops.plan_delete(s, 2, 3, defer=True)
    outcome = ops.commit(s, change)
    assert outcome.changed
    assert path.read_bytes() == LINES[0] + LINES[3] + LINES[4]
    first_after = min(i for i, n in enumerate(hook) if n.startswith("backup") or n == "rename")
    assert hook.index("checked") < first_after
    assert len(backups.list_backups(str(path))) == 1
    s.close()


def test_a_refusal_comes_before_a_save_error(path, monkeypatch):
    def failing(*a, **k):
        raise WriteFailed("could not write the temporary file", str(path))

    monkeypatch.setattr(_save, "save", failing)
    s = open_session(path)
    with pytest.raises(Refused, match="orphan"):
        ops.commit(s, ops.plan_delete(s, 2, 2, defer=True))
    with pytest.raises(WriteFailed):  # a check that passes: the save's own error
        ops.commit(s, ops.plan_delete(s, 2, 3, defer=True))
    s.close()


def test_what_the_check_raises_is_raised_as_it_is(path, monkeypatch):
    def torn(*a, **k):
        raise SourceChanged("could only read 0 of 79 bytes at offset 0: the file changed")

    monkeypatch.setattr(integrity, "check_integrity", torn)
    s = open_session(path)
    with pytest.raises(SourceChanged):  # not the save's Rewriting: the caller starts over, as for the plan
        ops.commit(s, ops.plan_delete(s, 2, 3, defer=True))
    assert path.read_bytes() == DATA
    assert _listing(path.parent) == ["s.jsonl"]
    s.close()


def test_a_check_that_fails_otherwise_is_the_saves_error_the_original_untouched(path, monkeypatch):
    import errno

    def broken(*a, **k):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(integrity, "check_integrity", broken)
    s = open_session(path)
    with pytest.raises(WriteFailed, match="untouched") as raised:  # what the CLI tells, not a bare OSError
        ops.commit(s, ops.plan_delete(s, 2, 3, defer=True))
    assert "Input/output error" in str(raised.value)
    assert path.read_bytes() == DATA
    assert _listing(path.parent) == ["s.jsonl"]
    s.close()


def test_a_preview_or_a_diff_runs_the_deferred_check_first(path):
    s = open_session(path)
    change = ops.plan_delete(s, 2, 2, defer=True)
    with pytest.raises(Refused, match="orphan"):
        ops.diff(s, change, str(path))
    with pytest.raises(Refused, match="orphan"):
        ops.preview(s, change)
    fine = ops.plan_delete(s, 2, 3, defer=True)
    assert "Two files." not in ops.diff(s, fine, str(path)).split("\n-", 1)[0]
    assert ops.preview(s, fine)
    s.close()


def test_a_forced_plan_is_never_deferred_and_a_checked_change_is_told_at_once(path):
    s = open_session(path)
    assert ops.plan_delete(s, 2, 2, force=True, defer=True).unchecked is None
    assert ops.plan_delete(s, 2, 3).unchecked is None
    told: list[str] = []
    ops.commit(s, ops.plan_delete(s, 2, 3), on_checked=lambda: told.append("told"))
    assert told == ["told"]
    s.close()


def _appending_check(path, payload: bytes, monkeypatch, *, rewrite: bool = False) -> list[int]:
    """The first check appends ``payload`` to the file (or rewrites it in place) while it runs; returns the
    list of checks run."""
    real = integrity.check_integrity
    runs: list[int] = []

    def check(*a, **k):
        runs.append(1)
        if len(runs) == 1:
            if rewrite:
                with open(path, "r+b") as f:  # same inode, like Brute's SessionLog
                    f.truncate(0)
                    f.write(payload)
            else:
                with open(path, "ab") as f:
                    f.write(payload)
        real(*a, **k)

    monkeypatch.setattr(integrity, "check_integrity", check)
    return runs


def _delete_2_3(path):
    def plan(s):
        return ops.plan_delete(s, 2, 3, defer=True)

    return ops.run_with_retry(str(path), plan, lambda s, c: ops.commit(s, c))


def test_an_append_during_the_deferred_check_is_planned_again(path, monkeypatch):
    late = json.dumps({"role": "assistant", "content": "late"}, separators=(",", ":")).encode() + b"\n"
    runs = _appending_check(path, late, monkeypatch)
    outcome = _delete_2_3(path)
    assert outcome.changed and len(runs) == 2
    assert path.read_bytes() == LINES[0] + LINES[3] + LINES[4] + late


def test_a_rewrite_during_the_deferred_check_is_planned_again_on_the_new_content(path, monkeypatch):
    rewritten = LINES[0].replace(b"list files", b"list the files") + b"".join(LINES[1:])
    runs = _appending_check(path, rewritten, monkeypatch, rewrite=True)
    outcome = _delete_2_3(path)
    assert outcome.changed and len(runs) == 2
    assert path.read_bytes() == LINES[0].replace(b"list files", b"list the files") + LINES[3] + LINES[4]


def test_outside_the_retry_a_change_during_the_check_is_a_conflict_and_writes_nothing(path, monkeypatch):
    late = b'{"role":"assistant","content":"late"}\n'
    _appending_check(path, late, monkeypatch)
    s = open_session(path)
    with pytest.raises(writeback.ChangedWhileChecked, match="changed on disk while the change was checked"):
        ops.commit(s, ops.plan_delete(s, 2, 3, defer=True))
    assert path.read_bytes() == DATA + late
    assert _listing(path.parent) == ["s.jsonl"]
    assert backups.list_backups(str(path)) == []
    s.close()


@pytest.fixture
def at_rest(path, monkeypatch):
    """``path`` counts as big and at rest: its digest is deferred (skip where ctime is not kept)."""
    from proofhelpers import settle_at_once_or_skip

    settle_at_once_or_skip(path, monkeypatch)
    monkeypatch.setattr(stamp, "DEFER_MIN", 1)
    return path


def _forks_here() -> None:
    if threading.active_count() != 1:
        pytest.skip("another thread runs in this test process: a digest is then hashed in a thread")


def test_a_file_loaded_for_a_deferred_check_is_hashed_in_a_forked_process(at_rest):
    _forks_here()
    s = open_editable(str(at_rest), check_deferred=True)
    digest = s.stamp.digest
    assert isinstance(digest, stamp.Digest) and digest._child is not None and threading.active_count() == 1
    assert s.stamp.hexdigest == xxhash.xxh3_128(DATA).hexdigest() and digest._child is None
    assert s.stamp.hexdigest == xxhash.xxh3_128(DATA).hexdigest()  # asked again: the same verdict
    s.close()
    threaded = open_editable(str(at_rest), scan_ids=True)  # a check before the commit: escapes searched in a thread
    assert isinstance(threaded.stamp.digest, stamp.Digest) and threaded.stamp.digest._child is None
    assert threaded.stamp.hexdigest == xxhash.xxh3_128(DATA).hexdigest()
    threaded.close()


def test_a_forked_digest_of_a_file_changed_meanwhile_proves_nothing(at_rest, monkeypatch):
    _forks_here()
    real = stamp.Digest._hash

    def written_first(self, fd):  # runs in the child: the file changes before it is hashed
        with open(at_rest, "ab") as f:
            f.write(b'{"role":"user","content":"late"}\n')
        real(self, fd)

    monkeypatch.setattr(stamp.Digest, "_hash", written_first)
    d = stamp.Digest(str(at_rest), apart=True)
    assert d._child is not None
    with pytest.raises(Conflict, match="it changed after it was loaded"):
        d.result()
    monkeypatch.setattr(stamp.Digest, "_hash", lambda self, fd: os._exit(3))  # a child that dies
    with pytest.raises(Conflict, match="the process hashing it failed"):
        stamp.Digest(str(at_rest), apart=True).result()


def test_a_file_truncated_while_the_forked_digest_reads_it_proves_nothing(at_rest, monkeypatch):
    _forks_here()
    monkeypatch.setattr(stamp, "CHILD_CHUNK", 16)
    real = os.preadv
    calls = []

    def truncated_after_the_first_read(fd, buffers, offset):  # in the child: the file shrinks under it
        n = real(fd, buffers, offset)
        if not calls:
            os.truncate(at_rest, 20)
        calls.append(n)
        return n

    monkeypatch.setattr(os, "preadv", truncated_after_the_first_read)
    with pytest.raises(Conflict, match="it changed after it was loaded"):
        stamp.Digest(str(at_rest), apart=True).result()


def test_a_forked_digest_says_nothing_on_this_processs_streams(at_rest, monkeypatch, capfd):
    _forks_here()

    def noisy(self, fd):  # the child writes to what were the caller's stdout and stderr, then dies
        os.write(1, b"child stdout")
        os.write(2, b"child stderr")
        os._exit(3)

    monkeypatch.setattr(stamp.Digest, "_hash", noisy)
    with pytest.raises(Conflict, match="the process hashing it failed"):
        stamp.Digest(str(at_rest), apart=True).result()
    out, err = capfd.readouterr()
    assert "child" not in out and "child" not in err


def test_a_forked_digest_stops_once_its_parent_is_gone(at_rest, monkeypatch):
    _forks_here()
    monkeypatch.setattr(stamp, "CHILD_CHUNK", 16)
    monkeypatch.setattr(stamp, "_PARENT_CHECK", 16)
    real = os.getppid
    asked = []

    def parent_gone_after_the_first_look():
        asked.append(1)
        return real() if len(asked) == 1 else 1

    monkeypatch.setattr(os, "getppid", parent_gone_after_the_first_look)
    with pytest.raises(Conflict, match="it changed after it was loaded"):  # stopped short: no verdict
        stamp.Digest(str(at_rest), apart=True).result()


def test_a_forked_digest_already_reaped_gives_its_whole_verdict(at_rest):
    _forks_here()
    import signal

    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps children at once: waitpid finds none
    try:
        d = stamp.Digest(str(at_rest), apart=True)
        assert d._child is not None
        assert d.result() == xxhash.xxh3_128(at_rest.read_bytes()).hexdigest()
    finally:
        signal.signal(signal.SIGCHLD, old)


def test_a_forked_digest_nobody_asks_for_leaves_no_process(at_rest):
    _forks_here()
    d = stamp.Digest(str(at_rest), apart=True)
    assert d._child is not None
    pid = d._child.pid
    del d
    gc.collect()
    with pytest.raises(ChildProcessError):  # stopped and waited for: no zombie is left
        os.waitpid(pid, os.WNOHANG)


def test_a_deferred_delete_of_a_file_at_rest_writes_the_same_bytes_and_a_verified_backup(at_rest):
    assert cli.main(["delete", str(at_rest), "2:3"]) == 0
    assert at_rest.read_bytes() == LINES[0] + LINES[3] + LINES[4]
    (made,) = backups.list_backups(str(at_rest))
    fd = backups.open_backup(made, str(at_rest))
    try:
        assert b"".join(verified_chunks(made.path, fd, str(at_rest))) == DATA
    finally:
        os.close(fd)
    assert cli.main(["undo", str(at_rest)]) == 0
    assert at_rest.read_bytes() == DATA


# -- the CLI -----------------------------------------------------------------------------------------


def test_the_cli_refuses_a_split_as_before_and_leaves_nothing_behind(path, capsys):
    assert cli.main(["delete", str(path), "2"]) == 1
    err = capsys.readouterr().err
    assert "orphan" in err and "2:3" in err.replace("#2-#3", "2:3").replace("2-3", "2:3")
    assert path.read_bytes() == DATA
    assert _listing(path.parent) == ["s.jsonl"]
    assert backups.list_backups(str(path)) == []


def test_the_cli_tells_a_deferred_changes_warnings_before_it_says_written(path, capsys):
    assert cli.main(["delete", str(path), "1:5"]) == 0
    err = capsys.readouterr().err.splitlines()
    warned = [i for i, ln in enumerate(err) if "warning:" in ln and "empties the session" in ln]
    written = [i for i, ln in enumerate(err) if "delete #1-#5: written" in ln]
    assert warned and written and warned[0] < written[0]
    assert path.read_bytes() == b""


def test_the_cli_defers_the_check_of_a_write_but_not_of_a_dry_run(path, monkeypatch, capsys):
    seen: list[str | None] = []
    real = edits.plan_delete

    def spy(*a, **k):
        change = real(*a, **k)
        seen.append(change.unchecked)
        return change

    monkeypatch.setattr(edits, "plan_delete", spy)
    assert cli.main(["delete", str(path), "2:3", "--dry-run"]) == 0
    assert cli.main(["delete", str(path), "2:3"]) == 0
    capsys.readouterr()
    assert seen == [None, "both"]
