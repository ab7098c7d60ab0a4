"""Find and filter over every record of a session, for worker threads (no Textual here).

Search is case-insensitive over what the transcript shows (:func:`~sessionview.core.view.transcript.searchable_text`).
For JSONL files big runs of raw bytes are checked first: a run that cannot contain the term is skipped
without parsing, so the first hit in a big file comes fast.
"""

from __future__ import annotations

from array import array
from typing import Callable

from sessionview.core.session import JsonlSession
from sessionview.core.view.transcript import Filter, Scanner, searchable_text

Progress = Callable[[float], None]
_JSON_ESCAPED = set('"\\/')


def _matcher(term: str) -> tuple[str, bytes | None, bool]:
    needle = term.casefold()
    if term.isascii() and not (_JSON_ESCAPED & set(term)) and term.isprintable():
        return needle, term.lower().encode(), True
    # non-ASCII: JSON may hold it as \\uXXXX escapes; only a run without the term *and* without escapes
    # can be skipped
    return needle, term.encode("utf-8", "surrogatepass") if term.isprintable() else None, False


def find(
    scanner: Scanner,
    term: str,
    start: int,
    count: int,
    forward: bool = True,
    wrap: bool = True,
    should_stop: Callable[[], bool] = lambda: False,
    progress: Progress | None = None,
    accept: Callable[[int], bool] | None = None,
) -> int | None:
    """The next record after ``start`` (exclusive; 0 or count+1 to start at an end) whose text contains
    ``term``, going ``forward`` or back, wrapping around once. None if there is none (or stopped).
    ``accept`` limits hits to some records (those a filter shows)."""
    if not term or count == 0:
        return None
    if forward:
        ranges = [(start + 1, count)] + ([(1, min(start, count))] if wrap else [])
    else:
        ranges = [(start - 1, 1)] + ([(count, max(start, 1))] if wrap else [])
    done = 0
    total = count
    for a, b in ranges:
        if (forward and a > b) or (not forward and a < b):
            continue
        found = _find_in(scanner, term, a, b, should_stop, _progress_from(progress, done, total), accept)
        if found is not None:
            return found
        if should_stop():
            return None
        done += abs(b - a) + 1
    return None


def _find_in(
    scanner: Scanner,
    term: str,
    a: int,
    b: int,
    should_stop: Callable[[], bool],
    progress: Callable[[int], None],
    accept: Callable[[int], bool] | None = None,
) -> int | None:
    needle, bneedle, plain = _matcher(term)
    ok = accept or (lambda n: True)
    seen = 0
    if not isinstance(scanner.session, JsonlSession):
        for view in scanner.views(a, b, should_stop):
            seen += 1
            if ok(view.number) and needle in searchable_text(view).casefold():
                return view.number
            if seen % 256 == 0:
                progress(seen)
        return None
    reverse = b < a
    for n0, n1, data, offsets in scanner.blocks(a, b):
        if should_stop():
            return None
        numbers = range(n1, n0 - 1, -1) if reverse else range(n0, n1 + 1)
        if data is not None and bneedle is not None:
            hay = data.lower() if plain else data
            if bneedle not in hay and (plain or b"\\u" not in data):
                seen += n1 - n0 + 1
                progress(seen)
                continue
        for n in numbers:
            if data is not None and bneedle is not None:
                raw = data[offsets[n - n0] : offsets[n - n0 + 1]]
                hay = raw.lower() if plain else raw
                if hay.find(bneedle) == -1 and (plain or raw.find(b"\\u") == -1):
                    continue
            record = None if data is None else data[offsets[n - n0] : offsets[n - n0 + 1]]
            if ok(n) and needle in searchable_text(scanner.quick_view(n, record)).casefold():
                return n
        seen += n1 - n0 + 1
        progress(seen)
    return None


def find_all(
    scanner: Scanner,
    term: str,
    count: int,
    should_stop: Callable[[], bool] = lambda: False,
    accept: Callable[[int], bool] | None = None,
) -> array | None:
    """Every record (1..count, ascending) whose text contains ``term``, for "k of N". None if stopped."""
    found = array("q")
    start = 0
    while term and start < count:
        n = _find_in(scanner, term, start + 1, count, should_stop, lambda k: None, accept)
        if n is None:
            break
        found.append(n)
        start = n
    return None if should_stop() else found


def filter_rows(
    scanner: Scanner,
    flt: Filter,
    names: dict[str, str],
    count: int,
    should_stop: Callable[[], bool] = lambda: False,
    progress: Progress | None = None,
) -> array | None:
    """Record numbers (1..count) that pass ``flt``. None if stopped."""
    rows = array("q")
    names = dict(names)
    for view in scanner.quick_views(1, count, should_stop):
        for call in view.tool_calls:
            if call.id is not None:
                names.setdefault(call.id, call.name)
        if flt.matches(view, names):
            rows.append(view.number)
        if progress is not None and view.number % 4096 == 0:
            progress(view.number / count)
    if should_stop():
        return None
    return rows


def _progress_from(progress: Progress | None, done: int, total: int) -> Callable[[int], None]:
    """``progress`` as a fraction of ``total``, for a range that starts after ``done`` records."""
    if progress is None:
        return lambda k: None
    report = progress
    return lambda k: report(min(1.0, (done + k) / total))
