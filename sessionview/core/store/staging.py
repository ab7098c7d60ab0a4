"""The files of one save: the directory, the replaced file, the temporary files, and the bytes kept aside.

A :class:`Staging` owns every descriptor a save opens and closes them all (:meth:`Staging.close`), removing
temporary files that were not renamed into place. Bytes another process wrote that cannot go into the
new file are kept beside the backups (:meth:`Staging.keep`) and reported, never dropped without a word.
"""

from __future__ import annotations

import errno
import hashlib
import os
import threading

from sessionview.core.store import backups
from sessionview.core.store.fsio import Limit, copy_attrs, read_range, write_all
from sessionview.core.store.steps import step
from sessionview.core.store.tmpfiles import create_tmp
from sessionview.core.text import plural

__all__ = ["TempFile", "Staging", "copy_range"]


class _Background:
    """A SHA-256 fed from a second thread while the caller writes (hashlib releases the GIL on big chunks):
    the wait is at most one chunk behind, and :attr:`state` waits for all of it."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self._pending: threading.Thread | None = None

    def _wait(self) -> None:
        if self._pending is not None:
            self._pending.join()
            self._pending = None

    def update(self, data: bytes) -> None:
        self._wait()
        if len(data) < 1 << 20:
            self.h.update(data)
            return
        t = threading.Thread(target=self.h.update, args=(data,), daemon=True, name="sv-save-hash")
        t.start()
        self._pending = t

    @property
    def state(self) -> "hashlib._Hash":
        self._wait()
        return self.h


class TempFile:
    """A temporary file being written: its fd (read-write, append), name, size and running hash."""

    def __init__(self, fd: int, name: str) -> None:
        self.fd = fd
        self.name = name
        self.size = 0
        self._hash = _Background()
        self.linked = True  # still under its temporary name

    @property
    def hash(self) -> "hashlib._Hash":
        """The SHA-256 of everything written so far."""
        return self._hash.state

    def write(self, data: bytes, limit: Limit) -> None:
        if not data:
            return
        write_all(self.fd, data, self.size, limit)
        self.size += len(data)
        self._hash.update(data)


def copy_range(fd: int, start: int, end: int | None, dst: TempFile, limit: Limit) -> int:
    """Copy ``[start, end)`` of ``fd`` (``end=None``: to its end) into ``dst`` in chunks; returns the count."""
    n = 0
    for chunk in read_range(fd, start, end):
        dst.write(chunk, limit)
        n += len(chunk)
    if end is not None and n != end - start:
        raise OSError(errno.EIO, "the file is shorter than expected")
    return n


class Staging:
    """The descriptors, temporary files and report of one save of ``real`` (``given``: the path as given)."""

    def __init__(self, given: str, real: str, *, state_dir: str | None, limit: Limit) -> None:
        self.given = given
        self.real = real
        self.dir = os.path.dirname(real)
        self.base = os.path.basename(real)
        self.state_dir = state_dir
        self.limit = limit
        self.dir_fd = -1
        self.old_fd = -1  # the file being replaced, read-only
        self.tmps: list[TempFile] = []
        self.extra_fds: list[int] = []
        self.warnings: list[str] = []
        self.carried = 0  # bytes appended during the save, copied into the new file
        self.lost = 0  # bytes of unfinished or unmergeable lines not in the new file
        self.not_carried = 0  # bytes another process wrote that are not in the new file
        self.kept: list[str] = []  # files in the state directory holding those bytes

    # the temporary files ------------------------------------------------------------------------
    def new_tmp(self, like: os.stat_result) -> TempFile:
        """A new temporary file beside the original, with the owner, mode and attributes of ``like``."""
        fd, name = create_tmp(self.dir_fd, self.base)
        t = TempFile(fd, name)
        self.tmps.append(t)
        step("create")
        copy_attrs(self.old_fd, fd, like, self.given)
        step("chmod")
        return t

    def discard(self, t: TempFile) -> None:
        if t.linked:
            os.unlink(t.name, dir_fd=self.dir_fd)
            t.linked = False
            step("discard")

    def replace_with(self, t: TempFile, what: str) -> None:
        """Rename ``t`` over the original (``what``: the step name)."""
        os.replace(t.name, self.base, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        t.linked = False
        step(what)

    def close(self) -> None:
        for t in self.tmps:
            if t.linked:
                try:
                    os.unlink(t.name, dir_fd=self.dir_fd)
                except OSError:
                    pass
            try:
                os.close(t.fd)
            except OSError:
                pass
        self.tmps.clear()
        for fd in [self.old_fd, *self.extra_fds, self.dir_fd]:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.old_fd = self.dir_fd = -1
        self.extra_fds.clear()

    # bytes kept aside ---------------------------------------------------------------------------
    def keep_unmerged(self, data: bytes, why: str) -> None:
        """Last resort: keep late bytes that cannot be merged in the backups directory, never drop them."""
        self.lost += len(data)
        self.keep(data, f"{plural(len(data), 'byte')} appended during the save could not be merged ({why})")

    def keep(self, data: bytes, warning: str) -> None:
        """Keep bytes another process wrote that are not in the new file beside the backups, and report them."""
        self.not_carried += len(data)
        try:
            where = backups.write_unmerged(self.real, data, state_dir=self.state_dir)
        except OSError as exc:
            self.warnings.append(f"{warning}; they could not be kept either ({exc.strerror}) and are lost")
            return
        self.kept.append(where)
        self.warnings.append(f"{warning}; they were kept in {where}")
