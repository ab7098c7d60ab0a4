"""The shared index store: PostgreSQL, with ``tsvector`` + GIN for words and ``pg_trgm`` for substrings.

The tables are :mod:`.schema`'s: every ``files`` and ``docs`` row carries the host that indexed it; a
record's ``tsvector`` lives in a narrow ``docs`` row, its text (bounded to :data:`TEXT_MAX` characters) in
``text``, read only for the hits a search returns. The text is kept because a hit on another host cannot be
read back from a local file: its snippet is made from the stored text; a hit on this host is read back from
the file, as with SQLite (:mod:`sessionview.core.index.hits`). Searching, and the query language in SQL:
:mod:`.pgsearch`. Records arrive by ``COPY`` (a batch at a time, into both tables, with the ``tsvector``
written here: :func:`~sessionview.fleetindex.pgsearch.tsvector`).

Writers of one host take a transaction-scoped advisory lock on the host's name, so two indexers on one
host never add a record twice (the Indexer's state check does the rest); other hosts write at once.
"""

from __future__ import annotations

import contextlib
import os
import socket
from typing import Any, Iterable, Iterator, Sequence

from sessionview.core.index.model import Candidate, Doc, FileState, Filters, IndexUnavailable
from sessionview.core.index.query import Query
from sessionview.fleetindex import INSTALL_HINT, configured_host, pgsearch, redact, schema, scrub
from sessionview.fleetindex.pgsearch import tsvector, words

TEXT_MAX = 100_000  # characters of a record kept and searched (a tsvector holds at most 1 MB)
_SIGNED = 1 << 63

_DOCS = 'file_id, n, host, "offset", length, role, tool, ts, epoch, tsv'
_COLUMNS = "id, path, dev, ino, size, mtime_ns, end_, lines, head, tail, format, kind, partial"


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise IndexUnavailable(INSTALL_HINT) from None
    return psycopg


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= _SIGNED else v


def _unsigned(v: int) -> int:
    return v + (1 << 64) if v < 0 else v


def _clean(s: str) -> str:
    """Text PostgreSQL accepts: no NUL, valid UTF-8 (a lone surrogate becomes U+FFFD)."""
    if "\x00" in s:
        s = s.replace("\x00", "\ufffd")
    try:
        s.encode()
    except UnicodeEncodeError:
        s = s.encode("utf-8", "replace").decode()
    return s


