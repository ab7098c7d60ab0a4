"""Byte-exact backups of session files, taken before every save replaces one.

Backups live under the state directory, never next to the session files:

* ``$SESSIONVIEW_STATE_DIR`` when set: it is the backups root itself;
* else ``$XDG_STATE_HOME/sessionview/backups`` (``XDG_STATE_HOME`` must be absolute);
* else ``~/.local/state/sessionview/backups``.

Under the root each original file gets a directory named ``sha256(real path)[:16]`` holding a ``path``
file (the original real path, raw bytes) and backups named ``YYYYmmddTHHMMSS.ffffff-<n>.bak`` (UTC time of
the backup, ``n`` distinguishes backups of the same microsecond), so names sort by time. A backup is
written to a temporary file, checked against the hash the save verified, fsynced, and only then given
its ``.bak`` name: a ``.bak`` file is always complete. Bytes a save could not merge are kept beside
them as ``YYYYmmddTHHMMSS.ffffff[-n].unmerged``; those are never pruned (see :mod:`.retention`).

Backups are the user's own. Every directory made here is 0700 (chmod after mkdir, whatever the umask) and
every file 0600. A backup directory, or backup, owned by another user (root excepted) or writable by group
or others is *untrusted*: it is listed with the reason (:attr:`Backup.untrusted`), never restored
(:class:`UntrustedBackup`) and never written into or pruned. A directory of ours that group or others can
write (made by an older version under a loose umask) is tightened to 0700 before a backup goes into it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterator

from sessionview.core.doc.digest import new_hash
from sessionview.core.errors import SaveError
from sessionview.core.store.fsio import (
    NO_LIMIT,
    O_CLOEXEC,
    O_DIRECTORY,
    O_NOFOLLOW,
    O_NONBLOCK,
    Limit,
    read_range,
    write_all,
)
from sessionview.core.store import backup_copy
from sessionview.core.store.tmpfiles import cleanup_temp_files, create_tmp

__all__ = [
    "Backup",
    "NoBackup",
    "UntrustedBackup",
    "open_backup",
    "list_unmerged",
    "backups_root",
    "backup_dir",
    "list_backups",
    "write_backup",
    "write_unmerged",
    "dir_distrust",
    "scan_root",
    "links_to",
    "dir_distrust_file",
    "STATE_ENV",
]

STATE_ENV = "SESSIONVIEW_STATE_DIR"
_NAME = re.compile(r"^(\d{8}T\d{6}\.\d{6})-(\d+)\.bak$")
_TIME_FORMAT = "%Y%m%dT%H%M%S.%f"
_KEY = re.compile(r"^[0-9a-f]{16}$")  # a backup directory's name
_UNMERGED = re.compile(r"^(\d{8}T\d{6}\.\d{6})(?:-(\d+))?\.unmerged$")


class NoBackup(SaveError):
    """There is no backup to restore."""


class UntrustedBackup(SaveError):
    """A backup, or its directory, belongs to another user or can be written by group or others."""


@dataclass(frozen=True, slots=True)
class Backup:
    path: str  # the .bak file
    created: datetime  # UTC, from the name
    size: int
    original: str  # real path of the file it is a copy of
    sequence: int = 0  # n in the name
    untrusted: str = ""  # why it must not be restored ("owned by another user (uid 65534)"), or ""
    kind: str = "backup"  # or "unmerged": bytes a save could not merge (never pruned)
    inode: tuple[int, int] = field(default=(0, 0), compare=False)  # st_dev, st_ino: hard-linked backups share the replaced file's inode
    nlink: int = field(default=1, compare=False)  # its links (more than one: also a name elsewhere, or several backups of one inode)
    linked: bool = field(default=False, compare=False)  # made here as a hard link to the replaced inode (a new Backup from write_backup)

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


def _distrust(st: os.stat_result) -> str:
    """Why a directory or file with this status is not the user's own, or ``""``."""
    if st.st_uid not in (os.geteuid(), 0):
        return f"owned by another user (uid {st.st_uid})"
    loose = st.st_mode & 0o022
    if loose:
        who = "group and others" if loose == 0o022 else ("group" if loose & 0o020 else "others")
        return f"writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    return ""


