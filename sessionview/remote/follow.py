"""Follow a remote session file: the core's :class:`~sessionview.core.tail.Follower` over SFTP.

Every poll is one SFTP round trip (the path's stat and the open handle's, pipelined); only a change reads,
and then only the new bytes (and small windows to tell an append from a rewrite). Polled every
:data:`POLL_INTERVAL` seconds, a new line shows within about half a second. The events are the local
follower's: appended lines, a pending partial line, a truncation, a Brute rewrite kept as an append, a
compaction, a replacement, a deletion.
"""

from __future__ import annotations

from typing import Any

from sessionview.core.tail import Event, Follower

POLL_INTERVAL = 0.25  # seconds between polls (a change shows within one interval plus a round trip)
VERIFY_LIMIT = 64 * 1024  # keep the reported prefix up to this size; beyond it, windows (fewer bytes re-read)
WINDOW = 16 * 1024


class RemoteFollower(Follower):
    """A :class:`Follower` whose polls never raise when the host stops answering: such a poll returns no
    events and :attr:`error` says why (None again once a poll gets through)."""

    _error: str | None = None
    #: seconds between polls (each one is a round trip): the app's follow loop uses it
    poll_interval = POLL_INTERVAL

    @property
    def error(self) -> str | None:
        return self._error or getattr(self._access, "error", None)

    def poll(self) -> list[Event]:
        try:
            events = super().poll()
        except OSError as exc:  # the connection dropped or a request timed out: try again next poll
            self._error = str(exc) or type(exc).__name__
            return []
        self._error = None
        return events


def remote_follower(access: Any, path: str, offset: int = 0, file: Any = None) -> RemoteFollower:
    """A follower of ``path`` on ``access``'s host (an :class:`~sessionview.remote.sftp.SftpAccess`), already
    read up to ``offset`` (just past a newline); with ``file`` (an open SftpFile of it), that very file."""
    return RemoteFollower(path, offset=offset, access=access, verify_limit=VERIFY_LIMIT, window=WINDOW, file=file)
