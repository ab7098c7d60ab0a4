"""Export a session for people (Markdown or one self-contained HTML page) and fork it into a new session.

The API the CLI and the app share::

    export.write(session, "md" | "html", out, first=1, last=None)   # to any text stream, as it is read
    export.write_file(session, fmt, path, first=1, last=None)       # to a file, atomically
    export.fork(session, n, out=None) -> Forked                      # a new session of records 1..n

Exports stream: one message is held at a time, so a session of any size exports in bounded memory.
"""

from __future__ import annotations

import io
import os
import stat
from typing import Any

from sessionview.core.export import html, markdown
from sessionview.core.export.common import TextOut
from sessionview.core.export.files import replace_into
from sessionview.core.export.fork import Forked, fork, fork_names

__all__ = ["FORMATS", "Forked", "fork", "fork_names", "format_for", "write", "write_file"]

#: export formats and the file extensions that choose them
FORMATS = {"md": (".md", ".markdown"), "html": (".html", ".htm")}


def format_for(path: str) -> str | None:
    """The export format a file name asks for (``.md``, ``.html``...), or None."""
    ext = os.path.splitext(path)[1].lower()
    return next((fmt for fmt, exts in FORMATS.items() if ext in exts), None)


def write(session: Any, fmt: str, out: TextOut, first: int = 1, last: int | None = None) -> int:
    """Write records ``first..last`` of ``session`` to ``out`` (``write(str)``) as ``fmt``; returns the
    number of messages written. Nothing is built whole: output is written message by message."""
    if fmt == "md":
        return markdown.write(session, out, first, last)
    if fmt == "html":
        return html.write(session, out, first, last)
    raise ValueError(f"unknown export format {fmt!r} (use {' or '.join(FORMATS)})")


def write_file(session: Any, fmt: str, path: str, first: int = 1, last: int | None = None, *, new: bool = False) -> list[str]:
    """:func:`write` into the file ``path``: a temp file beside it, synced and renamed over it, given the
    session's mode. Refuses to write over the session itself. Returns warnings. With ``new``, never over an
    existing file (:class:`FileExistsError`; the app's export)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (use {' or '.join(FORMATS)})")
    mode = 0o600
    if session.path is not None:
        try:
            st = os.stat(session.path)
            mode = stat.S_IMODE(st.st_mode) & 0o666
            if os.path.exists(path) and os.path.samefile(path, session.path):
                raise ValueError(f"{path}: is the session itself; export it to another file")
        except FileNotFoundError:
            pass

    def fill(stream: io.TextIOBase) -> None:
        write(session, fmt, stream, first, last)

    return replace_into(path, fill, mode, exclusive=new)
