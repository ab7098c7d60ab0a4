"""Writes to a remote session run on its host, by the host's own ``sessionview``, next to the file.

So every check a local save makes (the conflict check against what was loaded, the rebase onto appended
lines, another writer in ``/proc``, owner and links, the backup, atomic rename) is made where the file is,
by the same code. Over SFTP alone none of that could be done safely (no inode, no ``/proc``, no lock), so a
host without ``sessionview`` is read-only. A host whose ``sessionview`` is older than this one is refused
too: its checks may be weaker.

The command line is built from an argument list, every argument quoted with :func:`shlex.quote` for the
login shell (POSIX ``sh`` quoting: bash, dash, zsh, ksh). Its exit status, stdout and stderr come back
unchanged.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:  # the host's CLI imports this module for records_digest: no SSH code for it
    from sessionview.remote.connection import Connection

REMOTE_COMMAND = "sessionview"
PROBE_TIMEOUT = 20.0


@dataclass(frozen=True)
class Capability:
    writable: bool
    reason: str  # why not, when not writable; the remote version when writable
    version: tuple[int, ...] | None = None
    installed: bool = True  # the host has a sessionview (maybe too old to write with)


def _version(text: str) -> tuple[int, ...] | None:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(g) for g in m.groups() if g is not None) if m else None


def local_version() -> tuple[int, ...]:
    from sessionview import __version__

    return _version(__version__) or (0,)


def probe(conn: Connection) -> Capability:
    """Whether writes can run on the host: its ``sessionview``, and that it is not older than this one."""
    status, out, err = conn.run(f"{REMOTE_COMMAND} --version", timeout=PROBE_TIMEOUT)
    if status != 0:
        return Capability(
            False,
            f"remote sessions on {conn.name} are read-only: sessionview is not installed there (its writes run on the "
            "host, next to the file, with every local check; install it there to edit)",
            installed=False,
        )
    remote = _version(out.decode("utf-8", "replace"))
    mine = local_version()
    if remote is None or remote < mine:
        shown = ".".join(map(str, remote)) if remote else "unknown"
        return Capability(
            False,
            f"remote sessions on {conn.name} are read-only: its sessionview ({shown}) is older than this one "
            f"({'.'.join(map(str, mine))}) and may check less; upgrade it to edit",
            remote,
        )
    return Capability(True, ".".join(map(str, remote)), remote)


def command_line(args: list[str]) -> str:
    """The remote command line for ``sessionview ARGS``, each argument quoted for the login shell."""
    return " ".join([REMOTE_COMMAND, *(shlex.quote(a) for a in args)])


def run(conn: Connection, args: list[str], stdin: bytes | None = None, timeout: float | None = None) -> tuple[int, bytes, bytes]:
    """Run ``sessionview ARGS`` on the host; its exit status, stdout and stderr, unchanged."""
    return conn.run(command_line(args), stdin, timeout)


def records_digest(raws: Iterable[bytes]) -> str:
    """The digest of ``--expect N:M:SHA256``: the SHA-256 of the records' own SHA-256s (32 bytes each), in
    turn, so where one record ends and the next begins is part of it."""
    h = hashlib.sha256()
    for raw in raws:
        h.update(hashlib.sha256(raw).digest())
    return h.hexdigest()


def expect_arg(first: int, raws: Sequence[bytes]) -> str:
    """The ``--expect`` value naming records ``first`` to ``first + len(raws) - 1`` as these bytes."""
    if len(raws) == 1:
        return f"{first}:{hashlib.sha256(raws[0]).hexdigest()}"
    return f"{first}:{first + len(raws) - 1}:{records_digest(raws)}"
