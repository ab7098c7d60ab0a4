"""What to (re)index, decided the way the follower decides (:mod:`sessionview.core.tail`), and the docs of it.

Per file the index keeps its identity (device, inode), size, modification time, how far it was indexed
(``end``, just past the last complete line) and two hashes: of its first :data:`HEAD` bytes and of the
:data:`TAIL` bytes just before ``end``. An update then costs one ``stat`` per file when nothing changed.
When something did:

* the file is at least ``end`` long and both hashes still match (an append; Brute's rewrite at the end of
  a turn, or a temp file renamed over it, that starts with what was indexed): only the bytes past ``end``
  are indexed, numbered on from the last line;
* it is shorter, or the bytes differ (truncated, compacted, replaced): it is indexed again from the start;
* it is gone: it leaves the index.

A last line without its newline is indexed as it is and replaced on the next update. A JSON document
(LittleGhost store, Gemini chat) is indexed whole whenever it changes.

The file is read in batches of about :data:`BATCH` bytes, and batches are written in transactions of
about :data:`TX_BYTES` (each commit makes an FTS5 segment, and nothing else may: no savepoints), each batch
checking that the file's state in the index is still the one it continues: two processes indexing at once
never add a record twice (the one that finds the state moved on starts its decision again). Progress is
reported, and the ``pause`` slept, after each commit. A big file (:data:`FORK_MIN` bytes to index) in a
single-threaded process (the CLI) has its records read in a forked child (:mod:`.child`) while this process
writes; a second thread was measured slower (the extraction holds the interpreter).
"""

from __future__ import annotations

import contextlib
import os
import stat as stat_mod
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Sequence

from sessionview.core import catalog, formats
from sessionview.core.formats.base import Adapter
from sessionview.core.index import child
from sessionview.core.index.extract import line_doc, line_docs, view_doc
from sessionview.core.index.model import Doc, FileState, IndexBackend, Names, backend_names

HEAD = 64 * 1024
TAIL = 4096
BATCH = 1 << 18  # bytes read at a time (each MiB of a batch measured about 10 MB of peak RSS; 256 KiB keeps a split build's two processes under 190 MiB together)
FORK_MIN = 16 << 20  # bytes to index in a file before the extraction is forked (:mod:`.child`)
TX_BYTES = 8 << 20  # batches written in one transaction (each makes an FTS5 segment; 16 MiB: 12% more CPU, a larger hash)
BULK_MIN = 64 << 20  # bytes to build into an empty index for a bulk build (no merges, no syncs: ``backend.bulk``)
SAMPLE_LINES = formats.SAMPLE  # a file with fewer lines is detected again as it grows

Progress = Callable[["Progress_"], None]


@dataclass
class Progress_:
    """Where an update is: files looked at of ``files``, bytes indexed of ``total`` (the files that changed)."""

    files: int = 0
    done_files: int = 0
    total: int = 0
    done: int = 0
    path: str = ""


@dataclass
class Summary:
    unchanged: int = 0
    appended: int = 0
    indexed: int = 0  # new files, and files indexed again from the start
    deleted: int = 0
    docs: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)  # paths that could not be indexed, with why
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.appended or self.indexed or self.deleted)


def _h(data: bytes) -> bytes:
    import hashlib  # here: loading OpenSSL is a few ms of a cold search that indexes nothing

    return hashlib.blake2b(data, digest_size=16).digest()


def fingerprint(read: Callable[[int, int], bytes], end: int) -> tuple[bytes, bytes]:
    """Hashes of the first :data:`HEAD` bytes below ``end`` and of the :data:`TAIL` bytes just before it."""
    return _h(read(0, min(end, HEAD))), _h(read(max(0, end - TAIL), min(end, TAIL)))


@dataclass
class _Batch:
    start: int
    end: int
    lines: int  # complete lines in [start, end)
    docs: list[Doc]
    head: bytes
    tail: bytes
    partial: Doc | None = None
    last: bool = False


