"""Load stamps: what was loaded, enough to tell later whether the file on disk is still that file.

A file's hash (:mod:`~sessionview.core.doc.digest`) costs about 0.1-0.2 s per GiB, read and all: not much,
but on the path of an edit of a big file. A file at rest (its ctime settled, on a file system that keeps ctime:
:mod:`.proof`) may be loaded without it (``digest=False``, see :func:`digest_deferrable`): its stamp then
hashes it in the background (:class:`Digest`: a thread, or a forked process) while the save
copies and syncs, and the hash counts only if the file's stat is still the one taken before it was loaded
once all of it was read. Else the stamp's :attr:`LoadStamp.hexdigest` raises
:class:`~sessionview.core.errors.Conflict` (the caller loads it again).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading
import time
import weakref
from typing import TYPE_CHECKING, Union

from sessionview.core.doc.digest import is_hex, new_hash
from sessionview.core.doc.forkhalf import Child, start
from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.errors import Conflict
from sessionview.core.store.fsio import O_CLOEXEC, O_NONBLOCK, read_range, stat_key
from sessionview.core.store.proof import TRUSTED, fs_type, settled, trusts_ctime
from sessionview.core.values import Frozen

if TYPE_CHECKING:
    from sessionview.core.doc.digest import Hasher
    from sessionview.core.doc.document import Document, Source

__all__ = ["LoadStamp", "Digest", "adopt", "digest_deferrable", "deferred", "stamp_document", "stamp_bytes", "stamp_file"]

DIGEST_CHUNK = 4 << 20  # bytes hashed per read in the background (few hand-offs of the GIL)
#: a smaller file is hashed while it is loaded, as ever: it costs little, and a line appended right after
#: the load is then rebased (a :class:`Digest` still being taken cannot prove the loaded bytes then)
DEFER_MIN = 16 << 20
_PARENT_CHECK = 64 << 20  # bytes a forked digest reads between two looks at whether its parent is still there
CHILD_CHUNK = 128 << 10  # bytes a forked digest reads at a time into one reused buffer (it stays in the CPU's cache: as cheap as a mapping)


class Digest:
    """The hash (:mod:`~sessionview.core.doc.digest`) of the first ``size`` bytes of a file, hashed in a
    background thread through a descriptor of its own; it counts only while the file's stat stays ``st`` (settled, on a file system that keeps ctime).

    ``Digest(path, st, size)``, after a load with the stat ``st``: ``path`` is opened again (the same inode,
    or nothing). ``Digest(path)``, before the load: the stat is taken now and the load joins it when it read
    the file with that same stat (:func:`adopt`). :meth:`result` gives the hash when the stat was still ``st``
    once the last byte was read (so those were the bytes loaded: :mod:`.proof`), and raises :class:`Conflict`
    otherwise.

    ``apart``: hashed in a forked process instead (where this one has a single thread), which sends back its
    verdict, the same check of the same stat: this process keeps a single thread (the load may then scan the
    file on two cores) and its GIL to itself."""

    def __init__(self, path: str, st: os.stat_result | None = None, size: int | None = None, *, apart: bool = False) -> None:
        self.path = path
        self._value: str | None = None
        self._why = "it could not be hashed"
        self._child: Child | None = None  # the process hashing it
        self._lock = threading.Lock()
        self._apart_child = False  # this is the child of ``apart``: small reads into one buffer, and a parent to outlive
        fd = -1
        if st is None:  # before the load: the reference stat is the one taken now
            fd = os.open(path, os.O_RDONLY | O_CLOEXEC | O_NONBLOCK)  # a symlink is followed: the stat proves the inode
            try:
                st = os.fstat(fd)
            except BaseException:
                os.close(fd)
                raise
        self.st = st
        self._size = st.st_size if size is None else size
        self._thread: threading.Thread | None = None
        if apart and _single_threaded():
            try:
                self._child = start(lambda: self._verdict(fd))
            except OSError:  # no process to be had: a thread, as without apart
                pass
            else:
                if fd >= 0:
                    os.close(fd)  # the child's copy hashes
                self._reap = weakref.finalize(self, self._child.stop)
                return
        self._thread = threading.Thread(target=self._run, args=(fd,), name="sv-stamp-hash", daemon=True)
        try:
            self._thread.start()
        except BaseException:  # no thread to be had: the caller hashes while loading
            if fd >= 0:
                os.close(fd)
            raise

    def covers(self, st: os.stat_result, size: int) -> bool:
        """Whether this hashes the file loaded with the stat ``st``, ``size`` bytes."""
        return stat_key(self.st) == stat_key(st) and self._size == size

    def _run(self, fd: int) -> None:
        if fd < 0:
            try:
                fd = os.open(self.path, os.O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            except OSError as exc:
                self._why = f"it could not be opened again: {exc.strerror or exc}"
                return
        try:
            self._hash(fd)
        except OSError as exc:
            self._why = f"it could not be read again: {exc.strerror or exc}"
        finally:
            os.close(fd)

    def _hash(self, fd: int) -> None:
        changed = "it changed after it was loaded"
        if stat_key(os.fstat(fd)) != stat_key(self.st):
            self._why = changed
            return
        h = new_hash()
        got = 0
        if self._apart_child:
            got = _hash_reused(fd, self._size, h)
        while not self._apart_child and got < self._size:
            chunk = os.pread(fd, min(DIGEST_CHUNK, self._size - got), got)
            if not chunk:
                break
            h.update(chunk)
            got += len(chunk)
        now = os.fstat(fd)
        if got != self._size or stat_key(now) != stat_key(self.st):
            self._why = changed
        elif not trusts_ctime(fd, now):
            self._why = "it is mapped writable by a process, so its content cannot be proven unchanged"
        else:
            self._value = h.hexdigest()

    def _verdict(self, fd: int) -> bytes:
        """In the child of ``apart``: hash (:meth:`_run`), and say ``1`` and the hex digest, or ``0`` and why not."""
        self._apart_child = True
        self._run(fd)
        return ("1" + self._value if self._value is not None else "0" + self._why).encode()

    def _collect(self) -> None:
        """The child's verdict (once); a child that did not end well proves nothing."""
        assert self._child is not None
        child, self._child = self._child, None
        self._reap.detach()
        data, ok = child.collect()  # ok None: reaped elsewhere (SIGCHLD ignored): only a whole verdict counts
        got = data.decode("ascii", "replace")
        if ok is False:
            self._why = "the process hashing it failed"
        elif got[:1] == "1" and is_hex(got[1:]):
            self._value = got[1:]
        elif got[:1] == "0":
            self._why = got[1:]

    def result(self) -> str:
        with self._lock:
            if self._child is not None:
                self._collect()
        if self._thread is not None:
            self._thread.join()
        if self._value is None:
            raise Conflict(f"conflict: {self.path} changed on disk while it was being loaded ({self._why})", self.path)
        return self._value


