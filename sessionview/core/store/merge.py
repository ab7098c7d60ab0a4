"""After the rename: carry the bytes appended to the replaced file into the new one, in order, or keep them aside.

The replaced inode is read again once no process has it open for writing any more (:meth:`Merge.settle`);
whatever arrived is appended to the new file. If someone appended to the new file first, a corrected copy
replaces it (:meth:`Merge.reorder`). An unfinished line whose writer is still at it, or bytes that cannot
be merged, are kept beside the backups and reported. A replaced inode rewritten in place during the save
is put back, and the save refused (:meth:`Merge.rollback`).
"""

from __future__ import annotations

import os
import time

from sessionview.core.errors import Rewriting
from sessionview.core.store.backups import Backup
from sessionview.core.store.fsio import (
    O_CLOEXEC,
    O_NOFOLLOW,
    O_NONBLOCK,
    fsync_dir,
    prefix_matches,
    read_all,
    stat_key,
    write_all,
)
from sessionview.core.store.staging import Staging, TempFile, copy_range
from sessionview.core.store.steps import step
from sessionview.core.store.writers import Writer, command, lease_probe, scan_writers
from sessionview.core.text import plural

__all__ = ["MAX_MERGE_ROUNDS", "Merge"]

MAX_MERGE_ROUNDS = 5


