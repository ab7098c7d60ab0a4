"""The open file: opening it, indexing it, its stats, and following it while it is written.

Workers (all post messages back to the screen, tagged with the opening's ``generation``; the screen hands
them to :class:`Follow`):

* open (thread): open the file end first, so the last page shows at once;
* index (thread): build the full line index, then line numbers are known;
* stats (thread): counts, tokens and tool-call pairing over every record;
* follow (thread): poll the file with a :class:`~sessionview.core.tail.Follower` when it changed (inotify), or
  every few milliseconds (:func:`~sessionview.core.tail_wake.poll_loop`); what it reports is applied in
  batches, a frame each (:class:`~sessionview.ui.controllers.pacing.FollowPacer`).
"""

from __future__ import annotations

import os
import time
from functools import partial
from typing import Any, Callable

from textual.timer import Timer
from textual.worker import get_current_worker

from sessionview.core.doc.document import open_regular
from sessionview.core.doc.model import View
from sessionview.core.fileaccess import FileAccess
from sessionview.core.tail import Appended, Compacted, Deleted, Follower, Pending, Renamed, Replaced, Truncated, follower_for
from sessionview.core.tail_open import full_index, heap_gives_back
from sessionview.core.tail_wake import Wake, poll_loop
from sessionview.core.text import escape_control
from sessionview.core.view.stats import Stats
from sessionview.core.view.transcript import TranscriptModel
from sessionview.ui import messages as msg
from sessionview.ui.controllers.appended import add_appended, links_for
from sessionview.ui.controllers.host import SessionHost
from sessionview.ui.controllers.pacing import FollowPacer
from sessionview.ui.widgets.blocks import Links
from sessionview.ui.widgets.header import REASONS, compaction_text

LIVE_WINDOW = 5.0
STATS_AUTO_LIMIT = 256 << 20  # files up to this size get their stats computed at once
FIRST_PROMPT_SCAN = 500  # records read from the start for the first prompt