def _hash_reused(fd: int, size: int, h: "Hasher") -> int:
    """Feed ``h`` the first ``size`` bytes of ``fd``, read :data:`CHILD_CHUNK` at a time into one reused buffer
    (a small buffer stays in the CPU's cache, so this costs no more than hashing through a mapping, and a file
    truncated meanwhile is a short read, not a SIGBUS). Stops, short, when the parent has gone (nobody waits
    for the verdict). Returns how many bytes were hashed."""
    parent = os.getppid()
    buf = bytearray(CHILD_CHUNK)
    view = memoryview(buf)
    got = 0
    try:
        while got < size:
            if got % _PARENT_CHECK == 0 and os.getppid() != parent:
                break
            n = os.preadv(fd, [view[: min(CHILD_CHUNK, size - got)]], got)
            if n <= 0:
                break
            h.update(view[:n])
            got += n
    finally:
        view.release()
    return got


def _single_threaded() -> bool:
    """Whether this process may fork a child to hash: it has a single thread (a fork copies no other thread,
    and a lock one of them held would stay held in the child)."""
    return hasattr(os, "fork") and sys.platform.startswith("linux") and threading.active_count() == 1


_early: "weakref.WeakKeyDictionary[Source, Digest]" = weakref.WeakKeyDictionary()


def adopt(doc: Document, digest: Digest) -> bool:
    """Let ``doc``'s stamp use ``digest``, started before ``doc`` was loaded, when it hashes the very file
    loaded (the same stat, the same size) and the load may defer its digest (:func:`deferred`)."""
    st = doc.loaded_stat
    if st is None or not deferred(doc) or not digest.covers(st, doc.source.size):
        return False
    _early[doc.source] = digest
    return True


