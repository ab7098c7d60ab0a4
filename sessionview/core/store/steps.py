"""The crash-test hook of a save: :func:`step` is called with a step name right after each filesystem operation.

A crash test sets :data:`hook` to a function that kills the process at the N-th call; other tests use it
to interleave writers. In normal use it is None and :func:`step` does nothing.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["hook", "step"]

hook: Callable[[str], None] | None = None


def step(name: str) -> None:
    """Report the step ``name`` to the test hook, if one is set."""
    h = hook
    if h is not None:
        h(name)
