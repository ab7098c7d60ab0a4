"""The cheap proof that a file still holds what was read from it: its stat unchanged since a settled moment.

Every change to an inode's data or metadata through the kernel (``write``, ``truncate``, ``fallocate``,
``chmod``, a rename onto it, ``utime``...) sets its ctime to the current time, and no system call sets the
ctime to a chosen value. So when the file's ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` is the
same now as at a reference ``fstat``, nothing was written to it in between, provided

* the reference ctime was **settled**: older than :data:`SETTLE_NS` before the clock was read ahead of that
  ``fstat``. A write within the same timestamp tick as the last one before the reference could otherwise
  leave the ctime as it was (coarse clock ticks of a few milliseconds; file systems with 1 s timestamps);
* the file system keeps ctime itself: a local one from :data:`TRUSTED` (by ``fstatfs`` ``f_type``). Network
  and FUSE file systems report what a server says, so they never get the proof;
* no process maps the file shared and writable: a write through such a mapping updates the times only at
  the first write fault after the page was written back, not at every store.

Wherever this does not hold (or cannot be checked), the caller compares hashes
(:mod:`~sessionview.core.doc.digest`) instead: when in doubt, hash. Linux only; elsewhere :func:`trusts_ctime`
is False.

A save itself moves the replaced file's ctime twice (the backup's hard link, and the rename over its name).
From its recheck to the merge after the rename, the save therefore relies on the settled mtime, which every
write sets to the current time: only a program that writes the file in place *and* sets its mtime back within
those few milliseconds would go unseen there (:meth:`sessionview.core.store.save._Save.after_own_changes`).
"""

from __future__ import annotations

import os
import sys

from sessionview.core.store.fsio import stat_key

__all__ = ["SETTLE_NS", "TRUSTED", "fs_type", "settled", "shared_writable_mapping", "trusts_ctime", "unchanged_since"]

#: how old a ctime must be, before the clock reading that precedes the reference stat, to be settled
SETTLE_NS = 2_000_000_000

#: local file systems whose ctime the kernel sets on every change (statfs ``f_type``)
TRUSTED = {
    0xEF53: "ext2/ext3/ext4",
    0x58465342: "xfs",
    0x9123683E: "btrfs",
    0x01021994: "tmpfs",
    0xF2F52010: "f2fs",
    0xCA451A4E: "bcachefs",
}

_libc = None
_FSTATFS_OK = sys.platform.startswith("linux") and os.uname().machine in ("x86_64", "amd64", "aarch64", "arm64", "i686", "armv7l", "riscv64", "ppc64le")


def fs_type(fd: int) -> int | None:
    """The ``f_type`` of the file system holding ``fd`` (``fstatfs``), or None when it cannot be read."""
    global _libc
    if not _FSTATFS_OK:
        return None
    try:
        import ctypes

        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        buf = ctypes.create_string_buffer(512)  # struct statfs: 120 bytes on 64-bit Linux; f_type comes first
        if _libc.fstatfs(fd, buf) != 0:
            return None
        return ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF
    except (OSError, AttributeError, ImportError, ValueError):
        return None


def shared_writable_mapping(st: os.stat_result) -> bool | None:
    """Whether any process maps the inode of ``st`` shared and writable (``/proc/*/maps``); None: unknown."""
    if not os.path.isdir("/proc/self"):
        return None
    ino = str(st.st_ino).encode()
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps", "rb") as f:
                data = f.read()
        except OSError:
            continue  # gone, or not ours to read (such a process could not write our file either)
        if ino not in data:
            continue
        for line in data.splitlines():
            parts = line.split(None, 5)
            if len(parts) < 5 or parts[4] != ino or len(parts[1]) < 4:
                continue
            if parts[1][1:2] != b"w" or parts[1][3:4] != b"s":
                continue
            dev = parts[3].split(b":")
            try:
                if len(dev) == 2 and (int(dev[0], 16), int(dev[1], 16)) == (major, minor):
                    return True
            except ValueError:
                continue
    return False


def trusts_ctime(fd: int, st: os.stat_result) -> bool:
    """Whether an unchanged stat of ``fd`` (``st``: its fstat) proves unchanged content (see the module)."""
    if fs_type(fd) not in TRUSTED:
        return False
    return shared_writable_mapping(st) is False


def settled(st: os.stat_result, before_ns: int) -> bool:
    """Whether the ctime of ``st`` is settled: ``before_ns`` is the clock (``time.time_ns()``) read before that stat."""
    return st.st_ctime_ns <= before_ns - SETTLE_NS


def unchanged_since(fd: int, ref: os.stat_result) -> bool:
    """Whether ``fd``'s stat is still ``ref`` (the caller established that ``ref`` is a settled, trusted stat)."""
    try:
        return stat_key(os.fstat(fd)) == stat_key(ref)
    except OSError:
        return False
