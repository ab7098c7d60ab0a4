"""The shared index's tables, made on first use and upgraded in place from an older version.

Schema 2 (prefix ``sv_``):

* ``files``: a :class:`~sessionview.core.index.model.FileState` per host and path;
* ``docs``: one narrow row per record, keyed ``(file_id, n)``: its place, metadata and ``tsvector``, with a
  GIN index over ``(file_id, tsv)`` (``btree_gin``; plain ``tsv`` when that extension cannot be made), so that
  one file's matches are found in the index alone. The ``tsvector`` stays in the row up to 8 KB (storage
  ``main``, ``toast_tuple_target``): a phrase is checked against it with no TOAST lookup;
* ``text``: the record's text (bounded), read only for the hits a search returns (a hit on another host
  has its snippet made from it) and for substring search (``pg_trgm`` over it, made on demand);
* ``calls`` (tool names by call id) and ``meta`` (the version, and whether ``btree_gin`` is used).

Schema 1 kept the text in the ``docs`` row, next to the ``tsvector``: every candidate read it (TOAST).
Opening such an index moves its rows into schema 2 (every host's rows: only a host can feed its own), once,
under the schema lock, and says so (:func:`setup` returns the notice).
"""

from __future__ import annotations

from typing import Any

VERSION = "2"
LOCK = "select pg_advisory_xact_lock(hashtextextended('sessionview schema', 0))"

_TABLES = """
create table if not exists sv_meta(key text primary key, value text);
create table if not exists sv_files(
    id bigserial primary key, host text not null, path text not null, dev bigint, ino bigint, size bigint,
    mtime_ns bigint, end_ bigint, lines bigint, head bytea, tail bytea, format text, kind text, partial boolean,
    unique(host, path));
create table sv_docs(
    file_id bigint not null references sv_files(id) on delete cascade, n integer not null, host text not null,
    "offset" bigint, length bigint, role text, tool text, ts text, epoch double precision, tsv tsvector not null,
    primary key(file_id, n)) with (toast_tuple_target = 8160);
alter table sv_docs alter column tsv set storage main;
create table sv_text(
    file_id bigint not null references sv_files(id) on delete cascade, n integer not null, body text not null,
    primary key(file_id, n));
create table if not exists sv_calls(
    file_id bigint not null references sv_files(id) on delete cascade, call_id text not null, name text,
    primary key(file_id, call_id))
"""
_GIN_PAIR = "create index sv_docs_tsv on sv_docs using gin(file_id, tsv)"
_GIN = "create index sv_docs_tsv on sv_docs using gin(tsv)"
GRAMS = "create index if not exists sv_text_trgm on sv_text using gin(body gin_trgm_ops)"
GRAMS_PAIR = "create index if not exists sv_text_trgm on sv_text using gin(file_id, body gin_trgm_ops)"


def _savepoint(conn: Any, *statements: str) -> bool:
    """Run ``statements`` in a savepoint; False (and rolled back) when one fails, e.g. for want of a privilege."""
    try:
        with conn.transaction():
            for s in statements:
                conn.execute(s)
        return True
    except Exception:
        return False


def _create(conn: Any) -> None:
    for statement in _TABLES.split(";"):
        conn.execute(statement)
    for table, column in (("sv_text", "body"), ("sv_docs", "tsv")):  # lz4: faster than pglz, when built in
        _savepoint(conn, f"alter table {table} alter column {column} set compression lz4")
    pair = _savepoint(conn, "create extension if not exists btree_gin", _GIN_PAIR)
    if not pair:
        conn.execute(_GIN)
    conn.execute("insert into sv_meta values ('version', %s), ('file_gin', %s) "
                 "on conflict (key) do update set value = excluded.value", (VERSION, "1" if pair else "0"))


def _upgrade_1(conn: Any) -> None:
    """Schema 1's rows into schema 2's tables (the text out of the ``docs`` rows; one row per record)."""
    grams = conn.execute("select to_regclass('sv_docs_trgm') is not null").fetchone()[0]
    conn.execute("alter table sv_docs rename to sv_docs_1")
    conn.execute("drop index if exists sv_docs_tsv, sv_docs_file, sv_docs_trgm")
    _create(conn)
    old = "select distinct on (file_id, n) * from sv_docs_1 order by file_id, n, id"
    conn.execute(f'insert into sv_docs select file_id, n, host, "offset", length, role, tool, ts, epoch, tsv from ({old}) o')
    conn.execute(f"insert into sv_text select file_id, n, body from ({old}) o")
    conn.execute("drop table sv_docs_1")
    if grams:
        pair = conn.execute("select value from sv_meta where key='file_gin'").fetchone()[0] == "1"
        _savepoint(conn, GRAMS_PAIR if pair else GRAMS)


UPGRADES = {"1": _upgrade_1}


def setup(conn: Any, where: str) -> str | None:
    """Make the tables, or upgrade older ones; the notice to show when an upgrade ran (else None).
    :class:`~sessionview.core.index.model.IndexUnavailable` for a version this one does not know."""
    from sessionview.core.index.model import IndexUnavailable

    with conn.transaction():
        conn.execute(LOCK)
        if not conn.execute("select to_regclass('sv_meta') is not null").fetchone()[0]:
            _create(conn)
            return None
        row = conn.execute("select value from sv_meta where key='version'").fetchone()
        version = row[0] if row else None
        if version == VERSION:
            return None
        upgrade = UPGRADES.get(version or "")
        if upgrade is None:
            raise IndexUnavailable(f"the index {where} was made by another version of sessionview "
                                   f"(schema {version or '?'}, this one needs {VERSION})")
        count = conn.execute("select count(*) from sv_docs").fetchone()[0]
        upgrade(conn)
        return (f"the index {where} was upgraded from schema {version} to {VERSION} "
                f"({count:,} records of every host kept: the text now apart from the word index)")
