"""Files on another host over SFTP, behind the core's :class:`~sessionview.core.fileaccess.FileAccess` seam.

Reads are ranges (``pread``-like), never whole files. SFTP (version 3, what OpenSSH serves) has no inode
numbers, so a file's identity is kept through its open handle: the path still holds the opened file while
``stat(path)`` and ``fstat(handle)`` agree (size, mtime, mode, owner). When they disagree, the handle is
asked again; if it has not changed meanwhile, the path holds another file (a rename over it, or deleted and
created again). A replacement with exactly the old size, mtime second, mode and owner cannot be told from
the same file; a follower notices it at the next change.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import stat as stat_mod
from typing import Any, Callable, Iterator

import asyncssh

from sessionview.core.doc.document import NotRegularFile, describe_mode
from sessionview.core.fileaccess import FileStat, OpenFile
from sessionview.remote.connection import Connection, RemoteError, _reason, call

__all__ = ["SftpAccess", "SftpFile"]

_ids = itertools.count(1)
OTHER_FILE = (0, 0)  # the identity stat() gives a path that no longer holds the opened file


def _mtime_ns(attrs: Any) -> int:
    ns = getattr(attrs, "mtime_ns", None)
    if ns is not None:
        return int(ns)
    return int(attrs.mtime or 0) * 1_000_000_000


def _os_error(exc: BaseException, path: str) -> OSError:
    if isinstance(exc, (asyncssh.SFTPConnectionLost, asyncssh.SFTPNoConnection)):
        return RemoteError(f"connection lost ({_reason(exc)})")
    if isinstance(exc, asyncssh.SFTPNoSuchFile):
        return FileNotFoundError(2, "no such file", path)
    if isinstance(exc, asyncssh.SFTPPermissionDenied):
        return PermissionError(13, "permission denied", path)
    if isinstance(exc, asyncssh.SFTPError):
        return OSError(5, _reason(exc), path)
    if isinstance(exc, (asyncssh.Error, ConnectionError)):
        return RemoteError(f"connection lost ({_reason(exc)})")
    if isinstance(exc, OSError):
        return exc
    return OSError(5, _reason(exc), path)


def _stat_of(attrs: Any, ident: tuple[int, int]) -> FileStat:
    return FileStat(ident[0], ident[1], int(attrs.permissions or 0), int(attrs.size or 0), _mtime_ns(attrs))


def _same(a: Any, b: Any) -> bool:
    return (a.size, _mtime_ns(a), a.permissions, a.uid, a.gid) == (b.size, _mtime_ns(b), b.permissions, b.uid, b.gid)


class SftpFile:
    """An open remote file (an :class:`~sessionview.core.fileaccess.OpenFile`)."""

    def __init__(self, access: "SftpAccess", handle: Any, path: str) -> None:
        self.access = access
        self.handle = handle
        self.path = path
        self.ident = (1, next(_ids))
        self.reads = 0  # requests made, for tests and the bench
        self.bytes_read = 0
        self._cache: "BlockCache | None" = None

    @property
    def cached_read(self) -> Callable[[int, int], bytes]:
        """Range reads through a :class:`BlockCache`, for a session's records (not for a follower: it must
        see the file as it is now)."""
        if self._cache is None:
            self._cache = BlockCache(self.read)
        return self._cache

    def read(self, offset: int, size: int) -> bytes:
        if size <= 0:
            return b""
        self.reads += 1
        data = self.access._call(self.handle.read(size, offset), self.path)
        self.bytes_read += len(data)
        return bytes(data)

    def stat(self) -> FileStat:
        return _stat_of(self.access._call(self.handle.stat(), self.path), self.ident)

    def close(self) -> None:
        handle, self.handle = self.handle, None
        if handle is not None:
            try:
                call(handle.close(), 5)
            except Exception:
                pass


class BlockCache:
    """Range reads through a small LRU cache of aligned blocks, so that reading records one by one (a
    screenful of views) costs a few round trips instead of one each. Only whole blocks are kept (a block
    cut short by the end of the file is read again next time, so appended bytes are seen). For a
    session's reads, not a follower's: a follower must see the file as it is now."""

    def __init__(self, read: Callable[[int, int], bytes], block: int = 128 * 1024, blocks: int = 32) -> None:
        self._read = read
        self.block = block
        self.blocks = blocks
        self._cache: dict[int, bytes] = {}
        self._lock = threading.Lock()  # the app reads a session from the UI thread and from workers

    def __call__(self, offset: int, size: int) -> bytes:
        if size <= 0:
            return b""
        if size > 2 * self.block:
            return self._read(offset, size)
        with self._lock:
            return self._cached(offset, size)

    def _cached(self, offset: int, size: int) -> bytes:
        first, last = offset // self.block, (offset + size - 1) // self.block
        parts = []
        for b in range(first, last + 1):
            data = self._cache.pop(b, None)
            if data is None:
                data = self._read(b * self.block, self.block)
            if len(data) == self.block:
                self._cache[b] = data  # most recently used last
                while len(self._cache) > self.blocks:
                    del self._cache[next(iter(self._cache))]
            parts.append(data)
            if len(data) < self.block:
                break
        joined = b"".join(parts)
        lo = offset - first * self.block
        return joined[lo : lo + size]


class SftpAccess:
    """A :class:`~sessionview.core.fileaccess.FileAccess` on one host (an open :class:`Connection`)."""

    def __init__(self, connection: Connection, timeout: float = 30.0) -> None:
        self.connection = connection
        self.timeout = timeout

    @property
    def sftp(self) -> Any:
        if self.connection.sftp is None:
            self.error = f"{self.connection.name}: not connected"
            raise RemoteError(self.error)
        return self.connection.sftp

    #: why the last request failed for want of the host (connection lost, no answer), or None
    error: str | None = None

    def _call(self, coro: Any, path: str) -> Any:
        try:
            result = call(_guard(coro, path), self.timeout)
        except TimeoutError:
            self.error = f"{self.connection.name}: no answer within {self.timeout:g} s"
            raise TimeoutError(110, self.error, path) from None
        except RemoteError as exc:
            self.error = str(exc)
            raise
        self.error = None
        return result

    def stat(self, path: str, opened: OpenFile | None = None) -> FileStat:
        if not isinstance(opened, SftpFile) or opened.handle is None:
            return _stat_of(self._call(self.sftp.stat(path), path), OTHER_FILE)
        return self._call(self._stat_against(path, opened), path)

    async def _stat_against(self, path: str, opened: SftpFile) -> FileStat:
        handle = opened.handle  # (once: another thread may close the file meanwhile, which sets it to None)
        if handle is None:
            return _stat_of(await self.sftp.stat(path), OTHER_FILE)
        try:
            at_path, of_handle = await asyncio.gather(self.sftp.stat(path), handle.stat())
            if _same(at_path, of_handle):
                return _stat_of(at_path, opened.ident)
            again = await handle.stat()
        except ValueError:  # asyncssh: "I/O operation on closed file" (closed after the handle was read above)
            return _stat_of(await self.sftp.stat(path), OTHER_FILE)
        if _same(again, of_handle):
            return _stat_of(at_path, OTHER_FILE)  # the opened file did not change: the path holds another one
        return _stat_of(at_path, opened.ident)  # the opened file is changing; look again next time

    def open(self, path: str) -> SftpFile:
        return self._call(self._open(path), path)

    async def _open(self, path: str) -> SftpFile:
        # stat first: opening a FIFO would block the server's sftp process
        attrs = await self.sftp.stat(path)
        if not stat_mod.S_ISREG(attrs.permissions or 0):
            raise NotRegularFile(f"{path}: not a regular file ({describe_mode(attrs.permissions or 0)})")
        handle = await self.sftp.open(path, "rb")
        attrs = await handle.stat()
        if not stat_mod.S_ISREG(attrs.permissions or 0):
            await handle.close()
            raise NotRegularFile(f"{path}: not a regular file ({describe_mode(attrs.permissions or 0)})")
        return SftpFile(self, handle, path)

    def realpath(self, path: str) -> str:
        return str(self._call(self.sftp.realpath(path or "."), path))

    def listdir(self, path: str) -> list[tuple[str, FileStat]]:
        """``(name, lstat)`` for each entry of a directory (one request batch, no per-file stat)."""
        names = self._call(self.sftp.readdir(path), path)
        return [(n.filename, _stat_of(n.attrs, OTHER_FILE)) for n in names if n.filename not in (".", "..")]

    def walk_files(self, root: str, skip: frozenset[str], wanted: Callable[[str], bool]) -> Iterator[tuple[str, FileStat]]:
        """Regular files under ``root`` whose name is ``wanted`` (links to files are followed, links to
        directories are not), as ``(path, stat)``."""
        stack = [root.rstrip("/") or "/"]
        while stack:
            d = stack.pop()
            try:
                entries = self.listdir(d)
            except (FileNotFoundError, PermissionError, NotADirectoryError):
                continue
            for name, st in entries:
                full = f"{d.rstrip('/')}/{name}"
                mode = st.st_mode
                if stat_mod.S_ISDIR(mode):
                    if name not in skip:
                        stack.append(full)
                    continue
                if not wanted(name):
                    continue
                if stat_mod.S_ISLNK(mode):
                    try:
                        st = self.stat(full)
                    except OSError:
                        continue
                if stat_mod.S_ISREG(st.st_mode):
                    yield full, st


async def _guard(coro: Any, path: str) -> Any:
    try:
        return await coro
    except NotRegularFile:
        raise
    except (asyncssh.Error, OSError) as exc:
        raise _os_error(exc, path) from None