def dir_distrust(root: str, d: str | None = None) -> str:
    """Why the backups root or the per-file directory ``d`` is untrusted, or ``""`` (also when missing)."""
    for p, follow in ((root, True), (d, False)) if d is not None else ((root, True),):  # the root may be a link the user made; a file's dir not
        try:
            st = os.stat(p, follow_symlinks=follow)
        except FileNotFoundError:
            return ""
        except OSError as exc:
            return f"unreadable ({exc.strerror or exc})"
        if not stat.S_ISDIR(st.st_mode):
            return f"{p} is not a directory"
        why = _distrust(st)
        if why:
            return f"its directory {p} is {why}"
    return ""


def _mkdirs_private(path: str) -> None:
    """Make ``path`` and its missing parents, each 0700 whatever the umask."""
    missing = []
    p = path
    while not os.path.isdir(p):
        missing.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for p in reversed(missing):
        try:
            os.mkdir(p, 0o700)
        except FileExistsError:
            continue  # made meanwhile by another process: the checks of the caller decide
        fd = os.open(p, os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        try:
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)


def _private_dir(p: str, *, follow: bool, given: str | None) -> None:
    """Refuse a directory another user owns; tighten one of ours that group or others can write."""
    st = os.stat(p, follow_symlinks=follow)
    if not stat.S_ISDIR(st.st_mode):
        raise UntrustedBackup(f"refused: the backup directory {p} is not a directory; nothing was written", given)
    if st.st_uid not in (os.geteuid(), 0):
        raise UntrustedBackup(
            f"refused: the backup directory {p} is owned by another user (uid {st.st_uid}); nothing was written",
            given,
        )
    if st.st_mode & 0o022:
        os.chmod(p, 0o700)


