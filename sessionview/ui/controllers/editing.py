"""The editing flows of the session screen: edit, delete, truncate, compact, undo, redo, apply again and
restore a backup. Each action checks it may write, takes what is selected, and runs its flow with the
:class:`~sessionview.ui.controllers.writer.Writer` (one at a time, as an ``edit`` worker)."""

from __future__ import annotations

import asyncio
import os
from typing import Any, Callable

from sessionview.core import ops
from sessionview.core.edit import change as changes, encode, summary
from sessionview.core.edit.change import Change
from sessionview.core.edit.history import rebase
from sessionview.core.errors import InvalidEdit, Refused
from sessionview.core.view.humanize import human_size
from sessionview.core.text import escape_control
from sessionview.ui.controllers.actions import EDIT_BINDING_IDS, WRITE_ACTIONS, may_edit  # noqa: F401  (re-exported)
from sessionview.ui.controllers.host import SessionHost
from sessionview.ui.controllers.writer import Writer, one_line
from sessionview.ui.external import ExternalEditorError
from sessionview.ui.dialogs.confirm import ConfirmScreen
from sessionview.ui.wording import app_advice, plural

#: the summary of the compaction planned only to check its range, before the real summary is written
PROBE_SUMMARY = "(the range is checked before the summary is written)"


