"""The embedded index store: an SQLite file with FTS5 tables, in WAL mode (two apps and a CLI at once).

Tables: ``files`` (a :class:`FileState` per path), ``docs`` (a record's place and metadata; its id is the
FTS rowid), ``calls`` (tool names by call id, to name a later result's tool), ``words`` (FTS5, unicode61,
no column sizes: nothing ranks by bm25) and, once a substring search asked for it, ``grams`` (FTS5,
trigram). The FTS tables are contentless: snippets are made from the session file itself (:mod:`.hits`),
and the trigram table keeps no positions either, so substrings are checked against the file too. A
contentless table cannot forget a row, so removed records stay behind as ids no ``docs`` row has
(``docs.id`` is AUTOINCREMENT, never reused) and are dropped when the index is rebuilt
(:meth:`SqliteBackend.needs_rebuild`).

A bulk build (many files into an empty index, :meth:`SqliteBackend.bulk`) merges no segments and syncs
nothing. It may be split over two processes (FTS5 writes with one writer per file): the second writes a
*part*, a file beside the index (``index.sqlite.part-PID-N``) with the same tables and ids in a range of
its own; the first then adopts it (:meth:`SqliteBackend.adopt`): the part's files, docs and calls are
copied here, its FTS tables stay in its file, attached on every open and read beside this file's.

A corrupt file (or a missing part), one another process keeps locked past the timeout, and one an older
version made are replaced by a new, empty index; :attr:`notice` says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from typing import Iterable, Iterator, Sequence

from sessionview.core.index.model import Candidate, Doc, FileState, Filters, IndexUnavailable
from sessionview.core.index.sqlbits import (_candidate, _clean, _filter_sql, _inside, _locked, _remove, _remove_stale_parts,
                                            _unencodable, part_path)
from sessionview.core.index.query import Query, to_match

VERSION = "4"
TIMEOUT = 30.0  # seconds a write waits for another writer
GARBAGE_MIN = 20000
PART_IDS = 1 << 40  # ids a part may use (a part's ids start at a multiple of this, above every id in use)
FIRST_FILES = 2  # the newest files searched one by one before the rest is counted
COMMON = 5000  # more matches than this: the rest is searched file by file too, newest file first

_SCHEMA = """
create table if not exists meta(key text primary key, value text);
create table if not exists files(
    id integer primary key, path text unique not null, dev integer, ino integer, size integer, mtime_ns integer,
    end_ integer, lines integer, head blob, tail blob, format text, kind text, partial integer, lo integer, hi integer,
    part text);
create table if not exists docs(
    id integer primary key autoincrement, file_id integer not null, n integer, offset integer, length integer,
    role text, tool text, ts text, epoch real);
create index if not exists docs_file on docs(file_id, n);
create table if not exists calls(file_id integer, call_id text, name text, primary key(file_id, call_id)) without rowid;
create virtual table if not exists words using fts5(body, content='', columnsize=0, tokenize='unicode61 remove_diacritics 0');
insert into words(words, rank) values ('hashsize', {hashsize});
insert into words(words, rank) values ('automerge', {automerge});
insert into words(words, rank) values ('crisismerge', {crisismerge});
"""
CACHE = -16000  # SQLite's page cache, in KiB (negative)
HASHSIZE = 32 << 20  # bytes of new terms FTS5 keeps in memory before it writes a segment (default 1 MiB)
AUTOMERGE = 8  # segments of a level merged at once, a little at each write (default 4)
CRISISMERGE = 1000  # segments of a level merged all at once (default 16: after a bulk build, seconds in one append)
_GRAMS = "create virtual table if not exists grams using fts5(body, content='', columnsize=0, detail=none, tokenize='trigram')"


def _private(path: str) -> None:
    """Create the index file ``path`` readable by this user only (it holds the text of every session; SQLite gives
    its -wal, -shm and -journal files the same mode), or take group and world access from one of ours that has it."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600))
        return
    except FileExistsError:
        pass
    except OSError:
        return  # sqlite3 says why it cannot open it
    for file in (path, path + "-wal", path + "-shm", path + "-journal"):
        with contextlib.suppress(OSError):
            st = os.stat(file)
            if st.st_uid == os.geteuid() and st.st_mode & 0o077:
                os.chmod(file, st.st_mode & 0o700)


