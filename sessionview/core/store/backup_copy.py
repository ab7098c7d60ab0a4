"""How a backup gets its bytes, cheapest first, and the record that proves them later.

* **A hard link to the replaced inode**: a save renames a new file over the session and never writes into
  the old inode again, so the old inode *is* the backup, at no bytes copied. It is taken only when the file
  is the user's own (the trust rule of :mod:`.backups`: a link shares owner and mode), when no other process
  has it open for writing (a ``/proc`` scan right before the link, on top of the save's own writer check),
  and when the state directory is on the same file system (else ``link`` fails with ``EXDEV``).
* Otherwise a **reflink** (the ``FICLONE`` ioctl: shared extents on btrfs, XFS, ...), else
  ``os.copy_file_range`` (an in-kernel copy), else a plain read/write copy.

Every backup gets a record beside it, ``<name>.bak.sum``, holding its size and hash (``"<size> xxh3-128
<hex>\\n"``, :mod:`~sessionview.core.doc.digest`), written before the ``.bak`` name appears. :func:`verified_chunks` streams a backup for a
restore and refuses it when its first ``size`` bytes no longer hash to the record: a process that opened
the session by name just before the rename could still have written to the old inode, so only those
``size`` bytes are ever restored. A record made by an older version, ``<name>.bak.sha256`` (``"<size> <hex>"``),
holds a SHA-256 and is checked as such; backups without a record at all are restored whole.
"""

from __future__ import annotations

import errno
import fcntl
import os
from typing import Callable, Iterator

from sessionview.core.doc import digest
from sessionview.core.errors import Conflict, SaveError
from sessionview.core.store.fsio import NO_LIMIT, O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK, Limit, read_range, write_all

__all__ = ["FICLONE", "RECORD", "RECORDS", "BackupChanged", "link", "link_named", "copy", "write_record", "read_record", "verified_chunks"]

