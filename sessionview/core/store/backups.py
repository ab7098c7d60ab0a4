"""Byte-exact backups of session files, taken before every save replaces one.

Backups live under the state directory, never next to the session files:

* ``$SESSIONVIEW_STATE_DIR`` when set: it is the backups root itself;
* else ``$XDG_STATE_HOME/sessionview/backups`` (``XDG_STATE_HOME`` must be absolute);
* else ``~/.local/state/sessionview/backups``.

Under the root each original file gets a directory named ``sha256(real path)[:16]`` holding a ``path``
file (the original real path, raw bytes) and backups named ``YYYYmmddTHHMMSS.ffffff-<n>.bak`` (UTC time of
the backup, ``n`` distinguishes backups of the same microsecond), so names sort by time. A backup is
written to a temporary file, checked against the hash the save verified, fsynced, and only then given
its ``.bak`` name: a ``.bak`` file is always complete. Directories are 0700 and files 0600.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterator

from sessionview.core.store import save as _save
from sessionview.core.errors import Conflict, SaveError

__all__ = [
    "Backup",
    "NoBackup",
    "backups_root",
    "backup_dir",
    "list_backups",
    "write_backup",
    "restore",
    "STATE_ENV",
]

STATE_ENV = "SESSIONVIEW_STATE_DIR"
_NAME = re.compile(r"^(\d{8}T\d{6}\.\d{6})-(\d+)\.bak$")
_TIME_FORMAT = "%Y%m%dT%H%M%S.%f"
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class NoBackup(SaveError):
    """There is no backup to restore."""


@dataclass(frozen=True, slots=True)
class Backup:
    path: str  # the .bak file
    created: datetime  # UTC, from the name
    size: int
    original: str  # real path of the file it is a copy of
    sequence: int = 0  # n in the name

    @property
    def key(self) -> tuple[str, int]:
        return (self.created.strftime(_TIME_FORMAT), self.sequence)


def backups_root(state_dir: str | os.PathLike[str] | None = None) -> str:
    """The directory that holds all backups (see the module docstring for the lookup order)."""
    if state_dir is not None:
        return os.path.abspath(os.fspath(state_dir))
    env = os.environ.get(STATE_ENV)
    if env:
        return os.path.abspath(os.path.expanduser(env))
    xdg = os.environ.get("XDG_STATE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "sessionview", "backups")
    return os.path.join(os.path.expanduser("~"), ".local", "state", "sessionview", "backups")


def _key(real_path: str) -> str:
    return hashlib.sha256(os.fsencode(real_path)).hexdigest()[:16]


def backup_dir(path: str | os.PathLike[str], state_dir: str | os.PathLike[str] | None = None) -> str:
    """The directory holding the backups of ``path`` (links resolved)."""
    real = os.path.realpath(os.fspath(path))
    return os.path.join(backups_root(state_dir), _key(real))


def _ensure_dir(real_path: str, state_dir: str | None) -> str:
    d = os.path.join(backups_root(state_dir), _key(real_path))
    os.makedirs(d, mode=0o700, exist_ok=True)
    marker = os.path.join(d, "path")
    want = os.fsencode(real_path)
    try:
        with open(marker, "rb") as f:
            have = f.read()
    except FileNotFoundError:
        have = None
    if have != want:
        dir_fd = os.open(d, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        try:
            fd, tmp = _save._create_tmp(dir_fd, "path")
            try:
                os.write(fd, want)
                os.fsync(fd)
                os.replace(tmp, "path", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=dir_fd)
                except OSError:
                    pass
                raise
            finally:
                os.close(fd)
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return d


def write_backup(
    src_fd: int,
    real_path: str,
    *,
    state_dir: str | os.PathLike[str] | None = None,
    verify: tuple[int, str] | None = None,
    step: Callable[[str], None] | None = None,
    given: str | None = None,
    limit: "_save._Limit | None" = None,
) -> Backup:
    """Copy everything readable through ``src_fd`` into a new backup of ``real_path``.

    ``verify=(size, sha256hex)``: the first ``size`` bytes must hash to that, else :class:`Conflict`
    (the file was rewritten while the save was running) and no backup is kept.
    """
    step = step or (lambda name: None)
    sd = os.fspath(state_dir) if state_dir is not None else None
    d = _ensure_dir(real_path, sd)
    _save.cleanup_temp_files(d)
    dir_fd = os.open(d, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        now = datetime.now(timezone.utc)
        stem = now.strftime(_TIME_FORMAT)
        fd, tmp = _save._create_tmp(dir_fd, stem + ".bak")
        linked_tmp = True
        try:
            step("backup:create")
            check_size, check_hex = verify if verify is not None else (0, hashlib.sha256().hexdigest())
            h = hashlib.sha256()
            pos = 0
            for chunk in _save._read_range(src_fd, 0, None):
                if pos < check_size:
                    h.update(chunk[: check_size - pos])
                _save._write_all(fd, chunk, pos, limit or _save._NO_LIMIT)
                pos += len(chunk)
                step("backup:write")
            if pos < check_size or h.hexdigest() != check_hex:
                who = given or real_path
                raise Conflict(
                    f"conflict: {who} changed on disk during the save (rewritten by another program); "
                    "nothing was written",
                    who,
                )
            os.fsync(fd)
            step("backup:fsync")
            n = 0
            while True:
                name = f"{stem}-{n}.bak"
                try:
                    os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                except FileExistsError:
                    n += 1
                    continue
                except OSError as exc:
                    if exc.errno not in (errno.EPERM, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", -1), errno.EMLINK):
                        raise
                    # no hard links here: fall back to a rename (a same-name race is then possible)
                    try:
                        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                        n += 1
                        continue
                    except FileNotFoundError:
                        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                        linked_tmp = False
                break
            step("backup:link")
            if linked_tmp:
                os.unlink(tmp, dir_fd=dir_fd)
                linked_tmp = False
                step("backup:unlink")
            os.fsync(dir_fd)
            step("backup:dir_fsync")
        except BaseException:
            if linked_tmp:
                try:
                    os.unlink(tmp, dir_fd=dir_fd)
                except OSError:
                    pass
            raise
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)
    return Backup(os.path.join(d, name), now, pos, real_path, n)


def write_unmerged(real_path: str, data: bytes, *, state_dir: str | os.PathLike[str] | None = None) -> str:
    """Keep bytes a save could not merge (``YYYYmmddTHHMMSS.ffffff.unmerged``); returns the file's path."""
    sd = os.fspath(state_dir) if state_dir is not None else None
    d = _ensure_dir(real_path, sd)
    name = datetime.now(timezone.utc).strftime(_TIME_FORMAT) + ".unmerged"
    p = os.path.join(d, name)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND | _O_CLOEXEC, 0o600)
    try:
        _save._write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return p