class SqliteBackend:
    """See the module docstring. ``path`` ``:memory:`` is an index for one process."""

    def __init__(self, path: str, timeout: float = TIMEOUT, readonly: bool = False) -> None:
        self.path = path
        self.timeout = timeout
        self.notice: str | None = None
        self._grams: bool = False
        self._in_tx = False
        self._parts: dict[str, str] = {}  # a part's file name -> its schema name in this connection
        if path != ":memory:":
            try:
                os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)  # a new one: for this user only
            except OSError as exc:
                raise IndexUnavailable(f"cannot create the index directory for {path}: {exc.strerror or exc}") from None
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            why = "locked by another process" if _locked(exc) else f"unreadable ({exc})"
            self._rebuild(f"the index {path} was {why}; started a new one")
        if self.notice is None and self._version() != VERSION:
            self._rebuild(f"the index {path} was made by another version of sessionview; started a new one")

    # -- opening ------------------------------------------------------------------------------------
    def _open(self) -> None:
        if self.path != ":memory:":
            _private(self.path)
        self.db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        try:
            db = self.db
            mode = db.execute("pragma journal_mode=wal").fetchone()[0]
            if self.path != ":memory:" and str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"journal mode {mode}")
            db.execute("pragma synchronous=normal")
            db.execute(f"pragma cache_size={CACHE}")
            db.execute("pragma temp_store=memory")
            if not db.execute("select 1 from sqlite_master where name='meta'").fetchone():
                with self.transaction():
                    for statement in _SCHEMA.format(hashsize=HASHSIZE, automerge=AUTOMERGE, crisismerge=CRISISMERGE).split(";"):
                        if statement.strip():
                            db.execute(statement)
                    db.execute("insert or replace into meta values ('version', ?)", (VERSION,))
            else:
                db.execute("select count(*) from files").fetchone()  # a damaged file fails here
            self._grams = bool(db.execute("select 1 from sqlite_master where name='grams'").fetchone())
            self._parts = {}
            self._attach_parts()
        except BaseException:
            self.db.close()
            raise

    def _part_names(self) -> list[str]:
        try:
            row = self.db.execute("select value from meta where key='parts'").fetchone()
        except sqlite3.OperationalError:
            return []
        return json.loads(row[0]) if row else []

    def _attach_parts(self) -> None:
        """Attach the parts that bulk builds added (another process may have added one since this opened)."""
        for name in self._part_names():
            if name in self._parts:
                continue
            file = os.path.join(os.path.dirname(self.path), name)
            if not os.path.exists(file):
                raise sqlite3.DatabaseError(f"its part {name} is missing")
            schema = f"p{len(self._parts) + 1}"
            self.db.execute("attach database ? as " + schema, (file,))
            if not self.db.execute(f"select 1 from {schema}.sqlite_master where name='words'").fetchone():
                raise sqlite3.DatabaseError(f"its part {name} is damaged")
            self._parts[name] = schema

    def _version(self) -> str | None:
        try:
            row = self.db.execute("select value from meta where key='version'").fetchone()
        except sqlite3.DatabaseError:
            return None
        return row[0] if row else None

    def _rebuild(self, notice: str) -> None:
        with contextlib.suppress(Exception):
            self.db.close()
        if self.path != ":memory:":
            _remove(self.path)
        self.notice = notice
        try:
            self._open()
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"cannot use the index {self.path}: {exc}") from None
        if self._version() != VERSION:
            with self.transaction():
                self.db.execute("insert or replace into meta values ('version', ?)", (VERSION,))

    def reset(self, notice: str) -> None:
        """Start again with an empty index (corruption found while using it, or too many dead rows)."""
        self._rebuild(notice)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()

    # -- writing ------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def bulk(self, on: bool = True) -> Iterator[None]:
        """A build of many files into an empty index: no segment merges while it runs (they cost a fifth of
        the build: the segments of a build are left as they are, and merged a little at each later write)
        and no syncs (the index is a cache: a power cut at worst leaves it damaged, and it is rebuilt).
        ``on=False`` only puts merging back, should an earlier bulk build have been killed."""
        if not on:
            if self._merge_level() != AUTOMERGE:
                self._set_merge(AUTOMERGE)
            yield
            return
        self._set_merge(0)
        self.db.execute("pragma synchronous=off")
        self.db.execute("pragma cache_size=-4000")  # a build writes new pages: a larger cache only costs memory
        try:
            yield
        finally:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("pragma synchronous=normal")
                self.db.execute(f"pragma cache_size={CACHE}")
                self._set_merge(AUTOMERGE)

    def _merge_level(self) -> int | None:
        row = self.db.execute("select v from words_config where k='automerge'").fetchone()
        return None if row is None else int(row[0])

    def _set_merge(self, level: int) -> None:
        with self.transaction():
            self.db.execute("insert into words(words, rank) values ('automerge', ?)", (level,))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if self._in_tx:
            yield
            return
        self.db.execute("begin immediate")
        self._in_tx = True
        try:
            yield
        except BaseException:
            self._in_tx = False
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("rollback")
            raise
        self._in_tx = False
        self.db.execute("commit")

    def put_file(self, s: FileState) -> int:
        row = (s.dev, s.ino, s.size, s.mtime_ns, s.end, s.lines, s.head, s.tail, s.format, s.kind, int(s.partial))
        if s.id is None:
            found = self.db.execute("select id from files where path=?", (s.path,)).fetchone()
            s.id = found[0] if found else None
        if s.id is None:
            cur = self.db.execute(
                "insert into files(path, dev, ino, size, mtime_ns, end_, lines, head, tail, format, kind, partial) "
                "values (?,?,?,?,?,?,?,?,?,?,?,?)", (s.path, *row))
            s.id = int(cur.lastrowid or 0)
        else:
            self.db.execute(
                "update files set dev=?, ino=?, size=?, mtime_ns=?, end_=?, lines=?, head=?, tail=?, format=?, kind=?, partial=? "
                "where id=?", (*row, s.id))
        return s.id

    def add_docs(self, file_id: int, docs: Iterable[Doc]) -> int:
        """Add records in one go: their ids follow the highest id ever given (AUTOINCREMENT's counter)."""
        docs = list(docs)
        if not docs:
            return 0
        # a lone surrogate (a JSON "\ud800" escape) cannot be bound (SQLite takes only UTF-8): such docs are
        # cleaned first. Not by a savepoint and a retry: FTS5 writes a segment at every savepoint
        self._add_all(file_id, [_clean(d) if _unencodable(d) else d for d in docs])
        return len(docs)

    def _add_all(self, file_id: int, docs: list[Doc]) -> None:
        db = self.db
        row = db.execute("select seq from sqlite_sequence where name='docs'").fetchone()
        base = int(row[0]) if row else 0
        db.executemany("insert into docs(id, file_id, n, offset, length, role, tool, ts, epoch) values (?,?,?,?,?,?,?,?,?)",
                       [(base + i, file_id, d.n, d.offset, d.length, d.role, d.tool, d.timestamp, d.epoch) for i, d in enumerate(docs, 1)])
        texts = [(base + i, d.text) for i, d in enumerate(docs, 1)]
        db.executemany("insert into words(rowid, body) values (?, ?)", texts)
        if self._grams:
            db.executemany("insert into grams(rowid, body) values (?, ?)", texts)
        db.execute("update files set lo=coalesce(min(lo, ?), ?), hi=? where id=?", (base + 1, base + 1, base + len(docs), file_id))
        calls = [(file_id, cid, name) for d in docs for cid, name in d.calls]
        if calls:
            db.executemany("insert or replace into calls values (?,?,?)", calls)

    def clear_docs(self, file_id: int, from_n: int = 1) -> None:
        cur = self.db.execute("delete from docs where file_id=? and n>=?", (file_id, from_n))
        if cur.rowcount > 0:
            self.db.execute("insert into meta values ('garbage', ?) on conflict(key) do update set value=value+excluded.value",
                            (cur.rowcount,))
        if from_n <= 1:
            self.db.execute("delete from calls where file_id=?", (file_id,))
            self.db.execute("update files set lo=null, hi=null, part=null where id=?", (file_id,))

    def delete_file(self, path: str) -> None:
        row = self.db.execute("select id from files where path=?", (path,)).fetchone()
        if row is None:
            return
        self.clear_docs(row[0])
        self.db.execute("delete from files where id=?", (row[0],))

    def needs_rebuild(self) -> bool:
        """Whether there are as many dead FTS rows as live ones (the index is then built again from the files)."""
        row = self.db.execute("select value from meta where key='garbage'").fetchone()
        garbage = int(row[0]) if row else 0
        if garbage < GARBAGE_MIN:
            return False
        return garbage >= self.count_docs()

    @property
    def has_grams(self) -> bool:
        return self._grams

    def enable_grams(self) -> None:
        """Create the trigram table (empty: every file is then indexed again, see the indexer)."""
        with self.transaction():
            self.db.execute(_GRAMS)
            self.db.execute("delete from docs")
            self.db.execute("delete from calls")
            self.db.execute("delete from files")
            self.db.execute("insert into words(words) values ('delete-all')")
        self._grams = True
        if self._parts:
            self._drop_parts()

    # -- reading ------------------------------------------------------------------------------------
    def _state(self, row: tuple) -> FileState:
        (fid, path, dev, ino, size, mtime_ns, end, lines, head, tail, fmt, kind, partial) = row
        return FileState(path, dev, ino, size, mtime_ns, end, lines, head, tail, fmt, kind, bool(partial), fid)

    _COLUMNS = "id, path, dev, ino, size, mtime_ns, end_, lines, head, tail, format, kind, partial"

    def file_state(self, path: str) -> FileState | None:
        row = self.db.execute(f"select {self._COLUMNS} from files where path=?", (path,)).fetchone()
        return None if row is None else self._state(row)

    def files(self, under: Sequence[str] = ()) -> list[FileState]:
        rows = self.db.execute(f"select {self._COLUMNS} from files").fetchall()
        states = [self._state(r) for r in rows]
        return [s for s in states if not under or any(_inside(s.path, u) for u in under)]

    def call_names(self, file_id: int, ids: Iterable[str] | None) -> dict[str, str]:
        if ids is None:
            return dict(self.db.execute("select call_id, name from calls where file_id=?", (file_id,)).fetchall())
        wanted = list(dict.fromkeys(ids))
        out: dict[str, str] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for cid, name in self.db.execute(f"select call_id, name from calls where file_id=? and call_id in ({marks})", (file_id, *chunk)):
                out[cid] = name
        return out

    def count_docs(self) -> int:
        return int(self.db.execute("select count(*) from docs").fetchone()[0])

    def _tables(self, table: str) -> dict[str | None, str]:
        """``table`` in this index and in each part that has it: part name (None: this index) -> table."""
        out: dict[str | None, str] = {None: f"main.{table}"}
        for name, schema in self._parts.items():
            if self.db.execute(f"select 1 from {schema}.sqlite_master where name=?", (table,)).fetchone():
                out[name] = f"{schema}.{table}"
        return out

    def search(self, query: Query, filters: Filters, substring: bool = False, now: float | None = None) -> Iterator[Candidate]:
        """Newest file first (by modification time), each file's matches newest record first; no relevance
        score is computed (bm25 counts a phrase over the whole index, per statement). The :data:`FIRST_FILES`
        newest files are searched one by one through their id ranges (FTS5 stops early: a common word fills
        a page from them at once); then, when the words have at most :data:`COMMON` matches in all, the rest
        are fetched in one statement (their ids, then their rows sorted by their file's age), else file by
        file again. A file from a bulk build's part has its first records in the part's table, and those
        appended later here (with higher ids)."""
        self._attach_parts()
        tables = self._tables("grams" if substring else "words")
        match = to_match(query, substring)
        where, params = _filter_sql(filters)
        extra = (" and " + where.removeprefix("where ")) if where else ""
        cols = "f.path, f.format, f.kind, d.n, d.offset, d.length, d.role, d.tool, d.ts, f.mtime_ns"
        files = [r for r in self.db.execute("select id, lo, hi, path, format, part from files where lo is not null "
                                            "order by mtime_ns desc, id").fetchall()
                 if not (filters.formats and r[4] not in filters.formats
                         or filters.paths and not any(_inside(r[3], p) for p in filters.paths))]
        per_file = (f"select {cols} from {{t}} w cross join docs d on d.id = w.rowid cross join files f on f.id = d.file_id "
                    f"where w.{{name}} match ? and w.rowid between ? and ? and d.file_id = ?{extra} order by w.rowid desc")

        def one_file(file_id: int, lo: int, hi: int, part: str | None) -> Iterator[Candidate]:
            for t in [tables[None]] + ([tables[part]] if part in tables and part is not None else []):
                for r in self.db.execute(per_file.format(t=t, name=t.split(".")[1]), (match, lo, hi, file_id, *params)):
                    yield _candidate(r)

        for file_id, lo, hi, _, _, part in files[:FIRST_FILES]:
            yield from one_file(file_id, lo, hi, part)
        rest = files[FIRST_FILES:]
        if not rest:
            return
        ids: list[int] = []
        for t in tables.values():
            name = t.split(".")[1]
            ids += [r[0] for r in self.db.execute(f"select rowid from {t} w where w.{name} match ? limit {COMMON + 1 - len(ids)}", (match,))]
            if len(ids) > COMMON:
                break
        if len(ids) <= COMMON:  # all the matches, sorted by their file's age (the text is matched once)
            skip = ",".join(str(int(r[0])) for r in files[:FIRST_FILES]) or "-1"
            sql = (f"select {cols} from json_each(?) m cross join docs d on d.id = m.value cross join files f on f.id = d.file_id "
                   f"where d.file_id not in ({skip}){extra} order by f.mtime_ns desc, f.id, d.id desc")
            for r in self.db.execute(sql, (json.dumps(ids), *params)):
                yield _candidate(r)
            return
        for file_id, lo, hi, _, _, part in rest:
            yield from one_file(file_id, lo, hi, part)

    # -- the parts of a bulk build ------------------------------------------------------------------------
    def plan_part(self, n: int = 1) -> tuple[str, int] | None:
        """``(file, first id)`` for a part of a bulk build that another process writes (:meth:`start_part`);
        its ids lie above every id given here so far, and apart from another process's part. None for an
        index in memory."""
        if self.path == ":memory:":
            return None
        _remove_stale_parts(self.path, set(self._part_names()))
        row = self.db.execute("select seq from sqlite_sequence where name='docs'").fetchone()
        top = int(row[0]) if row else 0
        return part_path(self.path, n), ((top // PART_IDS) + 1 + os.getpid() % 1024) * PART_IDS

    def start_part(self, first_id: int, grams: bool) -> None:
        """Make this (new, empty) index a part whose ids start after ``first_id``."""
        if grams:
            self.enable_grams()
        with self.transaction():
            self.db.execute("delete from sqlite_sequence where name='docs'")
            self.db.execute("insert into sqlite_sequence(name, seq) values ('docs', ?)", (first_id,))

    def adopt(self, file: str) -> int:
        """Take the part in ``file`` (built by another process) into this index: its files, records and call
        names join this index's tables, its FTS tables stay in its file, attached from now on. A file that
        this index has meanwhile (another process indexed it) is left out. Returns the files taken."""
        name = os.path.basename(file)
        schema = f"p{len(self._parts) + 1}"
        self.db.execute("attach database ? as " + schema, (file,))
        taken = 0
        cols = "dev, ino, size, mtime_ns, end_, lines, head, tail, format, kind, partial, lo, hi"
        with self.transaction():
            for fid, path in self.db.execute(f"select id, path from {schema}.files").fetchall():
                if self.db.execute("select 1 from files where path=?", (path,)).fetchone():
                    continue
                new = self.db.execute(f"insert into files(path, {cols}, part) select path, {cols}, ? from {schema}.files where id=?",
                                      (name, fid)).lastrowid
                self.db.execute(f"insert into docs(id, file_id, n, offset, length, role, tool, ts, epoch) select id, ?, n, offset, "
                                f"length, role, tool, ts, epoch from {schema}.docs where file_id=?", (new, fid))
                self.db.execute(f"insert or replace into calls select ?, call_id, name from {schema}.calls where file_id=?", (new, fid))
                taken += 1
            self.db.execute("insert or replace into meta values ('parts', ?)", (json.dumps([*self._part_names(), name]),))
        self._parts[name] = schema
        return taken

    def _drop_parts(self) -> None:
        """Forget every part (after every record was removed: their rows are all dead)."""
        with self.transaction():
            self.db.execute("delete from meta where key='parts'")
        for name, schema in list(self._parts.items()):
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("detach database " + schema)
            _remove(os.path.join(os.path.dirname(self.path), name))
        self._parts = {}
