"""Fixtures for the UI tests; the helpers live in ``uihelpers`` (this directory is on sys.path)."""

from sessionview.ui.widgets import markdown
from uihelpers import brute, sessions  # noqa: F401  (fixtures)

markdown.load()  # Markdown from an app's first frame (else it is drawn plain until a thread has loaded it)