def digest_deferrable(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is at rest, so it may be loaded without its hash (``Document.load(digest=False)``)
    and stamped with a :class:`Digest`: a regular file of :data:`DEFER_MIN` bytes or more whose ctime is
    settled, on a file system that keeps ctime. A loader checks the loaded document again (:func:`deferred`) and loads it with the digest if not."""
    try:
        fd = os.open(path, os.O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    except OSError:
        return False
    try:
        before = time.time_ns()
        st = os.fstat(fd)
        return stat.S_ISREG(st.st_mode) and st.st_size >= DEFER_MIN and settled(st, before) and fs_type(fd) in TRUSTED
    except OSError:
        return False
    finally:
        os.close(fd)


def deferred(doc: Document) -> bool:
    """Whether ``doc``, loaded without its digest, gets a :class:`Digest`: it was settled when it was loaded."""
    st = doc.loaded_stat
    before = getattr(doc, "loaded_at_ns", None)
    return (
        doc.path is not None
        and doc.source.hexdigest is None
        and st is not None
        and before is not None
        and doc.source.size == st.st_size
        and stat.S_ISREG(st.st_mode)
        and settled(st, before)
    )


class LoadStamp(Frozen):
    """What was loaded: enough to tell later whether the file on disk is still that file."""

    __slots__ = ("path", "real_path", "dev", "ino", "size", "mtime_ns", "digest", "ctime_ns", "settled")
    _uncompared = ("ctime_ns", "settled")
    path: str  # as given
    real_path: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    #: hex digest of the ``size`` loaded bytes, or the :class:`Digest` taking it (read :attr:`hexdigest`)
    digest: Union[str, Digest]
    #: the ctime of the stat taken before the bytes were read, and whether it was settled then
    #: (:func:`sessionview.core.store.proof.settled`): a save may then prove the file unchanged by its stat alone
    ctime_ns: int
    settled: bool

    def __init__(self, path: str, real_path: str, dev: int, ino: int, size: int, mtime_ns: int, digest: Union[str, Digest],
                 ctime_ns: int = 0, settled: bool = False) -> None:
        for name, value in zip(self.__slots__, (path, real_path, dev, ino, size, mtime_ns, digest, ctime_ns, settled), strict=True):
            object.__setattr__(self, name, value)

    @property
    def hexdigest(self) -> str:
        """Hex digest of the ``size`` loaded bytes (waits for a :class:`Digest`; :class:`Conflict` if it failed)."""
        d = self.digest
        return d if isinstance(d, str) else d.result()

    @property
    def key(self) -> tuple[int, int, int, int, int]:
        """What :func:`~sessionview.core.store.fsio.stat_key` gave for the file when it was loaded."""
        return (self.dev, self.ino, self.size, self.mtime_ns, self.ctime_ns)


def stamp_document(doc: Document) -> LoadStamp:
    """The stamp of a loaded :class:`Document` (hashes its source incrementally, never whole).

    A document loaded without its digest while it was at rest (:func:`deferred`) gets a :class:`Digest`,
    hashed in the background and proven by the stat. Otherwise take it right after loading: unless the
    document computed its digest while loading, the hash is read now through its open file descriptor, so a
    file rewritten in place since then would be stamped as it is now, not as it was loaded.
    """
    if doc.path is None:
        raise ValueError("the document has no path")
    st = doc.loaded_stat  # the stat taken at load, when the document was loaded from a file
    before = getattr(doc, "loaded_at_ns", None)  # the clock read right before that stat
    if st is None:
        st, before = os.stat(doc.path), None
    digest: str | Digest
    try:
        early = _early.pop(doc.source, None)
        if early is not None and early.covers(st, doc.source.size):
            digest = early
        elif deferred(doc):
            try:
                digest = Digest(doc.path, st, doc.source.size)
            except RuntimeError:  # no thread to be had: hashed now, as a load that could not defer it is
                digest = doc.source_digest()
        else:
            digest = doc.source_digest()
    except SourceChanged as exc:
        raise Conflict(f"conflict: {doc.path} changed on disk while it was being loaded ({exc})", doc.path) from exc
    return LoadStamp(
        doc.path,
        os.path.realpath(doc.path),
        st.st_dev,
        st.st_ino,
        doc.source.size,
        st.st_mtime_ns,
        digest,
        st.st_ctime_ns,
        before is not None and doc.source.size == st.st_size and settled(st, before),
    )


def stamp_bytes(path: str | os.PathLike[str], data: bytes, st: os.stat_result | None = None) -> LoadStamp:
    """The stamp of a whole-file format loaded as ``data`` from ``path`` (``st``: its stat, if known)."""
    p = os.fspath(path)
    if st is None:
        st = os.stat(p)
    return LoadStamp(p, os.path.realpath(p), st.st_dev, st.st_ino, len(data), st.st_mtime_ns, new_hash(data).hexdigest())


def stamp_file(path: str | os.PathLike[str]) -> LoadStamp:
    """The stamp of the file as it is on disk now, hashed in chunks."""
    p = os.fspath(path)
    fd = os.open(p, os.O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    try:
        before = time.time_ns()
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", p)
        h = new_hash()
        size = 0
        for chunk in read_range(fd, 0, None):
            h.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return LoadStamp(
        p,
        os.path.realpath(p),
        st.st_dev,
        st.st_ino,
        size,
        st.st_mtime_ns,
        h.hexdigest(),
        st.st_ctime_ns,
        size == st.st_size and settled(st, before),
    )
