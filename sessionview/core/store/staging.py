"""The files of one save: the directory, the replaced file, the temporary files, and the bytes kept aside.

A :class:`Staging` owns every descriptor a save opens and closes them all (:meth:`Staging.close`), removing
temporary files that were not renamed into place. Bytes another process wrote that cannot go into the
new file are kept beside the backups (:meth:`Staging.keep`) and reported, never dropped without a word.
"""

from __future__ import annotations

import errno
import fcntl
import os
from typing import TYPE_CHECKING

from sessionview.core.doc.digest import new_hash
from sessionview.core.store import backups
from sessionview.core.store.fsio import Limit, copy_attrs, copy_span, hash_range, prefix_matches, read_range, same_bytes, write_all
from sessionview.core.store.steps import step
from sessionview.core.store.tmpfiles import create_tmp
from sessionview.core.text import plural

if TYPE_CHECKING:
    from sessionview.core.doc.digest import Hasher

__all__ = ["TempFile", "Staging", "copy_range"]


class _Data:
    """A run of bytes written from memory at ``dst`` (its length and hash)."""

    __slots__ = ("dst", "length", "h")

    def __init__(self, dst: int) -> None:
        self.dst = dst
        self.length = 0
        self.h = new_hash()  # (inline: ~10 GB/s, less than a hand-off to a thread costs)


class TempFile:
    """A temporary file being written: its fd (read-write, append), name and size, and what it holds.

    Bytes come from memory (:meth:`write`) or as spans of a source file copied in the kernel
    (:meth:`copy_from`), which never pass through Python. Each run of bytes from memory is hashed as it is
    written; spans are recorded as ``(dst, length, src)``. :attr:`hash` is the hash
    (:mod:`~sessionview.core.doc.digest`) of the whole file when it is known: always without spans, and with them only when made ``whole`` (the spans are then read
    back from the source and hashed too: an extra pass, for a caller that wants the new file's stamp).
    """

    def __init__(self, fd: int, name: str, *, whole: bool = False) -> None:
        self.fd = fd
        self.name = name
        self.size = 0
        self.linked = True  # still under its temporary name
        self.spans: list[tuple[int, int, int]] = []  # (dst, length, src offset) copied from source_fd
        self.source_fd = -1
        self._data: list[_Data] = []
        self._whole_wanted = whole
        self._whole: "Hasher | None" = None  # the running hash of everything, once there are spans

    @property
    def hash(self) -> "Hasher | None":
        """The hash of everything written so far, or None when it is not known (spans, not ``whole``)."""
        if self._whole is not None:
            return self._whole
        if self.spans:
            return None
        return self._data[0].h if self._data else new_hash()

    def _record(self, data: bytes) -> None:
        last = self._data[-1] if self._data else None
        if last is None or last.dst + last.length != self.size:
            last = _Data(self.size)
            self._data.append(last)
        last.h.update(data)
        last.length += len(data)
        if self._whole is not None:
            self._whole.update(data)
        self.size += len(data)

    def write(self, data: bytes, limit: Limit) -> None:
        if not data:
            return
        write_all(self.fd, data, self.size, limit)
        self._record(data)

    def landed(self, data: bytes) -> None:
        """``data`` was appended at :attr:`size` by the caller itself (the merge's ``O_APPEND`` write)."""
        if data:
            self._record(data)

    def copy_from(self, src_fd: int, start: int, end: int, limit: Limit) -> str:
        """Append bytes ``[start, end)`` of ``src_fd`` (always the same source) in the kernel where it can."""
        if end <= start:
            return "none"
        if self.source_fd not in (-1, src_fd):
            raise ValueError("a temporary file copies from one source")
        if self._whole is None and self._whole_wanted:
            # no spans yet: the one run of bytes so far (if any) is all of it
            self._whole = self._data[0].h.copy() if self._data else new_hash()
        flags = fcntl.fcntl(self.fd, fcntl.F_GETFL)
        fcntl.fcntl(self.fd, fcntl.F_SETFL, flags & ~os.O_APPEND)  # copy_file_range refuses O_APPEND
        try:
            how = copy_span(src_fd, start, end - start, self.fd, self.size, limit)
        finally:
            fcntl.fcntl(self.fd, fcntl.F_SETFL, flags)
        self.source_fd = src_fd
        dst, n = self.size, end - start
        if self.spans and self.spans[-1][0] + self.spans[-1][1] == dst and self.spans[-1][2] + self.spans[-1][1] == start:
            pdst, plen, psrc = self.spans.pop()
            self.spans.append((pdst, plen + n, psrc))
        else:
            self.spans.append((dst, n, start))
        self.size += n
        if self._whole is not None:
            for chunk in read_range(src_fd, start, end):
                self._whole.update(chunk)
        return how

    def intact(self) -> bool:
        """Whether the first :attr:`size` bytes of the file are still what was written (another process may
        have appended since, once it was renamed into place)."""
        whole = self.hash
        if whole is not None:
            return prefix_matches(self.fd, self.size, whole.hexdigest())
        for d in self._data:
            h, got = hash_range(self.fd, d.dst, d.dst + d.length)
            if got != d.length or h.hexdigest() != d.h.hexdigest():
                return False
        return all(same_bytes(self.fd, dst, self.source_fd, src, n) for dst, n, src in self.spans)

    def same_as(self, fd: int) -> bool:
        """Whether the file holds exactly the first :attr:`size` bytes of ``fd`` (spans copied in place from
        ``fd`` itself, and the bytes from memory equal to ``fd``'s at the same offsets)."""
        if any(dst != src for dst, _, src in self.spans) or (self.spans and self.source_fd != fd):
            return False
        return all(same_bytes(self.fd, d.dst, fd, d.dst, d.length) for d in self._data)


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
    def new_tmp(self, like: os.stat_result, *, whole: bool = False) -> TempFile:
        """A new temporary file beside the original, with the owner, mode and attributes of ``like``
        (``whole``: keep the hash of all of it, even of spans copied in the kernel)."""
        fd, name = create_tmp(self.dir_fd, self.base)
        t = TempFile(fd, name, whole=whole)
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
