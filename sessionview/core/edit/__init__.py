"""Editing: changes and their planning, integrity, preview and diff, write-back and history."""
