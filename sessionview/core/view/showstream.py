"""What ``sessionview show`` prints for a big JSONL file read once (:class:`~sessionview.core.streamview.StreamedSession`),
as blocks of UTF-8 bytes: each record as ``view_text`` (or ``view_json``) renders its view, the first two
records in blocks of their own (so that they can be printed at once), the rest in blocks of about
:data:`BLOCK` bytes.

Brute records are rendered from their bytes (:mod:`sessionview.core.view.fastrender`) wherever that renderer is
sure, through the view otherwise; other formats through their views. A Brute file of :data:`PARALLEL_MIN_BYTES`
or more is rendered on two cores: a forked child renders the records from the first line after
:data:`SPLIT` of the bytes on, with a pairing of its own, into a file of its own (a memfd where the memory
available allows, else an unlinked temporary file), while this process renders and yields the first part. Then
this process relays the child's blocks in order (:meth:`ShowStream.pieces` gives them as spans of that file, for
``show`` to ``sendfile`` to its output): each block comes with the call ids its links depend on and a log of the
calls and results it saw; a block that shows a link to a call id of the first part (a result of a call made
there, an id used again) could not be known by the child, so this process renders that block again itself,
after replaying the logs of the blocks before it onto its pairing (only then: a log is read from the child's
file only when something is rendered here after it). The child reads the file through the same descriptor
with ``pread`` and tells of each block it wrote through a pipe; once done, it frees the pages of each block
this process says (through a second pipe) it has printed (:mod:`~sessionview.core.view.showpipe`). Should it fail, this process renders the rest
itself from the end of the child's last block; should this process stop early (a closed pipe: ``show |
head``), :meth:`ShowStream.close` ends the child.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import Any, Generator, Iterator

from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.doc.model import iter_merged
from sessionview.core.streamview import LineReader, StreamedSession
from sessionview.core.view import render, showpipe
from sessionview.core.view.fastrender import BruteRender, Event, replay

__all__ = ["BLOCK", "PARALLEL_MIN_BYTES", "ShowStream", "Span"]

BLOCK = 1 << 20  # bytes of records joined into one write
PARALLEL_MIN_BYTES = 32 * 1024 * 1024  # below this a second process costs more than it saves
# Where the child's part starts, as a share of the file's bytes: past the middle, as the child also counts the
# lines before its part and writes what it renders to a file (a few % more than this process's relay costs). On
# the 1 GiB bench file (7.5% more records in its second half): at 0.5 the child used 7% more CPU than this
# process; at 0.52 the child still ended last, its CPU varying by 6% from run to run (5.24-5.57 s) where this
# process's did not (5.09 s); at 0.54 this process ends last, 0.3 s after the child, in 5.25 s both times.
SPLIT = 0.54

#: ``(file descriptor, bytes, offset)``: a block of :meth:`ShowStream.pieces` still in the child's file
Span = tuple[int, int, int]


class ShowStream:
    """The blocks ``show`` prints for ``stream`` (:meth:`blocks`, once); then :attr:`count` (records),
    :attr:`messages` (views printed: records merged into one count once) and :attr:`shown` (records printed)."""

    def __init__(self, stream: StreamedSession, json: bool = False, width: int = 0, workers: int = 2) -> None:
        self.stream = stream
        self.json = json
        self.width = width
        self.workers = workers
        self.pairing = render.RunningPairing()
        self.count = self.messages = self.shown = 0
        self._done = (0, 0)
        self.relayed = self.redone = 0  # the child's blocks printed as they were / rendered again here
        self.split: int | None = None  # the byte where the child's part starts (None: rendered in one process)
        # pid, the pipes it reports through and is told what was relayed through, its output file
        self._child: tuple[int, int, int, int] | None = None
        self.left = 0  # the bytes the child's file still held when it was dropped

    def blocks(self) -> Iterator[bytes]:
        """The blocks to print, in order, as bytes."""
        for piece in self.pieces():
            yield piece if type(piece) is bytes else showpipe.pread_exact(*piece)

    def pieces(self) -> Iterator[bytes | Span]:
        """:meth:`blocks`, but a block the child wrote as a :data:`Span` of its file, for the caller to copy
        from there before the next piece is asked for (by ``sendfile``: no copy through this process)."""
        try:
            if self.stream.adapter.name != "brute":
                yield from self._view_blocks()
                return
            fast = BruteRender(self.pairing)
            parts: list[bytes] = []
            n = 0
            for raw, term, size, parsed in self.stream.head:
                n += 1
                self._one(fast, n, raw, term, size, parts, parsed)
                if n <= 2:  # the first records at once
                    yield b"".join(parts)
                    parts = []
            self.stream.head = []
            mid = self._start_child()
            n = yield from self._render(fast, iter(self.stream.lines), n, parts)
            self.count = n
            if mid is not None:
                yield from self._relay(fast, n, mid)
            self.messages = self.shown = self.count
        finally:
            self.close()

    def _render(
        self, fast: BruteRender, lines: Iterator[tuple[bytes, bytes, int]], n: int, parts: list[bytes],
        log: list[Event] | None = None,
    ) -> Generator[bytes, None, int]:
        """Blocks of the records of ``lines``, numbered from ``n + 1``; returns the last number. Before each
        block :attr:`_done` is ``(last record, bytes of lines read)``."""
        held = consumed = 0
        one = self._one
        text = None if self.json else fast.text
        limit = self.stream.cap
        append, pop = parts.append, parts.pop
        for raw, term, size in lines:
            n += 1
            held += size
            if text is not None and size <= limit:  # _one, for the common case
                append(b"\n")
                if text(n, raw, parts):
                    append(b"\n")
                else:
                    pop()
                    one(fast, n, raw, term, size, parts, log=log, fast_tried=True)
            else:
                one(fast, n, raw, term, size, parts, log=log)
            if held > BLOCK or n <= 2:
                consumed += held
                self._done = (n, consumed)
                yield b"".join(parts)
                parts.clear()
                held = 0
        if parts:
            self._done = (n, consumed + held)
            yield b"".join(parts)
            parts.clear()
        return n

    def _one(
        self, fast: BruteRender, n: int, raw: bytes, term: bytes, size: int, parts: list[bytes], parsed: Any = None,
        log: list[Event] | None = None, fast_tried: bool = False,
    ) -> None:
        """Append record ``n`` to ``parts``: from its bytes where ``fast`` is sure, else through its view (and
        then, with ``log``, log its calls and results as ``fast`` does)."""
        if not fast_tried and size <= self.stream.cap + 2 and len(raw) <= self.stream.cap:
            if self.json:
                b = fast.json(n, raw)
                if b is not None:
                    parts.append(b)
                    parts.append(b"\n")
                    return
            else:
                parts.append(b"\n")
                if fast.text(n, raw, parts):
                    parts.append(b"\n")
                    return
                parts.pop()
        view = self.stream.view(n, raw, term, size, parsed)
        if log is not None and not self.json and (view.tool_calls or view.tool_results):  # JSON has no links
            log.append((n, tuple((c.id, c.name) for c in view.tool_calls), tuple(r.call_id for r in view.tool_results)))
        parts.append(self._view_bytes(view))

    def _view_bytes(self, view: Any) -> bytes:
        if self.json:
            return (render.view_json(view) + "\n").encode("utf-8", "backslashreplace")
        self.pairing.see(view)
        text = render.view_text(view, self.pairing, width=self.width, subagent_calls={})
        return ("\n" + text + "\n").encode("utf-8", "backslashreplace")

    # -- two processes -------------------------------------------------------------------------------

    def _start_child(self) -> int | None:
        """Fork the child that renders from the line nearest the middle on; its first byte, or None."""
        stream = self.stream
        if (
            self.workers < 2
            or not hasattr(os, "fork")
            or not sys.platform.startswith("linux")
            or (os.cpu_count() or 1) < 2
            or stream.size < PARALLEL_MIN_BYTES
        ):
            return None
        mid = showpipe.line_end(stream.fd, max(int(stream.size * SPLIT), stream.reader.pos), stream.size)
        if mid is None:
            return None
        tmp = showpipe.scratch(stream.size - mid)
        if tmp is None:
            return None
        fds: list[int] = []
        try:
            fds += os.pipe()
            fds += os.pipe()
            pid = os.fork()
        except OSError:  # out of descriptors, no process to be had (EAGAIN, ENOMEM): one process renders it all
            for fd in fds + [tmp]:
                os.close(fd)
            return None
        r, w, done_r, done_w = fds
        if pid == 0:  # the child: the second half, then exit without running this process's cleanup
            code = 0
            try:
                os.close(r)
                os.close(done_w)
                self._child_main(mid, w, tmp, done_r)
            except BaseException:  # noqa: BLE001 - the parent renders the rest itself
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        os.close(done_r)
        os.set_blocking(done_w, False)  # never waits for a child still rendering (which waits for its headers)
        stream.reader.end = mid
        self._child = (pid, r, done_w, tmp)
        self.split = mid
        return mid

    def _child_main(self, mid: int, w: int, out: int, relayed: int) -> None:
        """The child: render from ``mid`` on with a pairing of its own, in blocks, each with the calls and
        results it saw (a log to replay) and the call ids its links depend on; then free the pages of the
        blocks that the parent says (through ``relayed``) it has printed, until it closes that pipe."""
        stream = self.stream
        first = n = 0
        self.pairing = render.RunningPairing()  # this half's own; the parent checks what it depends on
        log: list[Event] = []
        fast = BruteRender(self.pairing, log)
        pos = mid
        frames = showpipe.Frames(w, out)
        try:
            first = n = showpipe.count_lines(stream.fd, mid)
            for block in self._render(fast, iter(LineReader(stream.fd, mid, stream.size, stream.cap)), n, [], log):
                n, consumed = self._done
                pos = mid + consumed
                frames.write(showpipe.DATA, block, log, first + 1, n, pos)
                first = n
                log.clear()
            frames.write(showpipe.END, b"", [], n + 1, n, pos)
        except BaseException as exc:  # noqa: BLE001 - handed to the parent
            try:
                data = pickle.dumps(exc)
            except Exception:  # noqa: BLE001
                data = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
            frames.write(showpipe.ERROR, data, [], first + 1, n, pos)
            return
        showpipe.free_relayed(out, frames.off, relayed)

    def _relay(self, fast: BruteRender, n: int, mid: int) -> Iterator[bytes | Span]:
        """The child's blocks, in order. A block whose links depend on a call id of the first half (the child
        could not know it) is rendered here again; the rest too if the child failed. The logs of the blocks
        printed as they were are replayed onto :attr:`pairing` before anything is rendered here after them."""
        assert self._child is not None
        _, r, done_w, tmp = self._child
        fd, cap = tmp, self.stream.cap
        first_half = set(self.pairing.calls)  # results and names are only ever kept for these ids
        pending: list[tuple[int, int]] = []  # where the logs not replayed yet are in the child's file
        off = 0
        pos = mid
        while True:
            header = showpipe.read_exact(r, showpipe.HEADER.size)
            if header is None:
                break  # the child ended without a word: render the rest here
            kind, nb, ni, ne, first, last, end = showpipe.HEADER.unpack(header)
            at = off
            off += nb + ni + ne
            if kind == showpipe.ERROR:
                try:
                    exc = pickle.loads(showpipe.pread_exact(fd, nb, at))
                except Exception:  # noqa: BLE001 - whatever it was, the rest is rendered here
                    exc = None
                if isinstance(exc, SourceChanged):
                    raise exc
                break  # render the rest here
            if first != n + 1:
                raise SourceChanged(f"the lines before byte {mid} changed while the file was read")
            if kind == showpipe.END:
                self.count = n
                self.close(kill=False)  # the child frees the last blocks it is told of, and ends
                return
            ids = pickle.loads(showpipe.pread_exact(fd, ni, at + nb)) if ni else ()
            if ids and not first_half.isdisjoint(ids):
                self._replay(fd, pending)
                self.redone += 1
                yield from self._render(fast, iter(LineReader(self.stream.fd, pos, end, cap)), n, [])
            else:
                self.relayed += 1
                if ne:
                    pending.append((at + nb + ni, ne))
                yield fd, nb, at
                try:  # the child reads these once it is done: one the pipe has no room for is left to close()
                    os.write(done_w, showpipe.SPAN.pack(at, at + nb))
                except OSError:  # full (the pipe does not block), or the child has gone: its header says how
                    pass
            n, pos = last, end
            self.count = n
        self._replay(fd, pending)
        self.close()
        self.count = yield from self._render(fast, iter(LineReader(self.stream.fd, pos, self.stream.size, cap)), n, [])

    def _replay(self, fd: int, pending: list[tuple[int, int]]) -> None:
        """Replay the logs at ``pending`` in the child's file onto :attr:`pairing`, in order; empty it."""
        for at, size in pending:
            replay(self.pairing, pickle.loads(showpipe.pread_exact(fd, size, at)))
        pending.clear()

    def _view_blocks(self) -> Iterator[bytes]:
        """Any format, through the views (merged where a format streams one message in several records)."""
        parts: list[str] = []
        held = 0
        pairing = self.pairing
        for view in iter_merged(self.stream.views()):
            if self.json:
                text = render.view_json(view) + "\n"
            else:
                pairing.see(view)
                text = "\n" + render.view_text(view, pairing, width=self.width, subagent_calls={}) + "\n"
            parts.append(text)
            held += len(text)
            self.shown += len(view.numbers)
            self.messages += 1
            if held > BLOCK or self.messages == 1:
                yield "".join(parts).encode("utf-8", "backslashreplace")
                parts, held = [], 0
        self.count = self.stream.count
        if parts:
            yield "".join(parts).encode("utf-8", "backslashreplace")

    def close(self, kill: bool = True) -> None:
        """End the child, if it still runs (or, without ``kill``, wait for it to end), and drop its file."""
        child, self._child = self._child, None
        if child is None:
            return
        pid, r, done_w, tmp = child
        if kill:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        os.close(done_w)  # the child's end reads its end: it stops freeing
        os.waitpid(pid, 0)
        os.close(r)
        try:
            self.left = os.fstat(tmp).st_blocks * 512
        except OSError:  # pragma: no cover - a descriptor of ours
            pass
        os.close(tmp)