def _iter_backups(d: str, original: str) -> Iterator[Backup]:
    try:
        names = os.listdir(d)
    except FileNotFoundError:
        return
    for name in names:
        m = _NAME.match(name)
        if not m:
            continue
        p = os.path.join(d, name)
        try:
            st = os.stat(p, follow_symlinks=False)
        except OSError:
            continue
        created = datetime.strptime(m.group(1), _TIME_FORMAT).replace(tzinfo=timezone.utc)
        yield Backup(p, created, st.st_size, original, int(m.group(2)))


def list_backups(path: str | os.PathLike[str], *, state_dir: str | os.PathLike[str] | None = None) -> list[Backup]:
    """The backups of ``path`` (links resolved), newest first."""
    real = os.path.realpath(os.fspath(path))
    d = os.path.join(backups_root(state_dir), _key(real))
    original = real
    try:
        with open(os.path.join(d, "path"), "rb") as f:
            original = os.fsdecode(f.read())
    except OSError:
        pass
    if original != real:  # a hash-prefix collision with another file: not ours
        return []
    return sorted(_iter_backups(d, original), key=lambda b: b.key, reverse=True)


def restore(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str],
    force: bool = False,
    state_dir: str | os.PathLike[str] | None = None,
    lock_path: str | os.PathLike[str] | None = None,
    backup: Backup | None = None,
) -> _save.SaveResult:
    """Put the newest backup (or ``backup``) back, through :func:`save.save` with all its checks.

    The file is stamped as it is now, so a change made between this call's read and its write is still a
    conflict. The restore makes a backup of the current content first: a second restore undoes the first.
    Lines appended while the restore runs are kept after the restored content.
    """
    given = os.fspath(path)
    real = _save.resolve_inside(given, root)
    if backup is None:
        found = list_backups(real, state_dir=state_dir)
        if not found:
            raise NoBackup(f"refused: there is no backup of {given} to restore", given)
        backup = found[0]
    chosen = backup
    try:
        stamp = _save.stamp_file(real)
    except FileNotFoundError:
        raise Conflict(f"conflict: {given} changed on disk (it no longer exists); restore it by hand from "
                       f"{chosen.path}", given) from None
    stamp = _save.LoadStamp(given, stamp.real_path, stamp.dev, stamp.ino, stamp.size, stamp.mtime_ns, stamp.sha256)

    def render(appended: bytes) -> Iterator[bytes]:
        fd = os.open(chosen.path, os.O_RDONLY | _O_CLOEXEC)
        try:
            yield from _save._read_range(fd, 0, None)
        finally:
            os.close(fd)
        yield appended

    return _save.save(
        given, render, stamp, root=root, force=force, backup=True, state_dir=state_dir, lock_path=lock_path
    )
