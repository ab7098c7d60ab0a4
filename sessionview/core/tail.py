"""Follow a session file that is being written (opening a big one end first: :mod:`sessionview.core.tail_open`).

A :class:`Follower` watches one path. Each :meth:`Follower.poll` is one cheap ``os.stat``; only when the
size, mtime or inode changed does it read, and then only the new bytes. It keeps:

* the offset just past the last complete line it reported (``offset``),
* the file's identity (device, inode), to notice a new file at the same path,
* the bytes of the reported prefix while it is small (``verify_limit``), otherwise its first and last
  ``window`` bytes, to tell an append from a rewrite,
* the pending partial last line (its size and the first bytes), which is reported as :class:`Pending`
  and never as a line until its newline arrives.

Brute rewrites its whole session at the end of every turn (truncate, then write). A rewrite whose result
starts with what was already reported is an append: only the new lines are reported. While the file is
shorter than what was reported but still a prefix of it, the follower waits up to ``grace`` seconds for the
writer to finish before it gives up and reports :class:`Truncated`. Content that is not a prefix of what was
reported is :class:`Truncated` at once when it ends with a newline; while it ends inside a line the writer is
probably still at it, and the follower waits up to ``grace`` for that too.

A new file at the path (a temp file renamed over it, as sessionview's own saves do) whose content starts
with exactly the reported bytes is an append as well: the follower reports :class:`Renamed`, follows the new
file from the same offset and reports its new lines as :class:`Appended` (``rewritten``). The check reads
the new file's first ``offset`` bytes once and compares them (their hash, kept up to date as lines are
reported, beyond ``verify_limit``). Any other new file is :class:`Replaced`.

A rewrite (or a new file) that brings Brute compaction markers that were not in the reported content
(a line ``{"role":...,"content":"[compacted:NAME]...``, see :func:`sessionview.core.formats.brute_message.compaction_marker`)
is :class:`Compacted` instead of :class:`Truncated` or :class:`Replaced`: the agent compacted its history.

After a truncation, a compaction or a replacement the follower starts again at offset 0 of the current file
and reports its lines as :class:`Appended`.

This module is pure: stdlib only, no threads. The caller decides how often to poll.
"""

from __future__ import annotations

import os
import re
import stat
import time
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from sessionview.core.doc.digest import new_hash
from sessionview.core.doc.document import open_regular, preader
from sessionview.core.fileaccess import FileAccess, OpenFile
from sessionview.core.tail_events import (  # the events are part of this module's API
    Appended,
    Compacted,
    Deleted,
    Event,
    Pending,
    Renamed,
    Replaced,
    Truncated,
)

if TYPE_CHECKING:
    from sessionview.core.doc.digest import Hasher

DEFAULT_VERIFY_LIMIT = 1 << 20  # keep the whole reported prefix up to this size
DEFAULT_WINDOW = 64 * 1024  # beyond that, compare its first and last bytes
DEFAULT_GRACE = 0.5  # seconds a shrunken file may stay a prefix before it counts as truncated
DEFAULT_MAX_READ = 8 << 20  # bytes read per poll at most, so a huge append never blocks a poll long
DATA_LIMIT = 4 << 20  # Appended.data is kept only up to this size
PREVIEW = 4096
RESCAN_LIMIT = 1 << 20  # a pending line up to this size is searched again on every change
SCAN_LIMIT = 64 << 20  # a prefix given at start up to this size is hashed, counted and searched for markers
CHUNK = 1 << 20

# A Brute compaction marker line: Brute writes role first, then content, compact (see core.brute.MARK).
MARKER_NEEDLE = b'"content":"[compacted:'
MARKER_LINE = re.compile(rb'\{"role":"[^"\\]{0,32}","content":"\[compacted:([a-z_]+)\]')
MARKER_REACH = 64  # the needle starts at most this many bytes into a marker line


