"""Low-level file I/O for saves and backups: chunked reads, whole writes, fsync, the file size limit, attributes.

Stdlib only. Every helper works on raw file descriptors (``os.pread``/``os.write``), so a caller controls
exactly which inode it reads and writes.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import sys
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator

from sessionview.core.doc.digest import new_hash
from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.errors import AttributesNotKept

if TYPE_CHECKING:
    from sessionview.core.doc.digest import Hasher

__all__ = [
    "CHUNK",
    "O_CLOEXEC",
    "O_NOFOLLOW",
    "O_NONBLOCK",
    "O_DIRECTORY",
    "UNSUPPORTED",
    "Limit",
    "NO_LIMIT",
    "read_range",
    "read_all",
    "hash_prefix",
    "hash_range",
    "same_bytes",
    "prefix_matches",
    "write_all",
    "copy_span",
    "NO_KERNEL_COPY",
    "start_writeback",
    "ignore_sigxfsz",
    "fsync_dir",
    "stat_key",
    "copy_attrs",
]

#: bytes read or buffered at a time (a test lowers it to put a crash point between every few bytes)
CHUNK = 1024 * 1024

O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

#: errnos of a file system that does not support an operation (locks, extended attributes)
UNSUPPORTED = (errno.ENOLCK, errno.EINVAL, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", -1))


def read_range(fd: int, start: int, end: int | None) -> Iterator[bytes]:
    """Chunks of ``[start, end)`` (``end=None``: to the end of file as it is while reading)."""
    pos = start
    while end is None or pos < end:
        size = CHUNK if end is None else min(CHUNK, end - pos)
        data = os.pread(fd, size, pos)
        if not data:
            return
        yield data
        pos += len(data)


def read_all(fd: int, start: int) -> bytes:
    """Everything from ``start`` to the end of file."""
    return b"".join(read_range(fd, start, None))


def hash_range(fd: int, start: int, end: int) -> tuple["Hasher", int]:
    """The hash (:mod:`~sessionview.core.doc.digest`) of bytes ``[start, end)`` of ``fd`` and how many there
    were (fewer: the file is shorter)."""
    h = new_hash()
    got = 0
    for chunk in read_range(fd, start, end):
        h.update(chunk)
        got += len(chunk)
    return h, got


def hash_prefix(fd: int, size: int) -> tuple["Hasher", int]:
    """The hash of the first ``size`` bytes of ``fd`` and how many there were (fewer: the file is shorter)."""
    return hash_range(fd, 0, size)


def same_bytes(a: int, pos_a: int, b: int, pos_b: int, length: int) -> bool:
    """Whether ``length`` bytes at ``pos_a`` of ``a`` are there and equal those at ``pos_b`` of ``b``."""
    done = 0
    while done < length:
        n = min(CHUNK, length - done)
        x = os.pread(a, n, pos_a + done)
        if len(x) != n or os.pread(b, n, pos_b + done) != x:
            return False
        done += n
    return True


def prefix_matches(fd: int, size: int, hexdigest: str) -> bool:
    """Whether the first ``size`` bytes of ``fd`` are there and hash to ``hexdigest``."""
    h, got = hash_prefix(fd, size)
    return got == size and h.hexdigest() == hexdigest


class Limit:
    """The RLIMIT_FSIZE check for writes from threads where SIGXFSZ cannot be ignored."""

    def __init__(self, active: bool) -> None:
        self.limit: int | None = None
        if active:
            try:
                import resource

                soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
                if soft != resource.RLIM_INFINITY:
                    self.limit = soft
            except (ImportError, OSError, ValueError):
                pass

    def check(self, pos: int, size: int) -> None:
        if self.limit is not None and pos + size > self.limit:
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))


NO_LIMIT = Limit(False)


def write_all(fd: int, data: bytes | memoryview, pos: int = 0, limit: Limit = NO_LIMIT) -> int:
    """Write all of ``data`` (``pos``: where it lands, for the size limit check); returns its length."""
    limit.check(pos, len(data))
    mv = memoryview(data)
    total = len(mv)
    while mv:
        n = os.write(fd, mv)
        if n <= 0:
            raise OSError(errno.EIO, "write returned no progress")
        mv = mv[n:]
    return total


#: errnos of ``copy_file_range`` that mean "not here": copy through user space instead
NO_KERNEL_COPY = (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", -1), errno.EBADF)
KERNEL_CHUNK = 64 << 20  # bytes asked of one copy_file_range call; each is then handed to writeback
_SYNC_FILE_RANGE_WRITE = 2
_sync_file_range: "Callable[[int, int, int, int], int] | None | bool" = None  # None: not looked up yet; False: none


def start_writeback(fd: int, pos: int, length: int) -> None:
    """Start writing ``[pos, pos + length)`` of ``fd`` to disk now, without waiting (Linux ``sync_file_range``
    with ``SYNC_FILE_RANGE_WRITE``): a later ``fsync`` then waits for less, as the disk writes while the rest
    is still being copied. Only a hint: it promises nothing (the ``fsync`` does), and does nothing elsewhere."""
    global _sync_file_range
    fn = _sync_file_range
    if fn is None:
        fn = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                f = ctypes.CDLL(None, use_errno=True).sync_file_range
                f.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_uint]
                f.restype = ctypes.c_int
                fn = f
            except (ImportError, OSError, AttributeError):
                fn = False
        _sync_file_range = fn
    if fn is not False and length > 0:
        fn(fd, pos, length, _SYNC_FILE_RANGE_WRITE)  # type: ignore[operator]  # its errors change nothing


def copy_span(src_fd: int, start: int, length: int, dst_fd: int, dst_pos: int, limit: Limit = NO_LIMIT) -> str:
    """Copy ``length`` bytes at ``start`` of ``src_fd`` to ``dst_pos`` of ``dst_fd`` (not open ``O_APPEND``).

    In the kernel (``os.copy_file_range``: no byte enters user space; a reflink where the file system shares
    extents) while it copies; from where it fails with one of :data:`NO_KERNEL_COPY` or copies nothing, by
    ``pread``/``pwrite``. Raises :class:`~sessionview.core.doc.linescan.SourceChanged` when the source ends
    before ``start + length``. Returns how it copied the last bytes (``copy_file_range`` or ``copy``).
    """
    limit.check(dst_pos, length)
    fn = getattr(os, "copy_file_range", None)
    done = 0
    how = "copy_file_range"
    while done < length and fn is not None:
        try:
            n = fn(src_fd, dst_fd, min(KERNEL_CHUNK, length - done), start + done, dst_pos + done)
        except OSError as exc:
            if exc.errno in NO_KERNEL_COPY:
                break
            raise
        if n <= 0:
            break
        start_writeback(dst_fd, dst_pos + done, n)
        done += n
    flushed = done
    while done < length:
        how = "copy"
        data = os.pread(src_fd, min(CHUNK, length - done), start + done)
        if not data:
            raise SourceChanged(f"could only read {start + done} of {start + length} bytes: the file changed")
        mv = memoryview(data)
        while mv:
            n = os.pwrite(dst_fd, mv, dst_pos + done)
            if n <= 0:
                raise OSError(errno.EIO, "write returned no progress")
            mv = mv[n:]
            done += n
        if done - flushed >= KERNEL_CHUNK:
            start_writeback(dst_fd, dst_pos + flushed, done - flushed)
            flushed = done
    return how


@contextmanager
def ignore_sigxfsz() -> Iterator[bool]:
    """Ignore SIGXFSZ while writing so a file size limit gives EFBIG instead of killing the process.

    Only the main thread may change signal handlers; yields whether it could (else the caller checks the
    limit itself before each write).
    """
    sig = getattr(signal, "SIGXFSZ", None)
    if sig is None or threading.current_thread() is not threading.main_thread():
        yield False
        return
    try:
        old = signal.signal(sig, signal.SIG_IGN)
    except (ValueError, OSError):
        yield False
        return
    try:
        yield True
    finally:
        signal.signal(sig, old if old is not None else signal.SIG_DFL)


def fsync_dir(dir_fd: int) -> str | None:
    """fsync a directory; returns a warning instead of raising (the rename already happened)."""
    try:
        os.fsync(dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", -1)):
            return None  # the file system does not support it
        return f"the directory could not be synced to disk ({exc.strerror}); the save may not survive a power cut"
    return None


def stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """What changes when a file is written: inode, size, mtime and ctime."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _owner(uid: int, gid: int) -> str:
    try:
        import grp
        import pwd

        user = pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except (ImportError, KeyError, NameError):
        group = str(gid)
    return f"{user}:{group}"