class _Raced(Exception):
    """Another process moved the file's state on: decide again."""


class Indexer:
    """Bring the index current for files and directories. ``progress`` is called after each batch."""

    def __init__(self, backend: IndexBackend, progress: Progress | None = None, batch: int = BATCH,
                 should_stop: Callable[[], bool] = lambda: False, pause: float = 0.0, tx_bytes: int = TX_BYTES,
                 fork: bool | None = None, split: bool = True) -> None:
        self.backend = backend
        self.split = split  # a bulk build into an empty index may be split over two processes (_start_part)
        self._splitting = False
        self.fork = fork  # extract in a forked child: None when it pays (a big file, a single-threaded process)
        self.tx_bytes = tx_bytes
        self.progress = progress
        self.batch = batch
        self.should_stop = should_stop
        self.pause = pause  # seconds to sleep after each batch (a background indexer leaves the CPU to others)
        self._p = Progress_()
        self._theirs: Any = None  # a split build's child's (done_files, total, done), and the plan's bytes: shared

    # -- what to look at ----------------------------------------------------------------------------
    def targets(self, paths: Sequence[str]) -> tuple[list[str], list[str]]:
        """``(files to look at, directories they come from)``: the session files under each directory, each
        file given, and every indexed file under those (to notice the deleted ones). With no paths: every
        indexed file."""
        if not paths:
            return [s.path for s in self.backend.files()], []
        files: dict[str, None] = {}
        dirs: list[str] = []
        for p in paths:
            p = os.path.abspath(p)
            if os.path.isdir(p):
                dirs.append(p)
                for e in catalog.scan(p, self.should_stop):
                    files[e.path] = None
            else:
                files[p] = None
        for s in self.backend.files(dirs):
            files.setdefault(s.path, None)
        return list(files), dirs

    def update(self, paths: Sequence[str] = ()) -> Summary:
        t0 = time.monotonic()
        summary = Summary()
        if self.backend.needs_rebuild():
            known = [s.path for s in self.backend.files()]
            self.backend.reset(f"the index {self.backend.path} had more removed records than live ones; rebuilt it")
            paths = list(paths) or known
        files, _ = self.targets(paths)
        self._p = Progress_(files=len(files))
        bulk = getattr(self.backend, "bulk", None)  # an optional method of a store (the embedded one has it)
        is_bulk = bulk is not None and self._is_bulk(files)
        part = self._start_part(files) if is_bulk else None
        if part is not None:
            files = part[0]
        try:
            with bulk(is_bulk) if bulk is not None else contextlib.nullcontext():
                self._update_all(files, summary)
                if part is not None:
                    self._finish_part(part[1], part[2], part[3], summary)
        finally:
            self._splitting, self._theirs = False, None
        summary.seconds = time.monotonic() - t0
        return summary

    def _update_all(self, files: list[str], summary: Summary) -> None:
        for path in files:
            if self.should_stop():
                break
            self._p.path = path
            self.update_file(path, summary)
            self._p.done_files += 1
            self._report()

    def _report(self) -> None:
        """Call ``progress`` with this process's progress, and a split build's child's."""
        if self.progress is None:
            return
        p, c = self._p, self._theirs
        if c is not None:  # the total: the whole plan's bytes (every file is new), from the start
            p = replace(p, done_files=p.done_files + c[0], total=max(c[3], p.total + c[1]), done=p.done + c[2])
        self.progress(p)

    # -- a bulk build in two processes ------------------------------------------------------------------
    def _start_part(self, files: list[str]) -> tuple[list[str], list[str], str, Callable[..., dict]] | None:
        """Split a bulk build: a forked child indexes about half the bytes into a part of the index (its own
        SQLite file: FTS5 takes one writer per file), which this process then adopts. ``(this process's files,
        the child's, the part's file, wait for the child)``, or None when it does not pay or cannot be done."""
        backend = self.backend
        if not (self.split and len(files) >= 2 and hasattr(backend, "adopt") and child.can_split()):
            return None
        sizes = []
        for path in files:
            try:
                sizes.append((os.stat(path).st_size, path))
            except OSError:
                sizes.append((0, path))
        mine: list[str] = []
        theirs: list[str] = []
        load = [0, 0]
        for size, path in sorted(sizes, reverse=True):  # the larger files first, each to the lighter half
            k = 0 if load[0] <= load[1] else 1
            (mine, theirs)[k].append(path)
            load[k] += size
        if not theirs or load[1] < BULK_MIN // 2:
            return None
        plan = backend.plan_part()  # type: ignore[attr-defined]
        if plan is None:
            return None
        file, first_id = plan
        grams = backend.has_grams
        kind = type(backend)
        shared = self._theirs = child.counters(4)
        shared[3] = load[0] + load[1]

        def tell(p: Progress_) -> None:
            shared[0], shared[1], shared[2] = p.done_files, p.total, p.done

        def build() -> dict:
            part = kind(file)  # type: ignore[call-arg]
            part.start_part(first_id, grams)  # type: ignore[attr-defined]
            done = Indexer(part, tell, batch=self.batch, tx_bytes=self.tx_bytes, fork=False, split=False).update(theirs)
            part.close()
            return {k: getattr(done, k) for k in ("indexed", "docs", "bytes", "skipped")}

        wait = child.start(build)
        self._splitting = True  # no forked extractor beside two writers
        order = {p: i for i, p in enumerate(files)}
        return sorted(mine, key=order.__getitem__), theirs, file, wait

    def _finish_part(self, theirs: list[str], file: str, wait: Callable[..., dict], summary: Summary) -> None:
        """Adopt the child's part; should it have failed, index its files here."""
        try:
            done = wait(self._report)
            self.backend.adopt(file)  # type: ignore[attr-defined]
        except Exception:
            self._splitting, self._theirs = False, None
            self._update_all(theirs, summary)
            return
        summary.indexed += done["indexed"]
        summary.docs += done["docs"]
        summary.bytes += done["bytes"]
        summary.skipped += done["skipped"]
        c, self._theirs = self._theirs, None
        self._p.done_files += len(theirs)
        self._p.total += c[1]
        self._p.done += c[2]
        self._report()

    def _is_bulk(self, files: list[str]) -> bool:
        """Whether this is a build of at least :data:`BULK_MIN` bytes into an empty index."""
        if self.backend.files():
            return False
        total = 0
        for path in files:
            with contextlib.suppress(OSError):
                total += os.stat(path).st_size
            if total >= BULK_MIN:
                return True
        return False

    # -- one file -------------------------------------------------------------------------------------
    def update_file(self, path: str, summary: Summary | None = None) -> str:
        """Bring one file current: ``unchanged``, ``appended``, ``indexed``, ``deleted`` or ``skipped``."""
        summary = summary if summary is not None else Summary()
        for _ in range(3):
            try:
                what = self._update_file(path, summary)
            except _Raced:
                continue
            if what != "skipped":
                setattr(summary, what, getattr(summary, what) + 1)
            return what
        summary.unchanged += 1
        return "unchanged"

    def _update_file(self, path: str, summary: Summary) -> str:
        backend = self.backend
        try:
            path.encode()
        except UnicodeEncodeError:
            summary.skipped.append(f"{path!r}: the name is not UTF-8")
            return "skipped"
        state = backend.file_state(path)
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is None or not stat_mod.S_ISREG(st.st_mode):
            if state is None:
                if st is None and not os.path.lexists(path):
                    summary.skipped.append(f"{path}: no such file")
                return "skipped"
            with backend.transaction():
                backend.delete_file(path)
            return "deleted"
        if state is not None and (state.dev, state.ino, state.size, state.mtime_ns) == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
            return "unchanged"
        from sessionview.core.doc.document import open_regular  # only here: a search over a current index skips it

        try:
            fd = open_regular(path)
        except OSError as exc:
            summary.skipped.append(f"{path}: {exc.strerror or exc}")
            return "skipped"
        try:
            return self._index_open(path, fd, state, summary)
        finally:
            os.close(fd)

    def _index_open(self, path: str, fd: int, state: FileState | None, summary: Summary) -> str:
        from sessionview.core.doc.document import preader

        st = os.fstat(fd)
        read = preader(fd)
        head = read(0, formats.HEAD_BYTES)
        if _is_document(path, head):
            return self._index_document(path, st, state, summary)
        adapter = formats.detect_head(head)
        start = 0
        if state is not None and state.kind == "lines" and st.st_size >= state.end and state.end > 0:
            same = fingerprint(read, state.end) == (state.head, state.tail)
            if same and (state.lines >= SAMPLE_LINES or adapter.name == state.format):
                start = state.end
                adapter = formats.by_name(state.format) if state.format in formats.BY_NAME else adapter
        if start == 0:
            new = FileState(path, st.st_dev, st.st_ino, -1, -1, 0, 0, b"", b"", adapter.name, "lines", False,
                            state.id if state else None)
            first = 1
            names: dict[str, str] = {}
            head_buf, tail_buf = b"", b""
        else:
            assert state is not None
            new = FileState(path, st.st_dev, st.st_ino, -1, -1, state.end, state.lines, state.head, state.tail,
                            state.format, "lines", state.partial, state.id)
            first = state.lines + 1
            names = {}
            head_buf = read(0, min(start, HEAD))
            tail_buf = read(max(0, start - TAIL), min(start, TAIL))
        self._p.total += max(0, st.st_size - start)
        batches: Iterator[_Batch]
        forking = self.fork is True or (self.fork is None and not self._splitting and st.st_size - start >= FORK_MIN
                                        and child.can_fork())
        if start and state is not None and state.id is not None:  # an append: only the names its results answer are
            names = backend_names(self.backend, state) if forking else Names(self.backend, state.id)  # read, here
        if forking:
            batches = child.forked(lambda: self._batches(read, st.st_size, start, first, adapter, names, head_buf, tail_buf),
                                   _encode, _decode)
        else:
            batches = self._batches(read, st.st_size, start, first, adapter, names, head_buf, tail_buf)
        expect = state
        counted = (summary.docs, summary.bytes)
        group = 0  # bytes of the batches in the open transaction
        with contextlib.ExitStack() as tx:
            try:
                for batch in batches:
                    if not group:
                        tx.enter_context(self.backend.transaction())
                        counted = (summary.docs, summary.bytes)
                    expect = self._commit(new, expect, batch, start == 0 and batch.start == 0, st, summary)
                    group += batch.end - batch.start
                    stop = self.should_stop() and not batch.last
                    if group >= self.tx_bytes or batch.last or stop:
                        tx.close()  # commit
                        self._p.done += group
                        group = 0
                        self._report()
                        if self.pause:
                            time.sleep(self.pause)
                    if stop:
                        break
            except BaseException:
                summary.docs, summary.bytes = counted  # the open transaction is rolled back
                raise
        return "indexed" if start == 0 else "appended"

    def _commit(self, new: FileState, expect: FileState | None, batch: _Batch, first: bool, st: os.stat_result,
                summary: Summary) -> FileState:
        backend = self.backend
        with backend.transaction():
            cur = backend.file_state(new.path)
            if not _same(cur, expect):
                raise _Raced()
            if cur is not None:
                new.id = cur.id
            file_id = backend.put_file(new)
            if first and cur is not None:
                backend.clear_docs(file_id)
            elif cur is not None and cur.partial:
                backend.clear_docs(file_id, cur.lines + 1)
            docs = batch.docs + ([batch.partial] if batch.partial is not None else [])
            summary.docs += backend.add_docs(file_id, docs)
            summary.bytes += batch.end - batch.start
            new.end = batch.end
            new.lines += batch.lines
            new.head, new.tail = batch.head, batch.tail
            new.partial = batch.partial is not None
            if batch.last:
                new.size, new.mtime_ns = st.st_size, st.st_mtime_ns
            backend.put_file(new)
        return replace(new)

    def _batches(self, read: Callable[[int, int], bytes], size: int, start: int, first: int, adapter: Adapter,
                 names: dict[str, str], head_buf: bytes, tail_buf: bytes) -> Iterator[_Batch]:
        pos = start
        n = first
        while True:
            data = read(pos, self.batch)
            cut = data.rfind(b"\n")
            while cut == -1 and data and pos + len(data) < size:  # a line longer than a batch
                more = read(pos + len(data), self.batch)
                if not more:
                    break
                data += more
                cut = data.rfind(b"\n")
            last = pos + len(data) >= size or cut == -1
            whole = data[: cut + 1]
            rest = data[cut + 1 :]
            docs = list(line_docs(adapter, whole, pos, n, names)) if whole else []
            lines = whole.count(b"\n")
            end = pos + len(whole)
            if len(head_buf) < HEAD:
                head_buf = (head_buf + whole)[:HEAD]
            tail_buf = (tail_buf + whole[-TAIL:])[-TAIL:]
            partial = None
            if last and rest.strip():
                raw = rest[:-1] if rest.endswith(b"\r") else rest
                at = end
                if end == 0 and raw.startswith(b"\xef\xbb\xbf"):
                    raw, at = raw[3:], 3
                partial = line_doc(adapter, n + lines, raw, at, names, terminated=False)
            yield _Batch(pos, end, lines, docs, _h(head_buf), _h(tail_buf), partial, last)
            if last:
                return
            pos = end
            n += lines

    def _index_document(self, path: str, st: os.stat_result, state: FileState | None, summary: Summary) -> str:
        from sessionview.core.session import open_session

        try:
            session = open_session(path)
        except Exception as exc:  # a broken document is skipped, never fatal
            summary.skipped.append(f"{path}: {type(exc).__name__}: {exc}")
            return "skipped"
        try:
            names: dict[str, str] = {}
            docs = []
            for view in session.views():
                docs.append(view_doc(view, -1, 0, names))
            fmt = session.format
        finally:
            session.close()
        new = FileState(path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_size, len(docs), b"", b"", fmt,
                        "document", False, state.id if state else None)
        with self.backend.transaction():
            cur = self.backend.file_state(path)
            if not _same(cur, state):
                raise _Raced()
            file_id = self.backend.put_file(new)
            self.backend.clear_docs(file_id)
            summary.docs += self.backend.add_docs(file_id, docs)
        summary.bytes += st.st_size
        self._p.done += st.st_size
        return "indexed"


def _doc_tuple(d: Doc) -> tuple:
    return (d.n, d.offset, d.length, d.role, d.tool, d.timestamp, d.epoch, d.text, d.calls)


def _encode(b: _Batch) -> tuple:
    return (b.start, b.end, b.lines, [_doc_tuple(d) for d in b.docs], b.head, b.tail,
            None if b.partial is None else _doc_tuple(b.partial), b.last)


def _decode(t: tuple) -> _Batch:
    start, end, lines, docs, head, tail, partial, last = t
    return _Batch(start, end, lines, [Doc(*d) for d in docs], head, tail, None if partial is None else Doc(*partial), last)


def _same(a: FileState | None, b: FileState | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return (a.dev, a.ino, a.size, a.mtime_ns, a.end, a.lines, a.head, a.tail, a.partial) == (
        b.dev, b.ino, b.size, b.mtime_ns, b.end, b.lines, b.head, b.tail, b.partial)


def _is_document(path: str, head: bytes) -> bool:
    from sessionview.core import jsondoc

    h = head[: jsondoc.HEAD_BYTES]
    if jsondoc.looks_like_document(h):
        return True
    return path.lower().endswith(".json") and catalog.looks_like_json_document(h)
