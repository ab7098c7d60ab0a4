"""The ``$VISUAL``/``$EDITOR`` round trip, shared by the CLI and the app: write a text to a temporary file,
run the user's editor on it, read it back.

The command is run by the shell with the temporary file's name appended, as git runs an editor setting.
Pure stdlib; a caller that owns the terminal (the app) passes ``suspend`` to hand it over meanwhile.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from contextlib import AbstractContextManager, nullcontext
from typing import Callable


class NoEditor(Exception):
    """Neither ``$VISUAL`` nor ``$EDITOR`` is set."""


class EditorExited(Exception):
    """The editor exited with a non-zero ``status``: what it saved is not used."""

    def __init__(self, status: int) -> None:
        super().__init__(f"the editor exited with status {status}")
        self.status = status


def editor_command() -> str | None:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or None


def edit_text(
    text: str,
    suffix: str = ".json",
    *,
    suspend: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> str:
    """Open ``text`` in the user's editor and return the text as saved there.

    Raises :class:`NoEditor`, :class:`EditorExited`, whatever ``suspend`` raises, or :class:`OSError`
    when the editor cannot be run. The temporary file is removed in every case."""
    editor = editor_command()
    if not editor:
        raise NoEditor("no editor: set $VISUAL or $EDITOR")
    fd, tmp = tempfile.mkstemp(prefix="sessionview-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        with suspend():
            status = subprocess.call(f"{editor} {shlex.quote(tmp)}", shell=True)
        if status != 0:
            raise EditorExited(status)
        with open(tmp, encoding="utf-8", errors="surrogatepass") as f:
            return f.read()
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
