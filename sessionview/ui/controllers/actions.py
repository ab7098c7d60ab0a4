"""Which actions of the session screen write, and whether they may run now: light, so the screen can
answer the footer's questions before the editing flows (:mod:`.editing`) are imported."""

from __future__ import annotations

#: actions that write (or only serve writing): hidden in read-only mode
WRITE_ACTIONS = frozenset(
    {"edit", "edit_external", "delete", "truncate", "mark_range", "extend_range", "compact", "undo", "redo", "reapply", "drop_result"}
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
        "drop_result",
    }
)


def may_edit(action: str, read_only: bool, state: str, pending_change: object) -> bool:
    """Whether ``action`` may run: no writing while read-only or while nothing could be opened, and "apply
    again" only with an edit waiting to be applied."""
    if action in WRITE_ACTIONS and (read_only or state == "error"):
        return False
    if action == "reapply" and pending_change is None:
        return False
    return True
