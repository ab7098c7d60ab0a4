"""Directory watching for the session list: ``watchfiles.awatch`` turned into plain change notices.

``watchfiles`` is imported only when watching starts. Notices are ``(kind, path)`` tuples with kind
``added``, ``modified`` or ``deleted``: exactly what :meth:`sessionview.core.catalog.Catalog.apply` takes.
Paths that cannot be sessions (wrong suffix) are filtered out, except possible directories, so that a
directory moved in or out is noticed.
"""

from __future__ import annotations

import os
from typing import Any, AsyncIterator

from sessionview.core.catalog import SESSION_SUFFIXES, SKIP_DIRS, is_session_name

DEFAULT_DEBOUNCE_MS = 100
DEFAULT_STEP_MS = 50

_KINDS = {1: "added", 2: "modified", 3: "deleted"}


def wanted(path: str) -> bool:
    """Whether a change to ``path`` matters to the session list."""
    parts = path.split(os.sep)
    if any(p in SKIP_DIRS for p in parts[:-1]):
        return False
    name = parts[-1]
    if is_session_name(name):
        return True
    # a name without a known file suffix may be a directory (moved in, out, or removed)
    suffix = os.path.splitext(name)[1].lower()
    return suffix == "" or suffix not in _FILE_SUFFIXES


# suffixes of files that are surely not sessions nor directories worth a rescan
_FILE_SUFFIXES = frozenset(
    {".py", ".pyc", ".txt", ".md", ".log", ".tmp", ".swp", ".lock", ".rb", ".js", ".ts", ".toml", ".yaml",
     ".yml", ".html", ".css", ".png", ".jpg", ".svg", ".gz", ".zip"}
) - set(SESSION_SUFFIXES)


def _filter() -> Any:
    from watchfiles import DefaultFilter

    class SessionFilter(DefaultFilter):
        def __call__(self, change: Any, path: str) -> bool:
            return super().__call__(change, path) and wanted(path)

    return SessionFilter()


async def watch_sessions(
    root: str,
    *,
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    step_ms: int = DEFAULT_STEP_MS,
    stop_event: Any = None,
    force_polling: bool | None = None,
) -> AsyncIterator[list[tuple[str, str]]]:
    """Yield batches of ``(kind, path)`` notices for session files under ``root``, until stopped."""
    from watchfiles import awatch

    async for changes in awatch(
        root,
        watch_filter=_filter(),
        debounce=debounce_ms,
        step=step_ms,
        stop_event=stop_event,
        force_polling=force_polling,
        recursive=True,
        ignore_permission_denied=True,
    ):
        batch = sorted(((_KINDS.get(int(c), "modified"), p) for c, p in changes), key=lambda kp: kp[1])
        if batch:
            yield batch
