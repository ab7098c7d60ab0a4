"""Search in the PostgreSQL index: the newest file's matches first (with and without the probe), filters,
the stored text only for another host's hits, substring search on the trigram index, and schema 1
upgraded in place."""

from __future__ import annotations

import json
import os
import time

import pytest

from sessionview.core.index import hits
from sessionview.core.index.indexer import Indexer
from sessionview.core.index.model import Filters, IndexUnavailable
from sessionview.core.index.query import parse
from sessionview.fleetindex import pgsearch
from sessionview.fleetindex.postgres import PostgresBackend


def msg(role: str, content: str, **extra) -> bytes:
    return (json.dumps({"role": role, "content": content, **extra}, separators=(",", ":")) + "\n").encode()


def find(backend, text: str, substring: bool = False, **filters) -> list:
    return list(hits.search(backend, parse(text), Filters(**filters), substring))


@pytest.fixture
def backend(pg):
    b = PostgresBackend(pg.db_url, host="here")
    yield b
    b.close()


def aged(path, days: float):
    os.utime(path, (time.time() - days * 86400,) * 2)


@pytest.mark.parametrize("probe", [1000, 0])  # 0: every file is searched (as for a common word)
def test_the_newest_file_s_matches_come_first(backend, tmp_path, monkeypatch, probe):
    monkeypatch.setattr(pgsearch, "PROBE", probe)
    names = ["old", "new", "mid", "none"]
    for name in names:
        word = "nothing" if name == "none" else "flaky"
        (tmp_path / f"{name}.jsonl").write_bytes(msg("user", f"{word} test {name}") + msg("user", f"then {word} again"))
    for name, days in [("old", 30), ("new", 0), ("mid", 3), ("none", 0.5)]:
        aged(tmp_path / f"{name}.jsonl", days)
    Indexer(backend).update([str(tmp_path)])
    got = [(os.path.basename(h.path), h.n) for h in find(backend, "flaky")]
    assert [p for p, _ in got] == ["new.jsonl"] * 2 + ["mid.jsonl"] * 2 + ["old.jsonl"] * 2
    assert sorted(got) == sorted(set(got))
    aged(tmp_path / "old.jsonl", -1)  # now the newest: after the next update it comes first
    Indexer(backend).update([str(tmp_path)])
    assert os.path.basename(find(backend, '"flaky again"')[0].path) == "old.jsonl"
    assert find(backend, "walrus") == []


def test_filters_role_tool_format_time_and_path(backend, tmp_path):
    convo = [msg("user", "Deploy it"),
             msg("assistant", "", tool_calls=[{"id": "c1", "name": "shell", "arguments": {"command": "./deploy.sh"}}]),
             msg("tool", "error: connection refused", tool_call_id="c1"),
             msg("assistant", "The database refused the connection.")]
    (tmp_path / "a.jsonl").write_bytes(b"".join(convo))
    (tmp_path / "sub").mkdir()
    cc = tmp_path / "sub" / "c.jsonl"
    cc.write_text(json.dumps({"type": "user", "sessionId": "x", "uuid": "u1", "timestamp": "2025-01-01T10:00:00Z",
                              "message": {"role": "user", "content": "refused again"}}) + "\n")
    Indexer(backend).update([str(tmp_path)])
    assert {h.role for h in find(backend, "refused")} == {"tool", "assistant", "user"}
    assert {h.n for h in find(backend, "refused", roles=frozenset({"tool"}))} == {3}
    assert {h.n for h in find(backend, "refused", tools=frozenset({"shell"}))} == {3}
    assert {h.format for h in find(backend, "refused", formats=frozenset({"claude-code"}))} == {"claude-code"}
    old = find(backend, "refused", until=time.mktime((2025, 6, 1, 0, 0, 0, 0, 0, -1)))
    assert [(h.path, h.timestamp) for h in old] == [(str(cc), "2025-01-01T10:00:00Z")]
    assert {h.n for h in find(backend, "refused", since=time.mktime((2025, 6, 1, 0, 0, 0, 0, 0, -1)))} == {3, 4}
    assert {h.path for h in find(backend, "refused", paths=(str(tmp_path / "sub"),))} == {str(cc)}


def test_only_another_host_s_hits_carry_the_stored_text(pg, tmp_path):
    (tmp_path / "s.jsonl").write_bytes(msg("user", "a walrus " + "long " * 3000 + "end"))
    here, there = PostgresBackend(pg.db_url, host="here"), PostgresBackend(pg.db_url, host="there")
    try:
        Indexer(here).update([str(tmp_path)])
        [local] = list(here.search(parse("walrus"), Filters()))
        [remote] = list(there.search(parse("walrus"), Filters()))
        assert local.text is None and local.host == "here"
        assert remote.host == "here" and remote.text is not None and remote.text.endswith("end")
        [h] = find(there, '"walrus long"')
        assert h.remote and h.marked == ["walrus long"]
        assert find(there, '"long walrus"') == [] and find(there, "walrus -end") == []
    finally:
        here.close()
        there.close()