def copy_attrs(src_fd: int, dst_fd: int, st: os.stat_result, given: str = "") -> None:
    """Give the new file the original's owner, mode and extended attributes, or refuse.

    Raises :class:`AttributesNotKept` when the owner or an extended attribute cannot be kept: a save
    never silently gives a file away or drops its attributes.
    """
    who = given or "the file"
    mine = os.fstat(dst_fd)
    if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
        try:
            os.fchown(dst_fd, st.st_uid, st.st_gid)
        except OSError as exc:
            raise AttributesNotKept(
                f"refused: saving {who} would change its owner from {_owner(st.st_uid, st.st_gid)} to "
                f"{_owner(mine.st_uid, mine.st_gid)} ({exc.strerror} giving the new file the original owner; "
                "save it as its owner or as root); nothing was written",
                given or None,
            ) from None
    os.fchmod(dst_fd, stat.S_IMODE(st.st_mode))
    listxattr = getattr(os, "listxattr", None)
    if listxattr is None:
        return
    try:
        names = listxattr(src_fd)
    except OSError as exc:
        if exc.errno in UNSUPPORTED:  # ENOTSUP: this file system has no extended attributes
            return
        raise AttributesNotKept(
            f"refused: could not read the extended attributes of {who} ({exc.strerror}); nothing was written",
            given or None,
        ) from None
    for name in names:
        try:
            value = os.getxattr(src_fd, name)
        except OSError as exc:
            if exc.errno == getattr(errno, "ENODATA", -1):
                continue  # removed meanwhile
            raise AttributesNotKept(
                f"refused: could not read the extended attribute {name} of {who} ({exc.strerror}); nothing was written",
                given or None,
            ) from None
        try:
            if os.getxattr(dst_fd, name) == value:
                continue  # already there (a label the file system gives every new file)
        except OSError:
            pass
        try:
            os.setxattr(dst_fd, name, value)
        except OSError as exc:
            raise AttributesNotKept(
                f"refused: saving {who} would drop its extended attribute {name} ({exc.strerror} copying it); "
                "nothing was written",
                given or None,
            ) from None
