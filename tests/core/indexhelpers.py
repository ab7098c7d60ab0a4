"""Shared helpers of the index tests: a fresh index, what it holds for a file, a search."""

from __future__ import annotations

import json
import os

from sessionview.core.index import hits
from sessionview.core.index.indexer import Indexer
from sessionview.core.index.model import Filters
from sessionview.core.index.query import parse
from sessionview.core.index.sqlite import SqliteBackend


def msg(role: str, content: str, **extra) -> bytes:
    return (json.dumps({"role": role, "content": content, **extra}, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def held(backend: SqliteBackend, path) -> list[tuple]:
    """``(n, offset, length, role, tool)`` of every record the index holds for ``path``, in order."""
    return backend.db.execute(
        "select d.n, d.offset, d.length, d.role, d.tool from docs d join files f on f.id=d.file_id where f.path=? order by d.n",
        (os.fspath(path),)).fetchall()


def fresh(path) -> list[tuple]:
    """What a new index holds for ``path`` (the reference an incremental index must equal)."""
    b = SqliteBackend(":memory:")
    Indexer(b).update([os.fspath(path)])
    try:
        return held(b, path)
    finally:
        b.close()


def find(backend: SqliteBackend, text: str, substring: bool = False, **filters) -> list:
    return list(hits.search(backend, parse(text), Filters(**filters), substring))
