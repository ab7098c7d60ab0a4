"""Reading the lines of a :class:`~sessionview.core.doc.document.Source` a window at a time, for one pass over
a big file (``JsonlSession.view(n, keep=False)`` for every ``n``): one ``pread`` per window instead of one per
line. Only a run of consecutive lines fills a window; a line asked out of order is read alone, so a few
scattered lines (an edit's integrity check) never read more than before.

With ``helper=True`` a long run of consecutive lines over a big file also starts a
:class:`~sessionview.core.doc.quotes.QuoteHelper`: :meth:`LinesAhead.quotes` then gives the unescaped quotes of
lines ahead, counted on the other core, for :func:`~sessionview.core.doc.parse.parse_record`."""

from __future__ import annotations

import bisect

from sessionview.core.doc.document import Source
from sessionview.core.doc import quotes as _quotes
from sessionview.core.doc.linescan import SourceChanged

WINDOW = 1 << 20  # bytes read at once (or one line, when it is longer)
RUN = 256  # consecutive lines read before a helper is worth starting (a pass, not a few scattered lines)


class LinesAhead:
    def __init__(self, source: Source, window: int = WINDOW, helper: bool = False) -> None:
        self.source = source
        self.window = window
        self._helper: _quotes.QuoteHelper | None = None
        self._run = 0 if helper else -1  # consecutive lines read so far (-1: no helper wanted, or one started)
        self._data = b""
        self._base = 0  # the offset of ``_data`` in the source
        self._first = self._stop = 0  # the lines ``_data`` holds: ``[_first, _stop)``
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
        helper = self._helper
        return raw, term, -1 if helper is None else helper.get(i)

    def quotes(self, i: int) -> int:
        """The unescaped quotes of line ``i`` as the helper counted them, or -1 (no helper, or not there yet)."""
        helper = self._helper
        return -1 if helper is None else helper.get(i)

    def _start_helper(self, i: int) -> None:
        self._run = -1  # once per pass
        source = self.source
        if source.size - source.starts[i] >= _quotes.MIN_BYTES and _quotes.can_fork():
            try:
                self._helper = _quotes.QuoteHelper(source, i)
            except OSError:  # no fork (or no shared memory) now: the pass counts its own quotes, as without one
                self._helper = None

    def close(self) -> None:
        """Stop the helper, if one runs."""
        if self._helper is not None:
            self._helper.close()

    def _fill(self, i: int) -> bool:
        """Read the lines from ``i`` on that fit the window (at least line ``i``); False if the file changed."""
        source = self.source
        starts = source.starts
        count = len(starts)
        start = starts[i]
        stop = max(bisect.bisect_right(starts, start + self.window, i + 1, count) - 1, i + 1)
        end = starts[stop] if stop < count else source.size
        try:
            data = source.read(start, end - start)
        except SourceChanged:
            self._data, self._first, self._stop = b"", 0, 0
            return False  # the line alone says whether it is there
        self._data, self._base, self._first, self._stop = data, start, i, stop
        return True
