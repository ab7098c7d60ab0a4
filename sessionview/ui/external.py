"""Hand a text to the user's own editor (``$VISUAL``, else ``$EDITOR``), the app suspended meanwhile.

The command is run by the shell with the temporary file's name appended, as git runs an editor setting.
Where the app cannot be suspended (a browser through ``sessionview serve``, a headless test) it refuses
rather than start an editor nobody can see.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from typing import Any


class ExternalEditorError(Exception):
    """No editor, no terminal to give it, or it failed: nothing was changed."""


def editor_command() -> str | None:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or None


def edit_text(app: Any, text: str, suffix: str = ".json") -> str:
    """Open ``text`` in the external editor with ``app`` suspended; returns the text as saved there."""
    from textual.app import SuspendNotSupported

    editor = editor_command()
    if not editor:
        raise ExternalEditorError("no external editor: set $VISUAL or $EDITOR (e edits in the app)")
    fd, tmp = tempfile.mkstemp(prefix="sessionview-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        try:
            with app.suspend():
                status = subprocess.call(f"{editor} {shlex.quote(tmp)}", shell=True)
        except SuspendNotSupported:
            raise ExternalEditorError(
                "the external editor needs the terminal, and this app cannot hand it over here; e edits in the app"
            ) from None
        except OSError as exc:
            raise ExternalEditorError(f"could not run the editor: {exc.strerror or exc}") from None
        if status != 0:
            raise ExternalEditorError(f"the editor exited with status {status}; nothing was changed")
        with open(tmp, encoding="utf-8", errors="surrogatepass") as f:
            return f.read()
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