class Follow:
    """Owns the screen's model: (re)opens it, indexes it, counts it and follows the file.

    ``goto_line`` is called for a line asked for before the index was there, ``refilter`` when the
    records must be filtered again, ``rewritten`` when the file was rewritten or replaced (an edit of
    ours may be gone)."""

    def __init__(
        self,
        host: SessionHost,
        *,
        prefetch: Any = None,
        goto_line: Callable[[int], None],
        refilter: Callable[[TranscriptModel], None],
        rewritten: Callable[[], None],
    ) -> None:
        self.host = host
        self._prefetch = prefetch  # a Future of the model, opened before Textual was imported
        self._goto_line = goto_line
        self._refilter = refilter
        self._rewritten = rewritten
        self.generation = 0
        self.last_change: float | None = None
        self.pending_goto: int | None = None
        self._compaction: tuple[Compacted, int | None] | None = None  # the event and the count before it
        self._stop_follow: Wake | None = None
        self.start_at_first_prompt = False  # go to the first prompt once the index is there
        self._live_timer: Timer | None = None
        self._reload_timer: Timer | None = None
        self.access: FileAccess | None = getattr(host, "access", None)  # None: a local file; else another host's
        self.pacer = FollowPacer(host, self._apply_events)

    def close(self) -> None:
        self._stop_following()
        if self.host.model is not None:
            self.host.model.close()

    # -- opening ------------------------------------------------------------------------------------
    def start_open(self, reason: str) -> None:
        host = self.host
        self.generation += 1
        self._stop_following()
        for group in ("index", "stats", "search", "filter"):
            host.cancel_workers(group)
        prefetch, self._prefetch = self._prefetch, None
        if prefetch is not None and prefetch.done() and prefetch.exception() is None:
            self.opened(msg.Opened(self.generation, prefetch.result(), reason))
            return
        host.run_worker(partial(self._open_worker, self.generation, reason, prefetch), group="open", exclusive=True, thread=True, exit_on_error=False)

    def _open_worker(self, generation: int, reason: str, prefetch: Any = None) -> None:
        try:
            model = prefetch.result() if prefetch is not None else TranscriptModel.open(self.host.path, access=self.access)
        except Exception as exc:
            # an OSError's text names the path and the reason (not a regular file, permission denied): no
            # class name for those; anything else is a bug to report, with its class
            text = str(exc) if isinstance(exc, OSError) and str(exc) else f"{type(exc).__name__}: {exc}"
            path = self.host.path
            if text.startswith(path):  # the header shows the whole path: the status line names the file
                text = os.path.basename(path) + text[len(path):]
            self.host.post_message(msg.OpenFailed(generation, text))
            return
        self.host.post_message(msg.Opened(generation, model, reason))

    def open_failed(self, message: msg.OpenFailed) -> None:
        if message.generation != self.generation:
            return
        host = self.host
        host.state = "error"
        host.notice = message.error
        host.notify(escape_control(message.error, one_line=True), title="cannot open", severity="error", markup=False)
        # keep watching: the file may appear or become readable
        self._start_following(None)

    def opened(self, message: msg.Opened) -> None:
        host = self.host
        if message.generation != self.generation:
            message.model.close()
            return
        old = host.model
        model: TranscriptModel = message.model
        if old is not None and old.filter.active:
            model.filter = old.filter  # kept across a reload; its rows come from the filter worker
        host.model = model
        if host.term:
            host.transcript.term = host.term
        host.transcript.set_model(model)
        if old is not None:
            old.close()
        host.index_progress = None if model.indexed else 0.0
        if message.reason == "saved":
            # our own save replaced the file: no alarm, and it does not make the session live
            host.notice = ""
        else:
            if message.reason:
                host.notice_detail = self._compaction_detail(model) if message.reason == "compacted" else ""
                host.notice = message.reason
                if host.edit_status.startswith("saved"):
                    host.edit_status = ""  # older news than this
                if host.notice_detail:
                    host.notify(f"{message.reason} {host.notice_detail}", title="file changed", markup=False)
                else:
                    host.notify(f"{message.reason}: {REASONS.get(message.reason, '')}", title="file changed", markup=False)
            try:
                st = os.stat(host.path) if self.access is None else self.access.stat(host.path)
                recent = host.clock() - st.st_mtime <= LIVE_WINDOW
            except OSError:
                recent = False
            if message.reason or recent:
                self.last_change = host.clock()
        host.state = "live" if self._is_live() else "idle"
        self._arm_live_timer()
        if old is None and self.pending_goto is None and host.state != "live":
            self.start_at_first_prompt = True  # a finished session opens at its first prompt (a live one at its end)
        self._start_following(model)
        if not model.indexed:
            # after the first frame: the scan would compete with it for the interpreter
            generation = self.generation
            host.transcript.call_after_first_frame(lambda: generation == self.generation and self._start_index(generation, model))
        else:
            self.maybe_stats()
            self._after_index()
            if model.filter.active:
                self._refilter(model)
        host.revision += 1
        host.update_detail()

    # -- index and stats ----------------------------------------------------------------------------
    def _start_index(self, generation: int, model: TranscriptModel) -> None:
        self.host.run_worker(partial(self._index_worker, generation, model), group="index", exclusive=True, thread=True, exit_on_error=False)

    def _index_worker(self, generation: int, model: TranscriptModel) -> None:
        worker = get_current_worker()
        assert model.tail is not None
        end = model.tail.end
        last = [0.0]

        def progress(pos: int) -> None:
            if worker.is_cancelled:
                raise InterruptedError
            now = time.monotonic()
            if now - last[0] > 0.1:
                last[0] = now
                self.host.post_message(msg.IndexProgress(generation, pos / max(1, end)))

        try:
            source = full_index(model.tail.read if self.access is not None else model.tail.fd, end, progress)
        except InterruptedError:
            return
        except OSError:
            # the file changed under the scan (a rewrite): the follower reports it, and we reopen then
            return
        self.host.post_message(msg.IndexBuilt(generation, source))

    def index_progress(self, message: msg.IndexProgress) -> None:
        if message.generation == self.generation:
            self.host.index_progress = message.fraction

    def index_built(self, message: msg.IndexBuilt) -> None:
        host = self.host
        model = host.model
        if message.generation != self.generation or model is None:
            return
        filtered = model.rows is not None
        shift = model.attach_index(message.source)
        host.index_progress = None
        t = host.transcript
        t.expanded = {n + shift for n in t.expanded}
        if t.range_anchor is not None:
            t.range_anchor += shift
        t.remap(lambda row: row if filtered else row + shift)
        self.maybe_stats()
        self._after_index()
        if model.filter.active:
            self._refilter(model)
        host.revision += 1
        host.update_detail()

    def _after_index(self) -> None:
        if self.start_at_first_prompt:
            self.start_at_first_prompt = False
            if self.host.transcript.follow:  # unless the user moved meanwhile (the index of a big file takes a while)
                self._at_first_prompt()
        if self.pending_goto is not None:
            line = self.pending_goto
            self.pending_goto = None
            self._goto_line(line)

    def _at_first_prompt(self) -> None:
        """Where a finished session opens: the cursor on its first prompt (within the first
        FIRST_PROMPT_SCAN records, else on the first record), at the top of the page."""
        from sessionview.core.view.outline import first_prompt

        model, t = self.host.model, self.host.transcript
        if model is None or not len(model):
            return
        n = first_prompt(model.scanner().quick_views(1, min(len(model), FIRST_PROMPT_SCAN))) or 1
        row = model.row_of(n)
        t.anchor = (0, 0) if row < 4 else min((row, 0), t.bottom_anchor())
        t.move_cursor_to(row)

    def maybe_stats(self, force: bool = False) -> None:
        model = self.host.model
        if model is None or not model.indexed:
            return
        if force or not model.lines or model.size <= STATS_AUTO_LIMIT:
            model.appended_stats = Stats()
            self.host.run_worker(partial(self._stats_worker, self.generation, model), group="stats", exclusive=True, thread=True, exit_on_error=False)

    def _stats_worker(self, generation: int, model: TranscriptModel) -> None:
        worker = get_current_worker()
        heap_gives_back()
        stats = model.compute_stats(lambda: worker.is_cancelled)
        if stats is not None:
            self.host.post_message(msg.StatsReady(generation, stats))

    def stats_ready(self, message: msg.StatsReady) -> None:
        model = self.host.model
        if message.generation != self.generation or model is None:
            return
        stats: Stats = message.stats
        stats.merge(model.appended_stats)
        model.stats = stats
        model.appended_stats = Stats()
        self.host.transcript.invalidate()
        self.host.revision += 1

    def links(self, view: View) -> Links:
        return links_for(self.host.model, view)

    # -- following ----------------------------------------------------------------------------------
    def _start_following(self, model: TranscriptModel | None) -> None:
        self._stop_following()
        stop = Wake()
        self._stop_follow = stop
        fd = file = None
        offset = 0
        if model is not None and model.tail is not None:
            fd, file = (os.dup(model.tail.fd), None) if self.access is None else (None, model.tail.file)
            offset = model.end
        elif model is not None:
            offset = -1  # a whole document: any change reloads it
        resume = model is not None and model.tail is not None  # follow on from what the model read
        if self.access is None:  # a local file: the kernel says when it changes (set up after the first frame)
            self.host.transcript.call_after_first_frame(partial(setattr, stop, "armed", True))
        self.host.run_worker(partial(self._follow_worker, self.generation, stop, fd, offset, resume, file), group="follow", thread=True, exit_on_error=False)

    def _stop_following(self) -> None:
        self.pacer.drop()
        if self._stop_follow is not None:
            self._stop_follow.set()
            self._stop_follow = None

    def _follow_worker(self, generation: int, stop: Wake, fd: int | None, offset: int, resume: bool = False, file: Any = None) -> None:
        path = self.host.path
        follower: Follower | None = None
        try:
            while follower is None and not stop.is_set():
                try:
                    if resume:
                        follower = follower_for(path, fd=fd, offset=offset, access=self.access, file=file)
                        fd = None
                    else:
                        follower = follower_for(path, access=self.access)
                        if offset == -1:
                            follower.poll()  # a document: only changes after this matter
                        else:  # the file could not be opened before: now it can
                            self.host.post_message(msg.FollowEvents(generation, [Replaced("the file appeared")]))
                            return
                except OSError:
                    stop.wait(0.25)
            if follower is not None:
                interval = max(self.host.poll_interval, getattr(follower, "poll_interval", 0.0))
                poll_loop(stop, follower, path, interval, lambda events: self.host.post_message(msg.FollowEvents(generation, events)))
        finally:
            stop.close()
            if follower is not None:
                follower.close()
            if fd is not None:
                os.close(fd)

    def follow_events(self, message: msg.FollowEvents) -> None:
        if message.generation == self.generation:
            self.pacer.add(message.generation, message.events)

    def _apply_events(self, generation: int, events: list) -> None:
        if generation != self.generation:
            return
        host = self.host
        model = host.model
        if model is None:
            if any(isinstance(e, Replaced) for e in events):
                self.start_open("replaced")
            return
        if not model.lines:
            self._schedule_reload(events)
            return
        added_rows = 0
        changed = False
        for ev in events:
            if isinstance(ev, Appended):
                added_rows += self._append(model, ev)
                changed = True
                if ev.rewritten:
                    self._rewritten()  # a rewrite that kept what we saw: our edit may still be gone
            elif isinstance(ev, Pending):
                model.set_pending(ev)
                changed = True
            elif isinstance(ev, Renamed):
                # a temp file renamed over the path that kept what we show (another sessionview's save)
                if not self._adopt(model, ev.ident):
                    self.start_open("replaced")
                    self._rewritten()
                    return
            elif isinstance(ev, Compacted):
                self._compaction = (ev, ev.before if ev.before is not None else (len(model) if model.indexed else None))
                self.start_open("compacted")
                self._rewritten()
                return
            elif isinstance(ev, Truncated):
                self.start_open("truncated")
                self._rewritten()
                return
            elif isinstance(ev, Replaced):
                self.start_open("replaced")
                self._rewritten()
                return
            elif isinstance(ev, Deleted):
                host.state = "deleted"
                host.notice = "deleted"
                host.notify("deleted: the file was removed; what it had stays on screen", title="file changed", markup=False)
        if changed:
            self.last_change = host.clock()
            host.state = "live"
            host.notice = "" if host.notice == "deleted" else host.notice
            self._arm_live_timer()
            host.transcript.rows_changed(added_rows)
            host.revision += 1
            host.position += 1  # (what the transcript's messages would say, a frame later)
            if host.transcript.follow:  # the cursor moved to the new end
                host.update_detail()

    def _adopt(self, model: TranscriptModel, ident: tuple[int, int]) -> bool:
        """Read the new file the follower follows now (``ident``); False if the path holds another one."""
        if self.access is not None:  # an identity over a FileAccess is one handle's: open the path again
            return model.adopt_from(self.access)
        try:
            fd = open_regular(self.host.path)
        except OSError:
            return False
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != ident or model.tail is None:
            os.close(fd)
            return False
        model.adopt(fd)
        return True

    def _compaction_detail(self, model: TranscriptModel) -> str:
        if self._compaction is None:
            return ""
        ev, before = self._compaction
        self._compaction = None
        after = ev.after if ev.after is not None else (len(model) if model.indexed else None)
        return compaction_text(ev.markers, before, after, ev.replaced)

    def _append(self, model: TranscriptModel, ev: Appended) -> int:
        added, calls = add_appended(model, ev)
        if calls is None:  # a burst too big to look at here: recount (and filter) in the background
            self.maybe_stats(force=True)
            if model.filter.active:
                self._refilter(model)
        elif calls:  # calls drawn before their result arrived show their link now: draw those again
            self.host.transcript.forget(calls)
        return added

    def _schedule_reload(self, events: list) -> None:
        if any(isinstance(e, Deleted) for e in events):
            self.host.state = "deleted"
            self.host.notice = "deleted"
            return
        if self._reload_timer is not None:
            self._reload_timer.stop()
        reason = "replaced" if any(isinstance(e, Replaced) for e in events) else "changed"
        self._reload_timer = self.host.set_timer(0.1, lambda: self.start_open(reason))
        self._rewritten()

    # -- our own saves ------------------------------------------------------------------------------
    def suspend(self) -> None:
        """Before a save: stop following; late events of this opening are ignored (our own replacement
        of the file is not news)."""
        self.pacer.flush()  # what was reported before is news: shown (and in the model) before the save
        self.generation += 1
        self._stop_following()
        if self._reload_timer is not None:
            self._reload_timer.stop()
            self._reload_timer = None

    def reopen_after_save(self, target: int | None, saved: bool) -> None:
        """After a save (or a failed one): show the file as it is, the cursor at ``target`` (a line number)
        or where it was."""
        t = self.host.transcript
        model = self.host.model
        if target is None and model is not None and not t.follow:
            target = model.line_number(t.cursor_number) if t.cursor_number is not None else None
        if target is not None:
            self.pending_goto = max(1, target)
        self.start_open("saved" if saved else "")

    # -- live or idle -------------------------------------------------------------------------------
    def _is_live(self) -> bool:
        return self.last_change is not None and self.host.clock() - self.last_change <= LIVE_WINDOW

    def _arm_live_timer(self) -> None:
        if self._live_timer is not None:
            self._live_timer.stop()
            self._live_timer = None
        if self.host.state == "live":
            self._live_timer = self.host.set_timer(LIVE_WINDOW + 0.1, self._live_expired)

    def _live_expired(self) -> None:
        self._live_timer = None
        if self.host.state == "live" and not self._is_live():
            self.host.state = "idle"
        elif self.host.state == "live":
            self._arm_live_timer()
