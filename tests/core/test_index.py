"""The full-text index: the query language, what is indexed, incremental updates, damage."""

from __future__ import annotations

import json
import os
import sqlite3
import time

import pytest
from indexhelpers import find, fresh, held, msg

from sessionview.core.index import default_index_path
from sessionview.core.index.indexer import Indexer
from sessionview.core.index.query import QueryError, parse, to_match
from sessionview.core.index.sqlite import SqliteBackend


@pytest.fixture
def backend(tmp_path):
    b = SqliteBackend(str(tmp_path / "index.sqlite"))
    yield b
    b.close()


def brute(path, *lines: bytes):
    path.write_bytes(b"".join(lines))
    return path


CONVO = [
    msg("user", "Deploy the app with deploy.sh please"),
    msg("assistant", "", tool_calls=[{"id": "c1", "name": "shell", "arguments": {"command": "./deploy.sh --prod"}}]),
    msg("tool", "error: connection refused on port 5432", tool_call_id="c1"),
    msg("assistant", "The database refused the connection. Retrying."),
]


# -- the query language -------------------------------------------------------------------------------
def test_every_term_is_quoted_so_user_text_never_becomes_fts_syntax():
    q = parse('a"b OR NEAR(x) -c* "say ""hi""" col:val ^start')
    match = to_match(q)
    assert '"a""b"' in match and '"OR"' in match and '"NEAR(x)"' in match and '"col:val"' in match
    assert " NOT " in match  # the exclusion, as an operator we wrote
    db = sqlite3.connect(":memory:")
    db.execute("create virtual table t using fts5(body, content='')")
    db.execute("select * from t where t match ?", (match,)).fetchall()  # valid FTS5


def test_a_query_of_only_exclusions_or_nothing_is_refused():
    with pytest.raises(QueryError):
        parse("-alone")
    with pytest.raises(QueryError):
        parse('  "" ')
    with pytest.raises(QueryError):
        to_match(parse("ab"), substring=True)


def test_words_phrases_prefixes_and_exclusions(backend, tmp_path):
    p = brute(tmp_path / "s.jsonl", *CONVO)
    Indexer(backend).update([str(tmp_path)])
    assert [h.n for h in find(backend, "deploy.sh")] and all(h.path == str(p) for h in find(backend, "deploy.sh"))
    assert {h.n for h in find(backend, '"connection refused"')} == {3}
    assert {h.n for h in find(backend, '"refused connection"')} == set()
    assert {h.n for h in find(backend, "refus*")} == {3, 4}
    assert {h.n for h in find(backend, "refus")} == set()  # whole words only
    assert {h.n for h in find(backend, "refused -port")} == {4}
    assert {h.n for h in find(backend, 'refused -"on port"')} == {4}
    assert {h.n for h in find(backend, "DEPLOY")} == {1, 2}  # any case


def test_a_hit_keeps_path_number_role_tool_format_and_offset(backend, tmp_path):
    p = brute(tmp_path / "s.jsonl", *CONVO)
    Indexer(backend).update([str(p)])
    (call,) = find(backend, "prod")
    assert (call.path, call.n, call.role, call.tool, call.format) == (str(p), 2, "assistant", "shell", "brute")
    assert call.offset == len(CONVO[0])
    (result,) = find(backend, "5432")
    assert (result.n, result.role, result.tool) == (3, "tool", "shell")  # the result is named by its call
    assert result.marked == ["5432"] and "connection refused" in result.snippet


def test_the_answering_tool_is_named_across_an_append(backend, tmp_path):
    p = brute(tmp_path / "s.jsonl", *CONVO[:2])
    Indexer(backend).update([str(p)])
    with open(p, "ab") as f:
        f.write(CONVO[2])
    assert Indexer(backend).update_file(str(p)) == "appended"
    assert [(h.n, h.tool) for h in find(backend, "5432")] == [(3, "shell")]


