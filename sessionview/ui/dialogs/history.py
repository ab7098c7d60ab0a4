"""The history of a session file: this run's edits (undo and redo stacks) and the backups every save
keeps, newest first, then the files holding bytes a save could not merge (marked "unmerged"). Choosing a
backup hands it back to the session screen, which asks before restoring. An untrusted backup (another user's,
or one in a directory others can write) is marked UNTRUSTED with the reason and is never offered; nor is an
unmerged file (it is not a copy of the session)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import DataTable, Static

from sessionview.core.view.humanize import human_size
from sessionview.core.text import escape_control
from sessionview.ui.dialogs.modal import MODAL_CSS, Dialog


class HistoryScreen(Dialog[Any]):
    """Returns the chosen :class:`~sessionview.core.store.backups.Backup`, or None."""

    DEFAULT_CSS = "HistoryScreen {" + MODAL_CSS + """
        #history-run { height: auto; max-height: 8; margin-bottom: 1; }
        DataTable { height: 1fr; }
    }"""

    BINDINGS = [
        Binding("r,enter", "restore", "Restore…", id="history.restore"),
        Binding("escape,q", "reply(None)", "Close", id="history.close"),
    ]

    def __init__(self, path: str, backups: list[Any], run: list[str], *, current_size: int | None, read_only: bool) -> None:
        super().__init__()
        self.path = path
        self.backups = backups
        self.run = run
        self.current_size = current_size
        self.read_only = read_only

    def compose_box(self) -> ComposeResult:
        yield Static(Content(f"history · {escape_control(self.path, one_line=True)}"), classes="modal-title")
        run = "\n".join(self.run) if self.run else "no edit in this run"
        yield Static(Content("this run (u undoes, ctrl+r redoes):\n" + run), id="history-run", classes="modal-hint")
        yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
        hint = "backups, newest first: each save keeps one of the file as it was before."
        if not self.read_only:
            hint += " r or enter restores the selected one (after a confirmation; the file as it is now is backed up too)."
        yield Static(Content(hint), classes="modal-hint", id="history-hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        notes = [self.note(b) for b in self.backups]
        table.add_columns("#", "saved (local time)", "size", "vs. now", *(("note",) if any(notes) else ()))
        for i, b in enumerate(self.backups, 1):
            when = b.created.astimezone().strftime("%Y-%m-%d %H:%M:%S")
            delta = ""
            if self.current_size is not None:
                d = b.size - self.current_size
                delta = "same size" if d == 0 else f"{'+' if d > 0 else '−'}{human_size(abs(d))}"
            note = (Content(notes[i - 1]),) if any(notes) else ()
            table.add_row(str(i), when, human_size(b.size), delta, *note, key=str(i - 1))
        if not self.backups:
            self.query_one("#history-hint", Static).update(Content("no backups of this file yet: they are made by saves"))
        elif any(notes) and not self.read_only:
            hint = "backups, newest first, then unmerged files: r or enter restores the selected backup (after a confirmation)"
            self.query_one("#history-hint", Static).update(Content(hint + "; an UNTRUSTED one or an unmerged file is never restored."))
        table.focus()

    @staticmethod
    def note(b: Any) -> str:
        """What the row is when it is not a plain backup: untrusted (with why) or unmerged bytes."""
        marks = []
        if getattr(b, "untrusted", ""):
            marks.append(f"UNTRUSTED: {escape_control(b.untrusted, one_line=True)} (not restored)")
        if getattr(b, "kind", "backup") == "unmerged":
            marks.append(f"unmerged: bytes a save could not merge, kept in {escape_control(b.path, one_line=True)}")
        return " · ".join(marks)

    @staticmethod
    def restorable(b: Any) -> bool:
        return b is not None and not getattr(b, "untrusted", "") and getattr(b, "kind", "backup") == "backup"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "restore" and (self.read_only or not self.backups):
            return False
        return True

    @property
    def selected(self) -> Any:
        table = self.query_one(DataTable)
        if not self.backups:
            return None
        return self.backups[max(0, min(table.cursor_row, len(self.backups) - 1))]

    def action_restore(self) -> None:
        if self.read_only or not self.backups:
            return
        chosen = self.selected
        if not self.restorable(chosen):
            self.notify(f"not restored: {self.note(chosen)}", title="cannot restore", severity="warning", markup=False)
            return
        self.dismiss(chosen)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_restore()
