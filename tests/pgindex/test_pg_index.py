"""The PostgreSQL index against a real server: two hosts feed one database, search finds both, incremental
appends and rewrites, the query language, and passwords that never reach a message."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sessionview.cli import main
from sessionview.core.index import hits
from sessionview.core.index.indexer import Indexer
from sessionview.core.index.query import parse
from sessionview.fleetindex import redact
from sessionview.fleetindex.pgsearch import to_tsquery, tsvector, words
from sessionview.fleetindex.postgres import PostgresBackend

import pg_server


def line(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def two_hosts(tmp_path):
    a, b = tmp_path / "on a", tmp_path / "on b"
    a.mkdir()
    b.mkdir()
    (a / "s1.jsonl").write_bytes(line({"role": "user", "content": "run deploy.sh on the walrus cluster"})
                                 + line({"role": "assistant", "content": "the walrus answered"}))
    (b / "s2.jsonl").write_bytes(line({"role": "user", "content": "a walrus on host b, with 'quotes' & (parens) \\ too"}))
    return a, b


def jsons(out: str) -> list[dict]:
    return [json.loads(x) for x in out.splitlines()]


def test_two_indexers_as_two_hosts_and_search_finds_both(capsys, pg, two_hosts):
    a, b = two_hosts
    assert run(capsys, "index", "-q", "--to", pg.db_url, "--host", "hosta", str(a))[0] == 0
    assert run(capsys, "index", "-q", "--to", pg.db_url, "--host", "hostb", str(b))[0] == 0
    code, out, _ = run(capsys, "search", "-q", "--index", pg.db_url, "--host", "hostc", "walrus", "--json")
    assert code == 0
    got = {(h["host"], os.path.basename(h["path"]), h["n"]) for h in jsons(out)}
    assert got == {("hosta", "s1.jsonl", 1), ("hosta", "s1.jsonl", 2), ("hostb", "s2.jsonl", 1)}
    # from a third host every hit is remote: named host:path, the snippet from the stored text
    hit = next(h for h in jsons(out) if h["host"] == "hostb")
    assert hit["address"] == f"hostb:{b / 's2.jsonl'}" and "walrus" in hit["marks"][0].lower()
    code, out, _ = run(capsys, "search", "-q", "--index", pg.db_url, "--host", "hostc", "deploy.sh")
    assert code == 0 and out.startswith(f"hosta:{a / 's1.jsonl'}:#1 user")


def test_a_hit_on_this_host_is_read_back_from_the_file_and_named_by_its_path(capsys, pg, two_hosts):
    a, _ = two_hosts
    run(capsys, "index", "-q", "--to", pg.db_url, "--host", "hosta", str(a))
    code, out, _ = run(capsys, "search", "-q", "--index", pg.db_url, "--host", "hosta", "answered", "--json")
    [h] = jsons(out)
    assert h["host"] == "hosta" and h["address"] == str(a / "s1.jsonl")
    code, out, _ = run(capsys, "search", "-q", "--index", pg.db_url, "--host", "hosta", "answered")
    assert out.startswith(f"{a / 's1.jsonl'}:#2 assistant")


def test_appends_are_indexed_incrementally_and_a_rewrite_from_the_start(pg, two_hosts):
    a, _ = two_hosts
    f = a / "s1.jsonl"
    backend = PostgresBackend(pg.db_url, host="hosta")
    try:
        ix = Indexer(backend)
        assert ix.update([str(a)]).indexed == 1
        with open(f, "ab") as out:
            out.write(line({"role": "user", "content": "a narwhal joins"}))
        s = ix.update([str(a)])
        assert (s.appended, s.indexed, s.docs) == (1, 0, 1)
        assert [h.n for h in hits.search(backend, parse("narwhal"))] == [3]
        # a rewrite with different bytes: indexed again from the start, the old words gone
        f.write_bytes(line({"role": "user", "content": "only a dugong now"}))
        s = ix.update([str(a)])
        assert s.indexed == 1
        assert list(hits.search(backend, parse("walrus"))) == []
        assert [h.n for h in hits.search(backend, parse("dugong"))] == [1]
        assert backend.count_docs() == 1
        f.unlink()
        assert ix.update([str(a)]).deleted == 1 and backend.count_docs() == 0
    finally:
        backend.close()


def test_one_host_s_rows_never_touch_another_s(pg, two_hosts):
    a, b = two_hosts
    x, y = PostgresBackend(pg.db_url, host="hosta"), PostgresBackend(pg.db_url, host="hostb")
    try:
        Indexer(x).update([str(a)])
        Indexer(y).update([str(a)])  # the same paths, indexed by another host: its own rows
        assert len(x.files()) == len(y.files()) == 1
        (a / "s1.jsonl").unlink()
        Indexer(x).update([str(a)])
        assert x.files() == [] and len(y.files()) == 1
        assert sorted(x.hosts()) == [("hostb", 1)]
    finally:
        x.close()
        y.close()


def test_query_language_phrases_prefixes_exclusions_and_hostile_text(pg, tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "q.jsonl").write_bytes(
        line({"role": "user", "content": "connection refused by the server"})
        + line({"role": "user", "content": "refused connection, retry later"})
        + line({"role": "user", "content": "deployment started"})
        + line({"role": "user", "content": "it's a 'quote' \\ & | ! <-> :* drop table sv_docs; --"})
        + line({"role": "user", "content": "odd words: 5e3x x\u00b2 \u0130stanbul"}))
    backend = PostgresBackend(pg.db_url, host="hostz")
    try:
        Indexer(backend).update([str(d)])
        ns = lambda q, sub=False: sorted(h.n for h in hits.search(backend, parse(q), substring=sub))
        assert ns('"connection refused"') == [1]
        assert ns("connection refused") == [1, 2]
        assert ns("connection -retry") == [1]
        assert ns("deploy*") == [3]
        assert ns("deploy") == []
        assert ns("'quote' & | ! <-> :* \\") == [4]
        assert ns("drop table sv_docs;") == [4]
        assert ns("5e3x") == ns("x\u00b2") == ns("\u0130stanbul") == [5]  # PostgreSQL's parser splits the same on both sides
        assert backend.count_docs() == 5  # nothing was dropped
        backend.enable_grams()
        assert backend.has_grams
        assert ns("ploym", sub=True) == [3]
        assert ns("'quote' \\", sub=True) == [4]
        assert ns("100%", sub=True) == []  # % and _ are literal
        assert ns("sv_d", sub=True) == [4]
        assert ns("onnection -retry", sub=True) == [1]
    finally:
        backend.close()


def test_words_are_the_query_language_s_not_postgresql_s(pg):
    assert words("Run deploy.sh, deploy_it!") == "run deploy sh deploy it"
    tsq = to_tsquery(parse('deploy.sh "a b" pre* -x -"y z"'))
    assert tsq == "('deploy' <-> 'sh') & ('a' <-> 'b') & 'pre':* & !('x' | ('y' <-> 'z'))"
    assert to_tsquery(parse('deploy.sh "a b" pre* -x -"y z"'), loose=True) == "('deploy' & 'sh') & ('a' & 'b') & 'pre':* & !('x')"
    b = PostgresBackend(pg.db_url, host="h")
    try:
        # the server reads both as they are written (its parser never runs), and they agree with to_tsvector's
        mine = tsvector(words("see deploy.sh or x@y.com, see it"))
        assert mine == "'see':1,8 'deploy':2 'sh':3 'or':4 'x':5 'y':6 'com':7 'it':9"
        got, theirs = b.conn.execute("select %s::tsvector::text, to_tsvector('simple', %s)::text",
                                     (mine, words("see deploy.sh or x@y.com, see it"))).fetchone()
        assert got == theirs and "'deploy.sh'" not in got and "'x@y.com'" not in got
        assert b.conn.execute("select %s::tsquery::text", (tsq,)).fetchone()[0] == \
            "'deploy' <-> 'sh' & 'a' <-> 'b' & 'pre':* & !( 'x' | 'y' <-> 'z' )"
        long = tsvector(words("w " * 20000 + "x" * 3000 + " end"))  # past PostgreSQL's limits: kept as it keeps them
        assert b.conn.execute("select length(%s::tsvector)", (long,)).fetchone()[0] == 2
    finally:
        b.close()


def test_nul_and_lone_surrogates_are_stored(pg, tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "n.jsonl").write_bytes(b'{"role":"user","content":"nul \\u0000 here and \\ud800 lone walrus"}\n')
    backend = PostgresBackend(pg.db_url, host="other")
    try:
        Indexer(backend).update([str(d)])
        assert backend.count_docs() == 1
    finally:
        backend.close()


# -- credentials -----------------------------------------------------------------------------------------
def _fails_without_the_password(capsys, url: str, why: str) -> str:
    code, out, err = run(capsys, "search", "-q", "--index", url, "walrus")
    assert code == 2, (code, out, err)
    assert pg_server.PASSWORD not in err and pg_server.PASSWORD not in out
    assert why in err.lower(), err
    assert redact(url) in err
    return err


def test_a_password_in_the_url_never_appears_when_the_connection_fails(capsys, pg):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    _fails_without_the_password(capsys, pg.tcp_url(pg.db, port=closed), "refused")


def test_a_password_in_the_url_never_appears_when_authentication_is_refused(capsys, pg):
    url = pg.tcp_url(pg.db, password=pg_server.PASSWORD + "x")  # the wrong one, containing the right one
    err = _fails_without_the_password(capsys, url, "password authentication failed")
    assert "x" not in err.split("@")[0].split(":")[-1]


def test_a_password_in_the_url_never_appears_for_a_missing_database(capsys, pg):
    _fails_without_the_password(capsys, pg.tcp_url("no_such_db"), "does not exist")


def test_the_right_password_works_and_pgpass_is_used(capsys, pg, two_hosts, tmp_path, monkeypatch):
    a, _ = two_hosts
    assert run(capsys, "index", "-q", "--to", pg.tcp_url(pg.db), "--host", "hosta", str(a))[0] == 0
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{pg.port}:{pg.db}:{pg_server.USER}:{pg_server.PASSWORD}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    url = f"postgresql://{pg_server.USER}@127.0.0.1:{pg.port}/{pg.db}"
    code, out, err = run(capsys, "search", "-q", "--index", url, "--host", "hostq", "walrus")
    assert code == 0 and out.startswith("hosta:"), err


def test_sessionview_index_env_may_name_the_server(capsys, pg, two_hosts, monkeypatch):
    a, _ = two_hosts
    monkeypatch.setenv("SESSIONVIEW_INDEX", pg.db_url)
    assert run(capsys, "index", "-q", "--host", "hosta", str(a))[0] == 0
    code, out, _ = run(capsys, "search", "-q", "--host", "hostq", "walrus", "--json")
    assert code == 0 and {h["host"] for h in jsons(out)} == {"hosta"}


def test_redact():
    assert redact("postgresql://u:secret@h:5/db?sslmode=require") == "postgresql://u:***@h:5/db?sslmode=require"
    assert redact("postgresql://h/db?password=secret&user=u") == "postgresql://h/db?password=***&user=u"
    assert redact("postgresql:///db?host=/tmp/s") == "postgresql:///db?host=/tmp/s"
    assert redact("host=h password='se cret' dbname=x") == "host=h password=*** dbname=x"


def test_without_psycopg_the_cli_says_how_to_install_it(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg now raises ImportError
    code, _, err = run(capsys, "index", "-q", "--to", "postgresql://u:pw@h/db", str(tmp_path))
    assert code == 2 and "pip install" in err and "psycopg" in err and "pw" not in err


def test_sqlite_stays_the_default_and_never_loads_psycopg(tmp_path):
    code = ("import sys\nfrom sessionview.cli import main\n"
            f"main(['index', '-q', {str(tmp_path)!r}])\n"
            "print('psycopg' in sys.modules, 'sessionview.fleetindex.postgres' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_a_hit_address_is_one_sessionview_show_takes():
    from sessionview.fleetindex import hit_address
    from sessionview.remote.address import parse as parse_address

    for host, path in [("hosta", "/srv/s 1/it's.jsonl"), ("build-07.example.com", "/x/a:b.jsonl"), ("a", "/srv/x.jsonl"),
                       ("ci@runner", "/s.jsonl")]:
        got = parse_address(hit_address(host, path), check_local=False)
        assert got is not None and (got.user + "@" if got.user else "") + got.host == host and got.path == path, (host, path, got)


def test_config_toml_may_name_the_shared_index_and_this_host(capsys, pg, two_hosts, monkeypatch, tmp_path):
    a, _ = two_hosts
    conf = tmp_path / "config.toml"
    conf.write_text(f'index = "{pg.db_url}"\nindex_host = "hosta"\n')
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(conf))
    monkeypatch.delenv("SESSIONVIEW_INDEX")
    monkeypatch.delenv("SESSIONVIEW_HOST", raising=False)
    assert run(capsys, "index", "-q", str(a))[0] == 0
    monkeypatch.setenv("SESSIONVIEW_HOST", "hostq")
    code, out, _ = run(capsys, "search", "-q", "walrus", "--json")
    assert code == 0 and {(h["host"], h["address"].startswith("hosta:")) for h in jsons(out)} == {("hosta", True)}
    conf.write_text('index = "/not/a/url"\n')
    from sessionview.core.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="PostgreSQL URL"):
        load_config(str(conf))


def test_two_indexers_of_one_host_at_once_add_every_record_once(pg, tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    for k in range(6):
        (d / f"s{k}.jsonl").write_bytes(b"".join(line({"role": "user", "content": f"walrus {k} {i}"}) for i in range(300)))
    env = {**os.environ}
    argv = [sys.executable, "-m", "sessionview", "index", "-q", "--to", pg.db_url, "--host", "same", str(d)]
    procs = [subprocess.Popen(argv, env=env, stderr=subprocess.PIPE) for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read() if p.stderr else ""
    backend = PostgresBackend(pg.db_url, host="same")
    try:
        assert backend.count_docs() == 6 * 300
        rows = backend.conn.execute("select count(*), count(distinct (file_id, n)) from sv_docs").fetchone()
        assert rows[0] == rows[1]
    finally:
        backend.close()


def test_many_hits_come_in_pages_each_once(pg, tmp_path, monkeypatch):
    from sessionview.fleetindex import pgsearch

    monkeypatch.setattr(pgsearch, "FETCH", 3)
    monkeypatch.setattr(pgsearch, "PROBE", 50)  # past it: every file searched
    d = tmp_path / "s"
    d.mkdir()
    (d / "many.jsonl").write_bytes(b"".join(line({"role": "user", "content": f"walrus number {i}"}) for i in range(120)))
    backend = PostgresBackend(pg.db_url, host="other")
    try:
        Indexer(backend).update([str(d)])
        for q in ("walrus", "number -nothing"):
            ns = [h.n for h in hits.search(backend, parse(q))]
            assert sorted(ns) == list(range(1, 121)), q
        few = [h.n for h in hits.search(backend, parse('"number 7"'))]
        assert few == [8]
    finally:
        backend.close()