def test_filters_role_tool_format_time_and_path(backend, tmp_path):
    brute(tmp_path / "a.jsonl", *CONVO)
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
    assert {h.path for h in find(backend, "refused", paths=(str(tmp_path / "sub"),))} == {str(cc)}


def test_recently_changed_sessions_rank_first(backend, tmp_path):
    old = brute(tmp_path / "old.jsonl", msg("user", "flaky test again"))
    new = brute(tmp_path / "new.jsonl", msg("user", "flaky test again"))
    os.utime(old, (time.time() - 30 * 86400,) * 2)
    Indexer(backend).update([str(tmp_path)])
    assert [h.path for h in find(backend, "flaky")] == [str(new), str(old)]
    os.utime(new, (time.time() - 60 * 86400,) * 2)
    Indexer(backend).update([str(tmp_path)])
    assert [h.path for h in find(backend, "flaky")] == [str(old), str(new)]


def test_whole_word_matches_come_before_prefix_matches(backend, tmp_path):
    brute(tmp_path / "s.jsonl", msg("user", "deployment deployment deployment"), msg("user", "deploy"))
    Indexer(backend).update([str(tmp_path)])
    assert [h.n for h in find(backend, "deploy*")][0] == 2


def test_substring_mode_finds_parts_of_identifiers(backend, tmp_path):
    brute(tmp_path / "s.jsonl", msg("user", "call parseConfigFile now"), msg("user", "parse config"))
    backend.enable_grams()
    Indexer(backend).update([str(tmp_path)])
    assert [h.n for h in find(backend, "seConfigF", substring=True)] == [1]
    assert find(backend, "seConfigF") == []


# -- what is indexed ----------------------------------------------------------------------------------
def test_every_format_is_indexed(backend, fixtures, tmp_path):
    Indexer(backend).update([str(fixtures)])
    formats = {s.format for s in backend.files()}
    assert {"brute", "claude-code", "codex", "openai", "anthropic", "pi", "littleghost"} <= formats
    assert backend.count_docs() > 50


def test_reasoning_tool_arguments_and_results_are_indexed(backend, tmp_path):
    p = tmp_path / "cc.jsonl"
    rows = [
        {"type": "assistant", "sessionId": "s", "uuid": "a1", "timestamp": "2025-01-01T10:00:00Z", "message": {
            "role": "assistant", "content": [{"type": "thinking", "thinking": "ponder quasar"},
                                             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "grep nebula"}}]}},
        {"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": "2025-01-01T10:00:01Z", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "pulsar found"}]}},
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    Indexer(backend).update([str(p)])
    assert [(h.n, h.tool) for h in find(backend, "quasar")] == [(1, "Bash")]
    assert [h.n for h in find(backend, "nebula")] == [1]
    assert [(h.n, h.tool, h.timestamp) for h in find(backend, "pulsar")] == [(2, "Bash", "2025-01-01T10:00:01Z")]


def test_invalid_and_non_utf8_records_are_indexed_by_what_can_be_read(backend, tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(msg("user", "first")
                  + b'{"role":"user","content":"caf\xe9 latte"}\n'  # not UTF-8, valid otherwise
                  + b'{"role": "user", "content": "broken zebra\n'  # invalid JSON
                  + b"\xff\xfe garbage walrus \x00\n"
                  + b'{"role":"user","content":"lone \\ud800 surrogate okapi"}\n'
                  + b"\n" + msg("user", "last"))
    Indexer(backend).update([str(p)])
    assert [(h.n, h.role) for h in find(backend, "latte")] == [(2, "user")]
    assert [(h.n, h.role) for h in find(backend, "zebra")] == [(3, "invalid")]
    assert [h.n for h in find(backend, "walrus")] == [4]
    assert [h.n for h in find(backend, "okapi")] == [5]
    assert [h.n for h in find(backend, "last")] == [7]  # the blank line keeps its number


def test_a_partial_last_line_is_indexed_and_replaced_when_it_completes(backend, tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(msg("user", "one") + b'{"role":"user","content":"half wri')
    ix = Indexer(backend)
    ix.update([str(p)])
    assert [h.n for h in find(backend, "half")] == [2]
    with open(p, "ab") as f:
        f.write(b'tten done"}\n')
    assert ix.update_file(str(p)) == "appended"
    assert [h.n for h in find(backend, "written")] == [2] and find(backend, "half")
    assert held(backend, p) == fresh(p)


# -- incremental ---------------------------------------------------------------------------------------
def test_unchanged_files_cost_one_stat(backend, tmp_path):
    brute(tmp_path / "s.jsonl", *CONVO)
    ix = Indexer(backend)
    ix.update([str(tmp_path)])
    s = ix.update([str(tmp_path)])
    assert (s.unchanged, s.docs, s.bytes) == (1, 0, 0)


def test_an_append_indexes_only_the_new_bytes(backend, tmp_path):
    p = brute(tmp_path / "s.jsonl", *CONVO)
    ix = Indexer(backend)
    ix.update([str(p)])
    with open(p, "ab") as f:
        f.write(msg("user", "appended walrus"))
    s = ix.update([str(p)])
    assert (s.appended, s.docs, s.bytes) == (1, 1, len(msg("user", "appended walrus")))
    assert [h.n for h in find(backend, "walrus")] == [5]
    assert held(backend, p) == fresh(p)


def test_a_rewrite_that_starts_with_what_was_indexed_indexes_only_the_tail(backend, tmp_path):
    p = brute(tmp_path / "s.jsonl", *CONVO)
    ix = Indexer(backend)
    ix.update([str(p)])
    data = p.read_bytes() + msg("assistant", "end of turn")
    with open(p, "r+b") as f:  # Brute: truncate, then write the whole file
        f.truncate(0)
        f.write(data)
    s = ix.update([str(p)])
    assert (s.appended, s.docs) == (1, 1)
    tmp = tmp_path / ".s.jsonl.sv-tmp"  # a save renamed over the path (a new inode)
    tmp.write_bytes(data + msg("user", "after rename"))
    os.replace(tmp, p)
    s = ix.update([str(p)])
    assert (s.appended, s.docs) == (1, 1)
    assert held(backend, p) == fresh(p)


@pytest.mark.parametrize("change", ["shrunk", "compacted", "replaced", "same size"])
def test_shrunk_or_replaced_files_are_indexed_again(backend, tmp_path, change):
    p = brute(tmp_path / "s.jsonl", *CONVO)
    ix = Indexer(backend)
    ix.update([str(p)])
    if change == "shrunk":
        p.write_bytes(b"".join(CONVO[:2]))
    elif change == "compacted":
        p.write_bytes(CONVO[0] + msg("user", "[compacted:summary] deployed") + CONVO[3])
    elif change == "replaced":
        tmp = tmp_path / "new"
        tmp.write_bytes(msg("user", "something else entirely") * 5)
        os.replace(tmp, p)
    else:
        p.write_bytes(p.read_bytes().replace(b"refused", b"accepts"))
    s = ix.update([str(p)])
    assert s.indexed == 1
    assert held(backend, p) == fresh(p)
    assert find(backend, "refused" if change == "same size" else "5432") == []


def test_a_deleted_file_leaves_the_index(backend, tmp_path):
    p = brute(tmp_path / "s.jsonl", *CONVO)
    ix = Indexer(backend)
    ix.update([str(tmp_path)])
    p.unlink()
    s = ix.update([str(tmp_path)])
    assert s.deleted == 1 and backend.files() == [] and find(backend, "deploy") == []


def test_a_document_is_indexed_whole_when_it_changes(backend, fixtures, tmp_path):
    p = tmp_path / "lg.json"
    p.write_bytes((fixtures / "littleghost-filesystem-snapshot.json").read_bytes())
    ix = Indexer(backend)
    ix.update([str(p)])
    (state,) = backend.files()
    assert state.kind == "document" and state.lines > 0
    assert ix.update_file(str(p)) == "unchanged"
    os.utime(p, (time.time() + 5,) * 2)
    assert ix.update_file(str(p)) == "indexed"
    assert held(backend, p) == fresh(p)


# -- where it lives, damage ------------------------------------------------------------------------------
def test_the_index_lives_in_the_cache_directory_or_at_sessionview_index(monkeypatch, tmp_path):
    monkeypatch.delenv("SESSIONVIEW_INDEX", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_index_path() == str(tmp_path / "cache" / "sessionview" / "index.sqlite")
    monkeypatch.setenv("SESSIONVIEW_INDEX", str(tmp_path / "x.db"))
    assert default_index_path() == str(tmp_path / "x.db")


def test_the_index_is_in_wal_mode(backend):
    assert backend.db.execute("pragma journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize("damage", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 5000])
def test_a_corrupt_index_is_rebuilt_with_a_message(tmp_path, damage):
    path = tmp_path / "index.sqlite"
    path.write_bytes(damage)
    b = SqliteBackend(str(path))
    assert b.notice is not None and "started a new one" in b.notice
    s = tmp_path / "s.jsonl"
    s.write_bytes(b"".join(CONVO))
    Indexer(b).update([str(s)])
    assert find(b, "deploy")


def test_an_index_of_another_version_is_rebuilt(tmp_path):
    path = str(tmp_path / "index.sqlite")
    b = SqliteBackend(path)
    b.db.execute("update meta set value='0' where key='version'")
    b.close()
    b = SqliteBackend(path)
    assert "another version" in (b.notice or "")
    assert b.files() == []


def test_an_index_locked_past_the_timeout_is_replaced_with_a_message(tmp_path):
    path = str(tmp_path / "index.sqlite")
    SqliteBackend(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("pragma journal_mode=delete")  # leaves WAL: a reader now needs the lock that is held
    holder.execute("begin exclusive")
    try:
        b = SqliteBackend(path, timeout=0.2)
        assert "locked" in (b.notice or "")
        b.close()
    finally:
        holder.close()


def test_many_removed_records_make_the_index_rebuild_itself(backend, tmp_path, monkeypatch):
    from sessionview.core.index import sqlite as sq

    monkeypatch.setattr(sq, "GARBAGE_MIN", 3)
    p = brute(tmp_path / "s.jsonl", *CONVO)
    ix = Indexer(backend)
    ix.update([str(p)])
    for i in range(3):
        p.write_bytes(b"".join(CONVO).replace(b"please", b"now %d" % i))
        ix.update([str(p)])
    assert backend.needs_rebuild()
    ix.update([])
    assert not backend.needs_rebuild() and held(backend, p) == fresh(p)


def test_common_words_are_ranked_file_by_file_newest_first(backend, tmp_path, monkeypatch):
    from sessionview.core.index import sqlite as sq

    monkeypatch.setattr(sq, "COMMON", 2)
    paths = []
    for i, age in enumerate([50, 10, 30]):
        p = brute(tmp_path / f"s{i}.jsonl", msg("user", "common word"), msg("user", "common common word"), msg("user", "other"))
        os.utime(p, (time.time() - age * 86400,) * 2)
        paths.append(p)
    ix = Indexer(backend)
    ix.update([str(tmp_path)])
    with open(paths[0], "ab") as f:  # appended later: its records are in two id ranges
        f.write(msg("user", "common again"))
    os.utime(paths[0], (time.time() - 50 * 86400,) * 2)
    ix.update([str(tmp_path)])
    found = [(os.path.basename(h.path), h.n) for h in find(backend, "common")]
    assert [f for f, _ in found] == ["s1.jsonl"] * 2 + ["s2.jsonl"] * 2 + ["s0.jsonl"] * 3
    assert found[:2] == [("s1.jsonl", 2), ("s1.jsonl", 1)]  # within a file: the newest record first
    assert [n for f, n in found if f == "s0.jsonl"] == [2, 1, 4] or sorted(n for f, n in found if f == "s0.jsonl") == [1, 2, 4]
    assert {h.path for h in find(backend, "common", paths=(str(paths[2]),))} == {str(paths[2])}
