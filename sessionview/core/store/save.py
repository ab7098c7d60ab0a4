"""Saving session files without losing a byte, even while an agent keeps writing them.

A save never writes into the session file. It writes the new content to a temporary file in the same
directory, fsyncs it and renames it over the original (``os.replace``), then fsyncs the directory. So the
file on disk is always either the old version or the new one, never a mix.

Before replacing, the file on disk is compared with the :class:`LoadStamp` taken when it was loaded:

* same inode, and its first ``stamp.size`` bytes still hash to the stamp: anything beyond was appended
  since (an agent logging) and is handed to ``render(appended)``, which emits it after the edited
  content (a *rebase*);
* anything else (another inode, shorter, a different prefix: Brute truncates and rewrites its file after
  every turn) raises :class:`~sessionview.core.errors.Conflict` and the file is left alone.

Lines appended while the save itself runs are not lost: right before the rename the whole lines appended so
far are copied into the temporary file; after the rename the old inode is read again (once no process has it
open for writing any more) and whatever arrived is appended to the new file, in order. Only whole lines are
carried while another process may still be writing one, so the new file never ends in a torn line; bytes
that could not be carried (an unfinished line whose writer kept the old file open, a merge that failed) are
kept beside the backups and reported (``SaveResult.not_carried_bytes``, ``kept_paths``, ``warnings``). A truncation
or rewrite met during the save is a :class:`~sessionview.core.errors.Rewriting` conflict.

A caller may check something while the new content is written (``gate``: an integrity check that searches the
whole file): the save calls ``gate()`` once the temporary file is written and before anything is called unchanged,
backed up or renamed; when it raises, the temporary file is removed and the file is untouched.

The parts: :mod:`.stamp` (load stamps), :mod:`.paths` (containment), :mod:`.tmpfiles`, :mod:`.fsio`,
:mod:`.writers` (``/proc`` and leases), :mod:`.lock` (the LittleGhost store lock), :mod:`.loaded` (what the save
found on opening the file), :mod:`.staging` (the files of one save), :mod:`.backups` (the byte-exact backup) and :mod:`.merge` (after the rename). Everything is stdlib only and Linux-first (``/proc`` for writer detection, file leases to see when
the replaced inode has no writer left); elsewhere those checks degrade to no-ops.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from typing import TYPE_CHECKING, Callable, Iterable

from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.errors import (
    AnotherWriter,
    Conflict,
    HardLinked,
    Rewriting,
    SaveError,
)
from sessionview.core.store import backups, fsio, proof, retention
from sessionview.core.store.backups import Backup
from sessionview.core.store.fsio import (
    O_CLOEXEC,
    O_DIRECTORY,
    O_NOFOLLOW,
    O_NONBLOCK,
    Limit,
    fsync_dir,
    hash_prefix,
    ignore_sigxfsz,
    prefix_matches,
    read_all,
)
from sessionview.core.store.loaded import Loaded
from sessionview.core.store.lock import LOCK_TIMEOUT, store_lock
from sessionview.core.store.merge import Merge
from sessionview.core.store.outcome import SaveResult, changed_on_disk, failed, rewriting
from sessionview.core.store.render import Piece, Span, write_rendered
from sessionview.core.store.paths import resolve_inside
from sessionview.core.store.stamp import LoadStamp
from sessionview.core.store.staging import Staging, TempFile
from sessionview.core.store.steps import step
from sessionview.core.store.tmpfiles import cleanup_temp_files
from sessionview.core.store.writers import Writer, find_writers

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from sessionview.core.doc.digest import Hasher

__all__ = ["SaveResult", "Span", "Piece", "save", "SETTLE_TIMEOUT"]

SETTLE_TIMEOUT = 1.0  # seconds to wait, after the rename, for writers of the old inode to finish


class _Save:
    """One save, step by step (see :meth:`run`); every descriptor it opens is in ``self.files``."""

    def __init__(
        self,
        given: str,
        real: str,
        stamp: LoadStamp,
        *,
        force: bool,
        backup: bool,
        state_dir: str | None,
        settle_timeout: float,
        limit: Limit,
        new_stamp: bool = False,
        gate: Callable[[], None] | None = None,
    ) -> None:
        self.given = given
        self.gate = gate
        self.new_stamp = new_stamp
        self.real = real
        self.stamp = stamp
        self.force = force
        self.backup = backup
        self.state_dir = state_dir
        self.settle_timeout = settle_timeout
        self.limit = limit
        self.files = Staging(given, real, state_dir=state_dir, limit=limit)
        self.writers: list[Writer] = []
        self._pool: ThreadPoolExecutor | None = None
        self.rechecked_by_stat = False  # the recheck before the rename was proven by the stat, not hashed

    def background(self) -> ThreadPoolExecutor:
        """One thread for hashing while the main thread writes or syncs (the hash lets go of the GIL)."""
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor  # here: a save the stat proves hashes nothing

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sv-save")
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)  # before the descriptors it reads are closed
        self.files.close()

    # the whole save -----------------------------------------------------------------------------
    def run(self, render: Callable[[bytes], Iterable[Piece]]) -> SaveResult:
        loaded = self.open_and_check()
        try:
            tmp = self.files.new_tmp(loaded.st, whole=self.new_stamp)
        except OSError as exc:
            raise failed(exc, "creating the temporary file", self.given) from exc
        hold = self.write_new(tmp, render, loaded)
        self.prefix_checked(loaded)
        if self.gate is not None:
            self.gate()  # before anything is called unchanged, backed up or renamed (raises: the temp file goes)
        if self.unchanged(tmp, hold, loaded):
            self.files.discard(tmp)
            st = loaded.st
            same = LoadStamp(
                self.given,
                self.real,
                st.st_dev,
                st.st_ino,
                loaded.size,
                st.st_mtime_ns,
                loaded.hexdigest,
                st.st_ctime_ns,
                loaded.proven_by_stat and self.stamp.settled,
            )
            return SaveResult(self.given, self.real, False, loaded.size, same, rebased_bytes=len(loaded.appended))
        try:
            os.fsync(tmp.fd)
        except OSError as exc:
            raise failed(exc, "syncing the temporary file to disk", self.given) from exc
        step("fsync")
        st_pre = os.fstat(self.files.old_fd)
        made = self.back_up(loaded)
        pos_old, unsynced = self.catch_up(tmp, loaded, hold)
        _ = loaded.hexdigest  # a hash taken in the background is joined before the rename at the latest (no backup)
        self.replace(tmp, loaded.st)
        st_pre = self.after_own_changes(loaded, st_pre)
        cur = self.after_rename(tmp, pos_old, loaded, st_pre, made, unsynced)
        return self.result(cur, made, loaded)

    # step 1: open and compare with the stamp ----------------------------------------------------
    def open_and_check(self) -> Loaded:
        given, stamp, f = self.given, self.stamp, self.files
        try:
            f.dir_fd = os.open(f.dir, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        except OSError as exc:
            raise failed(exc, "opening the directory", given) from exc
        cleanup_temp_files(f.dir)  # what a killed save left here
        try:
            f.old_fd = os.open(f.base, os.O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, dir_fd=f.dir_fd)
        except FileNotFoundError:
            raise changed_on_disk(given, "it no longer exists") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise changed_on_disk(given, "it was replaced by a symbolic link") from None
            raise failed(exc, "opening the file", given) from exc
        step("open")
        before = time.time_ns()
        st = os.fstat(f.old_fd)
        if not stat.S_ISREG(st.st_mode):
            raise changed_on_disk(given, "it is no longer a regular file")
        if (st.st_dev, st.st_ino) != (stamp.dev, stamp.ino):
            raise changed_on_disk(given, "it was replaced by another file")
        if st.st_nlink > 1 and st.st_nlink - backups.links_to(self.real, st, self.state_dir) > 1:
            raise HardLinked(
                f"refused: {given} has {st.st_nlink} hard links; replacing it would split them "
                "(the other names would keep the old content)",
                given,
            )
        if st.st_size < stamp.size:
            raise changed_on_disk(given, f"it is shorter than when loaded: {st.st_size} < {stamp.size} bytes")
        if not self.force:
            writers = find_writers(self.real, st)
            if writers:
                who = ", ".join(w.describe() for w in writers)
                raise AnotherWriter(
                    f"refused: another process has {given} open for writing: {who}; "
                    "its later writes would go to the replaced file",
                    given,
                    tuple((w.pid, w.command) for w in writers),
                )
        else:
            self.writers = find_writers(self.real, st)
        trusted = proof.trusts_ctime(f.old_fd, st)
        if trusted and stamp.settled and fsio.stat_key(st) == stamp.key:
            # nothing was written to the file since the stat taken before it was loaded: it holds what was loaded
            step("check")
            return Loaded(b"", stamp.size, stamp.digest, st, ref=st, proven_by_stat=True)
        prefix = self.background().submit(hash_prefix, f.old_fd, stamp.size)  # checked after the new content is written
        step("check")
        appended = read_all(f.old_fd, stamp.size)
        size = stamp.size + len(appended)
        ref = st if trusted and st.st_size == size and proof.settled(st, before) else None
        if not appended:
            return Loaded(appended, stamp.size, stamp.digest, st, prefix, ref)
        h = self.prefix_hash(prefix)
        h.update(appended)
        return Loaded(appended, size, h.hexdigest(), st, ref=ref)

    def prefix_hash(self, prefix: "Future[tuple[Hasher, int]]") -> "Hasher":
        h, got = prefix.result()
        if got != self.stamp.size or h.hexdigest() != self.stamp.hexdigest:
            raise changed_on_disk(self.given, f"its first {self.stamp.size} bytes differ from what was loaded")
        return h

    def prefix_checked(self, loaded: Loaded) -> None:
        """Wait for the check of the loaded prefix (hashed while the new content was written): nothing is
        replaced, or called unchanged, before it passed."""
        if loaded.prefix is not None:
            self.prefix_hash(loaded.prefix)

    # step 2: write the new content --------------------------------------------------------------
    def write_new(self, tmp: TempFile, render: Callable[[bytes], Iterable[Piece]], loaded: Loaded) -> bytes:
        """Write ``render(appended)`` into ``tmp``; returns the unfinished last line held back (or ``b""``).

        A :data:`Span` of the loaded file is copied from the file in the kernel. An unfinished line appended
        since load (another process may be writing it right now) is held back: when the new content ends with
        it, it is carried over from the old file like a late append, whole once its writer is done, so the new
        file never ends in a torn line.
        """
        appended = loaded.appended
        hold = appended[appended.rfind(b"\n") + 1 :]
        try:
            try:
                held = write_rendered(
                    tmp, render(appended), source_fd=self.files.old_fd, loaded=loaded.size, hold=hold, limit=self.limit
                )
            except SourceChanged as exc:
                raise rewriting(self.given, f"it changed while the new content was produced: {exc}") from exc
        except OSError as exc:
            raise failed(exc, "writing the temporary file", self.given) from exc
        return hold if held else b""

    def unchanged(self, tmp: TempFile, hold: bytes, loaded: Loaded) -> bool:
        """Whether the new content (with the held-back line) is what is on disk already."""
        if tmp.size + len(hold) != loaded.size:
            return False
        h = tmp.hash
        if h is None:  # spans: in place, and the bytes from memory equal the file's (the held line is its own)
            return tmp.same_as(self.files.old_fd)
        whole = h.copy()
        whole.update(hold)
        return whole.hexdigest() == loaded.hexdigest

    # step 3: re-check right before replacing, copying the backup at the same time -------------
    def back_up(self, loaded: Loaded) -> Backup | None:
        R, h_R = loaded.size, loaded.hexdigest
        made = None
        if self.backup:
            try:
                made = backups.write_backup(
                    self.files.old_fd,
                    self.real,
                    state_dir=self.state_dir,
                    verify=(R, h_R),
                    step=step,
                    given=self.given,
                    limit=self.limit,
                    link=self.linkable(loaded),
                )
            except Conflict as exc:  # the backup's copy saw the file rewritten
                raise Rewriting(str(exc), self.given) from exc
            except OSError as exc:
                raise failed(exc, "writing the backup", self.given) from exc
            retention.prune_after_backup(made, state_dir=self.state_dir)  # never raises
        elif not self.still_loaded(loaded):
            raise rewriting(self.given)
        step("recheck")
        return made

    def linkable(self, loaded: Loaded) -> bool:
        """Whether the backup may be a hard link to the file's inode: the rename leaves that inode alone,
        nobody else has it open for writing (a fresh ``/proc`` scan), and it still holds what was checked."""
        if self.writers or backups.dir_distrust_file(loaded.st):
            return False
        if find_writers(self.real, loaded.st, persistent=False):
            return False
        return self.still_loaded(loaded)  # the recheck, as a copy's

    def still_loaded(self, loaded: Loaded) -> bool:
        """The recheck right before the rename: the file still holds R bytes hashing to h_R. Its stat unchanged
        since a settled reference proves it (:mod:`.proof`); otherwise it is hashed again."""
        if loaded.ref is not None and proof.unchanged_since(self.files.old_fd, loaded.ref):
            self.rechecked_by_stat = True
            return True
        self.rechecked_by_stat = False
        return prefix_matches(self.files.old_fd, loaded.size, loaded.hexdigest)

    def after_own_changes(self, loaded: Loaded, st_pre: os.stat_result) -> os.stat_result:
        """The stat the merge compares the replaced file with, once our backup link and rename moved its ctime.

        Only after a recheck by the stat proof: when its size, mode and settled mtime are still the reference's
        (any write sets the mtime to now), those ctime moves were ours, and the stat after them is the new
        reference. Otherwise the merge keeps ``st_pre`` (taken before) and hashes the file again."""
        ref = loaded.ref
        if not self.rechecked_by_stat or ref is None or ref.st_mtime_ns > ref.st_ctime_ns:
            return st_pre
        try:
            now = os.fstat(self.files.old_fd)
        except OSError:
            return st_pre
        kept = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns, now.st_mode)
        return now if kept == (ref.st_dev, ref.st_ino, ref.st_size, ref.st_mtime_ns, ref.st_mode) else st_pre

    # step 4: catch up with whole lines appended meanwhile (an unfinished one waits for the merge) --
    def catch_up(self, tmp: TempFile, loaded: Loaded, hold: bytes) -> tuple[int, bool]:
        """Returns how much of the old file the temp file holds, and whether its last lines are unsynced."""
        old_fd = self.files.old_fd
        R = loaded.size
        pos_old = R - len(hold)  # how much of the old file the temp file holds
        read_to = R  # how much of the old file was read
        pending = hold  # read, not yet in the temp file
        unsynced = False
        try:
            for name in ("catchup", "catchup2"):
                late = read_all(old_fd, read_to)
                read_to += len(late)
                pending += late
                cut = pending.rfind(b"\n") + 1
                if cut:
                    tmp.write(pending[:cut], self.limit)
                    pos_old += cut
                    pending = pending[cut:]
                    if name == "catchup":
                        os.fsync(tmp.fd)
                    else:  # the fsync took a while: this is synced after the rename
                        unsynced = True
                    step(name)
            if os.fstat(old_fd).st_size < read_to:
                raise rewriting(self.given, "it was truncated")
        except OSError as exc:
            raise failed(exc, "writing the temporary file", self.given) from exc
        return pos_old, unsynced

    # step 5: the swap ---------------------------------------------------------------------------
    def replace(self, tmp: TempFile, st: os.stat_result) -> None:
        f = self.files
        try:
            now = os.stat(f.base, dir_fd=f.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise changed_on_disk(self.given, "it was removed during the save") from None
        except OSError as exc:
            raise failed(exc, "writing the temporary file", self.given) from exc
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise rewriting(self.given, "replaced by another file")
        try:
            f.replace_with(tmp, "rename")
        except OSError as exc:
            raise failed(exc, "replacing the file", self.given) from exc

    # step 6: after the rename nothing may leave the file worse than the new version -------------
    def after_rename(
        self, tmp: TempFile, pos_old: int, loaded: Loaded, st_pre: os.stat_result, made: Backup | None, unsynced: bool
    ) -> TempFile:
        f = self.files
        merge = Merge(f, force=self.force, writers=self.writers, settle_timeout=self.settle_timeout)
        try:
            cur = merge.run(tmp, pos_old, loaded.size, loaded.hexdigest, st_pre, made)
        except Conflict:
            raise
        except Exception as exc:  # the new version is in place; report, never pretend it was not saved
            f.warnings.append(f"after the file was replaced: {type(exc).__name__}: {exc}")
            cur = merge.current or tmp
        if made is not None and made.linked:  # the old inode is now the backup alone: private, as a copy is
            try:  # (after the merge compared its stat: this moves its ctime)
                os.fchmod(f.old_fd, 0o600)
            except OSError:
                pass
        if unsynced and cur is tmp and not f.carried:
            try:
                os.fsync(cur.fd)
            except OSError as exc:
                f.warnings.append(f"the last lines appended during the save could not be synced: {exc.strerror}")
            step("catchup_fsync")
        w = fsync_dir(f.dir_fd)
        if w:
            f.warnings.append(w)
        step("dir_fsync")
        merge.sweep()
        if self.force and self.writers:
            who = ", ".join(wr.describe() for wr in self.writers)
            f.warnings.append(
                f"{who} had the file open for writing: anything it writes from now on goes to the replaced "
                "file and is lost; restart it"
            )
        return cur

    def result(self, cur: TempFile, made: Backup | None, loaded: Loaded) -> SaveResult:
        f = self.files
        new_stamp: LoadStamp | None = None
        h = cur.hash
        if h is not None:
            try:
                nst = os.fstat(cur.fd)
                new_stamp = LoadStamp(
                    self.given, self.real, nst.st_dev, nst.st_ino, cur.size, nst.st_mtime_ns, h.hexdigest(), nst.st_ctime_ns
                )
            except OSError:
                pass
        return SaveResult(
            self.given,
            self.real,
            True,
            cur.size,
            new_stamp,
            backup=made,
            rebased_bytes=len(loaded.appended),
            carried_bytes=f.carried,
            lost_partial_bytes=f.lost,
            warnings=tuple(f.warnings),
            not_carried_bytes=f.not_carried,
            kept_paths=tuple(dict.fromkeys(f.kept)),
        )


def save(
    path: str | os.PathLike[str],
    render: Callable[[bytes], Iterable[Piece]],
    stamp: LoadStamp,
    *,
    root: str | os.PathLike[str],
    force: bool = False,
    backup: bool = True,
    state_dir: str | os.PathLike[str] | None = None,
    lock_path: str | os.PathLike[str] | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
    settle_timeout: float = SETTLE_TIMEOUT,
    new_stamp: bool = False,
    gate: Callable[[], None] | None = None,
) -> SaveResult:
    """Replace the file at ``path`` with ``render(appended)``, atomically and without losing appends.

    ``render(appended)`` yields the new content: bytes, or a :data:`Span` ``(start, end)`` of the file as
    loaded, copied in the kernel; ``appended`` holds the bytes appended on disk since ``stamp`` was taken
    (``b""`` normally), which the caller must emit byte for byte where they belong (at the end, for JSONL).
    ``new_stamp``: :attr:`SaveResult.stamp` is wanted even when spans were copied (their bytes are then read
    and hashed: one more pass); without spans it is always there. ``gate()`` is called once the new content
is in the temporary file and before anything else happens: whatever it raises ends the save, the file untouched
(the caller's check that ran while the content was written). Raises a :class:`~sessionview.core.errors.SaveError`: :class:`Conflict`,
    :class:`AnotherWriter` (unless ``force``), :class:`Outside`, :class:`HardLinked`, :class:`Locked`
    (``lock_path`` given and held elsewhere) or :class:`WriteFailed`; in every case the file is untouched.
    """
    given = os.fspath(path)
    real = resolve_inside(given, root)
    sd = os.fspath(state_dir) if state_dir is not None else None
    with store_lock(lock_path, lock_timeout, given, step), ignore_sigxfsz() as ignored:
        op = _Save(
            given,
            real,
            stamp,
            force=force,
            backup=backup,
            state_dir=sd,
            settle_timeout=settle_timeout,
            limit=Limit(not ignored),
            new_stamp=new_stamp,
            gate=gate,
        )
        try:
            return op.run(render)
        except SaveError:
            raise
        except SourceChanged as exc:  # a reader of the loaded file met a truncation or rewrite
            raise rewriting(given, f"it changed while being read: {exc}") from exc
        except OSError as exc:
            raise failed(exc, "saving", given) from exc
        finally:
            op.close()
