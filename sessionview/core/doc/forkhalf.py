"""One piece of work in a forked child while this process does another: the pattern of every "second half in
a child" (the newline scan of a big file, the id search of an edit). The child's result comes back as bytes
through a pipe; no child to be had (no descriptor, no process) or a child that failed gives ``None``, and the
caller does that work itself. Only call it from a single-threaded process (a fork copies no other thread)."""

from __future__ import annotations

import os
from typing import Callable, TypeVar

__all__ = ["in_a_child"]

T = TypeVar("T")


def in_a_child(child: Callable[[], bytes], here: Callable[[], T]) -> tuple[T, bytes | None]:
    """``here()`` in this process while a forked child runs ``child()``: ``(here's result, the child's bytes)``,
    the bytes ``None`` when there was no child or it did not end well (the caller then does its work)."""
    try:
        r, w = os.pipe()
    except OSError:
        return here(), None
    try:
        pid = os.fork()
    except OSError:  # no process to spare now
        os.close(r)
        os.close(w)
        return here(), None
    if pid == 0:  # the child: work, send, and leave without running this process's cleanup
        code = 1
        try:
            os.close(r)
            view = memoryview(child())
            while view:
                view = view[os.write(w, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    chunks: list[bytes] = []
    try:
        mine = here()
        while chunk := os.read(r, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(r)
        _, status = os.waitpid(pid, 0)
    return mine, (b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None)
