"""LittleGhost Filesystem store documents (``little_ghost`` gem 0.4.0+, ``SessionStores::Filesystem``).

Each session is one file ``<root>/<sha256("little_ghost/filesystem_session/v1\\0" + id)>.json`` holding
one JSON document with no trailing newline::

    {"version":1,"actor_digest":<sha256 hex>,"snapshot":{"messages":[...],"state":{},"metadata":{}},"digest":<sha256 hex>}

``digest`` is the SHA-256 (hex) of Ruby's ``JSON.generate`` of the parsed document without its
``digest`` key; LittleGhost recomputes it on every load and rejects the file when it differs. Messages
are ``Message#to_h`` hashes, viewed with the LittleGhost message adapter. ``#N`` is the 1-based message
index.

Editing is only safe when re-serialising the parsed document with :mod:`rubyjson` reproduces the file
byte for byte (:func:`roundtrip_ok`) and the digest checks out; :attr:`LittleGhostSession.read_only_reason`
says why not otherwise. :func:`serialize_document` writes a document exactly as LittleGhost would.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from sessionview.core import rubyjson
from sessionview.core.doc.document import Document, open_regular, read_whole
from sessionview.core.formats.base import Capabilities, warn
from sessionview.core.formats.littleghost_jsonl import LittleGhostJsonlAdapter
from sessionview.core.doc.model import Kind, Problem, View
from sessionview.core.session_base import Session
from sessionview.core.store.stamp import LoadStamp, stamp_bytes

FORMAT_VERSION = 1
DOCUMENT_KEYS = ("version", "actor_digest", "snapshot", "digest")
HEAD_BYTES = 512
RAW_PREVIEW = 4096

_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"version"\s*:\s*-?[0-9]+\s*,\s*"actor_digest"\s*:')
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


class LittleGhostStoreAdapter(LittleGhostJsonlAdapter):
    """The message adapter, named for the store document."""

    name = "littleghost"
    title = "LittleGhost Filesystem store"


# -- helpers ----------------------------------------------------------------------------------------


def looks_like_store_document(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a regular file that starts like a LittleGhost store document.

    Reads at most :data:`HEAD_BYTES` bytes; never blocks on a FIFO or device and never raises.
    """
    try:
        fd = open_regular(path)
    except OSError:
        return False
    try:
        head = os.pread(fd, HEAD_BYTES, 0)
    except OSError:
        return False
    finally:
        os.close(fd)
    return _HEAD.match(head) is not None


def actor_digest(actor_id: str | None) -> str:
    """The ``actor_digest`` LittleGhost stores for ``actor_id``: sha256 of ``JSON.generate([nil?, id])``."""
    payload = [actor_id is None, None if actor_id is None else str(actor_id)]
    import hashlib  # (not at import: OpenSSL's, ~4 ms, not before the first screen)
    return hashlib.sha256(rubyjson.generate(payload)).hexdigest()


def store_file_name(session_id: str) -> str:
    """The file name LittleGhost's Filesystem store uses for session ``session_id``."""
    key = b"little_ghost/filesystem_session/v1\0" + str(session_id).encode("utf-8")
    import hashlib  # (not at import: OpenSSL's, ~4 ms, not before the first screen)
    return hashlib.sha256(key).hexdigest() + ".json"


def compute_digest(document: dict[str, Any]) -> str:
    """The digest LittleGhost expects: sha256 hex of ``JSON.generate(document.except("digest"))``.

    Raises :class:`rubyjson.RubyJSONError` when Ruby's bytes cannot be known (or Ruby would refuse).
    """
    body = {k: v for k, v in document.items() if k != "digest"}
    import hashlib  # (not at import: OpenSSL's, ~4 ms, not before the first screen)
    return hashlib.sha256(rubyjson.generate(body)).hexdigest()


def serialize_document(doc: dict[str, Any]) -> bytes:
    """The bytes LittleGhost's Filesystem store writes for ``doc``, with the digest recomputed.

    Keys in the order version, actor_digest, snapshot, digest; compact Ruby JSON; no trailing newline.
    Raises ``ValueError`` for a document LittleGhost would not write (a missing or extra top-level key)
    and :class:`rubyjson.RubyJSONError` for values Ruby cannot write exactly (NaN, an uncertain float...).
    """
    if not isinstance(doc, dict):
        raise ValueError("a LittleGhost document must be a JSON object")
    missing = [k for k in DOCUMENT_KEYS[:3] if k not in doc]
    if missing:
        raise ValueError(f"missing key(s) {', '.join(missing)}")
    extra = [k for k in doc if k not in DOCUMENT_KEYS]
    if extra:
        raise ValueError(f"LittleGhost never writes the key(s) {', '.join(map(repr, extra))}")
    body = {"version": doc["version"], "actor_digest": doc["actor_digest"], "snapshot": doc["snapshot"]}
    import hashlib  # (not at import: OpenSSL's, ~4 ms, not before the first screen)
    digest = hashlib.sha256(rubyjson.generate(body)).hexdigest()
    return rubyjson.generate({**body, "digest": digest})


