r"""The shared index store: PostgreSQL, with ``tsvector`` + GIN for words and ``pg_trgm`` for substrings.

Tables (prefix ``sv_``): ``files`` (a :class:`FileState` per host and path), ``docs`` (a record's place,
metadata, its text, bounded to :data:`TEXT_MAX` characters, and its ``tsvector``), ``calls`` (tool names by
call id) and ``meta``. Every ``files`` and ``docs`` row carries the host that indexed it. The text is kept
because a hit on another host cannot be read back from a local file: its snippet is made from the stored
text; a hit on this host is read back from the file, as with SQLite (:mod:`sessionview.core.index.hits`).

Words are the query language's (runs of letters and digits): the text is cut to them here, one space between
(:func:`words`), so PostgreSQL's parser, which would keep ``deploy.sh`` or an e-mail address whole, sees
plain words; ``to_tsvector('simple', …)`` (lower case, no stemming) makes the ``tsvector``. Each query term
goes through the same cut and the same parser (``phraseto_tsquery``, ``to_tsquery`` for a prefix), so both
sides split alike. The query's text only ever travels as parameters (``ILIKE`` patterns with ``%``, ``_`` and
``\`` escaped for ``--substring``); the SQL's shape depends only on how many terms there are.

Writers of one host take a transaction-scoped advisory lock on the host's name, so two indexers on one
host never add a record twice (the Indexer's state check does the rest); other hosts write at once.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import time
from typing import Any, Iterable, Iterator, Sequence

from sessionview.core.index.model import Candidate, Doc, FileState, Filters, IndexUnavailable
from sessionview.core.index.query import Query, QueryError, Term
from sessionview.fleetindex import INSTALL_HINT, configured_host, redact, scrub

VERSION = "1"
TEXT_MAX = 100_000  # characters of a record kept and searched (a tsvector holds at most 1 MB)
RECENT = 86400.0
BOOST = 2.0
COMMON = 5000  # more word matches than this are taken newest file first (ranking them all is slow)
FETCH = 25  # rows of the first page of a search (20 hits are usually asked for); each next page is 4x larger
_NOT_WORD = re.compile(r"[\W_]+")
_SIGNED = 1 << 63

_SCHEMA = """
create table if not exists sv_meta(key text primary key, value text);
create table if not exists sv_files(
    id bigserial primary key, host text not null, path text not null, dev bigint, ino bigint, size bigint,
    mtime_ns bigint, end_ bigint, lines bigint, head bytea, tail bytea, format text, kind text, partial boolean,
    unique(host, path));
create table if not exists sv_docs(
    id bigserial primary key, file_id bigint not null references sv_files(id) on delete cascade, host text not null,
    n integer not null, "offset" bigint, length bigint, role text, tool text, ts text, epoch double precision,
    body text not null, tsv tsvector not null);
create index if not exists sv_docs_tsv on sv_docs using gin(tsv);
create index if not exists sv_docs_file on sv_docs(file_id, n);
create table if not exists sv_calls(
    file_id bigint not null references sv_files(id) on delete cascade, call_id text not null, name text,
    primary key(file_id, call_id));
"""
_STAGE = """create temp table if not exists sv_stage(
    file_id bigint, host text, n integer, "offset" bigint, length bigint, role text, tool text, ts text,
    epoch double precision, body text, words text)"""
_DOC_COLUMNS = 'file_id, host, n, "offset", length, role, tool, ts, epoch, body'
_STAGED = _DOC_COLUMNS + ", words"
_GRAMS = "create index if not exists sv_docs_trgm on sv_docs using gin(body gin_trgm_ops)"
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


def words(text: str) -> str:
    """``text``'s words (the query language's: runs of letters and digits) in lower case, one space between:
    what PostgreSQL's ``to_tsvector('simple', …)`` is given, so that its parser never sees ``deploy.sh``."""
    return _NOT_WORD.sub(" ", text.lower()).strip()


