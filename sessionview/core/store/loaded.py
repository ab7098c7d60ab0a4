"""What a save found when it opened the file and compared it with the load stamp (:meth:`.save._Save.open_and_check`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sessionview.core.store.stamp import Digest

if TYPE_CHECKING:
    from concurrent.futures import Future  # (imported by a save that hashes: not by one the stat proves)

    from sessionview.core.doc.digest import Hasher

__all__ = ["Loaded"]


@dataclass(frozen=True, slots=True)
class Loaded:
    """The bytes appended since load, and the file as read."""

    appended: bytes
    size: int  # R: the stamp's size plus the appended bytes
    digest: "str | Digest"  # h_R: their hash (a stamp's, maybe still being taken: read :attr:`hexdigest`)
    st: os.stat_result
    prefix: "Future[tuple[Hasher, int]] | None" = None  # the stamp's prefix, still being hashed
    #: a settled stat of a file system that keeps ctime (:mod:`.proof`), taken before the content was proven
    #: to be R/h_R: while the file's stat stays this, it still is (no hashing); None: hash to recheck
    ref: os.stat_result | None = None
    proven_by_stat: bool = False  # the stamp's stat proved the content: nothing was hashed

    @property
    def hexdigest(self) -> str:
        d = self.digest
        return d if isinstance(d, str) else d.result()
