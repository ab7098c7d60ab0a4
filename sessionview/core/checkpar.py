"""``check`` of a big JSONL session on two cores: the same problems as :meth:`Session.check`, in the same order
(``sessionview check`` calls :func:`check` for a JSONL session).

The records are split at the line nearest :data:`PARENT_SHARE` of the bytes (a little before the middle). A
forked child views the second half while this process views the first; each keeps, per record, only its problems and, for the rules over the whole file
(tool pairing), the call ids, names and result ids of the records those rules need
(:func:`~sessionview.core.session_base.keeps_for_pairing`), in compact pickled blocks. The first half feeds a
:class:`~sessionview.core.doc.pairing.CallLedger` as it goes; the second half's blocks are fed to it after,
in record order, exactly as :meth:`Session.check` does (it shares
:func:`~sessionview.core.session_base.finish_check` with this module). Nothing is shared between the processes but
the loaded line index (copied on fork) and the file itself, read through the same descriptor with
``pread``. Without ``fork`` (or for a small file) the check runs in one process.
"""

from __future__ import annotations

import bisect
import os
import pickle
import sys
from typing import TYPE_CHECKING, Any

from sessionview.core import checkfacts
from sessionview.core.doc.model import Problem
from sessionview.core.session_base import RecordFacts, finish_check

if TYPE_CHECKING:
    from sessionview.core.session import JsonlSession

__all__ = ["check", "PARALLEL_MIN_BYTES"]

PARALLEL_MIN_BYTES = 32 * 1024 * 1024  # below this a second process costs more than it saves
#: the share of the bytes this process checks: it also replays the child's blocks into the ledger and finishes,
#: which took 7% of the time of a half on the seeded 1 GiB file (0.28-0.32 s against 3.9-4.2 s, CPU time)
PARENT_SHARE = 0.47


def _facts(session: "JsonlSession", first: int, last: int) -> RecordFacts:
    facts = RecordFacts(direct=first == 1)  # a later run keeps its tools for the ledger of the runs before it
    checkfacts.collect(session, facts, first, last)
    return facts


def _split(session: "JsonlSession") -> int:
    """The first record of the second half: the line that starts nearest :data:`PARENT_SHARE` of the bytes."""
    source = session.doc.source
    i = bisect.bisect_left(source.starts, int(source.size * PARENT_SHARE))
    return max(2, min(len(session), i + 1))


def _child(session: "JsonlSession", first: int, last: int, w: int) -> None:
    try:
        result: Any = _facts(session, first, last)
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
        result = exc
    data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    with os.fdopen(w, "wb") as f:
        f.write(data)


def check(session: "JsonlSession", workers: int = 2) -> list[Problem]:
    n = len(session)
    parallel = (
        workers > 1
        and hasattr(os, "fork")
        and sys.platform.startswith("linux")
        and not session.doc.edited
        and session.doc.source.size >= PARALLEL_MIN_BYTES
        and (os.cpu_count() or 1) > 1
        and n > 2
    )
    if not parallel:
        return finish_check(session, [_facts(session, 1, n)])
    from sessionview.core.doc import quotes

    mid = _split(session)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the second half, then exit without running this process's cleanup
        code = 0
        quotes.ENABLED = False  # both cores are taken: no pass of either half starts a quote helper beside it
        try:
            os.close(r)
            _child(session, mid, n, w)
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    enabled, quotes.ENABLED = quotes.ENABLED, False
    try:
        first = _facts(session, 1, mid - 1)
    except BaseException:
        os.close(r)  # the child's write fails (EPIPE) and it exits
        os.waitpid(pid, 0)
        raise
    finally:
        quotes.ENABLED = enabled
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("the check of the second half of the file failed")
    second = pickle.loads(data)
    if isinstance(second, BaseException):
        raise second
    return finish_check(session, [first, second])
