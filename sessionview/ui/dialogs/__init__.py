"""Dialogs (modal screens) over the session list and the session: confirmations, previews, refusals, the editor, history and help."""
