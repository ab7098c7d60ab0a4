"""Containment: a save only replaces a file that lies inside the root it was given (links resolved)."""

from __future__ import annotations

import os

from sessionview.core.errors import Outside

__all__ = ["default_root", "resolve_inside"]


def default_root(path: str | os.PathLike[str]) -> str:
    """The CLI's root: the directory holding the path as given, before links are resolved."""
    return os.path.dirname(os.path.abspath(os.fspath(path)))


def _within(child: str, parent: str) -> bool:
    try:
        return os.path.commonpath([child, parent]) == parent
    except ValueError:
        return False


def resolve_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str:
    """The real path of ``path``; raise :class:`Outside` unless it lies inside ``root``."""
    given = os.fspath(path)
    real = os.path.realpath(given)
    root_real = os.path.realpath(os.fspath(root))
    if not _within(real, root_real):
        if os.path.islink(given) or real != os.path.abspath(given):
            raise Outside(f"refused: {given} is a link to {real}, outside {os.fspath(root)}", given)
        raise Outside(f"refused: {given} lies outside {os.fspath(root)}", given)
    return real
