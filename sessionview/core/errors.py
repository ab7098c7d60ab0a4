"""Errors of the editing and saving layers.

:class:`Refused` and :class:`InvalidEdit` are raised while a change is planned (nothing was written). Every error a save can raise is a :class:`SaveError`. Refusals (the file was not touched because writing
would be unsafe) have ``exit_code`` 1; :class:`WriteFailed` (the system refused the write) has ``exit_code`` 2.
In every case the original file is left as it was.
"""

from __future__ import annotations

import errno as _errno
import os
from typing import Iterable


class Refused(Exception):
    """An operation that would damage the session. ``suggestion`` is the nearest valid range (``widen``:
    ``"both"`` for a range, ``"down"`` for a truncation, which keeps ``1..suggestion[0] - 1``).

    The message says what and why, never how to override it: ``forceable`` says the same operation with
    ``force`` would pass, and each interface words that its own way (the CLI's ``--force``, the app's key)."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        ids: Iterable[str] = (),
        suggestion: tuple[int, int] | None = None,
        forceable: bool = False,
        widen: str | None = None,
    ):
        super().__init__(message)
        self.ids = tuple(ids)
        self.suggestion = suggestion
        self.forceable = forceable
        self.widen = widen


class InvalidEdit(ValueError):
    """The new message is not valid (bad JSON, or a message the format's reader would reject)."""

    exit_code = 2


class SaveError(Exception):
    """A save did not happen. The original file is untouched."""

    exit_code = 1
    #: the same save with ``force`` would go through (see :attr:`Refused.forceable`)
    forceable = False

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


class Conflict(SaveError):
    """The file changed on disk since it was loaded, other than by appends."""


class Rewriting(Conflict):
    """Another process is rewriting the file (truncated or rewrote it) while the save ran; nothing was written.

    Worth retrying once the file is stable again (:func:`sessionview.core.store.stable.wait_stable`).
    """


class AttributesNotKept(SaveError):
    """The new file could not get the original's owner or extended attributes; nothing was written."""


class AnotherWriter(SaveError):
    """Another process has the file open for writing (a forced save goes through)."""

    forceable = True

    def __init__(self, message: str, path: str | None = None, writers: tuple[tuple[int, str], ...] = ()) -> None:
        super().__init__(message, path)
        self.writers = writers  # (pid, command) pairs


class Outside(SaveError):
    """The path resolves (through a symbolic link) to a file outside the allowed root."""


class HardLinked(SaveError):
    """The file has more than one hard link: replacing it would split them."""


class Locked(SaveError):
    """The store's lock file is held by another process."""


class WriteFailed(SaveError):
    """The system refused the write (no space, permission, read-only file system, I/O error...)."""

    exit_code = 2

    def __init__(self, message: str, path: str | None = None, errno: int | None = None, reason: str = "") -> None:
        super().__init__(message, path)
        self.errno = errno
        self.reason = reason


def reason_for(errno: int | None) -> str:
    """A plain-words reason for an errno."""
    if errno in (_errno.ENOSPC, _errno.EFBIG, getattr(_errno, "EDQUOT", -1)):
        if errno == _errno.EFBIG:
            return "no space (file size limit reached)"
        if errno == getattr(_errno, "EDQUOT", -1):
            return "no space (disk quota exceeded)"
        return "no space"
    if errno in (_errno.EACCES, _errno.EPERM):
        return "permission denied"
    if errno == _errno.EROFS:
        return "read-only file system"
    if errno is None:
        return "unknown error"
    try:
        return os.strerror(errno)
    except ValueError:
        return f"error {errno}"


def write_failed(exc: OSError, what: str, path: str | None = None) -> WriteFailed:
    """Turn an OSError into a :class:`WriteFailed` with a plain reason."""
    reason = reason_for(exc.errno)
    where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
    message = f"could not save{' ' + path if path else ''}: {reason} while {what}{where}; the original is untouched"
    return WriteFailed(message, path, exc.errno, reason)
