"""Search, filter and go-to-line on the session screen, with their workers:

* search (thread): scan every record for the term, from the cursor, cancellable, with progress;
* filter (thread): the records whose role or tool matches, cancellable.
"""

from __future__ import annotations

import time
from array import array
from bisect import bisect_left
from functools import partial

from textual.worker import get_current_worker

from sessionview.core.view.search import filter_rows, find, find_all
from sessionview.core.text import escape_control
from sessionview.core.view.transcript import Filter, TranscriptModel
from sessionview.ui import messages as msg
from sessionview.ui.controllers.follow import STATS_AUTO_LIMIT, Follow
from sessionview.ui.controllers.host import SessionHost
from sessionview.ui.wording import plural


class Search:
    """The term, the filter and the line to go to; results are moved to in the host's transcript."""

    def __init__(self, host: SessionHost, follow: Follow) -> None:
        self.host = host
        self.follow = follow
        self._matches: tuple[int, str, int, array, int | None] | None = None  # generation, term, records, hits, base
        self._shown: int | None = None  # the record the status names

    # -- search ---------------------------------------------------------------------------------------
    def set_term(self, value: str) -> None:
        host = self.host
        host.term = value
        host.transcript.set_term(value)
        self._matches = None
        if value:
            self.search(forward=True)
            self.count_matches()
        else:
            host.search_status = ""

    def search(self, forward: bool) -> bool:
        """Look for the term from the cursor; False when there is no term to look for."""
        host = self.host
        model = host.model
        if model is None or not host.term:
            return bool(host.term)
        start = host.transcript.cursor_number
        if start is None:
            start = len(model) if forward else len(model) + 1
        host.search_status = f"searching “{escape_control(host.term, one_line=True)}”…"
        work = partial(self._search_worker, self.follow.generation, model, host.term, start, forward)
        host.run_worker(work, group="search", exclusive=True, thread=True, exit_on_error=False)
        return True

    def _search_worker(self, generation: int, model: TranscriptModel, term: str, start: int, forward: bool) -> None:
        worker = get_current_worker()
        last = [0.0]

        def progress(f: float) -> None:
            now = time.monotonic()
            if now - last[0] > 0.1:
                last[0] = now
                self.host.post_message(msg.SearchProgress(generation, f))

        accept = model.row_visible if model.rows is not None else None
        found = find(model.scanner(), term, start, len(model), forward, True, lambda: worker.is_cancelled, progress, accept)
        if not worker.is_cancelled:
            self.host.post_message(msg.SearchDone(generation, term, found, forward, start))

    def count_matches(self) -> None:
        """Count the records that hold the term in the background, so the status can say "k of N"."""
        model = self.host.model
        if model is None or not self.host.term:
            return
        work = partial(self._count_worker, self.follow.generation, model, self.host.term)
        self.host.run_worker(work, group="search-count", exclusive=True, thread=True, exit_on_error=False)

    def _count_worker(self, generation: int, model: TranscriptModel, term: str) -> None:
        worker = get_current_worker()
        count = len(model)
        accept = model.row_visible if model.rows is not None else None
        base = model.base
        numbers = find_all(model.scanner(), term, count, lambda: worker.is_cancelled, accept)
        if numbers is not None and not worker.is_cancelled:
            self.host.app.call_from_thread(self._counted, generation, term, count, numbers, base)

    def _counted(self, generation: int, term: str, count: int, numbers: array, base: int | None) -> None:
        self._matches = (generation, term, count, numbers, base)
        host = self.host
        if self._shown is not None and term == host.term and host.search_status.startswith(f"“{escape_control(term, one_line=True)}” at"):
            host.search_status = host.search_status.split(" · ")[0] + self._k_of_n(self._shown)

    def _k_of_n(self, number: int) -> str:
        """`` · k of N`` for the record ``number`` when the count is known for this term and file."""
        m = self._matches
        model = self.host.model
        if m is None or model is None or m[0] != self.follow.generation or m[1] != self.host.term or m[4] != model.base:
            return ""
        numbers = m[3]
        k = bisect_left(numbers, number)
        if k >= len(numbers) or numbers[k] != number:
            return ""
        more = "+" if len(model) > m[2] else ""  # records appended since the count
        return f" · {k + 1:,} of {len(numbers):,}{more}"

    def show_hit(self, line: int) -> None:
        """The status for line ``line`` (#N) as a match of the term (opened from a search of every session)."""
        host = self.host
        model = host.model
        self._shown = model.record_of_line(line) if model is not None else None
        term = escape_control(host.term, one_line=True)
        host.search_status = f"“{term}” at #{line:,}" + (self._k_of_n(self._shown) if self._shown is not None else "")
        self.count_matches()

    def progress(self, message: msg.SearchProgress) -> None:
        host = self.host
        if message.generation == self.follow.generation and host.workers_running("search"):
            host.search_status = f"searching “{escape_control(host.term, one_line=True)}” {message.fraction:.0%} · esc cancels"

    def done(self, message: msg.SearchDone) -> None:
        host = self.host
        model = host.model
        if message.generation != self.follow.generation or model is None or message.term != host.term:
            return
        term = escape_control(message.term, one_line=True)
        if message.number is None:
            host.search_status = f"“{term}” not found"
        else:
            wrapped = (message.number <= message.from_number) if message.forward else (message.number >= message.from_number)
            line = model.line_number(message.number)
            where = f"#{line:,}" if line is not None else "#…"
            self._shown = message.number
            host.search_status = f"“{term}” at {where}" + (" (wrapped)" if wrapped else "") + self._k_of_n(message.number)
            host.transcript.move_cursor_to(model.row_of(message.number), center=True)

    # -- go to line ------------------------------------------------------------------------------------
    def goto_line(self, line: int) -> None:
        host = self.host
        model = host.model
        if model is None:
            return
        n = model.record_of_line(line)
        if n is None:
            self.follow.pending_goto = line
            host.search_status = f"line {line:,}: waiting for the index…"
            return
        host.transcript.move_cursor_to(model.row_of(n), center=True)

    # -- filter ----------------------------------------------------------------------------------------
    def filter_hint(self, model: TranscriptModel) -> str:
        """What the filter prompt says: the roles and tools there are (their counts need the stats)."""
        stats = model.stats
        if stats is not None:
            roles = "  ".join(f"{escape_control(r, one_line=True)} ({n:,})" for r, n in sorted(stats.roles.items(), key=lambda kv: -kv[1])[:8])
            tools = "  ".join(f"tool:{escape_control(r, one_line=True)} ({n:,})" for r, n in sorted(stats.tools.items(), key=lambda kv: -kv[1])[:8])
            return f"roles: {roles or '-'}\ntools: {tools or '-'}"
        if model.indexed and model.lines and model.size > STATS_AUTO_LIMIT:
            self.follow.maybe_stats(force=True)
        return "roles and tools, e.g.  assistant tool:shell   (empty: show all)"

    def apply_filter(self, flt: Filter) -> None:
        host = self.host
        model = host.model
        if model is None:
            return
        t = host.transcript
        if not flt.active:
            host.search_status = ""  # "6 records match" was about the filter
            keep = t.cursor_number
            model.rows = None
            model.filter = flt
            t.set_model(model, keep_position=True)
            if keep is not None and not t.follow:
                t.move_cursor_to(model.row_of(keep), center=True)
            host.revision += 1
            return
        host.search_status = "filtering…"
        self.refilter(model, flt)

    def refilter(self, model: TranscriptModel, flt: Filter | None = None) -> None:
        """Filter ``model``'s records with ``flt`` (its own filter by default) in the background."""
        work = partial(self._filter_worker, self.follow.generation, model, flt or model.filter)
        self.host.run_worker(work, group="filter", exclusive=True, thread=True, exit_on_error=False)

    def _filter_worker(self, generation: int, model: TranscriptModel, flt: Filter) -> None:
        worker = get_current_worker()
        count = len(model)
        rows = filter_rows(model.scanner(), flt, model.names(), count, lambda: worker.is_cancelled)
        if rows is not None:
            self.host.post_message(msg.FilterDone(generation, flt, rows, count))

    def filter_done(self, message: msg.FilterDone) -> None:
        host = self.host
        model = host.model
        if message.generation != self.follow.generation or model is None:
            return
        t = host.transcript
        keep = t.cursor_number
        following = t.follow
        rows = message.rows
        names = model.names()
        for n in range(message.count + 1, len(model) + 1):  # records appended while the filter ran
            if message.filter.matches(model.view(n), names):
                rows.append(n)
        model.rows = rows
        model.filter = message.filter
        host.search_status = f"{plural(len(rows), 'record')} match{'es' if len(rows) == 1 else ''}" if rows else "no record matches the filter"
        t.set_model(model, keep_position=True)
        if following or keep is None:
            t.resume_follow()
        else:
            t.move_cursor_to(model.row_of(keep), center=True)
        host.revision += 1
