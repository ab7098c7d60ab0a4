"""Editing from the session screen: edit, delete, truncate, compact, undo, redo, apply again, restore.

Every flow calls the same core operations as the CLI: :mod:`edits` plans a change, the preview comes from
:mod:`editing` and :func:`writeback.diff`, and :class:`~sessionview.core.edit.history.EditHistory` writes it
(a safe save with a backup) and keeps it for undo. Nothing is written before the user confirmed a preview.

The history's session is the file fully loaded (with the hash the save checks), reloaded at the start of a
flow when the file changed; the transcript's own (end-first) model is only used to know what is selected.
While a save runs the follower is stopped, and the transcript reopens the new file afterwards with the
cursor near the edited record: our own replacement of the file is not reported as "replaced".

Flows run as async workers (group ``edit``), one at a time; blocking core calls go to threads.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Awaitable, Callable

from sessionview.core.store import backups
from sessionview.core.edit import preview as editing, plan as edits, summary, writeback
from sessionview.core.edit.plan import Change, InvalidEdit, Refused
from sessionview.core.errors import Conflict, SaveError
from sessionview.core.edit.history import EditHistory, rebase
from sessionview.core.store.save import default_root
from sessionview.core.view.humanize import human_size
from sessionview.core.text import escape_control
from sessionview.ui.external import ExternalEditorError
from sessionview.ui.screens.confirm import ConfirmScreen, ConflictScreen, PreviewScreen, RefusalScreen

#: actions that write (or only serve writing): hidden in read-only mode
WRITE_ACTIONS = frozenset(
    {"edit", "edit_external", "delete", "truncate", "mark_range", "extend_range", "compact", "undo", "redo", "reapply"}
)
#: binding ids shown under "Editing" in the help screen
EDIT_BINDING_IDS = frozenset(
    {
        "edit",
        "edit_external",
        "delete",
        "truncate",
        "mark_range",
        "extend_range_up",
        "extend_range_down",
        "compact",
        "undo",
        "redo",
        "reapply",
        "history",
    }
)

LIVE_TEXT = (
    "This session is being written{ago}. An agent like Brute rewrites the whole file at the end of its turn, "
    "from its own memory: that can undo this edit. sessionview watches for it and offers to apply the edit "
    "again. Go on?"
)


def _one(text: Any) -> str:
    return escape_control(str(text), one_line=True)


class EditingMixin:
    """The editing half of :class:`~sessionview.ui.screens.session.SessionScreen`."""

    # provided by the screen
    path: str
    display_path: str
    read_only: bool
    state: str
    model: Any
    app: Any

    def _init_editing(self) -> None:
        self.history: EditHistory | None = None
        self._history_lock = asyncio.Lock()
        self.busy = ""  # what an edit flow is doing ("" when none runs)
        self.edit_status = ""  # the last edit event: "saved: …", "conflict: …", "overwritten: …"
        self.pending_change: Change | None = None  # not in the file: a conflict or an overwrite (a applies it)
        self._recheck_overwritten = False

    def _close_editing(self) -> None:
        if self.history is not None:
            try:
                self.history.close()
            except Exception:
                pass
            self.history = None

    # -- guards ----------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in WRITE_ACTIONS and self.read_only:
            return False
        if action == "reapply" and self.pending_change is None:
            return False
        return True

    def _write_refusal(self) -> str | None:
        if self.read_only:
            return "read-only: this app was started with --read-only"
        if self.busy:
            return f"busy: {self.busy}; wait for it to finish"
        model = self.model
        if model is None:
            return "the session is not open yet"
        reason = getattr(model.session, "read_only_reason", None)
        if reason:
            return f"read-only: {reason}"
        if self.state == "deleted":
            return "the file was deleted: there is nothing to write to"
        return None

    def _refuse_if_not_writable(self) -> bool:
        reason = self._write_refusal()
        if reason:
            self.notify(_one(reason), title="cannot edit", severity="warning", markup=False)
            return True
        return False

    def _true_number(self, n: int | None) -> int | None:
        model = self.model
        if model is None or n is None:
            self.notify("select a message first", markup=False)
            return None
        line = model.line_number(n)
        if line is None:
            self.notify("the file is still being indexed: try again in a moment", markup=False)
        return line

    def _raw_of(self, n: int) -> bytes | None:
        rec = self.model.record(n) if self.model is not None else None
        return rec.raw if rec is not None else None

    def _selection(self) -> tuple[int, int, bytes | None, bytes | None] | None:
        """The marked range, or the selected message: true numbers, and their raw bytes as shown."""
        t = self.transcript  # type: ignore[attr-defined]
        marked = t.marked_range
        a, b = marked if marked is not None else (t.cursor_number, t.cursor_number)
        first = self._true_number(a)
        last = self._true_number(b) if first is not None else None
        if first is None or last is None or a is None or b is None:
            return None
        return first, last, self._raw_of(a), self._raw_of(b)

    def _start_flow(self, what: str, flow: Callable[[], Awaitable[None]]) -> None:
        self.busy = what
        self._refresh_status()  # type: ignore[attr-defined]

        async def run() -> None:
            try:
                await flow()
            except Exception as exc:  # a flow must never take the app down; say what happened
                self.notify(f"{type(exc).__name__}: {_one(exc)}", title=f"{what} failed", severity="error", markup=False)
            finally:
                self.busy = ""
                self._refresh_status()  # type: ignore[attr-defined]
                self.refresh_bindings()  # type: ignore[attr-defined]
                if self._recheck_overwritten:
                    self._recheck_overwritten = False
                    self._maybe_check_overwritten()

        self.run_worker(run(), group="edit", exit_on_error=False)  # type: ignore[attr-defined]

    # -- the history ------------------------------------------------------------------------------------
    async def _hist(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking history/core call in a thread, one at a time."""
        async with self._history_lock:
            return await asyncio.to_thread(fn, *args)

    def _root(self) -> str:
        """Saves stay inside the directory the app was opened on (symlinks may point anywhere within it)."""
        return getattr(self.app, "root", None) or default_root(self.path)

    async def _fresh_history(self) -> EditHistory:
        def work() -> EditHistory:
            if self.history is None:
                self.history = EditHistory(self.path, self._root())
            elif not editing.is_current(self.history.session, self.path):
                self.history.reload()
            return self.history

        return await self._hist(work)

    async def _same_selection(self, history: EditHistory, checks: list[tuple[int, bytes | None]]) -> bool:
        ok = all(editing.same_record(history.session, n, raw) for n, raw in checks)
        if not ok:
            self.notify(
                "the file changed under the selection (it is being rewritten?): look again once it has reloaded",
                title="not edited",
                severity="warning",
                markup=False,
            )
        return ok

    async def _begin(self, checks: list[tuple[int, bytes | None]]) -> EditHistory | None:
        """The start of every writing flow: the live-session warning, a fresh history, and a check that the
        selected records are still what is on screen. None when any of them says stop."""
        if not await self._live_ok():
            return None
        history = await self._fresh_history()
        if not await self._same_selection(history, checks):
            return None
        return history

    async def _live_ok(self) -> bool:
        if self.state != "live":
            return True
        ago = editing.modified_ago(self.path, self.clock())  # type: ignore[attr-defined]
        when = f" (it changed {max(0, ago):.0f} s ago)" if ago is not None and ago < 3600 else ""
        return bool(await self.app.push_screen_wait(ConfirmScreen("⚠ live session", LIVE_TEXT.format(ago=when))))

    # -- preview, refusal, commit -------------------------------------------------------------------------
    @property
    def _diff_name(self) -> str:
        """The file's name in diffs: as given when relative, else its base name (``a/x.jsonl``)."""
        return os.path.basename(self.display_path) if os.path.isabs(self.display_path) else self.display_path

    def _live_warning(self) -> str:
        if self.state == "live":
            return "the session is live: if the agent rewrites the file from its memory, the edit can be undone (you will be told)"
        return ""

    async def _preview(self, history: EditHistory, change: Change, *, title: str = "", cancel_label: str = "cancel (nothing is written)") -> bool:
        if editing.is_noop(change):
            self.notify(f"{change.description}: no change, nothing to write", markup=False)
            return False
        session = history.session

        def work() -> tuple[list, str]:
            return editing.preview(session, change), writeback.diff(session, change, self._diff_name)

        rows, diff = await self._hist(work)
        summary_line = f"{editing.describe(change)} · {self.display_path} · {session.format_title}"
        screen = PreviewScreen(
            title or f"preview · {change.description}",
            _one(summary_line),
            rows,
            diff,
            warning=self._live_warning(),
            cancel_label=cancel_label,
        )
        return bool(await self.app.push_screen_wait(screen))

    async def _plan(
        self,
        history: EditHistory,
        plan: Callable[[Any, int, int], Change],
        first: int,
        last: int,
        widen_label: Callable[[int, int], str],
    ) -> Change | None:
        """Plan ``plan(session, first, last)``; an integrity refusal offers to widen to its suggestion."""
        while True:
            try:
                return await self._hist(plan, history.session, first, last)
            except Refused as exc:
                suggestion = exc.suggestion
                if not exc.ids and suggestion is None:  # not about pairing: say why, no choice to make
                    self.notify(_one(exc), title="refused", severity="error", markup=False)
                    return None
                label = widen_label(*suggestion) if suggestion else None
                choice = await self.app.push_screen_wait(RefusalScreen(str(exc), exc.ids, label))
                if choice != "widen" or suggestion is None:
                    self.notify("cancelled: nothing was written", markup=False)
                    return None
                first, last = suggestion
            except (InvalidEdit, ValueError) as exc:
                self.notify(_one(exc), title="cannot do that", severity="error", markup=False)
                return None

    async def _commit(self, op: Callable[[], Any], change: Change | None, *, target: int | None, planned_on: Any = None, what: str = "") -> bool:
        """Run the save ``op`` (in a thread) with the follower stopped, then show the new file."""
        history = self.history
        desc = what or (change.description if change is not None else "save")

        def guarded() -> Any:
            if planned_on is not None and history is not None and history.session is not planned_on:
                raise Conflict(f"conflict: {self.display_path} changed on disk while {desc} was being prepared", self.path)
            return op()

        self.busy = f"saving ({desc})"
        self._refresh_status()  # type: ignore[attr-defined]
        self._suspend_follow()  # type: ignore[attr-defined]
        try:
            done = await self._hist(guarded)
        except Conflict as exc:
            self._reopen_after_save(None, saved=False)  # type: ignore[attr-defined]
            if change is not None:
                await self._conflict(exc, change, history)
            else:
                self.notify(_one(exc), title="conflict", severity="error", markup=False)
            return False
        except (SaveError, Refused) as exc:
            self._reopen_after_save(None, saved=False)  # type: ignore[attr-defined]
            self.notify(_one(exc), title="not saved", severity="error", markup=False)
            return False
        except BaseException:
            self._reopen_after_save(None, saved=False)  # type: ignore[attr-defined]
            raise
        outcome = getattr(done, "outcome", done)
        extra = editing.describe_outcome(outcome) if outcome is not None else ""
        self.edit_status = f"saved: {desc}"
        self.refresh_bindings()  # type: ignore[attr-defined]
        self.notify(
            f"saved: {desc} · a backup was kept · u undoes" + (f" · {extra}" if extra else ""),
            title="saved",
            markup=False,
        )
        self._reopen_after_save(target, saved=True)  # type: ignore[attr-defined]
        return True

    async def _conflict(self, exc: BaseException, change: Change, history: EditHistory | None) -> None:
        self.pending_change = change
        self.edit_status = f"conflict: {change.description} was not written; a applies it again"
        self.refresh_bindings()  # type: ignore[attr-defined]
        self._refresh_status()  # type: ignore[attr-defined]
        self.notify(f"conflict: {change.description} was not written (the file changed on disk); the edit is kept", severity="warning", markup=False)
        diff = ""
        if history is not None:
            try:
                diff = await self._hist(writeback.diff, history.session, change, self._diff_name)
            except Exception as err:  # the loaded file may be gone
                diff = f"# the diff cannot be shown: {err}\n"
        choice = await self.app.push_screen_wait(ConflictScreen(str(exc), change.description, diff))
        if choice == "reapply":
            await self._reapply(change)

    async def _reapply(self, change: Change) -> None:
        history = await self._fresh_history()

        def prepare() -> Change:
            history.reload()
            return rebase(history.session, change)

        try:
            rebased = await self._hist(prepare)
        except Refused as exc:
            self.notify(f"cannot apply it again: {_one(exc)}", severity="error", markup=False)
            return
        planned_on = history.session
        if not await self._preview(history, rebased, title=f"apply again · {change.description}"):
            return
        if await self._commit(
            lambda: history.reapply(change), rebased, target=rebased.first, planned_on=planned_on, what=f"{change.description} (applied again)"
        ):
            if self.pending_change is change:
                self.pending_change = None
                self.refresh_bindings()  # type: ignore[attr-defined]

    # -- actions ------------------------------------------------------------------------------------------
    def action_edit(self) -> None:
        self._edit(external=False)

    def action_edit_external(self) -> None:
        self._edit(external=True)

    def _edit(self, external: bool) -> None:
        if self._refuse_if_not_writable():
            return
        n = self.transcript.cursor_number  # type: ignore[attr-defined]
        line = self._true_number(n)
        if line is None:
            return
        raw = self._raw_of(n)  # type: ignore[arg-type]
        self._start_flow("edit", lambda: self._edit_flow(line, raw, external))

    async def _edit_flow(self, n: int, raw: bytes | None, external: bool) -> None:
        history = await self._begin([(n, raw)])
        if history is None:
            return
        session = history.session
        error = ""
        try:
            json_text = edits.pretty_record(session, n)
        except Refused as exc:  # not valid JSON: edit its text to fix it
            json_text = session.doc.record(n).raw.decode("utf-8", "replace")
            error = f"{exc}: fix it here"
        content = editing.content_text(session, n)

        def plan(mode: str, text: str) -> Change:
            if mode == "content":
                return edits.plan_edit(session, n, content=text)
            return edits.plan_edit(session, n, json_text=text)

        mode = "json"
        change: Change | None = None
        if external:
            try:
                edited = self.app.external_editor(json_text)
            except ExternalEditorError as exc:
                self.notify(_one(exc), title="external editor", severity="warning", markup=False)
                return
            if edited.strip() == json_text.strip():
                self.notify(f"edit #{n}: no change, nothing to write", markup=False)
                return
            json_text = edited
            try:
                change = await self._hist(plan, "json", edited)
            except (InvalidEdit, Refused, ValueError) as exc:
                error = str(exc)  # shown in the in-app editor, with the text as it came back
        from sessionview.ui.screens.edit import EditorScreen

        title = f"edit #{n} · {session.format_title}"
        while True:
            if change is None:
                result = await self.app.push_screen_wait(EditorScreen(title, json_text, content, plan, mode=mode, error=_one(error) if error else ""))
                if result is None:
                    self.notify("edit cancelled: nothing was written", markup=False)
                    return
                json_text, content, mode, change = result.json_text, result.content_text, result.mode, result.change
            if editing.is_noop(change):
                self.notify(f"edit #{n}: no change, nothing to write", markup=False)
                return
            if await self._preview(history, change, cancel_label="back to the editor"):
                break
            change, error = None, ""
        await self._commit(lambda: history.apply(change), change, target=n, planned_on=session)

    def action_delete(self) -> None:
        if self._refuse_if_not_writable():
            return
        sel = self._selection()
        if sel is None:
            return
        first, last, raw_first, raw_last = sel
        self._start_flow("delete", lambda: self._delete_flow(first, last, raw_first, raw_last))

    async def _delete_flow(self, first: int, last: int, raw_first: bytes | None, raw_last: bytes | None) -> None:
        history = await self._begin([(first, raw_first), (last, raw_last)])
        if history is None:
            return
        session = history.session
        change = await self._plan(
            history, lambda s, a, b: edits.plan_delete(s, a, b), first, last, lambda a, b: f"widen to #{a}–#{b}"
        )
        if change is None or not await self._preview(history, change):
            return
        if await self._commit(lambda: history.apply(change), change, target=change.first, planned_on=session):
            self.transcript.clear_range()  # type: ignore[attr-defined]

    def action_truncate(self) -> None:
        if self._refuse_if_not_writable():
            return
        n = self.transcript.cursor_number  # type: ignore[attr-defined]
        keep = self._true_number(n)
        if keep is None:
            return
        raw = self._raw_of(n)  # type: ignore[arg-type]
        self._start_flow("truncate", lambda: self._truncate_flow(keep, raw))

    async def _truncate_flow(self, keep: int, raw: bytes | None) -> None:
        history = await self._begin([(keep, raw)])
        if history is None:
            return
        session = history.session
        if keep >= len(session):
            self.notify(f"#{keep} is the last record: nothing to truncate after it", markup=False)
            return
        change = await self._plan(
            history,
            lambda s, a, b: edits.plan_truncate(s, a - 1),
            keep + 1,
            len(session),
            lambda a, b: f"keep #1–#{a - 1} instead (truncate after #{a - 1})",
        )
        if change is None or not await self._preview(history, change):
            return
        await self._commit(lambda: history.apply(change), change, target=change.first - 1, planned_on=session)

    def action_mark_range(self) -> None:
        t = self.transcript  # type: ignore[attr-defined]
        if t.mark_range():
            self.notify("range started: move to extend it (↑↓ or shift+↑↓) · d deletes it · c compacts it · esc or v drops it", markup=False)
        self._refresh_status()  # type: ignore[attr-defined]

    def action_extend_range(self, delta: int) -> None:
        self.transcript.extend_range(delta)  # type: ignore[attr-defined]
        self._refresh_status()  # type: ignore[attr-defined]

    def action_compact(self) -> None:
        if self._refuse_if_not_writable():
            return
        if self.transcript.marked_range is None:  # type: ignore[attr-defined]
            self.notify("mark the range to compact first: v at one end, then move to the other (or shift+↑↓)", markup=False)
            return
        sel = self._selection()
        if sel is None:
            return
        first, last, raw_first, raw_last = sel
        self._start_flow("compact", lambda: self._compact_flow(first, last, raw_first, raw_last))

    async def _compact_flow(self, first: int, last: int, raw_first: bytes | None, raw_last: bytes | None) -> None:
        from sessionview.config import ConfigError, load_config
        from sessionview.ui.screens.edit import CompactScreen

        history = await self._begin([(first, raw_first), (last, raw_last)])
        if history is None:
            return
        session = history.session
        # the range first: a refusal (with its wider range) before anyone writes a summary for it
        probe = await self._plan(
            history,
            lambda s, a, b: edits.plan_compact(s, a, b, "(the range is checked before the summary is written)"),
            first,
            last,
            lambda a, b: f"widen to #{a}–#{b}",
        )
        if probe is None:
            return
        first, last = probe.first, probe.last
        try:
            cfg = load_config()
        except ConfigError as exc:
            self.notify(_one(exc), title="config", severity="warning", markup=False)
            cfg = None
        command = cfg.summarizer if cfg is not None else None
        timeout = cfg.summarizer_timeout if cfg is not None else summary.DEFAULT_TIMEOUT

        def summarize(on_start: Callable[[Any], None]) -> str:
            assert command is not None
            records = editing.range_records(session, first, last)
            return summary.run_summarizer(command, records, timeout, on_start=on_start).text

        def digest() -> str:
            return editing.range_digest(session, first, last)

        def plan(text: str) -> Change:
            return edits.plan_compact(session, first, last, text)

        count = last - first + 1
        size = await self._hist(editing.range_bytes, session, first, last)
        title = f"compact #{first}–#{last} · {session.format_title}"
        info = f"{count:,} record{'s' if count != 1 else ''} ({human_size(size)}) will be replaced by one summary message at #{first}."
        text = ""
        while True:
            result = await self.app.push_screen_wait(
                CompactScreen(title, info, plan, digest, summarize if command else None, summarizer_name=command or "", text=text)
            )
            if result is None:
                self.notify("compaction cancelled: nothing was written", markup=False)
                return
            text = result.text
            if await self._preview(history, result.change, cancel_label="back to the summary"):
                break
        change = result.change
        if await self._commit(lambda: history.apply(change), change, target=first, planned_on=session):
            self.transcript.clear_range()  # type: ignore[attr-defined]

    def action_undo(self) -> None:
        self._undo_redo(redo=False)

    def action_redo(self) -> None:
        self._undo_redo(redo=True)

    def _undo_redo(self, redo: bool) -> None:
        if self._refuse_if_not_writable():
            return
        stack = None if self.history is None else (self.history.redo_stack if redo else self.history.undo_stack)
        if not stack:
            self.notify("nothing to redo" if redo else "nothing to undo in this run", markup=False)
            return
        self._start_flow("redo" if redo else "undo", lambda: self._undo_redo_flow(redo))

    async def _undo_redo_flow(self, redo: bool) -> None:
        if not await self._live_ok():
            return
        history = await self._fresh_history()
        stack = history.redo_stack if redo else history.undo_stack
        if not stack:
            return
        done = stack[-1]
        wanted = done.change if redo else done.change.inverse
        try:
            change = await self._hist(rebase, history.session, wanted)
        except Refused as exc:
            self.notify(_one(exc), title="cannot " + ("redo" if redo else "undo"), severity="error", markup=False)
            return
        verb = "redo" if redo else "undo"
        session = history.session
        if not await self._preview(history, change, title=f"{verb} · {done.change.description}"):
            return
        op = history.redo if redo else history.undo
        await self._commit(op, change, target=change.first, planned_on=session, what=f"{verb} {done.change.description}")

    def action_reapply(self) -> None:
        if self._refuse_if_not_writable():
            return
        change = self.pending_change
        if change is None:
            self.notify("nothing to apply again", markup=False)
            return
        self._start_flow("apply again", lambda: self._reapply_flow(change))

    async def _reapply_flow(self, change: Change) -> None:
        if not await self._live_ok():
            return
        await self._reapply(change)

    # -- overwritten edits ----------------------------------------------------------------------------------
    def _maybe_check_overwritten(self) -> None:
        """After the file was rewritten or replaced: is our last edit still in it?"""
        history = self.history
        if history is None or not history.undo_stack or self.read_only:
            return
        if self.busy:
            self._recheck_overwritten = True
            return
        self.run_worker(self._check_overwritten(), group="overwritten", exclusive=True, exit_on_error=False)  # type: ignore[attr-defined]

    async def _check_overwritten(self) -> None:
        history = self.history
        if history is None:
            return
        try:
            lost = await self._hist(history.overwritten)
        except Exception:
            return
        if lost is None or lost is self.pending_change:
            return
        self.pending_change = lost
        self.edit_status = f"overwritten: {lost.description} is no longer in the file; a applies it again"
        self.refresh_bindings()  # type: ignore[attr-defined]
        self._refresh_status()  # type: ignore[attr-defined]
        self.notify(
            f"overwritten: the file was rewritten without {lost.description} (an agent wrote its own memory back). "
            "a applies it again",
            title="edit overwritten",
            severity="warning",
            timeout=10,
            markup=False,
        )

    # -- history and backups -----------------------------------------------------------------------------
    def action_history(self) -> None:
        if self.busy:
            self.notify(f"busy: {self.busy}", markup=False)
            return
        self._start_flow("history", self._history_flow)

    def _run_lines(self) -> list[str]:
        h = self.history
        if h is None:
            return []
        lines = [f"  ✓ {_one(d.change.description)}" for d in h.undo_stack]
        lines += [f"  ↶ {_one(d.change.description)} (undone)" for d in reversed(h.redo_stack)]
        return lines

    async def _history_flow(self) -> None:
        from sessionview.ui.screens.history import HistoryScreen

        found = await asyncio.to_thread(backups.list_backups, self.path)
        try:
            size: int | None = os.path.getsize(self.path)
        except OSError:
            size = None
        chosen = await self.app.push_screen_wait(
            HistoryScreen(self.display_path, found, self._run_lines(), current_size=size, read_only=self.read_only)
        )
        if chosen is None or self.read_only:
            return
        when = chosen.created.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        message = (
            f"Put back the backup saved {when} ({human_size(chosen.size)}) in place of {self.display_path}"
            f"{f' ({human_size(size)} now)' if size is not None else ''}?\n"
            "The file as it is now is backed up first, so this can be restored in turn "
            "(this run's undo list starts again after it)."
        )
        if not await self.app.push_screen_wait(ConfirmScreen("restore a backup", escape_control(message))):
            self.notify("restore cancelled: nothing was written", markup=False)
            return
        root = self._root()
        keep = self._true_number(self.transcript.cursor_number)  # type: ignore[attr-defined]

        def op() -> Any:
            result = backups.restore(self.path, root=root, backup=chosen)
            if self.history is not None:
                # the file is another version now: this run's edits are not undone one by one past it
                self.history.undo_stack.clear()
                self.history.redo_stack.clear()
                self.history.reload()
            return result

        await self._commit(op, None, target=keep, what=f"restore of the backup saved {when}")

