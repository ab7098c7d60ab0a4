"""How many backups are kept: the last ``keep`` per file and at most ``max_bytes`` in all, oldest pruned first.

The policy comes from ``config.toml`` (``backups_keep``, ``backups_max_bytes``; see :mod:`sessionview.core.config`)
and is applied after every backup is written (:func:`prune_after_backup`) and by ``sessionview prune``.

* The newest backup of a file is never pruned, whatever the limits (so ``max_bytes`` can be exceeded by
  the newest backups alone), nor is the backup just written.
* ``max_bytes`` counts the ``.bak`` files of every file under the backups root; when they are over it,
  the oldest backups (of any file, or of the files named) go first. It counts the bytes really used: a
  backup that is a hard link (:mod:`.backup_copy`) costs its inode's size once, and nothing while that
  inode still has a name outside the backups (the session file itself, when a save was stopped between
  its link and its rename): removing the backup would free nothing. Reflinked copies are counted whole
  (what they share cannot be told cheaply).
* Unmerged-bytes files (``.unmerged``) are never pruned here and not counted: they hold bytes another
  program wrote that a save could not merge, and only the user may decide to drop them. They are listed.
* Untrusted entries (another user's, or writable by group or others) are neither counted nor removed;
  they are listed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable

from sessionview.core.store import backups as _backups
from sessionview.core.store.backup_copy import RECORDS
from sessionview.core.sizes import format_size, parse_size

__all__ = ["Retention", "PruneReport", "prune", "prune_after_backup", "current_retention", "usage", "used_bytes"]

DEFAULT_KEEP = 20
DEFAULT_MAX_BYTES = 2 * 1024**3


@dataclass(frozen=True, slots=True)
class Retention:
    keep: int = DEFAULT_KEEP  # backups kept per file (at least 1)
    max_bytes: int = DEFAULT_MAX_BYTES  # all files' backups together

    def __post_init__(self) -> None:
        if isinstance(self.keep, bool) or not isinstance(self.keep, int) or self.keep < 1:
            raise ValueError(f"the number of backups kept per file must be a whole number of at least 1; got {self.keep!r}")
        parse_size(self.max_bytes, "the size of all backups")

    def describe(self) -> str:
        n = "backup" if self.keep == 1 else f"{self.keep} backups"
        return f"keeping the last {n} per file, {format_size(self.max_bytes)} in all"


def current_retention() -> Retention:
    """The policy of the user's config file (defaults if there is none); a bad value is a ConfigError."""
    from sessionview.core.config import load_config

    c = load_config()
    return Retention(c.backups_keep, c.backups_max_bytes)


@dataclass
class PruneReport:
    retention: Retention
    removed: list[_backups.Backup] = field(default_factory=list)  # oldest first (or, dry run, to remove)
    kept: list[_backups.Backup] = field(default_factory=list)
    unmerged: list[_backups.Backup] = field(default_factory=list)  # never pruned: for the user to look at
    untrusted: list[_backups.Backup] = field(default_factory=list)  # left alone
    dry_run: bool = False

    @property
    def freed(self) -> int:
        return sum(b.size for b in self.removed)

    @property
    def used(self) -> int:
        """Bytes the kept backups of every file under the root really use (after the prune)."""
        return used_bytes(self.kept, _names(self.kept))


def prune(
    paths: list[str] | None = None,
    *,
    retention: Retention | None = None,
    dry_run: bool = False,
    state_dir: str | os.PathLike[str] | None = None,
    protect: frozenset[str] = frozenset(),
) -> PruneReport:
    """Bring the backups within ``retention`` (default: the config's), removing oldest first.

    With ``paths``, only the backups of those files are removed (the byte limit still counts every file's).
    Never removes the newest backup of a file, a path in ``protect``, an unmerged file or an untrusted entry.
    Raises :class:`~sessionview.core.store.backups.UntrustedBackup` if the backups root itself is not the user's own.
    """
    policy = retention or current_retention()
    root = _backups.backups_root(state_dir)
    why = _backups.dir_distrust(root)
    if why:
        raise _backups.UntrustedBackup(f"refused: the backups root is not yours to trust ({why}); nothing was pruned", root)
    groups = _backups.scan_root(root)
    chosen = None if paths is None else {_backups.backup_dir(p, state_dir) for p in paths}
    report = PruneReport(policy, dry_run=dry_run)
    remove: set[str] = set()
    trusted: dict[str, list[_backups.Backup]] = {}
    for d, (baks, unmerged) in groups.items():
        if chosen is not None and d not in chosen:
            trusted[d] = [b for b in baks if not b.untrusted]
            continue
        report.unmerged.extend(unmerged)
        report.untrusted.extend(b for b in baks if b.untrusted)
        ok = trusted[d] = [b for b in baks if not b.untrusted]
        remove.update(b.path for b in ok[policy.keep:] if b.path not in protect)
    names = _names(b for ok in trusted.values() for b in ok)

    def still_used() -> int:
        return used_bytes((b for ok in trusted.values() for b in ok if b.path not in remove), names)

    used = still_used()
    if used > policy.max_bytes:
        candidates = [b for d, ok in trusted.items() if chosen is None or d in chosen for b in ok[1:]]
        candidates.sort(key=lambda b: b.key)
        for b in candidates:
            if used <= policy.max_bytes:
                break
            if b.path in remove or b.path in protect:
                continue
            remove.add(b.path)
            used = still_used()
    for ok in trusted.values():
        for b in ok:
            (report.removed if b.path in remove else report.kept).append(b)
    report.removed.sort(key=lambda b: b.key)
    if not dry_run:
        gone = []
        for b in report.removed:
            try:
                os.unlink(b.path)
            except FileNotFoundError:  # pruned meanwhile by another process
                pass
            except OSError:
                report.kept.append(b)
                continue
            for suffix in RECORDS:
                try:
                    os.unlink(b.path + suffix)
                except OSError:
                    pass
            gone.append(b)
        report.removed = gone
    return report


def usage(state_dir: str | os.PathLike[str] | None = None) -> int:
    """Bytes of every trusted backup under the root (unmerged files not counted)."""
    root = _backups.backups_root(state_dir)
    found = [b for baks, _ in _backups.scan_root(root).values() for b in baks if not b.untrusted]
    return used_bytes(found, _names(found))


def _names(found: Iterable[_backups.Backup]) -> dict[tuple[int, int], int]:
    """How many of the backups ``found`` name each inode."""
    out: dict[tuple[int, int], int] = {}
    for b in found:
        out[b.inode] = out.get(b.inode, 0) + 1
    return out


def used_bytes(kept: Iterable[_backups.Backup], names: dict[tuple[int, int], int]) -> int:
    """The bytes ``kept`` really use: each inode once, and none for an inode that also has a name outside
    the backups (``names``: how many backups name each inode; fewer than its links means a name elsewhere)."""
    seen: dict[object, int] = {}
    for b in kept:
        key: object = b.inode if b.inode != (0, 0) else b.path
        if key not in seen:
            seen[key] = b.size if b.inode == (0, 0) or b.nlink <= names.get(b.inode, 0) else 0
    return sum(seen.values())


def prune_after_backup(made: _backups.Backup, *, state_dir: str | None) -> PruneReport | None:
    """The automatic prune after a backup is written; never raises (pruning is never worth a failed save).

    A broken config file means no pruning until it is fixed (``history``, ``prune`` and the app report it).
    """
    try:
        return prune(state_dir=state_dir, protect=frozenset({made.path}))
    except (OSError, ValueError, _backups.SaveError):
        return None
