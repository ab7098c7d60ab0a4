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

Lines appended while the save itself runs are not lost: right before the rename the bytes appended so far
are copied into the temporary file; after the rename the old inode is read again (once no process has it
open for writing any more) and whatever arrived is appended to the new file, in order. A byte-exact backup
of the file goes to the state directory before every replacement (:mod:`sessionview.core.store.backups`).

Everything here is stdlib only and Linux-first (``/proc`` for writer detection, file leases to see when
the replaced inode has no writer left); elsewhere those checks degrade to no-ops.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import secrets
import signal
import stat
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from sessionview.core.doc.document import Document, SourceChanged
from sessionview.core.errors import (
    AnotherWriter,
    Conflict,
    HardLinked,
    Locked,
    Outside,
    SaveError,
    WriteFailed,
    write_failed,
)

if TYPE_CHECKING:
    from sessionview.core.store.backups import Backup

__all__ = [
    "LoadStamp",
    "SaveResult",
    "Writer",
    "save",
    "stamp_document",
    "stamp_bytes",
    "stamp_file",
    "resolve_inside",
    "default_root",
    "find_writers",
    "cleanup_temp_files",
    "is_temp_name",
    "TMP_MARK",
    "SaveError",
    "Conflict",
    "AnotherWriter",
    "Outside",
    "HardLinked",
    "Locked",
    "WriteFailed",
]

CHUNK = 1024 * 1024
TMP_MARK = ".sv-tmp-"
LOCK_TIMEOUT = 2.0  # seconds to wait for a LittleGhost store lock
SETTLE_TIMEOUT = 1.0  # seconds to wait, after the rename, for writers of the old inode to finish
MAX_MERGE_ROUNDS = 5

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024 if sys.platform.startswith("linux") else None)

#: Test hook: called with a step name right after each filesystem operation of a save. A crash test sets
#: it to a function that kills the process at the N-th call; other tests use it to interleave writers.
_crash_hook: Callable[[str], None] | None = None


def _step(name: str) -> None:
    hook = _crash_hook
    if hook is not None:
        hook(name)


# -- stamps ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoadStamp:
    """What was loaded: enough to tell later whether the file on disk is still that file."""

    path: str  # as given
    real_path: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    sha256: str  # hex digest of the ``size`` loaded bytes


def stamp_document(doc: Document) -> LoadStamp:
    """The stamp of a loaded :class:`Document` (hashes its source incrementally, never whole).

    Take it right after loading: unless the document computed its digest while loading, the hash is read
    now through its open file descriptor, so a file rewritten in place since then would be stamped as it
    is now, not as it was loaded.
    """
    if doc.path is None:
        raise ValueError("the document has no path")
    st = getattr(doc, "loaded_stat", None)  # the stat taken at load, when the document keeps one
    if st is None:
        fd = getattr(doc, "_fd", None)
        st = os.fstat(fd) if fd is not None else os.stat(doc.path)
    try:
        digest = doc.source_digest()
    except SourceChanged as exc:
        raise Conflict(f"conflict: {doc.path} changed on disk while it was being loaded ({exc})", doc.path) from exc
    return LoadStamp(
        doc.path, os.path.realpath(doc.path), st.st_dev, st.st_ino, doc.source.size, st.st_mtime_ns, digest
    )


def stamp_bytes(path: str | os.PathLike[str], data: bytes, st: os.stat_result | None = None) -> LoadStamp:
    """The stamp of a whole-file format loaded as ``data`` from ``path`` (``st``: its stat, if known)."""
    p = os.fspath(path)
    if st is None:
        st = os.stat(p)
    return LoadStamp(
        p, os.path.realpath(p), st.st_dev, st.st_ino, len(data), st.st_mtime_ns, hashlib.sha256(data).hexdigest()
    )


