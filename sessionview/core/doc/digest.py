"""The hash of a session file's bytes: XXH3-128 (the ``xxhash`` package), the one every stamp, prefix check and
backup record uses.

A save hashes what it loaded to tell later whether the file on disk still holds those bytes (a pure append
is rebased, anything else refused), and a backup's record holds its hash so a restore can refuse a backup
that changed. Both guard against accidents (another program writing the file), not against someone forging
a collision: whoever could craft one can write the session anyway. XXH3-128 hashes about 10 GB/s where
SHA-256 hashed 1.4-1.8 GB/s on the machines measured (:file:`bench/README.md`, sessions 22-23): at 1 GiB it
was 0.9 s of the 3.4-3.7 s of CPU a ``delete`` spent.

SHA-256 stays where a value leaves the program or another program defines it: the record hashes of
``--expect`` (a shell recipe prints them), LittleGhost's own digests, the names of the backup directories,
and the records of backups made by earlier versions (:mod:`~sessionview.core.store.backup_copy`).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["NAME", "HEX_LENGTH", "Hasher", "new_hash", "is_hex"]

NAME = "xxh3-128"  # as written in a backup's record
HEX_LENGTH = 32


class Hasher(Protocol):
    def update(self, data: bytes | bytearray | memoryview, /) -> None: ...
    def copy(self) -> "Hasher": ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...


def new_hash(data: bytes | bytearray | memoryview = b"") -> Hasher:
    """A running hash, fed ``data`` first (``update`` lets go of the GIL, so a thread hashes alongside)."""
    import xxhash  # here: a first screen that hashes nothing never imports it (~1.5 ms)

    h = xxhash.xxh3_128()
    if data:
        h.update(data)
    return h


def is_hex(text: str) -> bool:
    """Whether ``text`` looks like one of this module's hex digests."""
    return len(text) == HEX_LENGTH and all(c in "0123456789abcdef" for c in text)
