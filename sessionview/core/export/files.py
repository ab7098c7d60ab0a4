"""Writing an export or a fork to disk: through a temporary file next to the target, synced, then put in
place in one step, so a reader never sees half a file and a failure leaves nothing behind.

:func:`create_new` never replaces anything (``link(2)`` fails on an existing name); :func:`replace_into`
renames over the target (an export being written again).
"""

from __future__ import annotations

import errno
import io
import os
import stat
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

from sessionview.core.store.fsio import O_CLOEXEC, O_DIRECTORY, fsync_dir, write_all
from sessionview.core.store.tmpfiles import create_tmp

#: file systems without hard links (vfat, some FUSE mounts): fall back to an O_EXCL final file
_NO_LINK = (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK, getattr(errno, "EOPNOTSUPP", -1))


@contextmanager
def _directory(path: str) -> Iterator[tuple[int, str]]:
    parent, base = os.path.split(os.path.abspath(path))
    dir_fd = os.open(parent or ".", os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    try:
        yield dir_fd, base
    finally:
        os.close(dir_fd)


def _write_chunks(fd: int, chunks: Iterable[bytes]) -> None:
    pos = 0
    for chunk in chunks:
        pos += write_all(fd, chunk, pos)


def create_new(path: str, chunks: Iterable[bytes], mode: int) -> list[str]:
    """Write ``chunks`` to the new file ``path`` (mode ``mode``), atomically and never over an existing
    file (:class:`FileExistsError`). Returns warnings (a directory that could not be synced)."""
    with _directory(path) as (dir_fd, base):
        fd, tmp = create_tmp(dir_fd, base)
        try:
            try:
                _write_chunks(fd, chunks)
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, base, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            except OSError as exc:
                if exc.errno not in _NO_LINK:
                    raise
                return _create_excl(dir_fd, base, tmp, mode)
        finally:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
        return _synced(dir_fd)


def _synced(dir_fd: int) -> list[str]:
    warning = fsync_dir(dir_fd)
    return [warning] if warning else []


def _create_excl(dir_fd: int, base: str, tmp: str, mode: int) -> list[str]:
    """No hard links here: copy the finished temp file into an O_EXCL final file, sync it and the directory."""
    src = os.open(tmp, os.O_RDONLY | O_CLOEXEC, dir_fd=dir_fd)
    try:
        dst = os.open(base, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_CLOEXEC, 0o600, dir_fd=dir_fd)
        try:
            _write_chunks(dst, iter(lambda: os.read(src, 1 << 20), b""))
            os.fchmod(dst, mode)
            os.fsync(dst)
        except BaseException:
            os.unlink(base, dir_fd=dir_fd)
            raise
        finally:
            os.close(dst)
    finally:
        os.close(src)
    warning = fsync_dir(dir_fd)
    return [warning] if warning else []


def replace_into(path: str, write: Callable[[io.TextIOBase], object], mode: int = 0o600, *, exclusive: bool = False) -> list[str]:
    """Write text to ``path`` through ``write(stream)`` (UTF-8, buffered: memory stays bounded), then rename
    it over ``path``. Refuses a directory or another non-regular file at ``path``. With ``exclusive``, never
    over an existing file (:class:`FileExistsError`): it is linked into place as :func:`create_new` does."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "not a regular file", path)
    with _directory(path) as (dir_fd, base):
        fd, tmp = create_tmp(dir_fd, base)
        done = False
        try:
            with io.open(fd, "w", encoding="utf-8", errors="backslashreplace", newline="\n", closefd=False,
                         buffering=1 << 16) as stream:
                write(stream)
            os.fchmod(fd, mode)
            os.fsync(fd)
            if exclusive:
                try:
                    os.link(tmp, base, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
                except OSError as exc:
                    if exc.errno not in _NO_LINK:
                        raise
                    return _create_excl(dir_fd, base, tmp, mode)
                return _synced(dir_fd)
            os.rename(tmp, base, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            done = True
        finally:
            os.close(fd)
            if not done or exclusive:
                try:
                    os.unlink(tmp, dir_fd=dir_fd)
                except OSError:
                    pass
        return _synced(dir_fd)
