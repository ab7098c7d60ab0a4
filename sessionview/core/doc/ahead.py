"""Reading the lines of a :class:`~sessionview.core.doc.document.Source` a window at a time, for one pass over
a big file (``JsonlSession.view(n, keep=False)`` for every ``n``): one ``pread`` per window instead of one per
line. Only a run of consecutive lines fills a window; a line asked out of order is read alone, so a few
scattered lines (an edit's integrity check) never read more than before."""

from __future__ import annotations

import bisect

from sessionview.core.doc.document import Source
from sessionview.core.doc.linescan import SourceChanged

WINDOW = 1 << 20  # bytes read at once (or one line, when it is longer)


class LinesAhead:
    def __init__(self, source: Source, window: int = WINDOW) -> None:
        self.source = source
        self.window = window
        self._data = b""
        self._base = 0  # the offset of ``_data`` in the source
        self._first = self._stop = 0  # the lines ``_data`` holds: ``[_first, _stop)``
        self._last = -2  # the line asked last

    def line(self, i: int) -> tuple[bytes, bytes]:
        """Line ``i``'s bytes and terminator, as ``Source.line(i)`` gives them."""
        if not self._first <= i < self._stop:
            last, self._last = self._last, i
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