class _Notes:
    def __init__(self) -> None:
        self.duplicates: list[str] = []
        self.non_finite = False


def parse_document(raw: bytes) -> tuple[Any, _Notes]:
    """Parse a document as Ruby's ``JSON.parse`` reads it (last duplicate wins). Raises ``ValueError``."""
    notes = _Notes()

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out and k not in notes.duplicates:
                notes.duplicates.append(k)
            out[k] = v
        return out

    def constant(name: str) -> float:
        notes.non_finite = True
        return float(name)

    text = raw.decode("utf-8")
    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except RecursionError:
        raise ValueError("nesting too deep for the parser") from None
    return value, notes


def roundtrip_ok(raw_bytes: bytes) -> tuple[bool, str]:
    """Whether ``JSON.generate(JSON.parse(raw))`` (Ruby's) gives back ``raw_bytes`` exactly, and why not."""
    try:
        value, _ = parse_document(raw_bytes)
    except UnicodeDecodeError as exc:
        return False, f"not UTF-8 (byte {exc.start})"
    except ValueError as exc:
        return False, f"invalid JSON: {exc}"
    try:
        again = rubyjson.generate(value)
    except rubyjson.RubyJSONError as exc:
        return False, f"cannot be re-serialised exactly: {exc}"
    if again == raw_bytes:
        return True, "re-serialising reproduces the file byte for byte"
    at = _common_prefix(again, raw_bytes)
    # show from the start of the differing token (after the last , : [ { before it)
    lo = max(0, at - 40)
    found = [i for i in (raw_bytes.rfind(c, lo, at) for c in (b",", b":", b"[", b"{")) if i >= 0]
    start = max(found) + 1 if found else lo
    have = raw_bytes[start : at + 24].decode("utf-8", "replace")
    want = again[start : at + 24].decode("utf-8", "replace")
    if at == len(again) and at < len(raw_bytes):
        extra = raw_bytes[at : at + 24].decode("utf-8", "replace")
        return False, f"the file has {len(raw_bytes) - at} extra byte(s) at the end ({extra!r}) that LittleGhost would not write"
    if at == len(raw_bytes):
        return False, f"the file ends early at byte {at}"
    return False, f"re-serialising differs from the file at byte {at}: the file has {have!r}, Ruby writes {want!r}"


def _common_prefix(a: bytes, b: bytes, chunk: int = 1 << 16) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    pos = 0
    while pos < n and a[pos : pos + chunk] == b[pos : pos + chunk]:
        pos += chunk
    end = min(pos + chunk, n)
    while pos < end and a[pos] == b[pos]:
        pos += 1
    return min(pos, n)


def _datamap_problem(value: Any, where: str) -> str | None:
    """Why LittleGhost's DataMap would refuse ``value`` (None when it accepts it)."""
    if not isinstance(value, dict):
        return f"{where} must be an object"
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        v, path = stack.pop()
        if isinstance(v, dict):
            stack.extend((item, f"{path}.{k}") for k, item in v.items())
        elif isinstance(v, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(v))
        elif isinstance(v, float) and not math.isfinite(v):
            return f"{path} is {v}: LittleGhost accepts only finite numbers"
        elif not (v is None or isinstance(v, (str, int, float))):
            return f"{path} has a value LittleGhost cannot store"
    return None


# -- the session ------------------------------------------------------------------------------------


