"""Extraction in a forked child process, so that the parent spends its time in SQLite.

Building the index is about one part reading records (orjson and Python) to two parts SQLite's tokenizer
and writes. A thread cannot overlap them (the extraction holds the interpreter, and a thread was measured
slower); a child made by ``fork`` can. It runs the batch generator over the inherited file descriptor and
sends each batch through a pipe, one ahead of the parent (the pipe holds little: the child waits for the
parent to take a batch before it sends the next). Only a single-threaded parent forks (the CLI's
``index``), and only when a CPU is idle (:func:`can_fork`); the app's background worker extracts in its
own thread.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")
_END = "end"
_ERROR = "error"


def can_fork() -> bool:
    """Whether forking is safe and useful here: a single thread, and a CPU that other work leaves idle (the
    one-minute load average at least one below the CPU count). On a busy machine the child only competes
    with the writer, and its pickling is extra work: measured no quicker at 1 GiB under a load of 4-6 on 2 CPUs."""
    import multiprocessing
    import os

    cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = float(cpus)
    return threading.active_count() == 1 and load <= cpus - 1 and "fork" in multiprocessing.get_all_start_methods()


def can_split() -> bool:
    """Whether a bulk build may be split over two writing processes: two CPUs or more, a single thread (fork
    is safe) and ``fork`` available. Unlike :func:`can_fork`, the load does not matter: each process does
    its own reading and writing (nothing is pickled), so the CPU time is the same, only spread over two."""
    import multiprocessing
    import os

    return (os.cpu_count() or 1) >= 2 and threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


def _call(fn: Callable[[], Any], conn: Any) -> None:
    try:
        conn.send(("item", fn()))
    except BaseException as exc:  # the parent raises it
        try:
            conn.send((_ERROR, f"{type(exc).__name__}: {exc}"))
        except Exception:
            pass
    finally:
        conn.close()


def start(fn: Callable[[], T], name: str = "sessionview-index-part") -> Callable[..., T]:
    """Run ``fn()`` in a forked child; the function returned waits for its (picklable) result, or raises
    :class:`ChildFailed`. The child must not use the parent's SQLite connections (it opens its own)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_call, args=(fn, send), name=name, daemon=True)
    proc.start()
    send.close()

    def wait(tick: Callable[[], None] | None = None, every: float = 0.5) -> T:
        """``tick()`` is called each ``every`` seconds until the child is done (progress while waiting)."""
        try:
            try:
                while tick is not None and not recv.poll(every):
                    tick()
                what, payload = recv.recv()
            except EOFError:
                raise ChildFailed(f"the indexing process ended (exit {proc.exitcode})") from None
            if what == _ERROR:
                raise ChildFailed(payload)
            return payload
        finally:
            recv.close()
            proc.join()

    return wait


def counters(n: int) -> Any:
    """``n`` integers shared with the children forked from now on (each writes its own, the parent reads)."""
    import multiprocessing

    return multiprocessing.get_context("fork").RawArray("q", n)


def _run(make: Callable[[], Iterator[T]], encode: Callable[[T], Any], conn: Any) -> None:
    try:
        for item in make():
            conn.send(("item", encode(item)))
        conn.send((_END, None))
    except BaseException as exc:  # the parent raises it
        try:
            conn.send((_ERROR, f"{type(exc).__name__}: {exc}"))
        except Exception:
            pass
    finally:
        conn.close()


class ChildFailed(RuntimeError):
    """The extracting child raised, or died."""


def forked(make: Callable[[], Iterator[T]], encode: Callable[[T], Any], decode: Callable[[Any], T]) -> Iterator[T]:
    """The items of ``make()``, made in a forked child; closing the iterator ends the child."""
    import multiprocessing  # not at import: the CLI's search starts quicker without it

    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_run, args=(make, encode, send), name="sessionview-index-extract", daemon=True)
    proc.start()
    send.close()
    try:
        while True:
            try:
                what, payload = recv.recv()
            except EOFError:
                raise ChildFailed(f"the extracting process ended (exit {proc.exitcode})") from None
            if what == _END:
                return
            if what == _ERROR:
                raise ChildFailed(payload)
            yield decode(payload)
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join()
