"""The file-access seam: how the follower (and a remote reader) stats, opens and reads a session file.

The core reads local files with ``os`` calls directly. Code that reads files elsewhere (another host over
SFTP: :mod:`sessionview.remote`) passes a :class:`FileAccess` instead; the core never knows what is behind
it. Everything here is plain and synchronous: an implementation that talks to a network does its own
waiting, and raises ``OSError`` subclasses (``FileNotFoundError``, ``PermissionError``,
:class:`~sessionview.core.doc.document.NotRegularFile`, ``TimeoutError``) as local calls would.

A :class:`FileStat` has the field names of ``os.stat_result`` that the follower uses, so local and remote
stats go through the same code. ``st_dev``/``st_ino`` together are the file's identity: an implementation
that cannot see inodes (SFTP) gives a synthetic identity that stays the same while the path holds the same
file (see :meth:`FileAccess.stat`).
"""

from __future__ import annotations

import os
import stat as stat_mod
from typing import NamedTuple, Protocol

from sessionview.core.doc.document import open_regular, preader

__all__ = ["FileStat", "OpenFile", "FileAccess", "LocalAccess", "LOCAL"]


class FileStat(NamedTuple):
    st_dev: int
    st_ino: int
    st_mode: int
    st_size: int
    st_mtime_ns: int

    @property
    def st_mtime(self) -> float:
        return self.st_mtime_ns / 1e9

    @property
    def is_regular(self) -> bool:
        return stat_mod.S_ISREG(self.st_mode)


class OpenFile(Protocol):
    """An open regular file: range reads that keep working after the path is deleted or replaced."""

    def read(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (fewer only at the end of the file)."""
        ...

    def stat(self) -> FileStat: ...

    def close(self) -> None: ...


class FileAccess(Protocol):
    def stat(self, path: str, opened: OpenFile | None = None) -> FileStat:
        """The file at ``path`` now (following links). With ``opened`` (a file this access opened), the
        identity is ``opened``'s when the path still holds that file, and a different one when it does not."""
        ...

    def open(self, path: str) -> OpenFile:
        """Open ``path`` for reading; anything but a regular file is a ``NotRegularFile``."""
        ...


def _of(st: os.stat_result) -> FileStat:
    return FileStat(st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns)


class LocalFile:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.read = preader(fd)

    def stat(self) -> FileStat:
        return _of(os.fstat(self.fd))

    def close(self) -> None:
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1


class LocalAccess:
    """The local file system, for code written against :class:`FileAccess`."""

    def stat(self, path: str, opened: OpenFile | None = None) -> FileStat:
        return _of(os.stat(path))

    def open(self, path: str) -> LocalFile:
        return LocalFile(open_regular(path))


LOCAL = LocalAccess()
