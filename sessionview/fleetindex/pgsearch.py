r"""Searching the shared index: the query language in SQL, and the order of the hits.

Words are the query language's (runs of letters and digits, in lower case): the text is cut to them here
(:func:`words`) and its ``tsvector`` is written here (:func:`tsvector`), so PostgreSQL's parser, which would
keep ``deploy.sh`` or an e-mail address whole (and costs more than half of a build), never runs. Each query
term goes through the same cut into a ``tsquery`` (:func:`to_tsquery`: quoted words, ``<->`` between a
phrase's, ``:*`` for a prefix), so both sides split alike. The query's text only ever travels as a parameter
(``ILIKE`` patterns with ``%``, ``_`` and ``\`` escaped for ``--substring``).

The order is issue 13's rule, with no score: the matches of the most recently modified file first (the
hits layer then puts whole-word matches first). Ranking every match (``ts_rank``) would read every match's
``tsvector``; here a search reads only what its first page needs:

1. when the planner expects (from the ``tsvector`` statistics) at most :data:`PROBE` matches, a probe takes
   them (a phrase's words, without their positions: the index alone answers it), and when there are no more,
   only the files they are in are searched (a probe of a common word would cost the whole GIN bitmap);
2. the files (this host's or the fleet's, by the path and format filters), newest first;
3. one file at a time, ``file_id = … and tsv @@ …`` (the ``(file_id, tsv)`` GIN index), with ``limit`` and
   no ``order by``, so the scan stops at the page's last row; the file's next page skips the records it
   gave (``n <> all(…)``) and is 4x larger, until a page comes back short;
4. the stored text, for a hit on another host (its snippet is made from it), is read for the page's rows only.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterator

from sessionview.core.index.model import Candidate, Filters
from sessionview.core.index.query import Query, QueryError, Term

PROBE = 1000  # more matches than this: every file is searched, newest first (else only the files with one)
FETCH = 25  # rows of a file's first page (20 hits are usually asked for); each next page is 4x larger
_NOT_WORD = re.compile(r"[\W_]+")
MAX_WORD, MAX_POS, MAX_POSITIONS = 2046, 16383, 256  # PostgreSQL's limits for a lexeme and its positions
_POSITIONS = [str(i) for i in range(MAX_POS + 1)]
_META = 'd.n, d."offset", d.length, d.role, d.tool, d.ts'


def words(text: str) -> str:
    """``text``'s words (the query language's: runs of letters and digits) in lower case, one space between."""
    return _NOT_WORD.sub(" ", text.lower()).strip()


def _lexemes(text: str) -> list[str]:
    """The words of a :func:`words` string that a ``tsvector`` can hold (at most 2,046 bytes each)."""
    ws = text.split()
    if any(len(w) > MAX_WORD // 4 for w in ws):
        ws = [w for w in ws if len(w.encode()) <= MAX_WORD]
    return ws


def tsvector(text: str) -> str:
    """The ``tsvector`` (its text form) of a :func:`words` string: each word and its positions, as
    ``to_tsvector('simple', …)`` would make it from these words, but made here (the server's parser cost
    more than half of a build). Positions stop at 16,383, at most 256 a word, as PostgreSQL keeps them."""
    ws = _lexemes(text)
    where: dict[str, list[int]] = {}
    for i, w in enumerate(ws, 1):
        at = where.get(w)
        if at is None:
            where[w] = [i]
        else:
            at.append(i)
    if len(ws) > MAX_POS:
        where = {w: sorted({min(i, MAX_POS) for i in at}) for w, at in where.items()}
    shown = _POSITIONS.__getitem__
    return " ".join([f"'{w}':{','.join(map(shown, at[:MAX_POSITIONS]))}" for w, at in where.items()])


def _term(term: Term, loose: bool = False) -> str | None:
    """One term as ``tsquery`` text: its words (letters and digits only, so nothing in them is syntax) as a
    phrase, the last one a prefix for ``word*``; ``loose``: the words in any order (what the GIN index
    answers without reading a row)."""
    ws = _lexemes(words(term.text))
    if not ws:
        return None
    quoted = [f"'{w}'" for w in ws]
    if term.prefix:
        quoted[-1] += ":*"
    joined = (" & " if loose else " <-> ").join(quoted)
    return f"({joined})" if len(ws) > 1 else joined


def to_tsquery(query: Query, loose: bool = False) -> str:
    """The ``tsquery`` (its text form, passed as a parameter) for ``query``. ``loose``: phrases as their
    words (for a probe; an excluded phrase is then left out, so that the loose query finds at least what
    the exact one does)."""
    positive = [e for e in (_term(t, loose) for t in query.positive) if e is not None]
    if not positive:
        raise QueryError("the query has no letters or digits to search for")
    negative = [e for e in (_term(t) for t in query.negative if not (loose and len(words(t.text).split()) > 1))
                if e is not None]
    text = " & ".join(positive)
    return f"{text} & !({' | '.join(negative)})" if negative else text


def like_pattern(text: str) -> str:
    """``text`` as an ILIKE pattern that finds it anywhere (``\\``, ``%`` and ``_`` escaped)."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def search(backend: Any, query: Query, filters: Filters, substring: bool = False) -> Iterator[Candidate]:
    """Candidates, the newest file's first (see the module docstring)."""
    conn = backend.conn
    if substring:
        if not [t for t in query.positive if len(t.text) >= 3]:
            raise QueryError("a substring search needs a term of at least 3 characters")
        args = [like_pattern(t.text) for t in query.positive] + [like_pattern(t.text) for t in query.negative]
        match = " and ".join(["t.body ilike %s"] * len(query.positive) + ["t.body not ilike %s"] * len(query.negative))
        probe, probe_args = f"select t.file_id from sv_text t where {match}", args
        table = "sv_text t join sv_docs d on d.file_id = t.file_id and d.n = t.n"
        key = "t"
    else:
        match, args = "d.tsv @@ %s::tsquery", [to_tsquery(query)]
        probe, probe_args = "select d.file_id from sv_docs d where d.tsv @@ %s::tsquery", [to_tsquery(query, loose=True)]
        table, key = "sv_docs d", "d"
    only = None
    if _estimate(conn, probe, probe_args) <= PROBE:  # else the probe would take a while (the whole GIN bitmap)
        counts = conn.execute(f"select file_id, count(*) from ({probe} limit {PROBE + 1}) p group by file_id", probe_args).fetchall()
        if not counts:
            return
        only = [f for f, _ in counts] if sum(c for _, c in counts) <= PROBE else None
    for fid, host, path, fmt, kind, mtime_ns in _files(conn, filters, backend.host, only):
        remote = host != backend.host
        for r in _file_rows(conn, table, key, match, args, filters, fid, mtime_ns, remote):
            yield Candidate(path, fmt, kind, r[0], r[1], r[2], r[3], r[4] or "", r[5], mtime_ns / 1e9, 0.0, host=host,
                            text=r[6] if remote else None)


