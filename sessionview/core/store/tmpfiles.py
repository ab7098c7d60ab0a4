"""sessionview's temporary files: ``.<base>.sv-tmp-<12 hex digits>``, created locked, cleaned up when stale.

A temp file is written next to the file it will replace (or in a backup directory) and renamed over it.
Its flock marks it as alive: one nobody holds locked was left by a save that died.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat

from sessionview.core.store.fsio import O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK, UNSUPPORTED

__all__ = ["TMP_MARK", "is_temp_name", "create_tmp", "cleanup_temp_files"]

TMP_MARK = ".sv-tmp-"
_TMP_NAME = re.compile(r"\A\..+" + re.escape(TMP_MARK) + r"[0-9a-f]{12}\Z", re.DOTALL)


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is one of sessionview's temporary names (``.<base>.sv-tmp-<12 hex digits>``)."""
    return _TMP_NAME.match(name) is not None


def _unlink_if_same(dir_fd: int, name: str, st: os.stat_result | None) -> None:
    """Remove our temporary ``name`` after a failure (``st``: its fstat, when known, to be sure it is ours)."""
    try:
        if st is not None:
            now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                return
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def create_tmp(dir_fd: int, base: str, mode: int = 0o600) -> tuple[int, str]:
    """Create ``.<base>.sv-tmp-<random>`` exclusively in ``dir_fd``, read-write and append-only, locked.

    The name never ends in ``.jsonl`` or ``.json``. The flock marks the file as alive: a stale temp file
    (its process died) is one nobody holds locked (see :func:`cleanup_temp_files`). On any failure the
    file is removed again.
    """
    stem = base[:200]
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | O_CLOEXEC | O_NOFOLLOW
    for _ in range(100):
        name = f".{stem}{TMP_MARK}{os.urandom(6).hex()}"
        try:
            fd = os.open(name, flags, mode, dir_fd=dir_fd)
        except FileExistsError:
            continue
        mine: os.stat_result | None = None
        try:
            mine = os.fstat(fd)
            # a concurrent cleanup may hold the lock for a moment and then remove the file: wait for
            # the lock, then make sure the name is still ours
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                if exc.errno not in UNSUPPORTED:
                    raise
                return fd, name  # no locks on this file system: cleanup never removes such files
            named = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if (mine.st_dev, mine.st_ino) == (named.st_dev, named.st_ino):
                return fd, name
        except FileNotFoundError:
            pass
        except BaseException:
            _unlink_if_same(dir_fd, name, mine)
            os.close(fd)
            raise
        os.close(fd)
    raise OSError(errno.EEXIST, "could not create a unique temporary file")


def cleanup_temp_files(directory: str | os.PathLike[str], *, older_than: float | None = None) -> list[str]:
    """Remove stale temporary files (``.<name>.sv-tmp-<hex>``) left in ``directory`` by a save that died.

    A temp file is stale when no live process holds its flock (a saver holds it from creation until it
    is done; the kernel drops it when the process dies, even by SIGKILL). Where flocks are unsupported
    nothing is removed. With ``older_than`` (a ``time.time()`` value) only files last modified before
    then go. Only sessionview's own temp names are touched. Returns the paths removed.
    Every save calls this for its directory; the app calls it for the directory it opens.
    """
    d = os.fspath(directory)
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(d) if TMP_MARK in n]
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
            fd = os.open(p, os.O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # held by a save in progress, or no locks here: cannot tell, keep it
            st2 = os.fstat(fd)
            if (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
                continue
            now = os.lstat(p)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                continue
            os.unlink(p)
            removed.append(p)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed
