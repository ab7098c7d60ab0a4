"""Fork a session: a new session file holding records 1 to N, next to the original, never over anything.

A JSONL session's fork is its first N records byte for byte (BOM, CRLF, invalid and partial lines
included), checked against what was read. A LittleGhost store document's fork is a new document with its
first N messages, its state and metadata, and a recomputed digest; a document sessionview cannot write
back exactly is refused. The fork is named ``NAME.fork-N.EXT`` (then ``NAME.fork-N-2.EXT``...) and is
given the original's mode.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any, Iterator

from sessionview.core.doc.digest import new_hash
from sessionview.core.doc.linescan import SourceChanged
from sessionview.core.doc.pairing import pair
from sessionview.core.errors import Refused
from sessionview.core.export.common import esc
from sessionview.core.export.files import create_new

MAX_NAMES = 1000


@dataclass(frozen=True)
class Forked:
    path: str
    records: int
    warnings: list[str] = field(default_factory=list)


def fork_names(path: str, n: int) -> Iterator[str]:
    """``NAME.fork-N.EXT``, then ``NAME.fork-N-2.EXT``, ``-3``... beside ``path``."""
    head, base = os.path.split(path)
    stem, ext = os.path.splitext(base)
    if not stem:  # ".jsonl" or a dot file
        stem, ext = base, ""
    for k in range(1, MAX_NAMES + 1):
        suffix = f".fork-{n}" + (f"-{k}" if k > 1 else "")
        yield os.path.join(head, stem + suffix + ext)


def fork_bytes(session: Any, n: int) -> Iterator[bytes]:
    """The bytes of the fork of ``session`` at record ``n`` (1 <= n <= len), in chunks."""
    if not 1 <= n <= len(session):
        raise ValueError(f"#{n} is outside 1:{len(session)}")
    if session.capabilities.whole_document:
        reason = getattr(session, "read_only_reason", None)
        if reason:
            raise Refused(f"refused: cannot fork this document: {reason}; nothing was written")
        doc = session.doc
        yield session.with_messages(doc.splice(n + 1, len(doc), []) if n < len(doc) else doc)
        return
    doc = session.doc
    if doc.edited:
        raise ValueError("the session has unsaved edits: fork the file as it is on disk")
    source = doc.source
    yield from (doc.splice(n + 1, len(doc), []) if n < len(doc) else doc).iter_bytes()
    # the bytes were read again from the file: make sure it still holds what was indexed
    if source.hexdigest is not None:
        h = new_hash(source.bom)
        for chunk in source.iter_bytes(0, source.count):
            h.update(chunk)
        if h.hexdigest() != source.hexdigest:
            raise SourceChanged(f"{session.path}: changed while it was forked")


def _cut_calls(session: Any, n: int) -> list[str]:
    """Warnings for tool calls in records 1..n with no result there (the fork ends without it)."""
    cut = pair(session.stream(1, n)).dangling
    return [f"tool call {esc(cid)} (#{at}) has no result in the fork; the agent may need to run it again"
            for cid, at in cut[:5]]


def fork(session: Any, n: int, out: str | None = None) -> Forked:
    """Write the fork of ``session`` at record ``n`` to ``out`` or to the first free ``NAME.fork-N.EXT``.

    Never overwrites: an existing ``out`` raises :class:`FileExistsError`. The file is written to a temp
    file, synced and linked into place (or created O_EXCL where there are no hard links)."""
    path = session.path
    if path is None:
        raise ValueError("the session has no file to fork")
    if not 1 <= n <= len(session):
        raise ValueError(f"#{n} is outside 1:{len(session)}")
    st = os.stat(path)
    mode = stat.S_IMODE(st.st_mode) & 0o777
    names = [out] if out is not None else fork_names(path, n)
    for name in names:
        if out is None and os.path.lexists(name):
            continue
        try:
            warnings = create_new(name, fork_bytes(session, n), mode)
        except FileExistsError:
            if out is not None:
                raise
            continue
        return Forked(name, n, warnings + _cut_calls(session, n))
    raise FileExistsError(f"{path}: every fork name up to .fork-{n}-{MAX_NAMES} is taken")
