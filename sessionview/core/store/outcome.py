"""What a save did (:class:`SaveResult`), and the errors it raises, in the words every front end shows."""

from __future__ import annotations

from dataclasses import dataclass, field

from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.errors import Conflict, Rewriting, SaveError, write_failed
from sessionview.core.store.backups import Backup
from sessionview.core.store.stamp import LoadStamp

__all__ = ["SaveResult", "changed_on_disk", "failed", "rewriting"]


@dataclass(frozen=True, slots=True)
class SaveResult:
    path: str  # as given
    real_path: str  # the file that was replaced (links resolved)
    changed: bool  # False: the content was already on disk, nothing was written
    size: int  # size of the file as saved (including carried-over appends)
    #: stamp of what is now on disk, for further saves without reloading; None when its hash is not known
    #: (spans were copied in the kernel and ``save(new_stamp=False)``) or the new file could not be read
    stamp: LoadStamp | None
    backup: Backup | None = None  # the backup of the replaced content
    rebased_bytes: int = 0  # bytes appended since load that render() received
    carried_bytes: int = 0  # bytes appended during the save, copied into the new file
    lost_partial_bytes: int = 0  # an unfinished last line that could not be carried over
    warnings: tuple[str, ...] = field(default_factory=tuple)
    not_carried_bytes: int = 0  # bytes another process wrote that are NOT in the new file (see kept_paths)
    kept_paths: tuple[str, ...] = ()  # files in the state directory holding those bytes


def changed_on_disk(given: str, why: str) -> Conflict:
    return Conflict(f"conflict: {given} changed on disk since it was loaded ({why}); nothing was written", given)


def failed(exc: OSError, what: str, given: str) -> SaveError:
    """The error for an OSError while saving: a reader that met a rewrite is a conflict, not an I/O error."""
    if isinstance(exc, SourceChanged):
        return rewriting(given, f"it changed while being read: {exc}")
    return write_failed(exc, what, given)


def rewriting(given: str, why: str = "rewritten by another program") -> Rewriting:
    return Rewriting(f"conflict: {given} changed on disk during the save ({why}); nothing was written", given)