class PostgresBackend:
    """See the module docstring. ``url``: a ``postgresql://`` URL or conninfo (never printed: :attr:`path`
    is it without the password). ``host``: the name on this host's rows (default: ``$SESSIONVIEW_HOST``, else
    ``index_host`` in config.toml, else the host name)."""

    def __init__(self, url: str, host: str | None = None, connect_timeout: float = 10.0) -> None:
        psycopg = _psycopg()
        self.url = url
        self.path = redact(url)
        self.host = host or configured_host() or socket.gethostname()
        self.notice: str | None = None
        self._in_tx = False
        self._grams: bool | None = None
        self._trgm_error: str | None = None
        try:
            # prepare_threshold=None: every statement planned for its parameters (a generic plan cannot
            # know how common a word is)
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=int(connect_timeout), prepare_threshold=None)
        except Exception as exc:
            raise IndexUnavailable(self.error(exc)) from None
        try:
            self._setup()
        except IndexUnavailable:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise IndexUnavailable(self.error(exc)) from None

    def error(self, exc: BaseException) -> str:
        """One line for the user about ``exc``: the index named without its password, none in the text."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        return scrub(f"cannot use the index {self.path}: {text}", self.url)

    def _setup(self) -> None:
        self.notice = schema.setup(self.conn, self.path)
        # the planner takes a seq scan for `tsv @@ … limit 25`, as if matches were spread evenly, and reads
        # (detoasts) every tsvector up to them; an index is always the better way here (and with the cost
        # of a seq scan so raised, JIT compiling, 100+ ms, would start on the smallest query)
        self.conn.execute("set enable_seqscan = off")
        self.conn.execute("set jit = off")
        row = self.conn.execute("select value from sv_meta where key='file_gin'").fetchone()
        self.file_gin = bool(row and row[0] == "1")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()

    # -- writing ------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if self._in_tx:
            yield
            return
        self._in_tx = True
        try:
            with self.conn.transaction():
                self.conn.execute("select pg_advisory_xact_lock(hashtextextended(%s, 1))", (self.host,))
                yield
        finally:
            self._in_tx = False

    def put_file(self, s: FileState) -> int:
        row = (_signed(s.dev), _signed(s.ino), s.size, s.mtime_ns, s.end, s.lines, s.head, s.tail, s.format, s.kind, s.partial)
        if s.id is None:
            found = self.conn.execute("select id from sv_files where host=%s and path=%s", (self.host, s.path)).fetchone()
            s.id = found[0] if found else None
        if s.id is None:
            cur = self.conn.execute(
                "insert into sv_files(host, path, dev, ino, size, mtime_ns, end_, lines, head, tail, format, kind, partial) "
                "values (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) returning id", (self.host, s.path, *row))
            s.id = int(cur.fetchone()[0])
        else:
            self.conn.execute(
                "update sv_files set dev=%s, ino=%s, size=%s, mtime_ns=%s, end_=%s, lines=%s, head=%s, tail=%s, format=%s, "
                "kind=%s, partial=%s where id=%s", (*row, s.id))
        return s.id

    def add_docs(self, file_id: int, docs: Iterable[Doc]) -> int:
        docs = list(docs)
        if not docs:
            return 0
        with self.transaction():
            with self.conn.cursor() as cur:
                bodies = []
                with cur.copy(f"copy sv_docs({_DOCS}) from stdin") as copy:
                    for d in docs:
                        body = _clean(d.text[:TEXT_MAX])
                        bodies.append((file_id, d.n, body))
                        copy.write_row((file_id, d.n, self.host, d.offset, d.length, _clean(d.role), _clean(d.tool),
                                        d.timestamp and _clean(d.timestamp), d.epoch, tsvector(words(body))))
                with cur.copy("copy sv_text(file_id, n, body) from stdin") as copy:
                    for row in bodies:
                        copy.write_row(row)
            calls = [(file_id, _clean(cid), _clean(name)) for d in docs for cid, name in d.calls]
            if calls:
                with self.conn.cursor() as cur:
                    cur.executemany("insert into sv_calls values (%s,%s,%s) on conflict (file_id, call_id) do update set name=excluded.name", calls)
        return len(docs)

    def clear_docs(self, file_id: int, from_n: int = 1) -> None:
        self.conn.execute("delete from sv_docs where file_id=%s and n>=%s", (file_id, from_n))
        self.conn.execute("delete from sv_text where file_id=%s and n>=%s", (file_id, from_n))
        if from_n <= 1:
            self.conn.execute("delete from sv_calls where file_id=%s", (file_id,))

    def delete_file(self, path: str) -> None:
        self.conn.execute("delete from sv_files where host=%s and path=%s", (self.host, path))

    def needs_rebuild(self) -> bool:
        return False  # PostgreSQL removes rows for real (autovacuum reclaims the space)

    def reset(self, notice: str) -> None:
        """Forget this host's files (the other hosts' rows stay)."""
        with self.transaction():
            self.conn.execute("delete from sv_files where host=%s", (self.host,))
        self.notice = notice

    @property
    def has_grams(self) -> bool:
        if self._grams is None:
            row = self.conn.execute("select to_regclass('sv_text_trgm') is not null").fetchone()
            self._grams = bool(row and row[0])
        return self._grams

    def enable_grams(self) -> None:
        """Create the trigram index over the stored text (pg_trgm; nothing needs indexing again)."""
        try:
            with self.conn.transaction():
                self.conn.execute(schema.LOCK)
                self.conn.execute("create extension if not exists pg_trgm")
                self.conn.execute(schema.GRAMS_PAIR if self.file_gin else schema.GRAMS)
        except Exception as exc:
            raise IndexUnavailable(self.error(exc) + " (substring search needs the pg_trgm extension: "
                                   "CREATE EXTENSION pg_trgm, as a user allowed to)") from None
        self._grams = True

    # -- reading ------------------------------------------------------------------------------------
    def _state(self, r: tuple) -> FileState:
        (fid, path, dev, ino, size, mtime_ns, end, lines, head, tail, fmt, kind, partial) = r
        return FileState(path, _unsigned(dev), _unsigned(ino), size, mtime_ns, end, lines, bytes(head), bytes(tail),
                         fmt, kind, bool(partial), fid)

    def file_state(self, path: str) -> FileState | None:
        r = self.conn.execute(f"select {_COLUMNS} from sv_files where host=%s and path=%s", (self.host, path)).fetchone()
        return None if r is None else self._state(r)

    def files(self, under: Sequence[str] = ()) -> list[FileState]:
        """This host's files (under the given directories)."""
        rows = self.conn.execute(f"select {_COLUMNS} from sv_files where host=%s", (self.host,)).fetchall()
        states = [self._state(r) for r in rows]
        return [s for s in states if not under or any(_inside(s.path, u) for u in under)]

    def hosts(self) -> list[tuple[str, int]]:
        """``(host, files)`` for every host in the index."""
        return [(h, int(c)) for h, c in self.conn.execute("select host, count(*) from sv_files group by host order by host")]

    def call_names(self, file_id: int, ids: Iterable[str] | None) -> dict[str, str]:
        if ids is None:
            rows = self.conn.execute("select call_id, name from sv_calls where file_id=%s", (file_id,)).fetchall()
        else:
            rows = self.conn.execute("select call_id, name from sv_calls where file_id=%s and call_id = any(%s)",
                                     (file_id, list(dict.fromkeys(ids)))).fetchall()
        return {c: n for c, n in rows}

    def count_docs(self) -> int:
        return int(self.conn.execute("select count(*) from sv_docs").fetchone()[0])

    def search(self, query: Query, filters: Filters, substring: bool = False, now: float | None = None) -> Iterator[Candidate]:
        """Best first: the newest file's matches first (see :mod:`.pgsearch`). A hit on another host carries
        its stored text."""
        return pgsearch.search(self, query, filters, substring)


def _inside(path: str, under: str) -> bool:
    return path == under or path.startswith(under.rstrip(os.sep) + os.sep)