class LittleGhostSession(Session):
    """A LittleGhost Filesystem store document, viewed as its messages (``#N`` = message index)."""

    def __init__(self, raw: bytes, path: str | None = None, stat: os.stat_result | None = None) -> None:
        self.path = path
        self.raw = raw
        self.adapter = LittleGhostStoreAdapter()
        self._stat = stat
        self.document: Any = None
        self.error: str | None = None
        self._notes = _Notes()
        try:
            self.document, self._notes = parse_document(raw)
        except UnicodeDecodeError as exc:
            self.error = f"invalid UTF-8 at byte {exc.start}"
        except ValueError as exc:
            self.error = f"invalid JSON: {exc}"
        self._problems: list[Problem] | None = None
        self._digest_ok: bool | None = None
        self.roundtrip = roundtrip_ok(raw) if self.error is None else (False, self.error)
        self.read_only_reason = self._read_only_reason()

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "LittleGhostSession":
        p = os.fspath(path)
        data, st = read_whole(p)
        return cls(data, p, st)

    @classmethod
    def from_bytes(cls, data: bytes, path: str | None = None) -> "LittleGhostSession":
        return cls(data, path)

    # -- the document ---------------------------------------------------------------------------
    @property
    def snapshot(self) -> dict[str, Any]:
        doc = self.document
        snap = doc.get("snapshot") if isinstance(doc, dict) else None
        return snap if isinstance(snap, dict) else {}

    @property
    def message_values(self) -> list[Any]:
        msgs = self.snapshot.get("messages")
        return msgs if isinstance(msgs, list) else []

    @property
    def state(self) -> dict[str, Any]:
        s = self.snapshot.get("state")
        return s if isinstance(s, dict) else {}

    @property
    def metadata(self) -> dict[str, Any]:
        m = self.snapshot.get("metadata")
        return m if isinstance(m, dict) else {}

    @property
    def version(self) -> Any:
        return self.document.get("version") if isinstance(self.document, dict) else None

    @property
    def actor_digest(self) -> str | None:
        a = self.document.get("actor_digest") if isinstance(self.document, dict) else None
        return a if isinstance(a, str) else None

    @property
    def digest(self) -> str | None:
        d = self.document.get("digest") if isinstance(self.document, dict) else None
        return d if isinstance(d, str) else None

    @property
    def digest_ok(self) -> bool | None:
        """True when the stored digest matches, False when it does not, None when it cannot be checked."""
        self.document_problems()
        return self._digest_ok

    @property
    def stamp(self) -> LoadStamp:
        """The save layer's stamp of what was loaded (see :func:`sessionview.core.store.stamp.stamp_bytes`)."""
        if self.path is None:
            raise ValueError("the document has no path")
        return stamp_bytes(self.path, self.raw, self._stat)

    # -- editing: the messages as a line document, so every edit operation works on them -------------
    @property
    def capabilities(self) -> Capabilities:
        """The messages' capabilities, written back as one whole document."""
        c = self.adapter.capabilities
        return Capabilities(c.editable, c.compactable, c.not_compactable, whole_document=True)

    @property
    def doc(self) -> Document:
        """The messages as compact Ruby-JSON lines (#N = message index): what the edit layer works on."""
        cached = self.__dict__.get("_doc")
        if cached is None:
            if self.read_only_reason:
                raise ValueError(f"this document is read-only: {self.read_only_reason}")
            lines = b"".join(rubyjson.generate(m) + b"\n" for m in self.message_values)
            cached = self.__dict__["_doc"] = Document.from_bytes(lines, path=self.path)
        return cached

    def parsed(self, number: int) -> Any:
        from sessionview.core.doc.parse import Parsed, Status

        if self.error is not None:
            return Parsed(Status.INVALID_JSON, error=self.error)
        return Parsed(Status.OK, self.message_values[number - 1])

    def with_messages(self, doc: Document) -> bytes:
        """This document's bytes with its messages replaced by ``doc``'s records, digest recomputed."""
        originals = self.message_values
        messages = []
        for rec in doc:
            index = doc.source_index(rec.number)
            messages.append(originals[index] if index is not None else json.loads(rec.raw))
        document = dict(self.document)
        snapshot = dict(document["snapshot"])
        snapshot["messages"] = messages
        document["snapshot"] = snapshot
        return serialize_document(document)

    @property
    def lock_path(self) -> str | None:
        """The store's lock file beside the document: ``<digest>.lock`` for ``<digest>.json``."""
        if self.path is None:
            return None
        return os.path.splitext(os.path.realpath(self.path))[0] + ".lock"

    # -- Session interface ----------------------------------------------------------------------
    def __len__(self) -> int:
        if self.error is not None:
            return 1
        return len(self.message_values)

    def view(self, number: int) -> View:
        if self.error is not None:
            if number != 1:
                raise IndexError(number)
            raw = self.raw[:RAW_PREVIEW]
            status = "not UTF-8" if self.error.startswith("invalid UTF-8") else "invalid JSON"
            problem = Problem(status, self.error, 1)
            return View(1, Kind.INVALID, label=status, text=self.error, problems=[problem], raw=raw)
        msgs = self.message_values
        if not 1 <= number <= len(msgs):
            raise IndexError(number)
        value = msgs[number - 1]
        view = self.adapter.view(number, value)
        try:
            view.problems.extend(self.adapter.schema_problems(number, value))
        except Exception as exc:  # noqa: BLE001 - never raise from a view
            view.problems.append(warn(number, f"schema check failed: {type(exc).__name__}: {exc}"))
        if view.kind is Kind.UNKNOWN and view.raw is None:
            view.raw = _value_preview(value)
        return view

    def document_problems(self) -> list[Problem]:
        if self._problems is None:
            self._problems = self._check_document()
        return list(self._problems)

    def _check_document(self) -> list[Problem]:
        if self.error is not None:
            return []  # the INVALID view carries the parse error
        doc = self.document
        out: list[Problem] = []
        if not isinstance(doc, dict):
            out.append(Problem("schema warning", "the document is not a JSON object: LittleGhost rejects it"))
            return out
        if self._notes.duplicates:
            keys = ", ".join(map(repr, self._notes.duplicates))
            out.append(Problem("duplicate keys", f"duplicate key(s) {keys} (the last one wins)"))
        if self._notes.non_finite:
            out.append(Problem("invalid JSON", "NaN/Infinity: Ruby's JSON.parse rejects it, so LittleGhost cannot load the file"))
        version = doc.get("version")
        if "version" not in doc:
            out.append(Problem("schema warning", "no version: LittleGhost rejects the file"))
        elif version != FORMAT_VERSION or isinstance(version, bool):
            out.append(Problem("schema warning", f"version {json.dumps(version)}: LittleGhost reads only version {FORMAT_VERSION}"))
        ad = doc.get("actor_digest")
        if not isinstance(ad, str) or not _HEX64.match(ad):
            out.append(Problem("schema warning", "actor_digest is not 64 lowercase hex digits: LittleGhost rejects the file"))
        extra = [k for k in doc if k not in DOCUMENT_KEYS]
        if extra:
            out.append(
                Problem(
                    "schema warning",
                    f"unexpected key(s) {', '.join(map(repr, extra))}: LittleGhost never writes them",
                    severity="warning",
                )
            )
        snap = doc.get("snapshot")
        if not isinstance(snap, dict):
            out.append(Problem("schema warning", "snapshot is not an object: LittleGhost rejects the file"))
        else:
            if not isinstance(snap.get("messages"), list):
                out.append(Problem("schema warning", "snapshot.messages is not a list: LittleGhost rejects the file"))
            for key in ("state", "metadata"):
                if key not in snap:
                    out.append(Problem("schema warning", f"snapshot.{key} is missing: LittleGhost rejects the file"))
                    continue
                why = _datamap_problem(snap[key], f"snapshot.{key}")
                if why:
                    out.append(Problem("schema warning", why))
        out.extend(self._digest_problems(doc))
        return out

    def _digest_problems(self, doc: dict[str, Any]) -> list[Problem]:
        stored = doc.get("digest")
        if not isinstance(stored, str) or not _HEX64.match(stored):
            self._digest_ok = False
            return [Problem("digest mismatch", "the digest is missing or not 64 lowercase hex digits: LittleGhost rejects the file")]
        try:
            expected = compute_digest(doc)
        except rubyjson.UncertainFloatError as exc:
            self._digest_ok = None
            return [Problem("digest unverifiable", f"cannot recompute the digest: {exc}", severity="warning")]
        except rubyjson.RubyJSONError as exc:
            self._digest_ok = None
            return [Problem("digest unverifiable", f"Ruby could not load or re-serialise this document: {exc}")]
        self._digest_ok = expected == stored
        if self._digest_ok:
            return []
        return [
            Problem(
                "digest mismatch",
                f"stored digest {stored[:12]}… but the content hashes to {expected[:12]}…: the file was changed "
                "outside LittleGhost, which rejects it (ProtocolError)",
            )
        ]

    def _read_only_reason(self) -> str | None:
        if self.error is not None:
            return f"the document cannot be parsed ({self.error})"
        ok, why = self.roundtrip
        if not ok:
            return f"the file is not exactly what LittleGhost writes, so a rewrite would change more than the edit: {why}"
        doc = self.document
        if not isinstance(doc, dict) or any(k not in doc for k in DOCUMENT_KEYS[:3]):
            return "the document lacks LittleGhost's structure"
        extra = [k for k in doc if k not in DOCUMENT_KEYS]
        if extra:
            return f"the document has key(s) LittleGhost never writes ({', '.join(map(repr, extra))})"
        if self.digest_ok is not True:
            problems = [p for p in self.document_problems() if p.kind in ("digest mismatch", "digest unverifiable")]
            detail = problems[0].message if problems else "the digest cannot be checked"
            return f"the integrity digest does not check out ({detail})"
        return None


def _value_preview(value: Any) -> bytes:
    try:
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")
    except (TypeError, ValueError, RecursionError):
        data = repr(value).encode("utf-8", "replace")
    return data[:RAW_PREVIEW]

