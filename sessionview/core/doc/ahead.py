"""Reading the lines of a :class:`~sessionview.core.doc.document.Source` a window at a time, for one pass over
a big file (``JsonlSession.view(n, keep=False)`` for every ``n``): one ``pread`` per window instead of one per
line. A window is the lines that start in one ``window``-byte cell of the file (from the line asked on); only a
run of consecutive lines fills one, and a line asked out of order is read alone, so a few scattered lines (an
edit's integrity check) never read more than before.

With ``helper=True`` a long run of consecutive lines over a big file also starts a
:class:`~sessionview.core.doc.quotes.QuoteHelper`, and the windows are its blocks: a window it read ahead is
taken from it with the unescaped quotes of its lines (:meth:`LinesAhead.quotes`), counted on the other core
from those very bytes, for :func:`~sessionview.core.doc.parse.parse_record`. The helper is reaped when the pass
reaches the last line, or by :meth:`LinesAhead.close`."""

from __future__ import annotations

import bisect

from sessionview.core.doc.document import Source
from sessionview.core.doc import quotes as _quotes
from sessionview.core.doc.linescan import SourceChanged

WINDOW = _quotes.CELL  # bytes read at once (the lines that start in one cell; one line, when it is longer)
RUN = 256  # consecutive lines read before a helper is worth starting (a pass, not a few scattered lines)


class LinesAhead:
    def __init__(self, source: Source, window: int = WINDOW, helper: bool = False) -> None:
        self.source = source
        self.window = _quotes.CELL if helper else max(1, window)  # a helper's blocks are on its own grid
        self._helper: _quotes.QuoteHelper | None = None
        self._run = 0 if helper else -1  # consecutive lines read so far (-1: no helper wanted, or one started)
        self._data = b""
        self._base = 0  # the offset of ``_data`` in the source
        self._first = self._stop = 0  # the lines ``_data`` holds: ``[_first, _stop)``
        self._counts: list[int] | None = None  # the helper's counts of those lines, when it read them
        self._last = -2  # the line asked last

    def line(self, i: int) -> tuple[bytes, bytes]:
        """Line ``i``'s bytes and terminator, as ``Source.line(i)`` gives them."""
        if not self._first <= i < self._stop:
            last, self._last = self._last, i
            if self._run >= 0:
                self._run = self._run + (self._stop - self._first) if i == last + 1 else 0
                if self._run >= RUN:
                    self._start_helper(i)
            if i != last + 1 or not self._fill(i):
                raw, term, _, _ = self.source.line(i)
                return raw, term
        self._last = i
        starts = self.source.starts
        base = self._base
        s = starts[i] - base
        e = (starts[i + 1] if i + 1 < len(starts) else self.source.size) - base
        data = self._data
        if e > s and data[e - 1] == 0x0A:
            if e - 1 > s and data[e - 2] == 0x0D:
                return data[s : e - 2], b"\r\n"
            return data[s : e - 1], b"\n"
        return data[s:e], b""

    def line_quotes(self, i: int) -> tuple[bytes, bytes, int]:
        """:meth:`line` and :meth:`quotes` of line ``i`` in one call (a pass over every line makes one per line)."""
        raw, term = self.line(i)
        counts = self._counts
        return raw, term, -1 if counts is None or not self._first <= i < self._stop else counts[i - self._first]

    def quotes(self, i: int) -> int:
        """The unescaped quotes of line ``i`` as :meth:`line` gave it, when the helper counted them; else -1."""
        counts = self._counts
        return -1 if counts is None or not self._first <= i < self._stop else counts[i - self._first]

    def _start_helper(self, i: int) -> None:
        self._run = -1  # once per pass
        source = self.source
        if source.size - source.starts[i] >= _quotes.MIN_BYTES and _quotes.can_fork():
            try:
                self._helper = _quotes.QuoteHelper(source, i)
            except OSError:  # no fork (or no shared memory) now: the pass counts its own quotes, as without one
                self._helper = None

    def close(self) -> None:
        """Stop and reap the helper, if one was started (idempotent, from any thread)."""
        helper, self._helper = self._helper, None
        if helper is not None:
            helper.close()

    def _fill(self, i: int) -> bool:
        """Read the lines of the window from ``i`` on (at least line ``i``); False if the file changed."""
        source = self.source
        starts = source.starts
        count = len(starts)
        window = self.window
        stop = _quotes.block_end(starts, i, window)
        start = starts[i]
        end = starts[stop] if stop < count else source.size
        helper = self._helper
        # a helper hands over blocks up to its ring's size; without one, a window's lines may end three windows on
        whole = end - start <= (helper.ring if helper is not None else 3 * window)
        if not whole:  # a long line ends the block: the lines that fit the window (or line i alone)
            stop = max(bisect.bisect_right(starts, start + window, i + 1, count) - 1, i + 1)
            end = starts[stop] if stop < count else source.size
        taken = None
        if helper is not None:
            helper.post(i)
            if whole:
                taken = helper.take(i, stop, end - start)
            if stop == count:  # the pass is at its last window: the helper has nothing left to do
                self.close()
        if taken is not None:
            self._data, self._counts = taken
        else:
            try:
                self._data = source.read(start, end - start)
            except SourceChanged:
                self._data, self._first, self._stop, self._counts = b"", 0, 0, None
                return False  # the line alone says whether it is there
            self._counts = None
        self._base, self._first, self._stop = start, i, stop
        return True
