"""Remote sessions: list a directory on a host and open a session there, reading ranges over SFTP.

A JSONL session is indexed through range reads and read on demand, like a local one; a one-document format
(a LittleGhost store document, a JSON document) is read whole, up to ``jsondoc.MAX_DOCUMENT``, because it
is one value. A remote session is read-only here: writes run on the host (:mod:`sessionview.remote.writes`).
"""

from __future__ import annotations

import posixpath
from typing import Any, Callable, Iterator

from sessionview.core import catalog, formats, jsondoc, littleghost
from sessionview.core.catalog import Entry
from sessionview.core.doc.document import Document, Source
from sessionview.core.session import JsonlSession
from sessionview.core.session_base import Session
from sessionview.core.view.documents import document_from_bytes, read_whole
from sessionview.remote.sftp import BlockCache, SftpAccess, SftpFile

READ_ONLY = "a remote session: writes run on its host (sessionview edit/delete/... with the ssh address)"


def scan(access: SftpAccess, root: str, should_stop: Callable[[], bool] | None = None) -> Iterator[Entry]:
    """Every session file under ``root`` on the host, like :func:`sessionview.core.catalog.scan`."""
    root = access.realpath(root)
    for path, st in access.walk_files(root, catalog.SKIP_DIRS, catalog.is_session_name):
        if should_stop is not None and should_stop():
            return
        if path.lower().endswith(".json") and not _json_ok(access, path):
            continue
        rel = posixpath.relpath(path, root) if path.startswith(root.rstrip("/") + "/") else path
        yield Entry(path, rel, st.st_size, st.st_mtime)


def _json_ok(access: SftpAccess, path: str) -> bool:
    try:
        f = access.open(path)
    except OSError:
        return False
    try:
        return catalog.looks_like_json_document(f.read(0, jsondoc.HEAD_BYTES))
    except OSError:
        return False
    finally:
        f.close()


def open_session(access: SftpAccess, path: str, label: str | None = None, read_only: str | None = None) -> Session:
    """Open the session file ``path`` on the host. ``label`` is the name it is shown by; ``read_only`` (for
    the app, e.g. :data:`READ_ONLY` or a :class:`~sessionview.remote.writes.Capability`'s reason) is set as
    its ``read_only_reason``: the session object itself never writes to the host."""
    opened = access.open(path)
    try:
        st = opened.stat()
        head = opened.read(0, max(jsondoc.HEAD_BYTES, formats.HEAD_BYTES))
        name = label or path
        if littleghost._HEAD.match(head[: littleghost.HEAD_BYTES]) is not None or (
            jsondoc.looks_like_document(head[: jsondoc.HEAD_BYTES]) and st.st_size <= jsondoc.MAX_DOCUMENT
        ):
            session: Session = document_from_bytes(read_whole(opened, st.st_size), name)
            opened.close()
        else:
            source = Source.from_reader(BlockCache(opened.read), st.st_size, digest=False)
            doc = Document(source, path=name)
            session = JsonlSession(doc)
            _close_with(session, opened)
    except BaseException:
        opened.close()
        raise
    if read_only is not None:
        session.read_only_reason = read_only
    return session


def _close_with(session: Session, opened: SftpFile) -> None:
    close = session.close

    def closing() -> None:
        try:
            close()
        finally:
            opened.close()

    session.close = closing  # type: ignore[method-assign]


def open_tail(access: SftpAccess, path: str, count: int = 256) -> tuple[SftpFile, JsonlSession, int, int, bool]:
    """A remote JSONL session opened end first, as the app's first screen opens a local one
    (:func:`sessionview.core.tail_open.open_tail`): only its last ``count`` complete lines are indexed,
    reading backwards in ranges. Returns ``(file, session, end, size, whole)``: the open file (for a
    :func:`~sessionview.remote.follow.remote_follower` from ``end``), a session over those lines, where
    they end, the file's size, and whether they are all of its lines."""
    from array import array

    from sessionview.core.doc.document import BOM
    from sessionview.core.doc.linescan import tail_line_starts
    from sessionview.core.tail_open import complete_end

    opened = access.open(path)
    try:
        size = opened.stat().st_size
        read = BlockCache(opened.read)
        bom = BOM if read(0, min(3, size)) == BOM else b""
        end = max(complete_end(read, size), len(bom)) if size else 0
        starts = tail_line_starts(read, len(bom), end, count) if end > len(bom) else []
        whole = not starts or starts[0] == len(bom)
        adapter = formats.detect_head(read(0, formats.HEAD_BYTES))
        session = JsonlSession(Document(Source(read, end, array("q", starts), bom), path=path), adapter=adapter)
    except BaseException:
        opened.close()
        raise
    return opened, session, end, size, whole


DESCRIBE_DOCUMENT_LIMIT = 8 << 20  # a remote JSON document up to this size is read whole to describe it


def describe(access: SftpAccess, path: str, size: int) -> catalog.Description:
    """The session list's description of a remote file from one range read of its head (format, and for a
    file that fits in it, its record count and sketch); a bigger file gets its format only, since counting
    its lines would read all of it. A document up to :data:`DESCRIBE_DOCUMENT_LIMIT` is read whole."""
    from sessionview.core.sketch import HEAD, sketch_lines, sketch_session

    try:
        opened = access.open(path)
        try:
            head = opened.read(0, max(HEAD, jsondoc.HEAD_BYTES))
        finally:
            opened.close()
    except OSError as exc:
        return catalog.Description("?", None, exc.strerror or str(exc) or type(exc).__name__)
    if jsondoc.looks_like_document(head[: jsondoc.HEAD_BYTES]):
        if size > DESCRIBE_DOCUMENT_LIMIT:
            return catalog.Description("JSON document", None, None)
        try:
            session = open_session(access, path)
            try:
                return catalog.Description(session.format_title, len(session), None, sketch_session(session))
            finally:
                session.close()
        except Exception as exc:  # a broken document is still listed
            return catalog.Description("JSON document", None, f"{type(exc).__name__}: {exc}")
    if not head.strip():
        return catalog.Description("?", 0 if size == 0 else None, None)
    adapter = formats.detect_head(head)
    if len(head) < size:
        return catalog.Description(adapter.title, None, None)
    count = head.count(b"\n") + (0 if head.endswith(b"\n") else 1)
    try:
        found = sketch_lines(path, head, size, count, adapter)
    except Exception:
        found = None
    return catalog.Description(adapter.title, count, None, found)


class SessionAccess(SftpAccess):
    """An :class:`SftpAccess` for the app: the core's follower (:func:`sessionview.core.tail.follower_for`)
    is a :class:`~sessionview.remote.follow.RemoteFollower` (polled every 0.25 s, fewer re-reads, no raise
    when the host stops answering)."""

    def follower(self, path: str, offset: int = 0, file: Any = None) -> Any:
        from sessionview.remote.follow import remote_follower

        return remote_follower(self, path, offset, file)
