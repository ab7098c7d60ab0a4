"""Hand a text to the user's own editor (``$VISUAL``, else ``$EDITOR``), the app suspended meanwhile.

The round trip itself is :func:`sessionview.editor.edit_text`. Where the app cannot be suspended (a browser
through ``sessionview serve``, a headless test) it refuses rather than start an editor nobody can see.
"""

from __future__ import annotations

from typing import Any

from sessionview import editor


class ExternalEditorError(Exception):
    """No editor, no terminal to give it, or it failed: nothing was changed."""


def edit_text(app: Any, text: str, suffix: str = ".json") -> str:
    """Open ``text`` in the external editor with ``app`` suspended; returns the text as saved there."""
    from textual.app import SuspendNotSupported

    try:
        return editor.edit_text(text, suffix, suspend=app.suspend)
    except editor.NoEditor:
        raise ExternalEditorError("no external editor: set $VISUAL or $EDITOR (e edits in the app)") from None
    except SuspendNotSupported:
        raise ExternalEditorError(
            "the external editor needs the terminal, and this app cannot hand it over here; e edits in the app"
        ) from None
    except editor.EditorExited as exc:
        raise ExternalEditorError(f"the editor exited with status {exc.status}; nothing was changed") from None
    except OSError as exc:
        raise ExternalEditorError(f"could not run the editor: {exc.strerror or exc}") from None