def _term_sql(term: Term) -> tuple[str, str] | None:
    """One term as SQL that makes its ``tsquery`` from a parameter, and that parameter (letters, digits and
    spaces only): a phrase of its words, the last one a prefix for ``word*``."""
    text = words(term.text)
    if not text:
        return None
    if term.prefix:
        return "to_tsquery('simple', %s)", "'" + text + "':*"
    return "phraseto_tsquery('simple', %s)", text


def to_tsquery(query: Query) -> tuple[str, list[str]]:
    """``(SQL expression, parameters)`` making the ``tsquery`` for ``query``; its shape depends only on the
    number of terms, their text is always a parameter."""
    positive = [e for e in (_term_sql(t) for t in query.positive) if e is not None]
    if not positive:
        raise QueryError("the query has no letters or digits to search for")
    sql = "(" + " && ".join(e for e, _ in positive) + ")"
    params = [p for _, p in positive]
    negative = [e for e in (_term_sql(t) for t in query.negative) if e is not None]
    if negative:
        sql = f"({sql} && !!({' || '.join(e for e, _ in negative)}))"
        params += [p for _, p in negative]
    return sql, params


def like_pattern(text: str) -> str:
    """``text`` as an ILIKE pattern that finds it anywhere (``\\``, ``%`` and ``_`` escaped)."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


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
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=int(connect_timeout))
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
        with self.conn.transaction():
            self.conn.execute("select pg_advisory_xact_lock(hashtextextended('sessionview schema', 0))")
            row = self.conn.execute("select to_regclass('sv_meta') is not null").fetchone()
            if row and row[0]:
                v = self.conn.execute("select value from sv_meta where key='version'").fetchone()
                if v is None or v[0] != VERSION:
                    raise IndexUnavailable(f"the index {self.path} was made by another version of sessionview "
                                           f"(schema {v[0] if v else '?'}, this one needs {VERSION})")
                return
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self.conn.execute(statement)
            self.conn.execute("insert into sv_meta values ('version', %s) on conflict (key) do nothing", (VERSION,))

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
                cur.execute(_STAGE)
                with cur.copy(f"copy sv_stage({_STAGED}) from stdin") as copy:
                    for d in docs:
                        body = _clean(d.text[:TEXT_MAX])
                        copy.write_row((file_id, self.host, d.n, d.offset, d.length, _clean(d.role), _clean(d.tool),
                                        d.timestamp and _clean(d.timestamp), d.epoch, body, words(body)))
                cur.execute(f"insert into sv_docs({_DOC_COLUMNS}, tsv) select {_DOC_COLUMNS}, to_tsvector('simple', words) "
                            "from sv_stage order by n")
                cur.execute("truncate sv_stage")
            calls = [(file_id, _clean(cid), _clean(name)) for d in docs for cid, name in d.calls]
            if calls:
                with self.conn.cursor() as cur:
                    cur.executemany("insert into sv_calls values (%s,%s,%s) on conflict (file_id, call_id) do update set name=excluded.name", calls)
        return len(docs)

    def clear_docs(self, file_id: int, from_n: int = 1) -> None:
        self.conn.execute("delete from sv_docs where file_id=%s and n>=%s", (file_id, from_n))
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
            row = self.conn.execute("select to_regclass('sv_docs_trgm') is not null").fetchone()
            self._grams = bool(row and row[0])
        return self._grams

    def enable_grams(self) -> None:
        """Create the trigram index over the stored text (pg_trgm; nothing needs indexing again)."""
        try:
            with self.conn.transaction():
                self.conn.execute("select pg_advisory_xact_lock(hashtextextended('sessionview schema', 0))")
                self.conn.execute("create extension if not exists pg_trgm")
                self.conn.execute(_GRAMS)
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
        """Best first. Words: ``ts_rank`` weighed by the file's age (as SQLite's bm25), or, with more than
        :data:`COMMON` matches, newest file first. Substrings: newest file first (the hits layer puts
        whole-word matches ahead). A hit on another host carries its stored text."""
        now = time.time() if now is None else now
        where, params = _filter_sql(filters, self.host)
        body = "case when f.host = %s then null else d.body end"
        head = ('select f.host, f.path, f.format, f.kind, d.n, d."offset", d.length, d.role, d.tool, d.ts, f.mtime_ns, '
                f"{{score}}, {body} from sv_docs d join sv_files f on f.id = d.file_id ")
        if substring:
            pos = [t for t in query.positive if len(t.text) >= 3]
            if not pos:
                raise QueryError("a substring search needs a term of at least 3 characters")
            conds = ["d.body ilike %s"] * len(query.positive) + ["d.body not ilike %s"] * len(query.negative)
            args = [like_pattern(t.text) for t in query.positive] + [like_pattern(t.text) for t in query.negative]
            sql = head.format(score="0.0") + "where " + " and ".join(conds + where) + " order by f.mtime_ns desc, d.id"
            yield from self._rows(sql, [self.host, *args, *params])
            return
        q_sql, q_params = to_tsquery(query)
        tsq = self.conn.execute(f"select ({q_sql})::text", q_params).fetchone()[0]
        if not tsq:
            return
        count = self.conn.execute(f"select count(*) from (select 1 from sv_docs where tsv @@ %s::tsquery limit {COMMON + 1}) c",
                                  (tsq,)).fetchone()[0]
        cond = " and ".join(["d.tsv @@ %s::tsquery", *where])
        if count > COMMON:
            sql = head.format(score="0.0") + f"where {cond} order by f.mtime_ns desc, d.file_id, d.n"
            yield from self._rows(sql, [self.host, tsq, *params])
            return
        score = (f"ts_rank(d.tsv, %s::tsquery) * (1.0 + {BOOST} / (1.0 + greatest(0.0, %s - f.mtime_ns / 1e9) / {RECENT})) as s")
        sql = head.format(score=score) + f"where {cond} order by s desc, d.id"
        yield from self._rows(sql, [tsq, now, self.host, tsq, *params])

    def _rows(self, sql: str, params: list) -> Iterator[Candidate]:
        """The rows of ``sql`` in pages (``limit``/``offset``, growing): a plain ``limit`` lets the planner
        take the top rows with a heap sort; a cursor made it plan for every row (6x slower at 200 MB)."""
        offset, size = 0, FETCH
        while True:
            rows = self.conn.execute(sql + " limit %s offset %s", [*params, size, offset]).fetchall()
            for r in rows:
                yield Candidate(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8] or "", r[9], r[10] / 1e9, float(r[11]),
                                host=r[0], text=r[12])
            if len(rows) < size:
                return
            offset += size
            size = min(size * 4, 10000)


def _inside(path: str, under: str) -> bool:
    return path == under or path.startswith(under.rstrip(os.sep) + os.sep)


def _filter_sql(filters: Filters, host: str) -> tuple[list[str], list]:
    clauses: list[str] = []
    params: list = []
    if filters.roles:
        clauses.append("d.role = any(%s)")
        params.append(sorted(filters.roles))
    if filters.tools:
        clauses.append("(" + " or ".join("position(%s in ',' || d.tool || ',') > 0" for _ in filters.tools) + ")")
        params.extend(f",{t}," for t in sorted(filters.tools))
    if filters.formats:
        clauses.append("f.format = any(%s)")
        params.append(sorted(filters.formats))
    if filters.since is not None:
        clauses.append("coalesce(d.epoch, f.mtime_ns / 1e9) >= %s")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append("coalesce(d.epoch, f.mtime_ns / 1e9) <= %s")
        params.append(filters.until)
    if filters.paths:  # local paths: this host's files under them
        ors = []
        for p in filters.paths:
            ors.append("f.path = %s or left(f.path, %s) = %s")
            prefix = p.rstrip(os.sep) + os.sep
            params.extend([p, len(prefix), prefix])
        clauses.append("f.host = %s and (" + " or ".join(ors) + ")")
        params.insert(len(params) - 3 * len(filters.paths), host)
    return clauses, params
