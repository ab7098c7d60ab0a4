"""Fixtures for the UI tests; the helpers live in ``uihelpers`` (this directory is on sys.path)."""

from uihelpers import brute, sessions  # noqa: F401  (fixtures)