def stamp_file(path: str | os.PathLike[str]) -> LoadStamp:
    """The stamp of the file as it is on disk now, hashed in chunks."""
    p = os.fspath(path)
    fd = os.open(p, os.O_RDONLY | _O_CLOEXEC | _O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", p)
        h = hashlib.sha256()
        size = 0
        for chunk in _read_range(fd, 0, None):
            h.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return LoadStamp(p, os.path.realpath(p), st.st_dev, st.st_ino, size, st.st_mtime_ns, h.hexdigest())


# -- results ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SaveResult:
    path: str  # as given
    real_path: str  # the file that was replaced (links resolved)
    changed: bool  # False: the content was already on disk, nothing was written
    size: int  # size of the file as saved (including carried-over appends)
    stamp: LoadStamp | None  # stamp of what is now on disk, for further saves without reloading
    backup: "Backup | None" = None  # the backup of the replaced content
    rebased_bytes: int = 0  # bytes appended since load that render() received
    carried_bytes: int = 0  # bytes appended during the save, copied into the new file
    lost_partial_bytes: int = 0  # an unfinished last line that could not be carried over
    warnings: tuple[str, ...] = field(default_factory=tuple)


# -- paths -----------------------------------------------------------------------------------------


def default_root(path: str | os.PathLike[str]) -> str:
    """The CLI's root: the directory holding the path as given, before links are resolved."""
    return os.path.dirname(os.path.abspath(os.fspath(path)))


def _within(child: str, parent: str) -> bool:
    try:
        return os.path.commonpath([child, parent]) == parent
    except ValueError:
        return False


def resolve_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str:
    """The real path of ``path``; raise :class:`Outside` unless it lies inside ``root``."""
    given = os.fspath(path)
    real = os.path.realpath(given)
    root_real = os.path.realpath(os.fspath(root))
    if not _within(real, root_real):
        if os.path.islink(given) or real != os.path.abspath(given):
            raise Outside(f"refused: {given} is a link to {real}, outside {os.fspath(root)}", given)
        raise Outside(f"refused: {given} lies outside {os.fspath(root)}", given)
    return real


# -- temporary files -------------------------------------------------------------------------------


def is_temp_name(name: str) -> bool:
    return name.startswith(".") and TMP_MARK in name


def _create_tmp(dir_fd: int, base: str, mode: int = 0o600) -> tuple[int, str]:
    """Create ``.<base>.sv-tmp-<random>`` exclusively in ``dir_fd``, read-write and append-only, locked.

    The name never ends in ``.jsonl`` or ``.json``. The flock marks the file as alive: a stale temp file
    (its process died) is one nobody holds locked (see :func:`cleanup_temp_files`).
    """
    stem = base[:200]
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | _O_CLOEXEC | _O_NOFOLLOW
    for _ in range(100):
        name = f".{stem}{TMP_MARK}{secrets.token_hex(6)}"
        try:
            fd = os.open(name, flags, mode, dir_fd=dir_fd)
        except FileExistsError:
            continue
        try:
            # a concurrent cleanup may hold the lock for a moment and then remove the file: wait for
            # the lock, then make sure the name is still ours
            fcntl.flock(fd, fcntl.LOCK_EX)
            mine = os.fstat(fd)
            named = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if (mine.st_dev, mine.st_ino) == (named.st_dev, named.st_ino):
                return fd, name
        except FileNotFoundError:
            pass
        except OSError as exc:
            if exc.errno not in (errno.ENOLCK, errno.EINVAL, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", -1)):
                os.close(fd)
                raise
            return fd, name  # no locks on this file system: the lock is only a liveness marker
        os.close(fd)
    raise OSError(errno.EEXIST, "could not create a unique temporary file")


def cleanup_temp_files(directory: str | os.PathLike[str], *, older_than: float | None = None) -> list[str]:
    """Remove stale ``.sv-tmp-`` files left in ``directory`` by a save that crashed.

    A temp file is stale when no live process holds its lock (a saver holds it until it is done), and, if
    ``older_than`` (a ``time.time()`` value) is given, it was last modified before then. Returns the paths
    removed. The app calls this on startup for the directories it opens.
    """
    d = os.fspath(directory)
    removed: list[str] = []
    try:
        names = os.listdir(d)
    except OSError:
        return removed
    for name in names:
        if not is_temp_name(name):
            continue
        p = os.path.join(d, name)
        try:
            st = os.lstat(p)
            if not stat.S_ISREG(st.st_mode):
                continue
            if older_than is not None and st.st_mtime >= older_than:
                continue
            fd = os.open(p, os.O_RDONLY | _O_CLOEXEC | _O_NOFOLLOW | _O_NONBLOCK)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a save in progress
            except OSError:
                pass
            st2 = os.fstat(fd)
            if (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
                continue
            os.unlink(p)
            removed.append(p)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


# -- low-level I/O ---------------------------------------------------------------------------------


def _read_range(fd: int, start: int, end: int | None) -> Iterator[bytes]:
    """Chunks of ``[start, end)`` (``end=None``: to the end of file as it is while reading)."""
    pos = start
    while end is None or pos < end:
        size = CHUNK if end is None else min(CHUNK, end - pos)
        data = os.pread(fd, size, pos)
        if not data:
            return
        yield data
        pos += len(data)


def _read_all(fd: int, start: int) -> bytes:
    return b"".join(_read_range(fd, start, None))


def _hash_prefix(fd: int, size: int) -> tuple["hashlib._Hash", int]:
    h = hashlib.sha256()
    got = 0
    for chunk in _read_range(fd, 0, size):
        h.update(chunk)
        got += len(chunk)
    return h, got


def _prefix_matches(fd: int, size: int, hexdigest: str) -> bool:
    h, got = _hash_prefix(fd, size)
    return got == size and h.hexdigest() == hexdigest


class _Limit:
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


_NO_LIMIT = _Limit(False)


def _write_all(fd: int, data: bytes | memoryview, pos: int = 0, limit: _Limit = _NO_LIMIT) -> int:
    limit.check(pos, len(data))
    mv = memoryview(data)
    total = len(mv)
    while mv:
        n = os.write(fd, mv)
        if n <= 0:
            raise OSError(errno.EIO, "write returned no progress")
        mv = mv[n:]
    return total


@contextmanager
def _ignore_sigxfsz() -> Iterator[bool]:
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


def _fsync_dir(dir_fd: int) -> str | None:
    """fsync a directory; returns a warning instead of raising (the rename already happened)."""
    try:
        os.fsync(dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", -1)):
            return None  # the file system does not support it
        return f"the directory could not be synced to disk ({exc.strerror}); the save may not survive a power cut"
    return None


def _stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _copy_attrs(src_fd: int, dst_fd: int, st: os.stat_result) -> None:
    """Give the new file the original's owner (where allowed), mode and user/ACL extended attributes."""
    mine = os.fstat(dst_fd)
    if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
        try:
            os.fchown(dst_fd, st.st_uid, st.st_gid)
        except PermissionError:
            try:  # keep at least the group if we are a member
                os.fchown(dst_fd, -1, st.st_gid)
            except OSError:
                pass
        except OSError:
            pass
    os.fchmod(dst_fd, stat.S_IMODE(st.st_mode))
    listxattr = getattr(os, "listxattr", None)
    if listxattr is None:
        return
    try:
        names = listxattr(src_fd)
    except OSError:
        return
    for name in names:
        if not (name.startswith("user.") or name.startswith("system.posix_acl")):
            continue
        try:
            os.setxattr(dst_fd, name, os.getxattr(src_fd, name))
        except OSError:
            pass


# -- writers ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Writer:
    pid: int
    fd: int
    command: str

    def describe(self) -> str:
        return f"pid {self.pid} ({self.command})"


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(4096)
        cmd = " ".join(os.fsdecode(p) for p in raw.split(b"\0") if p)
        if cmd:
            return cmd if len(cmd) <= 200 else cmd[:199] + "…"
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return os.fsdecode(f.read().strip()) or "?"
    except OSError:
        return "?"


def _scan_writers(real: str, dev: int, ino: int, *, include_self: bool) -> list[tuple[int, int]]:
    """(pid, fd) of every open file description on inode (dev, ino) with write access, from /proc."""
    found: list[tuple[int, int]] = []
    base = os.path.basename(real)
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    for pid in pids:
        if pid == me and not include_self:
            continue
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for name in fds:
            link = f"{fd_dir}/{name}"
            try:
                target = os.readlink(link)
            except OSError:
                continue
            # cheap filter before stat: the kernel shows the path the file was opened by (links
            # resolved), possibly through another mount, with " (deleted)" once it is unlinked
            if target.endswith(" (deleted)"):
                target = target[: -len(" (deleted)")]
            if os.path.basename(target) != base:
                continue
            try:
                st = os.stat(link)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) != (dev, ino):
                continue
            try:
                with open(f"/proc/{pid}/fdinfo/{name}", "rb") as f:
                    info = f.read(4096)
            except OSError:
                continue
            for line in info.splitlines():
                if line.startswith(b"flags:"):
                    flags = int(line.split()[1], 8)
                    if flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
                        found.append((pid, int(name)))
                    break
    return found


def find_writers(
    path: str | os.PathLike[str],
    st: os.stat_result | None = None,
    *,
    include_self: bool = False,
    persistent: bool = True,
) -> list[Writer]:
    """Processes that have the file open for writing (Linux /proc; elsewhere an empty list).

    With ``persistent`` a process must be seen in every one of a few scans spread over ~20 ms, so a
    writer that opens, appends and closes the file for every line (which a save handles) is not
    mistaken for one that keeps it open (whose later writes would go to the replaced file).
    """
    real = os.path.realpath(os.fspath(path))
    if st is None:
        try:
            st = os.stat(real)
        except OSError:
            return []
    if not os.path.isdir("/proc/self/fd"):
        return []
    seen = set(_scan_writers(real, st.st_dev, st.st_ino, include_self=include_self))
    if persistent:
        for pause in (0.002, 0.005, 0.012):
            if not seen:
                break
            time.sleep(pause)
            seen &= set(_scan_writers(real, st.st_dev, st.st_ino, include_self=include_self))
    return [Writer(pid, fd, _command(pid)) for pid, fd in sorted(seen)]


def _lease_probe(fd: int) -> bool | None:
    """Whether anyone has the inode of ``fd`` (opened read-only) open for writing, via a read lease.

    Only used on a replaced (unlinked) inode, which nobody can open by name any more, so holding the lease
    for a moment cannot block another process. Returns None when leases are unavailable.
    """
    if _F_SETLEASE is None:
        return None
    try:
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        if exc.errno == errno.EAGAIN:
            return True
        return None
    try:
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)
    except OSError:
        pass
    return False


# -- the lock --------------------------------------------------------------------------------------


def _lock_holder(st: os.stat_result) -> str:
    """Best effort: who holds a flock on this inode (from /proc/locks)."""
    try:
        with open("/proc/locks", "rb") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    for line in lines:
        parts = line.split()
        if b"FLOCK" not in parts:
            continue
        for i, p in enumerate(parts):
            if p.count(b":") == 2:
                try:
                    ino = int(p.rsplit(b":", 1)[1])
                    pid = int(parts[i - 1])
                except (ValueError, IndexError):
                    break
                if ino == st.st_ino and pid > 0:
                    return f" by pid {pid} ({_command(pid)})"
                break
    return ""


@contextmanager
def _store_lock(lock_path: str | os.PathLike[str] | None, timeout: float, given: str) -> Iterator[None]:
    if lock_path is None:
        yield
        return
    lp = os.fspath(lock_path)
    try:
        fd = os.open(lp, os.O_RDWR | os.O_CREAT | _O_CLOEXEC | _O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise write_failed(exc, "opening the lock file", given) from exc
    try:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    who = _lock_holder(os.fstat(fd))
                    raise Locked(
                        f"refused: {given} is locked: {lp} is held{who}; the store is being written, try again",
                        given,
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
            except OSError as exc:
                raise write_failed(exc, "locking the store", given) from exc
        _step("lock")
        yield
    finally:
        os.close(fd)  # releases the flock


# -- the save --------------------------------------------------------------------------------------


def _changed_on_disk(given: str, why: str) -> Conflict:
    return Conflict(f"conflict: {given} changed on disk since it was loaded ({why}); nothing was written", given)


class _Tmp:
    """A temporary file being written: its fd (read-write, append), name, size and running hash."""

    def __init__(self, fd: int, name: str) -> None:
        self.fd = fd
        self.name = name
        self.size = 0
        self.hash = hashlib.sha256()
        self.linked = True  # still under its temporary name

    def write(self, data: bytes, limit: _Limit) -> None:
        if not data:
            return
        _write_all(self.fd, data, self.size, limit)
        self.size += len(data)
        self.hash.update(data)


class _Save:
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
        limit: _Limit,
    ) -> None:
        self.given = given
        self.real = real
        self.dir = os.path.dirname(real)
        self.base = os.path.basename(real)
        self.stamp = stamp
        self.force = force
        self.backup = backup
        self.state_dir = state_dir
        self.settle_timeout = settle_timeout
        self.limit = limit
        self.dir_fd = -1
        self.old_fd = -1
        self.tmps: list[_Tmp] = []
        self.extra_fds: list[int] = []
        self.warnings: list[str] = []
        self.carried = 0
        self.lost = 0
        self.writers: list[Writer] = []
        self.current: _Tmp | None = None  # the temp file that is now the session file

    # cleanup ------------------------------------------------------------------------------------
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

    def _discard(self, t: _Tmp) -> None:
        if t.linked:
            os.unlink(t.name, dir_fd=self.dir_fd)
            t.linked = False
            _step("discard")

    def _new_tmp(self, like: os.stat_result) -> _Tmp:
        fd, name = _create_tmp(self.dir_fd, self.base)
        t = _Tmp(fd, name)
        self.tmps.append(t)
        _step("create")
        _copy_attrs(self.old_fd, fd, like)
        _step("chmod")
        return t

    # step 1: open and compare with the stamp ----------------------------------------------------
    def open_and_check(self) -> tuple[bytes, int, str, os.stat_result]:
        given, stamp = self.given, self.stamp
        try:
            self.dir_fd = os.open(self.dir, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        except OSError as exc:
            raise write_failed(exc, "opening the directory", given) from exc
        try:
            self.old_fd = os.open(
                self.base, os.O_RDONLY | _O_CLOEXEC | _O_NOFOLLOW | _O_NONBLOCK, dir_fd=self.dir_fd
            )
        except FileNotFoundError:
            raise _changed_on_disk(given, "it no longer exists") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _changed_on_disk(given, "it was replaced by a symbolic link") from None
            raise write_failed(exc, "opening the file", given) from exc
        _step("open")
        st = os.fstat(self.old_fd)
        if not stat.S_ISREG(st.st_mode):
            raise _changed_on_disk(given, "it is no longer a regular file")
        if (st.st_dev, st.st_ino) != (stamp.dev, stamp.ino):
            raise _changed_on_disk(given, "it was replaced by another file")
        if st.st_nlink > 1:
            raise HardLinked(
                f"refused: {given} has {st.st_nlink} hard links; replacing it would split them "
                "(the other names would keep the old content)",
                given,
            )
        if st.st_size < stamp.size:
            raise _changed_on_disk(given, f"it is shorter than when loaded: {st.st_size} < {stamp.size} bytes")
        if not self.force:
            writers = find_writers(self.real, st)
            if writers:
                who = ", ".join(w.describe() for w in writers)
                raise AnotherWriter(
                    f"refused: another process has {given} open for writing: {who}; "
                    "its later writes would go to the replaced file. Stop it or force the save",
                    given,
                    tuple((w.pid, w.command) for w in writers),
                )
        else:
            self.writers = find_writers(self.real, st)
        h, got = _hash_prefix(self.old_fd, stamp.size)
        if got != stamp.size or h.hexdigest() != stamp.sha256:
            raise _changed_on_disk(given, f"its first {stamp.size} bytes differ from what was loaded")
        _step("check")
        appended = _read_all(self.old_fd, stamp.size)
        h.update(appended)
        return appended, stamp.size + len(appended), h.hexdigest(), st

    # the whole save -----------------------------------------------------------------------------
    def run(self, render: Callable[[bytes], Iterable[bytes]]) -> SaveResult:
        appended, R, h_R, st = self.open_and_check()
        try:
            tmp = self._new_tmp(st)
        except OSError as exc:
            raise write_failed(exc, "creating the temporary file", self.given) from exc
        buf = bytearray()
        try:
            try:
                for chunk in render(appended):
                    buf += chunk
                    if len(buf) >= CHUNK:
                        tmp.write(bytes(buf), self.limit)
                        buf.clear()
                        _step("write")
            except SourceChanged as exc:
                raise _changed_on_disk(self.given, f"it changed while the new content was produced: {exc}") from exc
            if buf:
                tmp.write(bytes(buf), self.limit)
                buf.clear()
                _step("write")
        except OSError as exc:
            raise write_failed(exc, "writing the temporary file", self.given) from exc

        if tmp.size == R and tmp.hash.hexdigest() == h_R:
            self._discard(tmp)
            return SaveResult(
                self.given,
                self.real,
                False,
                R,
                LoadStamp(self.given, self.real, st.st_dev, st.st_ino, R, st.st_mtime_ns, h_R),
                rebased_bytes=len(appended),
            )

        try:
            os.fsync(tmp.fd)
        except OSError as exc:
            raise write_failed(exc, "syncing the temporary file to disk", self.given) from exc
        _step("fsync")

        # re-check right before replacing, copying the backup at the same time
        st_pre = os.fstat(self.old_fd)
        made = None
        if self.backup:
            from sessionview.core.store import backups

            try:
                made = backups.write_backup(
                    self.old_fd,
                    self.real,
                    state_dir=self.state_dir,
                    verify=(R, h_R),
                    step=_step,
                    given=self.given,
                    limit=self.limit,
                )
            except Conflict:
                raise
            except OSError as exc:
                raise write_failed(exc, "writing the backup", self.given) from exc
        elif not _prefix_matches(self.old_fd, R, h_R):
            raise Conflict(
                f"conflict: {self.given} changed on disk during the save (rewritten by another program); "
                "nothing was written",
                self.given,
            )
        _step("recheck")

        # catch up with lines appended meanwhile, then swap
        pos_old = R
        unsynced = False
        try:
            late = _read_all(self.old_fd, R)
            if late:
                tmp.write(late, self.limit)
                pos_old += len(late)
                os.fsync(tmp.fd)
                _step("catchup")
            # the fsync took a while: take what arrived meanwhile too, synced after the rename
            late = _read_all(self.old_fd, pos_old)
            if late:
                tmp.write(late, self.limit)
                pos_old += len(late)
                unsynced = True
                _step("catchup2")
            now = os.stat(self.base, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise _changed_on_disk(self.given, "it was removed during the save") from None
        except OSError as exc:
            raise write_failed(exc, "writing the temporary file", self.given) from exc
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise Conflict(
                f"conflict: {self.given} changed on disk during the save (replaced by another file); "
                "nothing was written",
                self.given,
            )
        try:
            os.replace(tmp.name, self.base, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        except OSError as exc:
            raise write_failed(exc, "replacing the file", self.given) from exc
        tmp.linked = False
        _step("rename")

        # after the rename: nothing below may leave the file worse than the new version
        try:
            cur = self._merge(tmp, pos_old, R, h_R, st_pre, made)
        except Conflict:
            raise
        except Exception as exc:  # the new version is in place; report, never pretend it was not saved
            self.warnings.append(f"after the file was replaced: {type(exc).__name__}: {exc}")
            cur = self.current or tmp
        if unsynced and cur is tmp and not self.carried:
            try:
                os.fsync(cur.fd)
            except OSError as exc:
                self.warnings.append(f"the last lines appended during the save could not be synced: {exc.strerror}")
            _step("catchup_fsync")
        w = _fsync_dir(self.dir_fd)
        if w:
            self.warnings.append(w)
        _step("dir_fsync")
        if self.force and self.writers:
            who = ", ".join(wr.describe() for wr in self.writers)
            self.warnings.append(
                f"{who} had the file open for writing: anything it writes from now on goes to the replaced "
                "file and is lost; restart it"
            )
        try:
            nst = os.fstat(cur.fd)
            new_stamp: LoadStamp | None = LoadStamp(
                self.given, self.real, nst.st_dev, nst.st_ino, cur.size, nst.st_mtime_ns, cur.hash.hexdigest()
            )
        except OSError:
            new_stamp = None
        return SaveResult(
            self.given,
            self.real,
            True,
            cur.size,
            new_stamp,
            backup=made,
            rebased_bytes=len(appended),
            carried_bytes=self.carried,
            lost_partial_bytes=self.lost,
            warnings=tuple(self.warnings),
        )

    # after the rename ---------------------------------------------------------------------------
    def _settle(self, fd: int, timeout: float) -> bool:
        """Wait until no process has the (replaced) inode of ``fd`` open for writing. True if none."""
        deadline = time.monotonic() + timeout
        delay = 0.0
        while True:
            try:
                st = os.fstat(fd)
            except OSError:
                return False
            busy = _lease_probe(fd) if st.st_nlink == 0 else None
            if busy is None:
                busy = bool(_scan_writers(self.real, st.st_dev, st.st_ino, include_self=True))
            if not busy:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(max(delay * 2, 0.0002), 0.01)

    def _merge(
        self, cur: _Tmp, pos_old: int, R: int, h_R: str, st_pre: os.stat_result, made: "Backup | None"
    ) -> _Tmp:
        """Carry bytes appended to the replaced inode into the new file, keeping their order.

        ``prev_fd`` is the inode just replaced and ``prev_pos`` how much of it the new file already holds.
        Normally one round: the old inode settles, its late bytes (if any) are appended to the new file.
        If someone appended to the new file first, a corrected copy replaces it (another round).
        """
        prev_fd, prev_pos = self.old_fd, pos_old
        self.current = cur
        first = True
        timeout = 0.05 if (self.force and self.writers) else self.settle_timeout
        for _ in range(MAX_MERGE_ROUNDS):
            settled = self._settle(prev_fd, timeout)
            try:
                pst = os.fstat(prev_fd)
                if first and _stat_key(pst) != _stat_key(st_pre):
                    if pst.st_size < R or not _prefix_matches(prev_fd, R, h_R):
                        self._rollback(cur, made)  # raises Conflict
                first = False
                data = _read_all(prev_fd, prev_pos)
            except OSError as exc:
                self.warnings.append(f"could not read lines appended during the save: {exc.strerror}")
                return cur
            if not settled and data:
                cut = data.rfind(b"\n") + 1
                if cut < len(data):
                    self.lost += len(data) - cut
                    self.warnings.append(
                        f"{len(data) - cut} bytes of an unfinished last line, written during the save by a process "
                        "still writing the replaced file, could not be carried over"
                    )
                data = data[:cut]
            if not data:
                return cur
            try:
                cst = os.fstat(cur.fd)
                wrote_at = -1
                if cst.st_size == cur.size:
                    _write_all(cur.fd, data, cur.size, self.limit)  # O_APPEND
                    end = os.lseek(cur.fd, 0, os.SEEK_CUR)
                    wrote_at = end - len(data)
                    _step("carry")
                    if wrote_at == cur.size:
                        cur.size += len(data)
                        cur.hash.update(data)
                        self.carried += len(data)
                        try:
                            os.fsync(cur.fd)
                        except OSError as exc:
                            self.warnings.append(f"lines carried over could not be synced: {exc.strerror}")
                        _step("carry_fsync")
                        return cur
                # someone appended to the new file before us: rebuild it with the late bytes in order
                nxt = self._reorder(cur, data, wrote_at)
            except OSError as exc:
                self._keep_unmerged(data, f"could not carry them over: {exc.strerror}")
                return cur
            if nxt is None:
                return cur
            self.carried += len(data)
            prev_fd, prev_pos, cur = nxt
            self.current = cur
        return cur

    def _reorder(self, cur: _Tmp, data: bytes, wrote_at: int) -> tuple[int, int, _Tmp] | None:
        """Replace the new file by ``cur[:size] + data + (what others appended to cur)``."""
        if not _prefix_matches(cur.fd, cur.size, cur.hash.hexdigest()):
            self._keep_unmerged(data, "the file was rewritten by another program right after the save")
            return None
        like = os.fstat(cur.fd)
        t = self._new_tmp(like)
        _copy_range(cur.fd, 0, cur.size, t, self.limit)
        t.write(data, self.limit)
        if wrote_at >= 0:  # our own copy of ``data`` landed later in cur: skip it
            _copy_range(cur.fd, cur.size, wrote_at, t, self.limit)
            done = wrote_at + len(data)
        else:
            done = cur.size
        done += _copy_range(cur.fd, done, None, t, self.limit)
        os.fsync(t.fd)
        _step("reorder_write")
        ro = os.open(self.base, os.O_RDONLY | _O_CLOEXEC | _O_NOFOLLOW | _O_NONBLOCK, dir_fd=self.dir_fd)
        self.extra_fds.append(ro)
        rst = os.fstat(ro)
        if (rst.st_dev, rst.st_ino) != (like.st_dev, like.st_ino):
            self._discard(t)
            self._keep_unmerged(data, "the file was replaced by another program right after the save")
            return None
        late = _copy_range(ro, done, None, t, self.limit)
        if late:
            done += late
            os.fsync(t.fd)
        os.replace(t.name, self.base, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        t.linked = False
        _step("reorder_rename")
        # our write fd on the replaced copy must go, or it would count as a writer of it
        self.tmps.remove(cur)
        os.close(cur.fd)
        return ro, done, t

    def _keep_unmerged(self, data: bytes, why: str) -> None:
        """Last resort: keep late bytes that cannot be merged in the backups directory, never drop them."""
        where = ""
        try:
            from sessionview.core.store import backups

            where = backups.write_unmerged(self.real, data, state_dir=self.state_dir)
        except OSError:
            pass
        self.lost += len(data)
        self.warnings.append(
            f"{len(data)} bytes appended during the save could not be merged ({why})"
            + (f"; they were kept in {where}" if where else "")
        )

    def _rollback(self, cur: _Tmp, made: "Backup | None") -> None:
        """The replaced inode was rewritten in place during the save: put that version back and refuse."""
        kept = ""
        try:
            like = os.fstat(cur.fd)
            t = self._new_tmp(like)
            _copy_range(self.old_fd, 0, None, t, self.limit)
            _copy_range(cur.fd, cur.size, None, t, self.limit)  # appended to our new file meanwhile
            os.fsync(t.fd)
            rst = os.stat(self.base, dir_fd=self.dir_fd, follow_symlinks=False)
            if (rst.st_dev, rst.st_ino) == (like.st_dev, like.st_ino):
                os.replace(t.name, self.base, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
                t.linked = False
                _step("rollback_rename")
                _fsync_dir(self.dir_fd)
                kept = "its version was put back"
            else:
                self._discard(t)
                kept = "the file was replaced again by another program"
        except OSError as exc:
            kept = f"putting its version back failed ({exc.strerror})"
        bpath = made.path if made is not None else None
        raise Conflict(
            f"conflict: {self.given} changed on disk during the save (rewritten by another program); "
            f"{kept}; your changes were not saved"
            + (f"; the version before the save is in {bpath}" if bpath else ""),
            self.given,
        )


def _copy_range(fd: int, start: int, end: int | None, dst: _Tmp, limit: _Limit) -> int:
    """Copy ``[start, end)`` of ``fd`` (``end=None``: to its end) into ``dst`` in chunks; returns the count."""
    n = 0
    for chunk in _read_range(fd, start, end):
        dst.write(chunk, limit)
        n += len(chunk)
    if end is not None and n != end - start:
        raise OSError(errno.EIO, "the file is shorter than expected")
    return n


def save(
    path: str | os.PathLike[str],
    render: Callable[[bytes], Iterable[bytes]],
    stamp: LoadStamp,
    *,
    root: str | os.PathLike[str],
    force: bool = False,
    backup: bool = True,
    state_dir: str | os.PathLike[str] | None = None,
    lock_path: str | os.PathLike[str] | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
    settle_timeout: float = SETTLE_TIMEOUT,
) -> SaveResult:
    """Replace the file at ``path`` with ``render(appended)``, atomically and without losing appends.

    ``render(appended)`` yields the new content; ``appended`` holds the bytes appended on disk since
    ``stamp`` was taken (``b""`` normally), which the caller must emit byte for byte where they belong
    (at the end, for JSONL). Raises a :class:`~sessionview.core.errors.SaveError`: :class:`Conflict`,
    :class:`AnotherWriter` (unless ``force``), :class:`Outside`, :class:`HardLinked`, :class:`Locked`
    (``lock_path`` given and held elsewhere) or :class:`WriteFailed`; in every case the file is untouched.
    """
    given = os.fspath(path)
    real = resolve_inside(given, root)
    sd = os.fspath(state_dir) if state_dir is not None else None
    with _store_lock(lock_path, lock_timeout, given), _ignore_sigxfsz() as ignored:
        op = _Save(
            given,
            real,
            stamp,
            force=force,
            backup=backup,
            state_dir=sd,
            settle_timeout=settle_timeout,
            limit=_Limit(not ignored),
        )
        try:
            return op.run(render)
        except SaveError:
            raise
        except OSError as exc:
            raise write_failed(exc, "saving", given) from exc
        finally:
            op.close()
