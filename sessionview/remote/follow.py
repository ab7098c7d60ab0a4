"""Follow a remote session file: the core's :class:`~sessionview.core.tail.Follower` over SFTP.

Every poll is one SFTP round trip (the path's stat and the open handle's, pipelined); only a change reads,
and then only the new bytes (and small windows to tell an append from a rewrite). Polled every
:data:`POLL_INTERVAL` seconds, a new line shows within about half a second. The events are the local
follower's: appended lines, a pending partial line, a truncation, a Brute rewrite kept as an append, a
compaction, a replacement, a deletion.
"""

from __future__ import annotations

from sessionview.core.tail import Follower
from sessionview.remote.sftp import SftpAccess

POLL_INTERVAL = 0.25  # seconds between polls (a change shows within one interval plus a round trip)
VERIFY_LIMIT = 64 * 1024  # keep the reported prefix up to this size; beyond it, windows (fewer bytes re-read)
WINDOW = 16 * 1024


def remote_follower(access: SftpAccess, path: str, offset: int = 0) -> Follower:
    """A follower of ``path`` on ``access``'s host, already read up to ``offset`` (just past a newline)."""
    return Follower(path, offset=offset, access=access, verify_limit=VERIFY_LIMIT, window=WINDOW)
