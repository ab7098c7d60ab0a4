"""Write a planned change back to disk: the glue between :mod:`edits` and :mod:`save`.

The new file is the edited document followed by whatever was appended on disk since load (a rebase).
An appended tail can only be carried over while the record it continues is still last and untouched;
otherwise the save is refused as a conflict. A dry run renders a unified diff instead of writing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from sessionview.core.doc.document import Document
from sessionview.core.edit.plan import Change
from sessionview.core.errors import Conflict
from sessionview.core.text import decode_for_display

CONTEXT = 3


@dataclass
class Outcome:
    changed: bool
    description: str
    result: Any = None  # the save layer's SaveResult
    diff: str = ""


def _tail_is_kept(old: Document, change: Change) -> bool:
    """Whether bytes appended after load can be appended to the edited document as they are."""
    n = len(old)
    if n == 0:
        return True
    return change.last < n or (change.first > n)


def render_jsonl(old: Document, new: Document, change: Change, path: str):
    def render(appended: bytes) -> Iterator[bytes]:
        if appended and not _tail_is_kept(old, change):
            raise Conflict(
                f"conflict: {path} changed on disk: lines were appended after the last record, which this edit "
                "changes; reload and apply the edit again",
                path,
            )
        yield from new.iter_bytes()
        if appended:
            yield appended

    return render


def commit_jsonl(session: Any, change: Change, *, root: str, force: bool = False) -> Outcome:
    from sessionview.core.store import save as _save

    old = session.doc
    new = change.apply(old)
    if not new.edited:  # the piece table is the loaded source, untouched: nothing to write
        return Outcome(False, change.description)
    stamp = session.stamp
    result = _save.save(session.path, render_jsonl(old, new, change, session.path), stamp, root=root, force=force)
    return Outcome(bool(getattr(result, "changed", True)), change.description, result)


def commit(session: Any, change: Change, *, root: str, force: bool = False) -> Outcome:
    """Write ``change`` to ``session``'s file: a JSONL rebase, or a whole LittleGhost document."""
    if session.format == "littleghost":
        data = session.with_messages(change.apply(session.doc))
        if data == session.raw:
            return Outcome(False, change.description)
        return commit_bytes(session, data, change.description, root=root, force=force, lock_path=session.lock_path)
    return commit_jsonl(session, change, root=root, force=force)


def diff(session: Any, change: Change, path: str) -> str:
    """The dry-run diff. A LittleGhost document is one line, so its messages are diffed instead."""
    text = unified_diff(session.doc, change, path)
    if session.format == "littleghost":
        text = (
            f"# {path} is one JSON document: the diff shows its messages, one per line (#N = message index).\n"
            "# The document is rewritten whole with its digest recomputed.\n" + text
        )
    return text


def commit_bytes(session: Any, data: bytes, description: str, *, root: str, force: bool = False, lock_path: str | None = None) -> Outcome:
    """Whole-file formats (a LittleGhost document): any change on disk since load is a conflict."""
    from sessionview.core.store import save as _save

    stamp = session.stamp

    def render(appended: bytes) -> Iterator[bytes]:
        if appended:
            raise Conflict(f"conflict: {session.path} changed on disk since it was loaded", session.path)
        yield data

    result = _save.save(session.path, render, stamp, root=root, force=force, lock_path=lock_path)
    return Outcome(bool(getattr(result, "changed", True)), description, result)


# --------------------------------------------------------------------------------------------------
# diffs


def _show(raw: bytes, terminator: bytes) -> str:
    text = decode_for_display(raw)
    if terminator == b"\r\n":
        text += "\\r"
    return text


def unified_diff(old: Document, change: Change, path: str) -> str:
    """A unified diff of the file for ``change``, built from the changed range only (fast at any size)."""
    n = len(old)
    lo = max(1, change.first - CONTEXT)
    hi = min(n, change.last + CONTEXT)
    before = old.records(lo, change.first - 1)
    removed = old.records(change.first, change.last) if change.last >= change.first else []
    after = old.records(change.last + 1, hi)
    old_count = len(before) + len(removed) + len(after)
    new_count = len(before) + len(change.lines) + len(after)
    old_start = lo if old_count else max(0, lo - 1)
    new_start = lo if new_count else max(0, lo - 1)
    name = path
    lines = [f"--- a/{name}", f"+++ b/{name}", f"@@ -{old_start},{old_count} +{new_start},{new_count} @@ {change.description}"]
    lines += [" " + _show(r.raw, r.terminator) for r in before]
    lines += ["-" + _show(r.raw, r.terminator) for r in removed]
    lines += ["+" + _show(line.raw, line.terminator) for line in change.lines]
    lines += [" " + _show(r.raw, r.terminator) for r in after]
    if (after and after[-1].number == n and not after[-1].terminator) or (
        change.last >= n and change.lines and not change.lines[-1].terminator
    ):
        lines.append("\\ No newline at end of file")
    return "\n".join(lines) + "\n"


def bytes_diff(old: bytes, new: bytes, path: str) -> str:
    """A unified diff of two small whole files (LittleGhost documents, pretty-printed for reading)."""
    import difflib

    a = decode_for_display(old).split("\n")
    b = decode_for_display(new).split("\n")
    return "".join(
        line + ("" if line.endswith("\n") else "\n")
        for line in difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", lineterm="")
    )