def line_digest(line: bytes) -> bytes:
    import hashlib  # (not at import: OpenSSL's, ~4 ms, not before the first screen)

    return hashlib.blake2b(line, digest_size=16).digest()


# -- the follower -------------------------------------------------------------------------------
class Follower:
    """Follow one path. See the module docstring.

    ``fd`` (optional) is a descriptor of the file already read up to ``offset``; the follower takes it
    over and closes it in :meth:`close`. Without it the path is opened now. ``offset`` must be just past a
    newline (or 0). A prefix up to ``SCAN_LIMIT`` is read once now (hashed, its lines counted, searched for
    compaction markers); beyond that its line count and markers are unknown, and any marker a rewrite
    brings counts as new.

    ``access`` (optional) reads the file through a :class:`~sessionview.core.fileaccess.FileAccess` (a file
    on another host) instead of local ``os`` calls; ``fd`` is then not used and :meth:`fileno` is -1. With
    ``file`` (an OpenFile of ``access``, already read up to ``offset``, e.g. the one a transcript reads), the
    follower follows that very file: it shares it and never closes it (a new file at the path is its own).
    """

    _shown: bytearray | None  # the reported prefix while it is small; None: only its head and tail are kept
    _hash: "Hasher | None"  # of [0, offset); None: not known (a huge prefix at start)
    _lines: int | None  # complete lines in [0, offset)
    _markers: dict[bytes, str] | None  # digest of each reported marker line: its marker

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fd: int | None = None,
        offset: int = 0,
        verify_limit: int = DEFAULT_VERIFY_LIMIT,
        window: int = DEFAULT_WINDOW,
        grace: float = DEFAULT_GRACE,
        max_read: int = DEFAULT_MAX_READ,
        clock: Callable[[], float] = time.monotonic,
        access: FileAccess | None = None,
        file: OpenFile | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.verify_limit = verify_limit
        self.window = window
        self.grace = grace
        self.max_read = max(1, max_read)
        self.clock = clock
        self.deleted = False
        self._access = access
        self._file: OpenFile | None = None
        self._shared = file is not None  # ``_file`` is the caller's: not closed here
        if access is None:
            self._fd = open_regular(self.path) if fd is None else fd
            st = os.fstat(self._fd)
            self._read = preader(self._fd)
        else:
            self._fd = -1
            self._file = file if file is not None else access.open(self.path)
            st = self._file.stat()  # type: ignore[assignment]
            self._read = self._file.read
        self.ident = (st.st_dev, st.st_ino)
        self._reset(offset)
        if offset:
            prefix_len = min(offset, verify_limit)
            if offset <= verify_limit:
                self._shown = bytearray(self._read(0, offset))
            else:
                self._shown = None
                self._head = self._read(0, min(window, prefix_len))
                self._tail = self._read(max(0, offset - window), min(window, offset))
            if offset <= SCAN_LIMIT:
                shown = self._pieces(0, offset) if self._shown is None else [(0, bytes(self._shown))]
                self._lines = self._learn(shown)
            else:
                self._hash = self._lines = self._markers = None
        # Sizes as of the last full look at the file; a first poll reads what is past ``offset``.
        self._size = offset
        self._mtime = -1

    # -- state ---------------------------------------------------------------------------------
    def _reset(self, offset: int = 0) -> None:
        self.offset = offset  # just past the last reported complete line
        self._scanned = offset  # bytes searched for a newline
        self._shown = bytearray()
        self._head = b""
        self._tail = b""
        self._hash = new_hash()
        self._lines = 0
        self._markers = {}
        self._pending_size = 0
        self._shrunk_since: float | None = None
        self._more = False  # a poll stopped at max_read: there is more to read
        self._size = 0
        self._mtime = -1

    @property
    def pending(self) -> int:
        """Size of the pending partial last line."""
        return self._pending_size

    @property
    def settled(self) -> bool:
        """Whether only a change to the file can bring news: no shrunken file is being waited out and the
        last poll read everything (else poll again soon, changed or not)."""
        return self._shrunk_since is None and not self._more

    @property
    def lines(self) -> int | None:
        """Complete lines reported (None: unknown, the follower started at a huge offset)."""
        return self._lines

    def fileno(self) -> int:
        return self._fd

    def read(self, offset: int, size: int) -> bytes:
        """Read from the followed file (the open descriptor: still works after a deletion)."""
        return self._read(offset, size)

    def close(self) -> None:
        if self._file is not None:
            if not self._shared:
                self._file.close()
            self._file = None
            self._shared = False
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1

    def __enter__(self) -> "Follower":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- polling -------------------------------------------------------------------------------
    def poll(self) -> list[Event]:
        """Look at the file once and return what happened since the last poll (often nothing)."""
        try:
            pst = os.stat(self.path) if self._access is None else self._access.stat(self.path, self._file)
        except (FileNotFoundError, NotADirectoryError):
            if not self.deleted:
                self.deleted = True
                return [Deleted()]
            return []
        except OSError:
            return []  # e.g. permission flapping: look again next time
        ident = (pst.st_dev, pst.st_ino)
        if ident != self.ident or not stat.S_ISREG(pst.st_mode):
            if not stat.S_ISREG(pst.st_mode):
                if not self.deleted:
                    self.deleted = True
                    return [Deleted()]
                return []
            return self._switch("deleted and created again" if self.deleted else "a new file at the same path")
        self.deleted = False
        size, mtime = pst.st_size, pst.st_mtime_ns
        if size == self._size and mtime == self._mtime and self._shrunk_since is None and not self._more:
            return []
        return self._changed(size, mtime)

    def _switch(self, reason: str) -> list[Event]:
        opened: OpenFile | None = None
        try:
            if self._access is None:
                fd = open_regular(self.path)
                st = os.fstat(fd)
                read = preader(fd)
            else:
                fd, opened = -1, self._access.open(self.path)
                read = opened.read
                st = opened.stat()  # type: ignore[assignment]
        except OSError:
            if opened is not None:
                opened.close()
            return []  # gone again or not readable yet: try next poll
        keeps = not self.deleted and st.st_size >= self.offset and self._starts_with_shown(read)
        self.close()
        self._fd = fd
        self._file = opened
        self.ident = (st.st_dev, st.st_ino)
        self._read = read
        self.deleted = False
        if not keeps:
            return self._rewritten(st.st_size, st.st_mtime_ns, "", replaced=reason)
        # A temp file renamed over the path, starting with what was reported: an append.
        self._shrunk_since = None
        self._scanned = self.offset  # the pending line is the new file's: search it again
        if self._pending_size:
            self._pending_size = -1  # say what the new file's pending line is
        return [Renamed(self.ident), *self._read_new(st.st_size, st.st_mtime_ns, True)]

    def _changed(self, size: int, mtime: int) -> list[Event]:
        now = self.clock()
        if size < self.offset:
            if self._is_prefix(size):
                if self._shrunk_since is None:
                    self._shrunk_since = now
                if now - self._shrunk_since < self.grace:
                    # Probably a rewrite under way (Brute: truncate, then write). Wait for it.
                    self._size, self._mtime = size, mtime
                    return []
                return self._rewritten(size, mtime, "shrank")
            return self._diverged(size, mtime, now)
        if not self._prefix_intact():
            return self._diverged(size, mtime, now)
        rewritten = self._shrunk_since is not None
        self._shrunk_since = None
        if rewritten or size < self._scanned or self._scanned - self.offset <= RESCAN_LIMIT:
            # The pending partial line may have been rewritten in place: search it again for a
            # newline (unless it is huge and the file was only appended to).
            self._scanned = self.offset
        return self._read_new(size, mtime, rewritten)

    def _diverged(self, size: int, mtime: int, now: float) -> list[Event]:
        """Other content than was reported. While it ends inside a line, the writer is probably not
        done (and a compaction marker may be in that line): wait up to ``grace`` for the rest."""
        if size and self._read(size - 1, 1) != b"\n":
            if self._shrunk_since is None:
                self._shrunk_since = now
            if now - self._shrunk_since < self.grace:
                self._size, self._mtime = size, mtime
                return []
        return self._rewritten(size, mtime, "rewritten")

    def _rewritten(self, size: int, mtime: int, reason: str, replaced: str | None = None) -> list[Event]:
        """Start again at offset 0 of the current file; say whether it was truncated, compacted or replaced."""
        before, old = self._lines, self._markers
        self._reset(0)
        events = self._read_new(size, mtime)
        new = [m for key, m in (self._markers or {}).items() if old is None or key not in old]
        first: Event
        if new:
            after = None if self._more else self._lines
            first = Compacted(size, tuple(dict.fromkeys(new)), before, after, replaced is not None)
        elif replaced is not None:
            first = Replaced(replaced)
        else:
            first = Truncated(size, reason)
        return [first, *events]

    def _is_prefix(self, size: int) -> bool:
        """Whether the file's first ``size`` bytes (size < offset) are what was reported."""
        if size == 0:
            return True
        if self._shown is not None:
            return self._read(0, size) == bytes(self._shown[:size])
        n = min(size, len(self._head))
        return self._read(0, n) == self._head[:n]

    def _prefix_intact(self) -> bool:
        """Whether the reported prefix ``[0, offset)`` is unchanged (file size >= offset)."""
        if self.offset == 0:
            return True
        if self._shown is not None:
            return self._read(0, self.offset) == self._shown
        if self._read(0, len(self._head)) != self._head:
            return False
        return self._read(self.offset - len(self._tail), len(self._tail)) == self._tail

    def _starts_with_shown(self, read: Callable[[int, int], bytes]) -> bool:
        """Whether ``read`` (another file, at least ``offset`` bytes long) starts with the reported bytes.

        Reads its first ``offset`` bytes at most once: compared with the kept prefix while it is small,
        otherwise its windows first, then its hash."""
        n = self.offset
        if n == 0:
            return True
        if self._shown is not None:
            return read(0, n) == self._shown
        if read(0, len(self._head)) != self._head or read(n - len(self._tail), len(self._tail)) != self._tail:
            return False
        if self._hash is not None:
            h = new_hash()
            for pos in range(0, n, CHUNK):
                h.update(read(pos, min(CHUNK, n - pos)))
            return h.digest() == self._hash.digest()
        # a huge prefix given at start, never hashed: compare with the old file, which still holds it
        for pos in range(0, n, CHUNK):
            size = min(CHUNK, n - pos)
            if read(pos, size) != self._read(pos, size):
                return False
        return True

    def _read_new(self, size: int, mtime: int, rewritten: bool = False) -> list[Event]:
        events: list[Event] = []
        pos = self._scanned
        limit = min(size, pos + self.max_read)
        chunk = self._read(pos, limit - pos) if limit > pos else b""
        if len(chunk) < limit - pos:
            limit = pos + len(chunk)  # the file shrank under us: the next poll sorts it out
            size = limit
        starts: list[int] = []
        line_start = self.offset
        find = chunk.find
        i = find(b"\n")
        while i != -1:
            starts.append(line_start)
            line_start = pos + i + 1
            i = find(b"\n", i + 1)
        old_offset = self.offset
        self._scanned = limit
        self._more = limit < size
        self._size, self._mtime = size, mtime
        if starts:
            new_offset = line_start
            pieces: Iterable[tuple[int, bytes]] = self._pieces(old_offset, new_offset, pos, chunk)
            data: bytes | None = None
            if new_offset - old_offset <= DATA_LIMIT:
                pieces = list(pieces)
                data = b"".join(p for _, p in pieces)
            self._learn(pieces)  # a big one streams: a pending line can be huge
            self._remember(old_offset, new_offset, data)
            if self._lines is not None:
                self._lines += len(starts)
            self.offset = new_offset
            events.append(Appended(tuple(starts), new_offset, data, rewritten))
        if not self._more:
            pending = size - self.offset
            if pending != self._pending_size or (pending and starts):
                self._pending_size = pending
                preview = self._read(self.offset, min(pending, PREVIEW)) if pending else b""
                events.append(Pending(self.offset, pending, preview))
        return events

    def _pieces(self, old: int, new: int, pos: int | None = None, chunk: bytes = b"") -> Iterator[tuple[int, bytes]]:
        """The bytes ``[old, new)`` in contiguous pieces: read from the file before ``pos``, then from
        ``chunk`` (which holds the file from ``pos`` on)."""
        if pos is None:
            pos = new
        at = old
        while at < min(pos, new):
            size = min(CHUNK, min(pos, new) - at)
            yield at, self._read(at, size)
            at += size
        if new > pos:
            yield max(old, pos), chunk[max(old, pos) - pos : new - pos]

    def _learn(self, pieces: Iterable[tuple[int, bytes]]) -> int:
        """Feed newly reported bytes (complete lines, contiguous pieces, read once) to the hash and the
        marker list. Returns how many newlines they hold."""
        newlines = 0
        carry = b""
        keep = len(MARKER_NEEDLE) - 1
        for at, piece in pieces:
            if self._hash is not None:
                self._hash.update(piece)
            newlines += piece.count(b"\n")
            if self._markers is None:
                continue
            buf = carry + piece
            base = at - len(carry)
            i = buf.find(MARKER_NEEDLE)
            while i != -1:
                self._marker_at(base + i)
                i = buf.find(MARKER_NEEDLE, i + 1)
            carry = buf[-keep:]
        return newlines

    def _marker_at(self, p: int) -> None:
        """Remember the marker line the needle at ``p`` is in, if it is one."""
        markers = self._markers
        if markers is None:  # markers are not tracked (a huge prefix at start)
            return
        lo = max(0, p - MARKER_REACH)
        before = self._read(lo, p - lo)
        nl = before.rfind(b"\n")
        if nl == -1 and lo > 0:
            return  # too far into its line to be a marker
        start = lo + nl + 1
        m = MARKER_LINE.match(self._read(start, p - start + MARKER_REACH))
        if m is None or start + m.group(0).rfind(MARKER_NEEDLE) != p:
            return
        parts, at = [], start
        while True:
            piece = self._read(at, 64 * 1024)
            if not piece:
                break
            j = piece.find(b"\n")
            if j != -1:
                parts.append(piece[: j + 1])
                break
            parts.append(piece)
            at += len(piece)
        markers[line_digest(b"".join(parts))] = m.group(1).decode("ascii")

    def _remember(self, old: int, new: int, data: bytes | None) -> None:
        """Extend the verification data with the newly reported bytes ``[old, new)``."""
        if self._shown is not None and new <= self.verify_limit:
            self._shown += data if data is not None else self._read(old, new - old)
            return
        if self._shown is not None:
            self._head = bytes(self._shown[: self.window])
            self._shown = None
        if len(self._head) < self.window:
            self._head = self._read(0, min(self.window, new))
        self._tail = self._read(max(0, new - self.window), min(self.window, new))


def follower_for(
    path: str, *, fd: int | None = None, offset: int = 0, access: FileAccess | None = None, file: OpenFile | None = None
) -> Follower:
    """The follower of ``path``: local (taking over ``fd``), or through ``access`` (sharing ``file``, the open
    file read up to ``offset``, when given). An access that knows how its files are best followed (over
    SFTP: fewer re-reads, no raise when the host stops answering) gives its own (``follower(path, offset,
    file)``)."""
    if access is None:
        return Follower(path, fd=fd, offset=offset)
    if fd is not None:
        os.close(fd)
    make = getattr(access, "follower", None)
    if make is not None:
        return make(path, offset, file)
    return Follower(path, offset=offset, access=access, file=file)