FICLONE = 0x40049409  # _IOW(0x94, 9, int)
RECORD = ".sum"  # suffix of the record beside a .bak file
LEGACY_RECORD = ".sha256"  # the record of an older version: a SHA-256
RECORDS = (RECORD, LEGACY_RECORD)  # every suffix a record may have (a pruned backup loses them all)
_NO_LINK = (errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", -1), errno.ENOENT)


class BackupChanged(SaveError):
    """A backup no longer holds the bytes its record names; it is not restored."""


def link(src_fd: int, name: str, dir_fd: int) -> bool:
    """Hard-link the inode of ``src_fd`` as ``name`` in ``dir_fd``; False when this file system cannot."""
    try:
        os.link(f"/proc/self/fd/{src_fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno in _NO_LINK:
            return False
        raise
    st, now = os.fstat(src_fd), os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if (st.st_dev, st.st_ino) != (now.st_dev, now.st_ino):  # /proc resolved to something else: never keep it
        os.unlink(name, dir_fd=dir_fd)
        return False
    return True


def link_named(
    src_fd: int, dir_fd: int, stem: str, verify: tuple[int, str], step: Callable[[str], None] = lambda name: None
) -> tuple[str, int] | None:
    """Hard-link the inode of ``src_fd`` as the next free ``<stem>-<n>.bak``, its record first; None if it cannot."""
    n = 0
    while True:
        name = f"{stem}-{n}.bak"
        try:
            write_record(dir_fd, name, *verify)
        except FileExistsError:
            n += 1
            continue
        step("backup:record")
        try:
            if link(src_fd, name, dir_fd):
                return name, n
        except FileExistsError:  # a backup of an older version, without a record
            os.unlink(name + RECORD, dir_fd=dir_fd)
            n += 1
            continue
        except BaseException:
            os.unlink(name + RECORD, dir_fd=dir_fd)
            raise
        os.unlink(name + RECORD, dir_fd=dir_fd)
        return None


def _clone(src_fd: int, dst_fd: int) -> bool:
    try:
        fcntl.ioctl(dst_fd, FICLONE, src_fd)
    except OSError:
        return False
    return True


def _copy_range(src_fd: int, dst_fd: int, limit: Limit, step: Callable[[str], None]) -> int | None:
    """An in-kernel copy of everything readable; None when unsupported before anything was copied."""
    fn = getattr(os, "copy_file_range", None)
    pos = 0
    while fn is not None:
        limit.check(pos, 1 << 24)
        try:
            n = fn(src_fd, dst_fd, 1 << 24, pos, pos)
        except OSError as exc:
            if pos == 0 and exc.errno in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EBADF, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", -1)):
                return None
            raise
        if n == 0:
            return pos
        pos += n
        step("backup:write")
    return None


def copy(
    src_fd: int, dst_fd: int, check: tuple[int, str], *, limit: Limit = NO_LIMIT, step: Callable[[str], None], who: str
) -> tuple[int, str, str]:
    """Copy everything readable through ``src_fd`` into the empty ``dst_fd`` (not opened O_APPEND), then
    check that its first ``check[0]`` bytes hash to ``check[1]`` (else :class:`Conflict`: the file was
    rewritten during the save). Returns the size copied, the hash of all of it and how (``reflink``,
    ``copy_file_range`` or ``copy``)."""
    how = "reflink"
    if _clone(src_fd, dst_fd):
        size = os.fstat(dst_fd).st_size
        step("backup:write")
    else:
        got = _copy_range(src_fd, dst_fd, limit, step)
        if got is not None:
            how, size = "copy_file_range", got
        else:
            how, size = "copy", 0
            for chunk in read_range(src_fd, 0, None):
                write_all(dst_fd, chunk, size, limit)
                size += len(chunk)
                step("backup:write")
    h = digest.new_hash()
    got = 0
    prefix = None
    for chunk in read_range(dst_fd, 0, None):
        if got < check[0] <= got + len(chunk):
            h.update(chunk[: check[0] - got])
            prefix = h.hexdigest()
            h.update(chunk[check[0] - got :])
        else:
            h.update(chunk)
        got += len(chunk)
    if check[0] == 0:
        prefix = digest.new_hash().hexdigest()
    if got < check[0] or prefix != check[1]:
        raise Conflict(f"conflict: {who} changed on disk during the save (rewritten by another program); nothing was written", who)
    return size, h.hexdigest(), how


def write_record(dir_fd: int, name: str, size: int, hexdigest: str) -> None:
    """Create ``name + RECORD`` exclusively (FileExistsError: the name is taken) and sync it."""
    fd = os.open(name + RECORD, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        write_all(fd, f"{size} {digest.NAME} {hexdigest}\n".encode())
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        fd = -1
        try:
            os.unlink(name + RECORD, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    finally:
        if fd >= 0:
            os.close(fd)


def read_record(path: str) -> tuple[int, str, str] | None:
    """The (size, hash name, hex digest) recorded for the backup at ``path``, or None (no record, or not one of
    ours): ``xxh3-128`` in a record of this version, ``sha256`` in one of an older version."""
    for suffix in RECORDS:
        try:
            fd = os.open(path + suffix, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        except OSError:
            continue
        try:
            text = os.read(fd, 200).decode("ascii", "replace").split()
        finally:
            os.close(fd)
        if suffix == RECORD and len(text) == 3 and text[0].isdigit() and text[1] == digest.NAME and digest.is_hex(text[2]):
            return int(text[0]), text[1], text[2]
        if suffix == LEGACY_RECORD and len(text) == 2 and text[0].isdigit() and len(text[1]) == 64:
            return int(text[0]), "sha256", text[1]
        return None  # a record that is not one of ours
    return None


def _hasher(name: str) -> "digest.Hasher":
    if name == "sha256":
        import hashlib

        return hashlib.sha256()
    return digest.new_hash()


def verified_chunks(path: str, fd: int, given: str | None = None) -> Iterator[bytes]:
    """The bytes of the backup open as ``fd``: exactly its recorded size, and :class:`BackupChanged` at the
    end when they do not hash to the record (a consumer must not use them before the end). Without a record,
    everything readable."""
    record = read_record(path)
    if record is None:
        yield from read_range(fd, 0, None)
        return
    size, name, hexdigest = record
    h = _hasher(name)
    got = 0
    for chunk in read_range(fd, 0, size):
        h.update(chunk)
        got += len(chunk)
        yield chunk
    if got != size or h.hexdigest() != hexdigest:
        raise BackupChanged(
            f"refused: the backup {path} no longer holds what was saved (its first {size} bytes do not match "
            f"the hash ({name}) recorded with it); nothing was restored",
            given,
        )
