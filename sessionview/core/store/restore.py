"""Putting a backup back: through :func:`~sessionview.core.store.save.save`, with all its checks."""

from __future__ import annotations

import os
from typing import Iterator

from sessionview.core.errors import Conflict
from sessionview.core.store.backups import Backup, NoBackup, list_backups, open_backup
from sessionview.core.store.backup_copy import verified_chunks
from sessionview.core.store.paths import resolve_inside
from sessionview.core.store.save import SaveResult, save
from sessionview.core.store.stamp import LoadStamp, stamp_file

__all__ = ["restore"]


def restore(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str],
    force: bool = False,
    state_dir: str | os.PathLike[str] | None = None,
    lock_path: str | os.PathLike[str] | None = None,
    backup: Backup | None = None,
) -> SaveResult:
    """Put the newest backup (or ``backup``) back, through :func:`~sessionview.core.store.save.save` with all its checks.

    The file is stamped as it is now, so a change made between this call's read and its write is still a
    conflict. The restore makes a backup of the current content first: a second restore undoes the first.
    Lines appended while the restore runs are kept after the restored content.
    """
    given = os.fspath(path)
    real = resolve_inside(given, root)
    if backup is None:
        found = list_backups(real, state_dir=state_dir)
        if not found:
            raise NoBackup(f"refused: there is no backup of {given} to restore", given)
        backup = found[0]
    chosen = backup
    src = open_backup(chosen, given)
    try:
        return _restore_from(given, real, chosen, src, root=root, force=force, state_dir=state_dir, lock_path=lock_path)
    finally:
        os.close(src)


def _restore_from(
    given: str,
    real: str,
    chosen: Backup,
    src: int,
    *,
    root: str | os.PathLike[str],
    force: bool,
    state_dir: str | os.PathLike[str] | None,
    lock_path: str | os.PathLike[str] | None,
) -> SaveResult:
    try:
        stamp = stamp_file(real)
    except FileNotFoundError:
        raise Conflict(f"conflict: {given} changed on disk (it no longer exists); restore it by hand from "
                       f"{chosen.path}", given) from None
    stamp = LoadStamp(given, stamp.real_path, stamp.dev, stamp.ino, stamp.size, stamp.mtime_ns, stamp.hexdigest)

    def render(appended: bytes) -> Iterator[bytes]:
        yield from verified_chunks(chosen.path, src, given)  # a changed hard-linked backup raises before the rename
        yield appended

    return save(given, render, stamp, root=root, force=force, backup=True, state_dir=state_dir, lock_path=lock_path)