def test_substring_search_uses_the_trigram_index_over_the_text(pg, backend, tmp_path):
    if not pg.trgm:
        pytest.skip("pg_trgm is not installed (Debian's postgresql-contrib)")
    (tmp_path / "s.jsonl").write_bytes(msg("user", "run ./deploy.sh --prod") + msg("user", "deployment") + msg("user", "other"))
    Indexer(backend).update([str(tmp_path)])
    backend.enable_grams()
    assert backend.has_grams
    assert [h.n for h in find(backend, "ploy.s", substring=True)] == [1]
    assert sorted(h.n for h in find(backend, "deploy", substring=True)) == [1, 2]
    plan = backend.conn.execute("explain select t.file_id from sv_text t where t.body ilike %s", ["%ploy.s%"]).fetchall()
    assert "sv_text_trgm" in " ".join(r[0] for r in plan)


SCHEMA_1 = """
create table sv_meta(key text primary key, value text);
create table sv_files(
    id bigserial primary key, host text not null, path text not null, dev bigint, ino bigint, size bigint,
    mtime_ns bigint, end_ bigint, lines bigint, head bytea, tail bytea, format text, kind text, partial boolean,
    unique(host, path));
create table sv_docs(
    id bigserial primary key, file_id bigint not null references sv_files(id) on delete cascade, host text not null,
    n integer not null, "offset" bigint, length bigint, role text, tool text, ts text, epoch double precision,
    body text not null, tsv tsvector not null);
create index sv_docs_tsv on sv_docs using gin(tsv);
create index sv_docs_file on sv_docs(file_id, n);
create table sv_calls(
    file_id bigint not null references sv_files(id) on delete cascade, call_id text not null, name text,
    primary key(file_id, call_id));
insert into sv_meta values ('version', '1');
insert into sv_files(host, path, dev, ino, size, mtime_ns, end_, lines, head, tail, format, kind, partial)
    values ('old', '/srv/s.jsonl', 1, 2, 100, 1700000000000000000, 100, 2, '', '', 'jsonl', 'lines', false);
insert into sv_docs(file_id, host, n, "offset", length, role, tool, ts, epoch, body, tsv) values
    (1, 'old', 1, 0, 50, 'user', '', null, null, 'a walrus here', to_tsvector('simple', 'a walrus here')),
    (1, 'old', 1, 0, 50, 'user', '', null, null, 'a walrus here', to_tsvector('simple', 'a walrus here')),
    (1, 'old', 2, 50, 50, 'assistant', '', null, null, 'the walrus answered', to_tsvector('simple', 'the walrus answered'))
"""


def test_an_index_of_schema_1_is_upgraded_in_place_with_a_notice(pg):
    import psycopg

    with psycopg.connect(pg.db_url, autocommit=True) as c:
        for s in SCHEMA_1.split(";"):
            c.execute(s)
    b = PostgresBackend(pg.db_url, host="new")
    try:
        assert b.notice is not None and "upgraded from schema 1 to 2" in b.notice and "3 records" in b.notice
        assert b.count_docs() == 2  # the record that schema 1 held twice is one row
        assert sorted((h.host, h.n, h.snippet) for h in find(b, "walrus")) == [
            ("old", 1, "a walrus here"), ("old", 2, "the walrus answered")]
    finally:
        b.close()
    again = PostgresBackend(pg.db_url, host="new")
    try:
        assert again.notice is None and again.conn.execute("select to_regclass('sv_docs_1')").fetchone()[0] is None
    finally:
        again.close()


def test_an_index_of_an_unknown_schema_is_refused_untouched(pg):
    import psycopg

    with psycopg.connect(pg.db_url, autocommit=True) as c:
        c.execute("create table sv_meta(key text primary key, value text)")
        c.execute("insert into sv_meta values ('version', '99')")
    with pytest.raises(IndexUnavailable, match="another version of sessionview.*schema 99, this one needs 2"):
        PostgresBackend(pg.db_url, host="x")
    with psycopg.connect(pg.db_url, autocommit=True) as c:
        assert c.execute("select value from sv_meta").fetchall() == [("99",)]


def test_without_btree_gin_a_plain_gin_index_serves_the_same_hits(pg, tmp_path, monkeypatch):
    from sessionview.fleetindex import schema

    monkeypatch.setattr(schema, "_GIN_PAIR", "create index sv_docs_tsv on sv_docs using gin(no_such_column)")  # as if refused
    (tmp_path / "s.jsonl").write_bytes(msg("user", "a walrus") + msg("user", "no") + msg("user", "the walrus again"))
    b = PostgresBackend(pg.db_url, host="here")
    try:
        assert not b.file_gin
        Indexer(b).update([str(tmp_path)])
        assert [h.n for h in find(b, "walrus")] == [1, 3]
        index = b.conn.execute("select indexdef from pg_indexes where indexname = 'sv_docs_tsv'").fetchone()[0]
        assert "gin (tsv)" in index
    finally:
        b.close()