class Merge:
    """The merge of one save, after its temporary file was renamed over the original."""

    def __init__(self, files: Staging, *, force: bool, writers: list[Writer], settle_timeout: float) -> None:
        self.files = files
        self.force = force
        self.writers = writers  # writers seen before the save (a forced save)
        self.settle_timeout = settle_timeout
        self.current: TempFile | None = None  # the temp file that is now the session file
        self.old_done: tuple[int, bool] = (-1, True)  # how much of the replaced file was merged; settled?

    def settle(self, fd: int, timeout: float) -> bool:
        """Wait until no process has the (replaced) inode of ``fd`` open for writing. True if none."""
        deadline = time.monotonic() + timeout
        delay = 0.0
        while True:
            try:
                st = os.fstat(fd)
            except OSError:
                return False
            busy = lease_probe(fd) if st.st_nlink == 0 else None
            if busy is None:
                busy = bool(scan_writers(self.files.real, st.st_dev, st.st_ino, include_self=True))
            if not busy:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(max(delay * 2, 0.0002), 0.01)

    def run(
        self, cur: TempFile, pos_old: int, R: int, h_R: str, st_pre: os.stat_result, made: Backup | None
    ) -> TempFile:
        """Carry bytes appended to the replaced inode into the new file, keeping their order.

        ``prev_fd`` is the inode just replaced and ``prev_pos`` how much of it the new file already holds.
        Normally one round: the old inode settles, its late bytes (if any) are appended to the new file.
        If someone appended to the new file first, a corrected copy replaces it (another round).
        """
        f = self.files
        prev_fd, prev_pos = f.old_fd, pos_old
        self.current = cur
        first = True
        timeout = 0.05 if (self.force and self.writers) else self.settle_timeout
        for _ in range(MAX_MERGE_ROUNDS):
            settled = self.settle(prev_fd, timeout)
            try:
                pst = os.fstat(prev_fd)
                if first and stat_key(pst) != stat_key(st_pre):
                    if pst.st_size < R or not prefix_matches(prev_fd, R, h_R):
                        self.rollback(cur, made)  # raises Conflict
                first = False
                data = read_all(prev_fd, prev_pos)
            except OSError as exc:
                f.warnings.append(f"could not read lines appended during the save: {exc.strerror}")
                return cur
            if prev_fd == f.old_fd:
                self.old_done = (prev_pos + len(data), settled)
            if not settled and data:
                # its writer is still at it: carry whole lines only, keep the unfinished one aside
                cut = data.rfind(b"\n") + 1
                if cut < len(data):
                    f.lost += len(data) - cut
                    f.keep(
                        data[cut:],
                        f"{plural(len(data) - cut, 'byte')} of an unfinished last line, written during the save by "
                        f"{self.writers_of(prev_fd)} still writing the replaced file, are not in the new file",
                    )
                data = data[:cut]
            if not data:
                return cur
            try:
                cst = os.fstat(cur.fd)
                wrote_at = -1
                if cst.st_size == cur.size:
                    write_all(cur.fd, data, cur.size, f.limit)  # O_APPEND
                    end = os.lseek(cur.fd, 0, os.SEEK_CUR)
                    wrote_at = end - len(data)
                    step("carry")
                    if wrote_at == cur.size:
                        cur.landed(data)
                        f.carried += len(data)
                        try:
                            os.fsync(cur.fd)
                        except OSError as exc:
                            f.warnings.append(f"lines carried over could not be synced: {exc.strerror}")
                        step("carry_fsync")
                        return cur
                # someone appended to the new file before us: rebuild it with the late bytes in order
                nxt = self.reorder(cur, data, wrote_at)
            except OSError as exc:
                f.keep_unmerged(data, f"could not carry them over: {exc.strerror}")
                return cur
            if nxt is None:
                return cur
            f.carried += len(data)
            prev_fd, prev_pos, cur = nxt
            self.current = cur
        try:  # out of rounds: whatever is left in the last replaced copy is kept, never dropped
            left = read_all(prev_fd, prev_pos)
        except OSError:
            left = b""
        if left:
            f.keep(left, f"{plural(len(left), 'byte')} appended during the save could not be merged (the file kept changing)")
        return cur

    def reorder(self, cur: TempFile, data: bytes, wrote_at: int) -> tuple[int, int, TempFile] | None:
        """Replace the new file by ``cur[:size] + data + (what others appended to cur)``."""
        f = self.files
        if not cur.intact():
            f.keep_unmerged(data, "the file was rewritten by another program right after the save")
            return None
        like = os.fstat(cur.fd)
        t = f.new_tmp(like)
        copy_range(cur.fd, 0, cur.size, t, f.limit)
        t.write(data, f.limit)
        if wrote_at >= 0:  # our own copy of ``data`` landed later in cur: skip it
            copy_range(cur.fd, cur.size, wrote_at, t, f.limit)
            done = wrote_at + len(data)
        else:
            done = cur.size
        done += self.copy_lines(cur.fd, done, t)
        os.fsync(t.fd)
        step("reorder_write")
        ro = os.open(f.base, os.O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, dir_fd=f.dir_fd)
        f.extra_fds.append(ro)
        rst = os.fstat(ro)
        if (rst.st_dev, rst.st_ino) != (like.st_dev, like.st_ino):
            f.discard(t)
            f.keep_unmerged(data, "the file was replaced by another program right after the save")
            return None
        late = self.copy_lines(ro, done, t)
        if late:
            done += late
            os.fsync(t.fd)
        f.replace_with(t, "reorder_rename")
        # our write fd on the replaced copy must go, or it would count as a writer of it
        f.tmps.remove(cur)
        os.close(cur.fd)
        return ro, done, t

    def copy_lines(self, fd: int, start: int, dst: TempFile) -> int:
        """Copy the whole lines of ``fd`` from ``start`` into ``dst``; an unfinished one waits for the next round."""
        data = read_all(fd, start)
        cut = data.rfind(b"\n") + 1
        dst.write(data[:cut], self.files.limit)
        return cut

    def writers_of(self, fd: int) -> str:
        try:
            st = os.fstat(fd)
            pids = sorted({pid for pid, _ in scan_writers(self.files.real, st.st_dev, st.st_ino, include_self=False)})
        except OSError:
            pids = []
        if not pids:
            return "a process"
        return ", ".join(f"pid {pid} ({command(pid)})" for pid in pids)

    def sweep(self) -> None:
        """The replaced file's writer did not finish: keep (and report) what it wrote since the merge read it."""
        f = self.files
        pos, settled = self.old_done
        if settled or pos < 0:
            return
        try:
            extra = read_all(f.old_fd, pos)
        except OSError:
            return
        if extra:
            self.old_done = (pos + len(extra), False)
            f.keep(
                extra,
                f"{plural(len(extra), 'more byte')} were written to the replaced file by {self.writers_of(f.old_fd)} "
                "while the save finished; they are not in the new file",
            )

    def rollback(self, cur: TempFile, made: Backup | None) -> None:
        """The replaced inode was rewritten in place during the save: put that version back and refuse."""
        f = self.files
        kept = ""
        try:
            like = os.fstat(cur.fd)
            t = f.new_tmp(like)
            copy_range(f.old_fd, 0, None, t, f.limit)
            copy_range(cur.fd, cur.size, None, t, f.limit)  # appended to our new file meanwhile
            os.fsync(t.fd)
            rst = os.stat(f.base, dir_fd=f.dir_fd, follow_symlinks=False)
            if (rst.st_dev, rst.st_ino) == (like.st_dev, like.st_ino):
                f.replace_with(t, "rollback_rename")
                fsync_dir(f.dir_fd)
                kept = "its version was put back"
            else:
                f.discard(t)
                kept = "the file was replaced again by another program"
        except OSError as exc:
            kept = f"putting its version back failed ({exc.strerror})"
        bpath = made.path if made is not None and not made.linked else None  # a linked backup was rewritten too
        raise Rewriting(
            f"conflict: {f.given} changed on disk during the save (rewritten by another program); "
            f"{kept}; your changes were not saved"
            + (f"; the version before the save is in {bpath}" if bpath else ""),
            f.given,
        )
