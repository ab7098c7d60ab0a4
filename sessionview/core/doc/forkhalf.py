"""One piece of work in a forked child, its result back as bytes through a pipe: the pattern of every "second
half in a child" (the newline scan of a big file, the id search of an edit: :func:`in_a_child`) and of the
load's hash in a process of its own (:class:`~sessionview.core.store.stamp.Digest`: :func:`start`). No child
to be had (no descriptor, no process) or a child that failed gives ``None``, and the caller does that work
itself. Only call it from a single-threaded process (a fork copies no other thread). A child says nothing on
this process's streams and leaves no core dump."""

from __future__ import annotations

import os
import signal
from typing import Callable, TypeVar

__all__ = ["Child", "in_a_child", "start"]

T = TypeVar("T")


class Child:
    """A forked child whose bytes come back through the read end ``r`` of a pipe."""

    def __init__(self, pid: int, r: int) -> None:
        self.pid = pid
        self.r = r

    def collect(self) -> tuple[bytes, bool | None]:
        """Everything the child sent, and whether it ended well (None: it was reaped elsewhere, a SIGCHLD
        ignored, say: the caller judges its bytes alone)."""
        chunks: list[bytes] = []
        try:
            while chunk := os.read(self.r, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self.r)
            try:
                _, status = os.waitpid(self.pid, 0)
                ok: bool | None = os.waitstatus_to_exitcode(status) == 0
            except ChildProcessError:
                ok = None
        return b"".join(chunks), ok

    def stop(self) -> None:
        """A child whose bytes nobody asks for: stopped and waited for (no zombie is left)."""
        try:
            os.close(self.r)
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def start(work: Callable[[], bytes]) -> Child:
    """A forked child that runs ``work()`` and sends its bytes; OSError when no pipe or process can be had."""
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        raise
    if pid == 0:  # the child: work, send, and leave without running this process's cleanup
        code = 1
        try:
            os.close(r)
            _quiet()
            view = memoryview(work())
            while view:
                view = view[os.write(w, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return Child(pid, r)


def in_a_child(child: Callable[[], bytes], here: Callable[[], T]) -> tuple[T, bytes | None]:
    """``here()`` in this process while a forked child runs ``child()``: ``(here's result, the child's bytes)``,
    the bytes ``None`` when there was no child or it did not end well (the caller then does its work)."""
    try:
        forked = start(child)
    except OSError:  # no descriptor or process to spare now
        return here(), None
    try:
        mine = here()
    finally:
        got, ok = forked.collect()
    return mine, (got if ok else None)


def _quiet() -> None:
    """A child's own start: its standard streams on /dev/null (a caller reading this process's output to its end
    is not kept waiting for the child), no core dump and no fault handler's report if it dies."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
        os.close(null)
    except OSError:
        pass
    try:
        import faulthandler
        import resource

        faulthandler.disable()
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, OSError, ValueError):
        pass