def _read_marker(d: str) -> bytes | None:
    """The ``path`` file of a backup directory, if it is a regular file of the user's own."""
    try:
        fd = os.open(os.path.join(d, "path"), os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or _distrust(st) or st.st_size > 1 << 16:
            return None
        return b"".join(read_range(fd, 0, None))
    except OSError:
        return None
    finally:
        os.close(fd)


def _ensure_dir(real_path: str, state_dir: str | None, given: str | None = None) -> str:
    root = backups_root(state_dir)
    d = os.path.join(root, _key(real_path))
    _mkdirs_private(d)
    _private_dir(root, follow=True, given=given)
    _private_dir(d, follow=False, given=given)
    want = os.fsencode(real_path)
    if _read_marker(d) != want:
        dir_fd = os.open(d, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try:
            fd, tmp = create_tmp(dir_fd, "path")
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
    limit: Limit | None = None,
    link: bool = False,
) -> Backup:
    """A new backup of ``real_path`` holding everything readable through ``src_fd``.

    ``verify=(size, hex digest)`` (:mod:`~sessionview.core.doc.digest`): the first ``size`` bytes must hash to
    that, else :class:`Conflict` (the file was rewritten while the save was running) and no backup is kept. ``link``: the caller
    replaces the file by a rename and nobody else writes it, so a hard link to its inode may be the backup
    (:mod:`.backup_copy`; only with ``verify``, which the caller has just checked). Nothing is pruned here:
    the save applies the retention policy after (:func:`sessionview.core.store.retention.prune_after_backup`).
    """
    step = step or (lambda name: None)
    sd = os.fspath(state_dir) if state_dir is not None else None
    d = _ensure_dir(real_path, sd, given)
    cleanup_temp_files(d)
    dir_fd = os.open(d, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    try:
        now = datetime.now(timezone.utc)
        stem = now.strftime(_TIME_FORMAT)
        made = backup_copy.link_named(src_fd, dir_fd, stem, verify, step) if link and verify is not None else None
        if made is not None:
            name, n = made
            step("backup:link")
            os.fsync(dir_fd)
            step("backup:dir_fsync")
            st = os.fstat(src_fd)
            return Backup(os.path.join(d, name), now, st.st_size, real_path, n, inode=(st.st_dev, st.st_ino), nlink=st.st_nlink, linked=True)
        name, n, size = _copied(src_fd, dir_fd, stem, verify, step, given or real_path, limit or NO_LIMIT)
        os.fsync(dir_fd)
        step("backup:dir_fsync")
    finally:
        os.close(dir_fd)
    return Backup(os.path.join(d, name), now, size, real_path, n)


def _copied(
    src_fd: int, dir_fd: int, stem: str, verify: tuple[int, str] | None, step: Callable[[str], None], who: str, limit: Limit
) -> tuple[str, int, int]:
    """Copy ``src_fd`` into a temporary file, check and sync it, then give it the next free ``.bak`` name."""
    fd, tmp = create_tmp(dir_fd, stem + ".bak")
    named = ""
    try:
        step("backup:create")
        wfd = os.open(tmp, os.O_RDWR | O_CLOEXEC | O_NOFOLLOW, dir_fd=dir_fd)  # not O_APPEND: for copy_file_range
        try:
            check = verify if verify is not None else (0, new_hash().hexdigest())
            size, whole, _how = backup_copy.copy(src_fd, wfd, check, limit=limit, step=step, who=who)
            os.fsync(wfd)
        finally:
            os.close(wfd)
        step("backup:fsync")
        n = 0
        while True:
            name = f"{stem}-{n}.bak"
            try:
                backup_copy.write_record(dir_fd, name, size, whole)
            except FileExistsError:
                n += 1
                continue
            try:
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except FileExistsError:
                os.unlink(name + backup_copy.RECORD, dir_fd=dir_fd)
                n += 1
                continue
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", -1), errno.EMLINK):
                    os.unlink(name + backup_copy.RECORD, dir_fd=dir_fd)
                    raise
                # no hard links here: a rename (the record holds the name, so only an old backup can race)
                try:
                    os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                    os.unlink(name + backup_copy.RECORD, dir_fd=dir_fd)
                    n += 1
                    continue
                except FileNotFoundError:
                    os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                    named = name
            break
        step("backup:link")
        if not named:
            os.unlink(tmp, dir_fd=dir_fd)
            named = name
            step("backup:unlink")
    except BaseException:
        if not named:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
        raise
    finally:
        os.close(fd)
    return named, n, size


def write_unmerged(real_path: str, data: bytes, *, state_dir: str | os.PathLike[str] | None = None) -> str:
    """Keep bytes a save could not merge (``YYYYmmddTHHMMSS.ffffff[-n].unmerged``); returns the file's path.

    Unmerged files are never pruned automatically: ``sessionview prune`` and ``history`` list them.
    """
    sd = os.fspath(state_dir) if state_dir is not None else None
    d = _ensure_dir(real_path, sd)
    stem = datetime.now(timezone.utc).strftime(_TIME_FORMAT)
    n = 0
    while True:
        p = os.path.join(d, f"{stem}{'-%d' % n if n else ''}.unmerged")
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        except FileExistsError:
            n += 1
            continue
        break
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return p


def _iter_entries(d: str, original: str, distrust_dir: str, pattern: re.Pattern[str], kind: str) -> Iterator[Backup]:
    try:
        names = os.listdir(d)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    for name in names:
        m = pattern.match(name)
        if not m:
            continue
        p = os.path.join(d, name)
        try:
            st = os.stat(p, follow_symlinks=False)
        except OSError:
            continue
        why = distrust_dir
        if not why:
            why = _distrust(st) if stat.S_ISREG(st.st_mode) else "not a regular file"
        try:
            created = datetime.strptime(m.group(1), _TIME_FORMAT).replace(tzinfo=timezone.utc)
        except ValueError:  # e.g. month 13: not one of ours
            continue
        yield Backup(p, created, st.st_size, original, int(m.group(2) or 0), why, kind, (st.st_dev, st.st_ino), st.st_nlink)


def _entries(path: str | os.PathLike[str], state_dir: str | os.PathLike[str] | None, pattern: re.Pattern[str], kind: str) -> list[Backup]:
    real = os.path.realpath(os.fspath(path))
    root = backups_root(state_dir)
    d = os.path.join(root, _key(real))
    marker = _read_marker(d)
    original = os.fsdecode(marker) if marker is not None else real
    if original != real:  # a hash-prefix collision with another file: not ours
        return []
    return sorted(_iter_entries(d, original, dir_distrust(root, d), pattern, kind), key=lambda b: b.key, reverse=True)


def list_backups(path: str | os.PathLike[str], *, state_dir: str | os.PathLike[str] | None = None) -> list[Backup]:
    """The backups of ``path`` (links resolved), newest first; untrusted ones are listed, marked."""
    return _entries(path, state_dir, _NAME, "backup")


def list_unmerged(path: str | os.PathLike[str], *, state_dir: str | os.PathLike[str] | None = None) -> list[Backup]:
    """The unmerged-bytes files kept for ``path``, newest first (``kind == "unmerged"``)."""
    return _entries(path, state_dir, _UNMERGED, "unmerged")


def scan_root(root: str) -> dict[str, tuple[list[Backup], list[Backup]]]:
    """Per backup directory under ``root``: (backups, unmerged files), newest first, read through their ``path`` files."""
    out = {}
    try:
        names = os.listdir(root)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    for name in names:
        if not _KEY.match(name):
            continue
        d = os.path.join(root, name)
        if not os.path.isdir(d):
            continue
        marker = _read_marker(d)
        original = os.fsdecode(marker) if marker is not None else ""
        why = dir_distrust(root, d) or ("" if marker is not None else "no readable path file of yours")
        found = []
        for pattern, kind in ((_NAME, "backup"), (_UNMERGED, "unmerged")):
            entries = _iter_entries(d, original, why, pattern, kind)
            found.append(sorted(entries, key=lambda b: b.key, reverse=True))
        out[d] = (found[0], found[1])
    return out


def dir_distrust_file(st: os.stat_result) -> str:
    """Why a file with this status would be an untrusted backup (a hard link shares its owner and mode), or ``""``."""
    return _distrust(st)


def links_to(path: str, st: os.stat_result, state_dir: str | os.PathLike[str] | None = None) -> int:
    """How many backups of ``path`` are hard links to the inode ``st`` (a save stopped between its link and
    its rename leaves the file linked from its backups: those links do not make it a hard-linked file)."""
    return sum(1 for b in list_backups(path, state_dir=state_dir) if b.inode == (st.st_dev, st.st_ino) and not b.untrusted)


def _refusal(b: Backup, why: str, given: str | None) -> UntrustedBackup:
    return UntrustedBackup(
        f"refused: the backup {b.path} is not yours to trust ({why}); nothing was restored "
        "(look at it, then remove it or fix its owner and mode)",
        given,
    )


def open_backup(b: Backup, given: str | None = None) -> int:
    """Open backup ``b`` for reading after checking it and its directories are the user's own.

    Returns the open descriptor (the caller closes it); raises :class:`UntrustedBackup` if not, or
    :class:`NoBackup` if it is gone.
    """
    if b.untrusted:
        raise _refusal(b, b.untrusted, given)
    d = os.path.dirname(b.path)
    why = dir_distrust(os.path.dirname(d), d)
    if why:
        raise _refusal(b, why, given)
    try:
        fd = os.open(b.path, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    except FileNotFoundError:
        raise NoBackup(f"refused: the backup {b.path} is gone (pruned or removed meanwhile)", given) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refusal(b, "a symbolic link", given) from None
        raise
    try:
        st = os.fstat(fd)
        why = _distrust(st) if stat.S_ISREG(st.st_mode) else "not a regular file"
        if why:
            raise _refusal(b, why, given)
    except BaseException:
        os.close(fd)
        raise
    return fd
