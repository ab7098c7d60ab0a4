"""The writing half of editing: the edit history, the checks every writing flow starts with, the preview,
integrity refusals, the save itself, conflicts and edits an agent wrote over.

Every flow calls the same operation layer as the CLI (:mod:`sessionview.core.ops`): it plans a change, gives
its preview (rows and a diff) and says what a save did; :class:`~sessionview.core.edit.history.EditHistory` writes
it (a safe save with a backup, the same path as ``ops.commit``) and keeps it for undo. Nothing is written before
the user confirmed a preview. What the plan warns about (``Change.warnings``) is shown in the preview; what the
save reports (its warnings, bytes another process wrote that are not in the new file and where they are kept) is
shown after it, as a warning, and in the status line.

The history's session is the file fully loaded (with the hash the save checks), reloaded at the start of a
flow when the file changed; the transcript's own (end-first) model is only used to know what is selected.
While a save runs the follower is stopped (:meth:`Follow.suspend`), and the transcript reopens the new file
afterwards with the cursor near the edited record: our own replacement of the file is not reported as
"replaced".

Flows run as async workers (group ``edit``), one at a time; blocking core calls go to threads.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Awaitable, Callable

from sessionview.core import ops
from sessionview.core.edit import change as changes, history as edit_history, writeback
from sessionview.core.edit.change import Change
from sessionview.core.errors import AnotherWriter, Conflict, InvalidEdit, Refused, SaveError
from sessionview.core.edit.history import EditHistory, rebase
from sessionview.core.store.paths import default_root
from sessionview.core.text import escape_control
from sessionview.ui.controllers.follow import Follow
from sessionview.ui.controllers.host import SessionHost
from sessionview.ui.dialogs.confirm import ConfirmScreen, ConflictScreen, PreviewScreen, RefusalScreen
from sessionview.ui.wording import app_advice

LIVE_TEXT = (
    "This session is being written{ago}. An agent like Brute rewrites the whole file at the end of its turn, "
    "from its own memory: that can undo this edit. sessionview watches for it and offers to apply the edit "
    "again. Go on?"
)


FORCED_TEXT = "done anyway: the integrity check refused this (you chose f)"


def one_line(text: Any) -> str:
    return escape_control(str(text), one_line=True)


class Writer:
    """Writes changes to the host's file: ``host.busy`` and ``host.edit_status`` say what it does."""

    def __init__(self, host: SessionHost, follow: Follow) -> None:
        self.host = host
        self.follow = follow
        self.history: EditHistory | None = None
        self._history_lock = asyncio.Lock()
        self.pending_change: Change | None = None  # not in the file: a conflict or an overwrite (a applies it)
        self._recheck_overwritten = False

    def close(self) -> None:
        if self.history is not None:
            try:
                self.history.close()
            except Exception:
                pass
            self.history = None

    # -- guards ----------------------------------------------------------------------------------------
    def write_refusal(self) -> str | None:
        if self.host.read_only:
            return "read-only: this app was started with --read-only"
        if self.host.busy:
            return f"busy: {self.host.busy}; wait for it to finish"
        model = self.host.model
        if model is None:
            return "the session is not open yet"
        reason = getattr(model.session, "read_only_reason", None)
        if reason:
            return f"read-only: {reason}"
        if self.host.state == "deleted":
            return "the file was deleted: there is nothing to write to"
        return None

    def refuse_if_not_writable(self) -> bool:
        reason = self.write_refusal()
        if reason:
            self.host.notify(one_line(reason), title="cannot edit", severity="warning", markup=False)
            return True
        return False

    def true_number(self, n: int | None) -> int | None:
        model = self.host.model
        if model is None or n is None:
            self.host.notify("select a message first", markup=False)
            return None
        line = model.line_number(n)
        if line is None:
            self.host.notify("the file is still being indexed: try again in a moment", markup=False)
        return line

    def raw_of(self, n: int | None) -> bytes | None:
        rec = self.host.model.record(n) if self.host.model is not None and n is not None else None
        return rec.raw if rec is not None else None

    def selection(self) -> tuple[int, int, bytes | None, bytes | None] | None:
        """The marked range, or the selected message: true numbers, and their raw bytes as shown."""
        t = self.host.transcript
        marked = t.marked_range
        a, b = marked if marked is not None else (t.cursor_number, t.cursor_number)
        first = self.true_number(a)
        last = self.true_number(b) if first is not None else None
        if first is None or last is None or a is None or b is None:
            return None
        return first, last, self.raw_of(a), self.raw_of(b)

    def start_flow(self, what: str, flow: Callable[[], Awaitable[None]]) -> None:
        self.host.busy = what

        async def run() -> None:
            try:
                await flow()
            except Exception as exc:  # a flow must never take the app down; say what happened
                self.host.notify(f"{type(exc).__name__}: {one_line(exc)}", title=f"{what} failed", severity="error", markup=False)
            finally:
                self.host.busy = ""
                self.host.refresh_bindings()
                if self._recheck_overwritten:
                    self._recheck_overwritten = False
                    self.maybe_check_overwritten()

        self.host.run_worker(run(), group="edit", exit_on_error=False)

    # -- the history ------------------------------------------------------------------------------------
    async def hist(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking history/core call in a thread, one at a time."""
        async with self._history_lock:
            return await asyncio.to_thread(fn, *args)

    def root(self) -> str:
        """Saves stay inside the directory the app was opened on (symlinks may point anywhere within it)."""
        return getattr(self.host.app, "root", None) or default_root(self.host.path)

    async def fresh_history(self) -> EditHistory:
        def work() -> EditHistory:
            if self.history is None:
                self.history = EditHistory(self.host.path, self.root())
            elif not writeback.is_current(self.history.session, self.host.path):
                self.history.reload()
            return self.history

        return await self.hist(work)

    async def _same_selection(self, history: EditHistory, checks: list[tuple[int, bytes | None]]) -> bool:
        ok = all(edit_history.same_record(history.session, n, raw) for n, raw in checks)
        if not ok:
            self.host.notify(
                "the file changed under the selection (it is being rewritten?): look again once it has reloaded",
                title="not edited",
                severity="warning",
                markup=False,
            )
        return ok

    async def begin(self, checks: list[tuple[int, bytes | None]]) -> EditHistory | None:
        """The start of every writing flow: the live-session warning, a fresh history, and a check that the
        selected records are still what is on screen. None when any of them says stop."""
        if not await self.live_ok():
            return None
        history = await self.fresh_history()
        if not await self._same_selection(history, checks):
            return None
        return history

    async def live_ok(self) -> bool:
        if self.host.state != "live":
            return True
        ago = writeback.modified_ago(self.host.path, self.host.clock())
        when = f" (it changed {max(0, ago):.0f} s ago)" if ago is not None and ago < 3600 else ""
        return bool(await self.host.app.push_screen_wait(ConfirmScreen("⚠ live session", LIVE_TEXT.format(ago=when))))

    # -- preview, refusal, commit -------------------------------------------------------------------------
    @property
    def diff_name(self) -> str:
        """The file's name in diffs: as given when relative, else its base name (``a/x.jsonl``)."""
        return os.path.basename(self.host.display_path) if os.path.isabs(self.host.display_path) else self.host.display_path

    def _live_warning(self) -> str:
        if self.host.state == "live":
            return "the session is live: if the agent rewrites the file from its memory, the edit can be undone (you will be told)"
        return ""

    async def preview(
        self, history: EditHistory, change: Change, *, title: str = "", cancel_label: str = "cancel (nothing is written)", forced: bool = False
    ) -> bool:
        if changes.is_noop(change):
            self.host.notify(f"{change.description}: no change, nothing to write", markup=False)
            return False
        session = history.session

        def work() -> tuple[list, str]:
            return ops.preview(session, change), ops.diff(session, change, self.diff_name)

        rows, diff = await self.hist(work)
        summary_line = f"{changes.describe(change)} · {self.host.display_path} · {session.format_title}"
        screen = PreviewScreen(
            title or f"preview · {change.description}",
            one_line(summary_line),
            rows,
            diff,
            warning=" · ".join(w for w in (FORCED_TEXT if forced else "", self._live_warning(), *map(one_line, change.warnings)) if w),
            cancel_label=cancel_label,
        )
        return bool(await self.host.app.push_screen_wait(screen))

    async def plan(
        self,
        history: EditHistory,
        plan: Callable[[Any, int, int, bool], Change],
        first: int,
        last: int,
        widen_label: Callable[[int, int], str],
    ) -> tuple[Change, bool] | None:
        """Plan ``plan(session, first, last, force)``: the change, and whether the user had it done anyway.

        A refusal offers to widen to its suggestion (``w``) and, when the same plan with ``force`` would
        pass (the refusal is ``forceable``), to do it anyway after the warning (``f``)."""
        while True:
            try:
                return await self.hist(plan, history.session, first, last, False), False
            except Refused as exc:
                forced = await self._forced(plan, history, first, last) if exc.forceable else None
                suggestion = exc.suggestion
                message = app_advice(exc)
                if not exc.ids and suggestion is None and forced is None:  # no choice to make: say why
                    self.host.notify(one_line(message), title="refused", severity="error", markup=False)
                    return None
                label = widen_label(*suggestion) if suggestion else None
                choice = await self.host.app.push_screen_wait(RefusalScreen(message, exc.ids, label, anyway=forced is not None))
                if choice == "anyway" and forced is not None:
                    return forced, True
                if choice != "widen" or suggestion is None:
                    self.host.notify("cancelled: nothing was written", markup=False)
                    return None
                first, last = suggestion
            except (InvalidEdit, ValueError) as exc:
                self.host.notify(one_line(app_advice(exc)), title="cannot do that", severity="error", markup=False)
                return None

    async def _forced(self, plan: Callable[[Any, int, int, bool], Change], history: EditHistory, first: int, last: int) -> Change | None:
        """The change as it would be done anyway (``force``), or None when even that is refused."""
        try:
            return await self.hist(plan, history.session, first, last, True)
        except (Refused, InvalidEdit, ValueError):
            return None

    async def commit(self, op: Callable[[], Any], change: Change | None, *, target: int | None, planned_on: Any = None, what: str = "") -> bool:
        """Run the save ``op`` (in a thread) with the follower stopped, then show the new file."""
        history = self.history
        desc = what or (change.description if change is not None else "save")

        def guarded() -> Any:
            if planned_on is not None and history is not None and history.session is not planned_on:
                raise Conflict(f"conflict: {self.host.display_path} changed on disk while {desc} was being prepared", self.host.path)
            return op()

        self.host.busy = f"saving ({desc})"
        self.follow.suspend()
        try:
            try:
                done = await self.hist(guarded)
            except AnotherWriter as exc:
                if change is None or history is None or not await self._save_anyway(exc):
                    raise
                history.force = True  # the user said: save anyway (the writer's later writes go to the old file)
                try:
                    done = await self.hist(guarded)
                finally:
                    history.force = False
        except Conflict as exc:
            self.follow.reopen_after_save(None, saved=False)
            if change is not None:
                await self._conflict(exc, change, history)
            else:
                self.host.notify(one_line(exc), title="conflict", severity="error", markup=False)
            return False
        except (SaveError, Refused) as exc:
            self.follow.reopen_after_save(None, saved=False)
            self.host.notify(one_line(app_advice(exc)), title="not saved", severity="error", markup=False)
            return False
        except BaseException:
            self.follow.reopen_after_save(None, saved=False)
            raise
        outcome = getattr(done, "outcome", done)
        self._tell_saved(desc, ops.describe(outcome) if isinstance(outcome, ops.Outcome) else None)
        self.follow.reopen_after_save(target, saved=True)
        return True

    def _tell_saved(self, desc: str, what: ops.Description | None) -> None:
        """Say a save went through, and loudly what it reported: bytes another process wrote that are not
        in the new file (an error, naming where they are kept) and the save layer's warnings."""
        extra = what.extra if what is not None else ""
        missing = what.missing if what is not None else ""
        warnings = what.warnings if what is not None else ()
        self.host.edit_status = f"saved: {desc}" + (f" · ⚠ {one_line(missing)}" if missing else "")
        self.host.refresh_bindings()
        self.host.notify(
            f"saved: {desc} · a backup was kept · u undoes" + (f" · {extra}" if extra else ""),
            title="saved" if not warnings else "saved, with a warning",
            severity="warning" if warnings else "information",
            markup=False,
        )
        if missing:
            self.host.notify(one_line(missing), title="bytes not in the new file", severity="error", timeout=30, markup=False)

    async def _save_anyway(self, exc: AnotherWriter) -> bool:
        message = (
            f"{app_advice(exc)}.\n\nOr save anyway? What that process writes later goes to the file that is "
            "replaced, not to the new one: it can be lost, or the process can write the old session back."
        )
        question = ConfirmScreen("another process is writing this file", escape_control(message), keys="y: save anyway · n or esc: do not save")
        return bool(await self.host.app.push_screen_wait(question))

    async def _conflict(self, exc: BaseException, change: Change, history: EditHistory | None) -> None:
        self.pending_change = change
        self.host.edit_status = f"conflict: {change.description} was not written; a applies it again"
        self.host.refresh_bindings()
        self.host.notify(f"conflict: {change.description} was not written (the file changed on disk); the edit is kept", severity="warning", markup=False)
        diff = ""
        if history is not None:
            try:
                diff = await self.hist(ops.diff, history.session, change, self.diff_name)
            except Exception as err:  # the loaded file may be gone
                diff = f"# the diff cannot be shown: {err}\n"
        choice = await self.host.app.push_screen_wait(ConflictScreen(str(exc), change.description, diff))
        if choice == "reapply":
            await self.reapply(change)

    async def reapply(self, change: Change) -> None:
        history = await self.fresh_history()

        def prepare() -> Change:
            history.reload()
            return rebase(history.session, change)

        try:
            rebased = await self.hist(prepare)
        except Refused as exc:
            self.host.notify(f"cannot apply it again: {one_line(exc)}", severity="error", markup=False)
            return
        planned_on = history.session
        if not await self.preview(history, rebased, title=f"apply again · {change.description}"):
            return
        if await self.commit(
            lambda: history.reapply(change), rebased, target=rebased.first, planned_on=planned_on, what=f"{change.description} (applied again)"
        ):
            if self.pending_change is change:
                self.pending_change = None
                self.host.refresh_bindings()

    # -- overwritten edits ----------------------------------------------------------------------------------
    def maybe_check_overwritten(self) -> None:
        """After the file was rewritten or replaced: is our last edit still in it?"""
        history = self.history
        if history is None or not history.done or self.host.read_only:
            return
        if self.host.busy:
            self._recheck_overwritten = True
            return
        self.host.run_worker(self._check_overwritten(), group="overwritten", exclusive=True, exit_on_error=False)

    async def _check_overwritten(self) -> None:
        history = self.history
        if history is None:
            return
        try:
            lost = await self.hist(history.overwritten)
        except Exception:
            return
        if lost is None or lost is self.pending_change:
            return
        self.pending_change = lost
        self.host.edit_status = f"overwritten: {lost.description} is no longer in the file; a applies it again"
        self.host.refresh_bindings()
        self.host.notify(
            f"overwritten: the file was rewritten without {lost.description} (an agent wrote its own memory back). "
            "a applies it again",
            title="edit overwritten",
            severity="warning",
            timeout=10,
            markup=False,
        )

