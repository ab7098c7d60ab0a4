"""Whole JSON documents for the transcript (re-exported by :mod:`sessionview.core.view.transcript`): a local
one (:func:`open_document_session`), or one read through a :class:`~sessionview.core.fileaccess.FileAccess`
(a file on another host): its bytes, and its session (LittleGhost store document, another JSON document)."""

from __future__ import annotations

import os

from sessionview.core import jsondoc
from sessionview.core.doc.linescan import ScanLimit
from sessionview.core.fileaccess import OpenFile
from sessionview.core.session import JsonlSession, open_session
from sessionview.core.session_base import Session


def open_document_session(path: str, max_size: int | None = None) -> Session | None:
    """A whole-document session (LittleGhost store file, another JSON document) for ``path``, or None for a
    line file."""
    head = jsondoc.head_of(path)
    if not jsondoc.looks_like_document(head) and not (path.lower().endswith(".json") and looks_like_json_document(head)):
        return None
    if max_size is not None and os.path.getsize(path) > max_size:
        raise ScanLimit("a big document: open it in a thread")
    session = open_session(path)
    if isinstance(session, JsonlSession):
        session.close()  # a line file after all: its descriptor is not kept
        return None
    return session


def looks_like_json_document(head: bytes) -> bool:
    from sessionview.core import catalog  # only for a .json file: the list of sessions needs it, a .jsonl file not

    return catalog.looks_like_json_document(head)


def read_whole(opened: OpenFile, size: int, chunk: int = 1 << 20) -> bytes:
    """Every byte of a document read through a FileAccess (at most ``jsondoc.MAX_DOCUMENT``)."""
    if size > jsondoc.MAX_DOCUMENT:
        raise OSError(27, f"a JSON document over {jsondoc.MAX_DOCUMENT >> 20} MiB", "")
    parts, pos = [], 0
    while pos < size:
        piece = opened.read(pos, min(chunk, size - pos))
        if not piece:
            break
        parts.append(piece)
        pos += len(piece)
    return b"".join(parts)


def document_from_bytes(data: bytes, name: str) -> Session:
    """The session of a whole document's bytes (a LittleGhost store document, another JSON document)."""
    from sessionview.core import littleghost  # here: a JSONL session's first screen does not need it

    if littleghost._HEAD.match(data[: littleghost.HEAD_BYTES]) is not None:
        return littleghost.LittleGhostSession.from_bytes(data, name)
    return jsondoc.JsonDocumentSession(data, name, None)