class Editing:
    """The edit actions of ``host``; ``writer`` does the writing (and keeps the history)."""

    def __init__(self, host: SessionHost, writer: Writer) -> None:
        self.host = host
        self.w = writer

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return may_edit(action, self.host.read_only, self.host.state, self.w.pending_change)

    def edit(self) -> None:
        self._edit(external=False)

    def edit_external(self) -> None:
        self._edit(external=True)

    def _edit(self, external: bool) -> None:
        if self.w.refuse_if_not_writable():
            return
        n = self.host.transcript.cursor_number
        line = self.w.true_number(n)
        if line is None:
            return
        raw = self.w.raw_of(n)
        self.w.start_flow("edit", lambda: self._edit_flow(line, raw, external))

    async def _edit_flow(self, n: int, raw: bytes | None, external: bool) -> None:
        history = await self.w.begin([(n, raw)])
        if history is None:
            return
        session = history.session
        error = ""
        try:
            json_text = encode.pretty_record(session, n)
        except Refused as exc:  # not valid JSON: edit its text to fix it
            json_text = session.doc.record(n).raw.decode("utf-8", "replace")
            error = f"{app_advice(exc)}: fix it here"
        content = encode.content_text(session, n)

        def plan(mode: str, text: str, force: bool = False) -> Change:
            if mode == "content":
                return ops.plan_edit(session, n, content=text, force=force)
            return ops.plan_edit(session, n, json_text=text, force=force)

        mode = "json"
        original = (json_text, content)
        change: Change | None = None
        forced = False
        if external:
            try:
                edited = self.host.app.external_editor(json_text)
            except ExternalEditorError as exc:
                self.host.notify(one_line(exc), title="external editor", severity="warning", markup=False)
                return
            if edited.strip() == json_text.strip():
                self.host.notify(f"edit #{n}: no change, nothing to write", markup=False)
                return
            json_text = edited
            try:
                change = await self.w.hist(plan, "json", edited)
            except (InvalidEdit, Refused, ValueError) as exc:
                error = app_advice(exc)  # shown in the in-app editor, with the text as it came back
        from sessionview.ui.dialogs.edit import EditorScreen

        title = f"edit #{n} · {session.format_title}"
        while True:
            if change is None:
                editor = EditorScreen(title, json_text, content, plan, mode=mode, error=one_line(error) if error else "", original=original)
                result = await self.host.app.push_screen_wait(editor)
                if result is None:
                    self.host.notify("edit cancelled: nothing was written", markup=False)
                    return
                json_text, content, mode, change, forced = result.json_text, result.content_text, result.mode, result.change, result.forced
            if changes.is_noop(change):
                self.host.notify(f"edit #{n}: no change, nothing to write", markup=False)
                return
            if await self.w.preview(history, change, cancel_label="back to the editor", forced=forced):
                break
            change, error, forced = None, "", False
        await self.w.commit(lambda: history.apply(change), change, target=n, planned_on=session)

    def delete(self) -> None:
        if self.w.refuse_if_not_writable():
            return
        sel = self.w.selection()
        if sel is not None:
            self._start_range("delete", ops.plan_delete, sel)

    def _start_range(self, name: str, planner: Callable[..., Any], sel: tuple[int, int, bytes | None, bytes | None]) -> None:
        """Plan ``planner(session, first, last, force=)`` over the selected range, preview, save (delete, drop result)."""
        first, last, raw_first, raw_last = sel
        self.w.start_flow(name, lambda: self._range_flow(planner, first, last, raw_first, raw_last))

    async def _range_flow(self, planner: Callable[..., Any], first: int, last: int, raw_first: bytes | None, raw_last: bytes | None) -> None:
        history = await self.w.begin([(first, raw_first), (last, raw_last)])
        if history is None:
            return
        session = history.session
        planned = await self.w.plan(
            history, lambda s, a, b, force: planner(s, a, b, force=force), first, last, lambda a, b: f"widen to #{a}-#{b}"
        )
        if planned is None:
            return
        change, forced = planned
        if not await self.w.preview(history, change, forced=forced):
            return
        if await self.w.commit(lambda: history.apply(change), change, target=change.first, planned_on=session):
            self.host.transcript.clear_range()

    def truncate(self) -> None:
        if self.w.refuse_if_not_writable():
            return
        n = self.host.transcript.cursor_number
        keep = self.w.true_number(n)
        if keep is None:
            return
        raw = self.w.raw_of(n)
        self.w.start_flow("truncate", lambda: self._truncate_flow(keep, raw))

    async def _truncate_flow(self, keep: int, raw: bytes | None) -> None:
        history = await self.w.begin([(keep, raw)])
        if history is None:
            return
        session = history.session
        if keep >= len(session):
            self.host.notify(f"#{keep} is the last record: nothing to truncate after it", markup=False)
            return
        planned = await self.w.plan(
            history,
            lambda s, a, b, force: ops.plan_truncate(s, a - 1, force=force),
            keep + 1,
            len(session),
            lambda a, b: f"keep #1-#{a - 1} instead (truncate after #{a - 1})" if a > 1 else "empty the session instead (keep no record)",
        )
        if planned is None:
            return
        change, forced = planned
        if not await self.w.preview(history, change, forced=forced):
            return
        await self.w.commit(lambda: history.apply(change), change, target=change.first - 1, planned_on=session)

    def mark_range(self) -> None:
        t = self.host.transcript
        if t.mark_range():
            self.host.notify("range started: move to extend it (↑↓ or shift+↑↓) · d deletes it · c compacts it · esc or v drops it", markup=False)

    def extend_range(self, delta: int) -> None:
        self.host.transcript.extend_range(delta)

    def compact(self) -> None:
        if self.w.refuse_if_not_writable():
            return
        if self.host.transcript.marked_range is None:
            self.host.notify("mark the range to compact first: v at one end, then move to the other (or shift+↑↓)", markup=False)
            return
        sel = self.w.selection()
        if sel is None:
            return
        first, last, raw_first, raw_last = sel
        self.w.start_flow("compact", lambda: self._compact_flow(first, last, raw_first, raw_last))

    async def _compact_flow(self, first: int, last: int, raw_first: bytes | None, raw_last: bytes | None) -> None:
        from sessionview.core.config import ConfigError, load_config
        from sessionview.ui.dialogs.edit import CompactScreen

        history = await self.w.begin([(first, raw_first), (last, raw_last)])
        if history is None:
            return
        session = history.session
        # the range first: a refusal (with its wider range) before anyone writes a summary for it
        planned = await self.w.plan(
            history,
            lambda s, a, b, force: ops.plan_compact(s, a, b, ops.SummarySource(text=PROBE_SUMMARY), force=force),
            first,
            last,
            lambda a, b: f"widen to #{a}-#{b}",
        )
        if planned is None:
            return
        probe, forced = planned
        first, last = probe.first, probe.last
        try:
            cfg = load_config()
        except ConfigError as exc:
            self.host.notify(one_line(exc), title="config", severity="warning", markup=False)
            cfg = None
        command = cfg.summarizer if cfg is not None else None
        source = ops.SummarySource(command=command, timeout=cfg.summarizer_timeout) if cfg is not None and command else None

        def summarize(on_start: Callable[[Any], None]) -> str:
            assert source is not None
            return ops.compaction_summary(session, first, last, source, on_start=on_start)

        def digest() -> str:
            return ops.compaction_summary(session, first, last, ops.SummarySource())

        def plan(text: str) -> Change:  # done anyway when the user said so
            return ops.plan_compact(session, first, last, ops.SummarySource(text=text), force=forced)

        count = last - first + 1
        size = await self.w.hist(summary.range_bytes, session, first, last)
        title = f"compact #{first}-#{last} · {session.format_title}"
        info = f"{plural(count, 'record')} ({human_size(size)}) will be replaced by one summary message at #{first}."
        text = ""
        while True:
            result = await self.host.app.push_screen_wait(
                CompactScreen(title, info, plan, digest, summarize if source else None, summarizer_name=command or "", text=text)
            )
            if result is None:
                self.host.notify("compaction cancelled: nothing was written", markup=False)
                return
            text = result.text
            if await self.w.preview(history, result.change, cancel_label="back to the summary", forced=forced):
                break
        change = result.change
        if await self.w.commit(lambda: history.apply(change), change, target=first, planned_on=session):
            self.host.transcript.clear_range()

    # -- drop a tool result's content (the marked range, the selected message, or record ``number``) ----
    def drop_result(self, number: int | None = None) -> None:
        if self.w.refuse_if_not_writable():
            return
        if number is None:
            sel = self.w.selection()
        else:
            line = self.w.true_number(number)
            raw = self.w.raw_of(number)
            sel = (line, line, raw, raw) if line is not None else None
        if sel is not None:
            self._start_range("drop result", ops.plan_drop_result, sel)

    def undo(self) -> None:
        self._undo_redo(redo=False)

    def redo(self) -> None:
        self._undo_redo(redo=True)

    def _undo_redo(self, redo: bool) -> None:
        if self.w.refuse_if_not_writable():
            return
        stack = None if self.w.history is None else (self.w.history.undone if redo else self.w.history.done)
        if not stack:
            self.host.notify("nothing to redo" if redo else "nothing to undo in this run", markup=False)
            return
        self.w.start_flow("redo" if redo else "undo", lambda: self._undo_redo_flow(redo))

    async def _undo_redo_flow(self, redo: bool) -> None:
        if not await self.w.live_ok():
            return
        history = await self.w.fresh_history()
        stack = history.undone if redo else history.done
        if not stack:
            return
        done = stack[-1]
        wanted = done.change if redo else done.change.inverse
        try:
            change = await self.w.hist(rebase, history.session, wanted)
        except Refused as exc:
            self.host.notify(one_line(app_advice(exc)), title="cannot " + ("redo" if redo else "undo"), severity="error", markup=False)
            return
        verb = "redo" if redo else "undo"
        session = history.session
        if not await self.w.preview(history, change, title=f"{verb} · {done.change.description}"):
            return
        op = history.redo if redo else history.undo
        await self.w.commit(op, change, target=change.first, planned_on=session, what=f"{verb} {done.change.description}")

    def reapply(self) -> None:
        if self.w.refuse_if_not_writable():
            return
        change = self.w.pending_change
        if change is None:
            self.host.notify("nothing to apply again", markup=False)
            return
        self.w.start_flow("apply again", lambda: self._reapply_flow(change))

    async def _reapply_flow(self, change: Change) -> None:
        if not await self.w.live_ok():
            return
        await self.w.reapply(change)

    # -- history and backups -----------------------------------------------------------------------------
    def show_history(self) -> None:
        if self.host.busy:
            self.host.notify(f"busy: {self.host.busy}", markup=False)
            return
        self.w.start_flow("history", self._history_flow)

    def _run_lines(self) -> list[str]:
        h = self.w.history
        if h is None:
            return []
        lines = [f"  ✓ {one_line(d.change.description)}" for d in h.done]
        lines += [f"  ↶ {one_line(d.change.description)} (undone)" for d in reversed(h.undone)]
        return lines

    async def _history_flow(self) -> None:
        from sessionview.ui.dialogs.history import HistoryScreen

        found = await asyncio.to_thread(ops.backup_files, self.host.path)
        try:
            size: int | None = os.path.getsize(self.host.path)
        except OSError:
            size = None
        chosen = await self.host.app.push_screen_wait(
            HistoryScreen(self.host.display_path, found, self._run_lines(), current_size=size, read_only=self.host.read_only)
        )
        if chosen is None or self.host.read_only or chosen.untrusted or chosen.kind != "backup":
            return  # the dialog offers neither an untrusted backup nor an unmerged file
        when = chosen.created.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        message = (
            f"Put back the backup saved {when} ({human_size(chosen.size)}) in place of {self.host.display_path}"
            f"{f' ({human_size(size)} now)' if size is not None else ''}?\n"
            "The file as it is now is backed up first, so this can be restored in turn "
            "(this run's undo list starts again after it)."
        )
        if not await self.host.app.push_screen_wait(ConfirmScreen("restore a backup", escape_control(message))):
            self.host.notify("restore cancelled: nothing was written", markup=False)
            return
        root = self.w.root()
        keep = self.w.true_number(self.host.transcript.cursor_number)

        def op() -> Any:
            outcome = ops.restore_backup(self.host.path, chosen, root=root)
            if self.w.history is not None:
                # the file is another version now: this run's edits are not undone one by one past it
                self.w.history.forget()
            return outcome

        await self.w.commit(op, None, target=keep, what=f"restore of the backup saved {when}")