def _estimate(conn: Any, sql: str, params: list) -> float:
    """The planner's estimate of the rows of ``sql`` (from the ``tsvector`` statistics: no row is read)."""
    plan = conn.execute("explain (format json) " + sql, params).fetchone()[0]
    return float(plan[0]["Plan"]["Plan Rows"])


def _files(conn: Any, filters: Filters, host: str, only: list[int] | None) -> list[tuple]:
    """``(id, host, path, format, kind, mtime_ns)`` of the files to search, newest first."""
    clauses: list[str] = []
    params: list = []
    if only is not None:
        clauses.append("id = any(%s)")
        params.append(only)
    if filters.formats:
        clauses.append("format = any(%s)")
        params.append(sorted(filters.formats))
    if filters.paths:  # local paths: this host's files under them
        ors = []
        for p in filters.paths:
            prefix = p.rstrip(os.sep) + os.sep
            ors.append("path = %s or left(path, %s) = %s")
            params.extend([p, len(prefix), prefix])
        clauses.append("host = %s and (" + " or ".join(ors) + ")")
        params.insert(len(params) - 3 * len(filters.paths), host)
    where = ("where " + " and ".join(clauses)) if clauses else ""
    return conn.execute(f"select id, host, path, format, kind, mtime_ns from sv_files {where} order by mtime_ns desc, id",
                        params).fetchall()


def _file_rows(conn: Any, table: str, key: str, match: str, args: list, filters: Filters, fid: int, mtime_ns: int,
               remote: bool) -> Iterator[tuple]:
    """One file's matches, in pages that skip the records already given (see the module docstring)."""
    clauses, params = [f"{key}.file_id = %s::bigint", match], [fid, *args]  # bigint: btree_gin has no int8 = int2
    if filters.roles:
        clauses.append("d.role = any(%s)")
        params.append(sorted(filters.roles))
    if filters.tools:
        clauses.append("(" + " or ".join("position(%s in ',' || d.tool || ',') > 0" for _ in filters.tools) + ")")
        params.extend(f",{t}," for t in sorted(filters.tools))
    if filters.since is not None:
        clauses.append("coalesce(d.epoch, %s) >= %s")
        params.extend([mtime_ns / 1e9, filters.since])
    if filters.until is not None:
        clauses.append("coalesce(d.epoch, %s) <= %s")
        params.extend([mtime_ns / 1e9, filters.until])
    text = ", t.body" if key == "t" else ""
    inner = f"select {_META}{text} from {table} where " + " and ".join(clauses)
    if key == "d" and remote:  # the text of the page's rows only
        sql = f"select p.*, t.body from ({inner} {{skip}} limit %s) p left join sv_text t on t.file_id = %s::bigint and t.n = p.n"
        tail = [fid]
    else:
        sql, tail = f"{inner} {{skip}} limit %s", []
    seen: list[int] = []
    size = FETCH
    while True:
        skip = f"and {key}.n <> all(%s::integer[])" if seen else ""
        rows = conn.execute(sql.format(skip=skip), [*params, *([seen] if seen else []), size, *tail]).fetchall()
        for r in rows:
            yield r if len(r) > 6 else (*r, None)
        if len(rows) < size:
            return
        seen += [r[0] for r in rows]
        size = min(size * 4, 10000)
