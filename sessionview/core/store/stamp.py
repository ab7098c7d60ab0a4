"""Load stamps: what was loaded, enough to tell later whether the file on disk is still that file."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.errors import Conflict
from sessionview.core.store.fsio import O_CLOEXEC, O_NONBLOCK, read_range
from sessionview.core.store.proof import settled

if TYPE_CHECKING:
    from sessionview.core.doc.document import Document

__all__ = ["LoadStamp", "stamp_document", "stamp_bytes", "stamp_file"]


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
    #: the ctime of the stat taken before the bytes were read, and whether it was settled then
    #: (:func:`sessionview.core.store.proof.settled`): a save may then prove the file unchanged by its stat alone
    ctime_ns: int = field(default=0, compare=False)
    settled: bool = field(default=False, compare=False)

    @property
    def key(self) -> tuple[int, int, int, int, int]:
        """What :func:`~sessionview.core.store.fsio.stat_key` gave for the file when it was loaded."""
        return (self.dev, self.ino, self.size, self.mtime_ns, self.ctime_ns)


def stamp_document(doc: Document) -> LoadStamp:
    """The stamp of a loaded :class:`Document` (hashes its source incrementally, never whole).

    Take it right after loading: unless the document computed its digest while loading, the hash is read
    now through its open file descriptor, so a file rewritten in place since then would be stamped as it
    is now, not as it was loaded.
    """
    if doc.path is None:
        raise ValueError("the document has no path")
    st = doc.loaded_stat  # the stat taken at load, when the document was loaded from a file
    before = getattr(doc, "loaded_at_ns", None)  # the clock read right before that stat
    if st is None:
        st, before = os.stat(doc.path), None
    try:
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
    return LoadStamp(
        p, os.path.realpath(p), st.st_dev, st.st_ino, len(data), st.st_mtime_ns, hashlib.sha256(data).hexdigest()
    )


def stamp_file(path: str | os.PathLike[str]) -> LoadStamp:
    """The stamp of the file as it is on disk now, hashed in chunks."""
    p = os.fspath(path)
    fd = os.open(p, os.O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    try:
        before = time.time_ns()
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", p)
        h = hashlib.sha256()
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
