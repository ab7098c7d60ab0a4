"""Files that hold one JSON document (pretty-printed, or several lines long) rather than JSON lines.

:func:`looks_like_document` decides from the first bytes alone (cheap enough for the session list): the file
starts with ``{`` or ``[`` and its first line is not a whole JSON value. :class:`JsonDocumentSession` then
reads the document whole and finds its messages: a Gemini CLI chat document (``{sessionId, projectHash,
messages:[…]}``), a list of Gemini API contents (``[{role, parts}]``, as ``/chat save`` writes), or a list of messages of another known format (a top-level array, or a ``messages``
array). ``#N`` is the 1-based message index. A document with no messages of a known format is one record,
shown raw, with the plain statement that its format is unknown: a healthy document is never read as broken
JSON lines. These documents are read-only (the reason is :attr:`JsonDocumentSession.read_only_reason`).
"""

from __future__ import annotations

import json
import os
from typing import Any

from sessionview.core import formats
from sessionview.core.doc.document import open_regular, read_whole
from sessionview.core.doc.model import Kind, Problem, View
from sessionview.core.doc.parse import parse_record
from sessionview.core.formats.base import Adapter, Capabilities, warn
from sessionview.core.session_base import Session
from sessionview.core.store.stamp import LoadStamp, stamp_bytes

HEAD_BYTES = 4096
RAW_PREVIEW = 4096
MAX_DOCUMENT = 512 * 1024 * 1024  # bytes: a bigger "document" is read as lines


def looks_like_document(head: bytes) -> bool:
    """Whether a file whose first bytes are ``head`` holds one multi-line JSON document (not JSON lines)."""
    h = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    h = h.lstrip(b" \t\r\n")
    if h[:1] not in (b"{", b"["):
        return False
    first, sep, rest = h.partition(b"\n")
    if not sep:
        return False  # one line (or a cut head): JSON lines
    if parse_record(first.rstrip(b"\r")).ok:
        return False  # the first line is a whole value: JSON lines
    nxt = rest.lstrip(b" \t\r\n")[:1]
    return nxt in (b'"', b"{", b"[", b"}", b"]") or nxt.isdigit() or nxt in (b"-", b"t", b"f", b"n")


def head_of(path: str | os.PathLike[str], size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of a regular file (b"" when it cannot be read; never blocks on a FIFO)."""
    try:
        fd = open_regular(path)
    except OSError:
        return b""
    try:
        return os.pread(fd, size, 0)
    except OSError:
        return b""
    finally:
        os.close(fd)


def messages_of(document: Any) -> tuple[Adapter, list[Any]] | None:
    """The adapter and the message list of a document, or None when it holds no messages of a known format."""
    # here, not at the top: a JSONL session's first screen sniffs its head with this module alone
    from sessionview.core.formats.gemini import GeminiCheckpointAdapter, GeminiDocumentAdapter, is_content, is_metadata
    from sessionview.core.formats.generic import GenericAdapter

    if is_metadata(document) and isinstance(document.get("messages"), list):
        return GeminiDocumentAdapter(), document["messages"]
    items = document if isinstance(document, list) else None
    for key in ("messages", "history"):
        if items is None and isinstance(document, dict) and isinstance(document.get(key), list):
            items = document[key]
    if not items:
        return None
    if sum(is_content(i) for i in items[:24]) * 2 > min(len(items), 24):
        return GeminiCheckpointAdapter(), items
    adapter = formats.detect(iter(items))
    if isinstance(adapter, GenericAdapter) and not any(isinstance(i, dict) and isinstance(i.get("role"), str) for i in items[:24]):
        return None
    return adapter, items


class JsonDocumentSession(Session):
    """A whole JSON document, viewed as its messages; read-only."""

    def __init__(self, raw: bytes, path: str | None = None, stat: os.stat_result | None = None) -> None:
        self.path = path
        self.raw = raw
        self._stat = stat
        self.document: Any = None
        self.error: str | None = None
        try:
            text = raw.decode("utf-8-sig")
            self.document = json.loads(text)
        except UnicodeDecodeError as exc:
            self.error = f"invalid UTF-8 at byte {exc.start}"
        except ValueError as exc:
            self.error = f"invalid JSON: {exc}"
        except RecursionError:
            self.error = "invalid JSON: nested too deeply"
        found = messages_of(self.document) if self.error is None else None
        self.known = found is not None
        self.adapter, self.items = found if found is not None else (formats.GenericAdapter(), [])
        self.read_only_reason = self._read_only_reason()

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "JsonDocumentSession":
        p = os.fspath(path)
        data, st = read_whole(p)
        return cls(data, p, st)

    @property
    def format_title(self) -> str:
        return self.adapter.title if self.known else "JSON document of unknown format"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(not_compactable=self.read_only_reason or "")

    @property
    def stamp(self) -> LoadStamp:
        if self.path is None:
            raise ValueError("the document has no path")
        return stamp_bytes(self.path, self.raw, self._stat)

    def _read_only_reason(self) -> str:
        if self.error is not None:
            return f"the document cannot be parsed ({self.error})"
        if not self.known:
            return "it is a JSON document of no known session format"
        from sessionview.core.formats.gemini import GeminiDocumentAdapter

        if isinstance(self.adapter, GeminiDocumentAdapter):
            return (
                "Gemini CLI rewrites this document whole (JSON.stringify with 2-space indent); "
                "writing one message back byte for byte is not supported"
            )
        return "it is one JSON document; editing is supported for JSON lines only"

    def __len__(self) -> int:
        return len(self.items) if self.known else 1

    def view(self, number: int) -> View:
        if not 1 <= number <= len(self):
            raise IndexError(number)
        if self.error is not None:
            status = "not UTF-8" if self.error.startswith("invalid UTF-8") else "invalid JSON"
            problem = Problem(status, f"the file looks like one JSON document, but {self.error}", 1)
            return View(1, Kind.INVALID, label=status, text=self.error, problems=[problem], raw=self.raw[:RAW_PREVIEW])
        if not self.known:
            label = "JSON document"
            return View(1, Kind.UNKNOWN, label=label, text="a JSON document of unknown format", value=self.document, raw=self.raw[:RAW_PREVIEW])
        value = self.items[number - 1]
        view = self.adapter.view(number, value)
        try:
            view.problems.extend(self.adapter.schema_problems(number, value))
        except Exception as exc:  # noqa: BLE001 - never raise from a view
            view.problems.append(warn(number, f"schema check failed: {type(exc).__name__}: {exc}"))
        if view.kind is Kind.UNKNOWN and view.raw is None:
            view.raw = json.dumps(value, ensure_ascii=False)[:RAW_PREVIEW].encode("utf-8", "replace")
        if view.timestamp is None:
            try:
                view.timestamp = self.adapter.timestamp_of(value)
            except Exception:  # noqa: BLE001 - never raise from a view
                pass
        return view
