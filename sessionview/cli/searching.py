"""``sessionview index`` and ``sessionview search``: the full-text index of every session, from the shell.

Both import the index only when they run, so ``sessionview --help`` and a cold ``search`` start fast.
``search`` brings the index current for what it searches first (one ``stat`` per unchanged file), so its
hits are never stale. Exit status of ``search``: 0 with hits, 1 without, 2 on an error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from typing import TYPE_CHECKING, Any

from sessionview.cli.output import CliError, Out, err, shown

if TYPE_CHECKING:
    from sessionview.core.index.indexer import Indexer, Progress_
    from sessionview.core.index.sqlite import SqliteBackend

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
PROGRESS_AFTER = 0.5  # seconds before an update starts to print its progress


def parse_when(text: str, now: float | None = None) -> float:
    """``2025-11-01``, ``2025-11-01T10:00``, ``2025-11-01T10:00:00Z`` (local time without a zone), or an age
    such as ``90m``, ``2h``, ``3d``, ``1w``: seconds since the epoch."""
    from datetime import datetime

    t = text.strip()
    m = _RELATIVE.match(t)
    if m:
        return (time.time() if now is None else now) - float(m.group(1)) * _UNITS[m.group(2)]
    try:
        when = datetime.fromisoformat(t.replace("Z", "+00:00") if t.endswith("Z") else t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date, time or age: {text!r} (e.g. 2025-11-01, 2025-11-01T10:00, 3d, 2h)") from None
    return when.timestamp()


# -- the parsers (added to the command line by sessionview.cli.parser) -------------------------------
def add_commands(sub: Subparsers, formatter: Any) -> None:
    p = sub.add_parser("index", help="build or update the full-text index of sessions", formatter_class=formatter,
                       description="Bring the full-text index current for the sessions under PATH (default: .):\n"
                       "new files are indexed, appended lines only past what was indexed (also after an\n"
                       "agent rewrote the file with the same start), shrunk or replaced files again from\n"
                       "the start, and deleted files leave the index. Progress goes to stderr.\n\n"
                       "The index lives at $SESSIONVIEW_INDEX, or $XDG_CACHE_HOME/sessionview/index.sqlite\n"
                       "(default ~/.cache/...). It is a cache: delete index.sqlite* (its -wal, -shm and\n"
                       "part files too) to start again. A damaged or older one is rebuilt by itself. A first\n"
                       "build of many files runs in two processes (the second writes a part file beside it).\n\n"
                       "One index for a fleet: with --to postgresql://server/db (or $SESSIONVIEW_INDEX set to\n"
                       "such a URL) every host feeds one PostgreSQL database, each row marked with --host\n"
                       "(default: the host name). Needs psycopg (pip install 'sessionview[postgres]').",
                       epilog="examples:\n  sessionview index ~/agents/sessions\n  sessionview index . --watch\n"
                       "  sessionview index --to postgresql://indexer@db.internal/sessions ~/agents/sessions")
    p.add_argument("path", nargs="?", default=".", help="a directory of sessions (default: .) or one session file")
    p.add_argument("--watch", action="store_true", help="keep the index current as files change, until Ctrl+C")
    p.add_argument("-q", "--quiet", action="store_true", help="print no progress")
    _fleet_options(p, "--to")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search every indexed session", formatter_class=formatter,
                       description="Search the sessions under PATH (default: every indexed session) for QUERY, best\n"
                       "first: the most recently changed session first, and its newest records first (for a\n"
                       "prefix* or --substring term, whole-word matches go ahead). The index is brought\n"
                       "current first, so hits are never stale.\n\n"
                       "query language:\n"
                       "  word            a whole word, any case (deploy.sh is the phrase \"deploy sh\")\n"
                       "  \"a phrase\"      words in this order\n"
                       "  prefix*         words that start with prefix\n"
                       "  -word -\"a b\"    leave out records that have it\n"
                       "  --substring     every term is a substring instead (code identifiers, paths);\n"
                       "                  the first use builds a substring index, which takes a while\n\n"
                       "Each hit prints as PATH:#N role [tool] time, then the snippet with the match\n"
                       "marked; control characters are shown escaped.\n\n"
                       "A query that starts with '-' goes after '--': sessionview search -- -word other.\n\n"
                       "With --index postgresql://... every host's sessions are searched; a hit on another\n"
                       "host prints as HOST:PATH:#N ('sessionview show HOST:PATH' opens it over SSH), one on\n"
                       "this host as its path; --json adds host and address.\n\n"
                       "exit status: 0 hits found, 1 none, 2 an error (a PATH that does not exist, a bad query).",
                       epilog="examples:\n  sessionview search deploy.sh ~/agents/sessions\n"
                       "  sessionview search '\"connection refused\" -retry' --role tool --since 2d\n"
                       "  sessionview search --substring parseConf --json | jq -r .path")
    p.__class__ = _SearchParser  # its error for a missing QUERY says where a '-word' query goes
    p.add_argument("query", metavar="QUERY", help="what to find (quote it for the shell)")
    p.add_argument("paths", nargs="*", metavar="PATH", help="session files or directories (default: every indexed session)")
    p.add_argument("--role", action="append", metavar="ROLE", help="only records of this role (user, assistant, tool, ...; repeatable)")
    p.add_argument("--tool", action="append", metavar="NAME", help="only records that call or answer this tool (repeatable)")
    p.add_argument("--format", action="append", metavar="FORMAT", help="only sessions of this format (brute, claude-code, codex, ...)")
    p.add_argument("--since", type=parse_when, metavar="WHEN", help="only records written at or after WHEN (a date, time or age: 3d)")
    p.add_argument("--until", type=parse_when, metavar="WHEN", help="only records written at or before WHEN")
    p.add_argument("--substring", action="store_true", help="match substrings instead of words")
    p.add_argument("--json", action="store_true", help="one JSON object per hit: path, n, role, tool, timestamp, snippet, ...")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="at most N hits (default 20; 0: all)")
    p.add_argument("-q", "--quiet", action="store_true", help="print no progress")
    _fleet_options(p, "--index")
    p.set_defaults(func=cmd_search)


class _SearchParser(argparse.ArgumentParser):
    """The search parser: a missing QUERY is most often one that starts with '-' (read as an option)."""

    _argv: list[str] = []

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def,override]
        self._argv = list(args or [])
        return super().parse_known_args(args, namespace)

    def error(self, message: str):  # type: ignore[no-untyped-def,override]
        if message.startswith("the following arguments are required: QUERY"):
            import shlex

            known = {s for a in self._actions for s in a.option_strings}
            word = next((a for a in self._argv if a.startswith("-") and a.split("=")[0] not in known), None)
            message = "the following arguments are required: QUERY" if word is None else (
                f"a QUERY is required; a query that starts with '-' goes after '--': {self.prog} -- {shlex.quote(word)}")
        super().error(message)


def _fleet_options(p: argparse.ArgumentParser, option: str) -> None:
    g = p.add_argument_group("one index for a fleet (PostgreSQL)")
    g.add_argument(option, dest="url", metavar="URL",
                   help="a shared PostgreSQL index, postgresql://[user@]server/db (default: $SESSIONVIEW_INDEX "
                   "when it is such a URL, else the local SQLite index). The password comes from ~/.pgpass or "
                   "$PGPASSWORD (as libpq does) and is never printed")
    g.add_argument("--host", metavar="NAME", help="this host's name in the shared index (default: the host name); "
                   "use the name 'ssh' knows it by, so that other hosts can open its hits")


# -- shared --------------------------------------------------------------------------------------------
def _backend(url: str | None = None, host: str | None = None) -> SqliteBackend:
    from sessionview import fleetindex
    from sessionview.core.index import default_index_path
    from sessionview.core.index.model import IndexUnavailable
    from sessionview.core.index.sqlite import SqliteBackend

    url = url or fleetindex.configured_index()
    try:
        if url:
            if not fleetindex.is_url(url):
                raise CliError(f"{shown(fleetindex.redact(url))}: not a PostgreSQL URL (postgresql://...)")
            from sessionview.fleetindex.postgres import PostgresBackend

            backend: Any = PostgresBackend(url, host)
        else:
            if host:
                raise CliError("--host names this host in a shared PostgreSQL index: give --to/--index URL")
            backend = SqliteBackend(default_index_path())
    except IndexUnavailable as exc:
        raise CliError(str(exc)) from None
    if backend.notice:
        err(backend.notice)
    return backend


class _Meter:
    """Progress on stderr, once an update has run for a while (one line, rewritten on a terminal)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.start = time.monotonic()
        self.tty = sys.stderr is not None and sys.stderr.isatty()
        self.last = 0.0
        self.shown = False

    def __call__(self, p: Progress_) -> None:
        now = time.monotonic()
        if self.quiet or now - self.start < PROGRESS_AFTER or now - self.last < (0.2 if self.tty else 2.0):
            return
        self.last = now
        line = f"indexing: {p.done_files:,} of {p.files:,} files, {_mb(p.done)} of {_mb(p.total)}"
        if self.tty:
            sys.stderr.write(f"\r\x1b[Ksessionview: {line}")
            sys.stderr.flush()
        else:
            err(line)
        self.shown = True

    def done(self) -> None:
        if self.shown and self.tty:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _mb(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


def _update(indexer: Indexer, paths: list[str]) -> Any:
    import sqlite3

    try:
        return indexer.update(paths)
    except Exception as exc:
        if hasattr(indexer.backend, "error") and type(exc).__module__.startswith("psycopg"):  # the server failed
            raise CliError(indexer.backend.error(exc)) from None
        if not isinstance(exc, sqlite3.DatabaseError):
            raise  # damage found while writing: start again once
        indexer.backend.reset(f"the index {indexer.backend.path} was damaged ({exc}); rebuilt it")
        err(indexer.backend.notice or "")
        return indexer.update(paths)


def _summary(summary: Any, backend: Any) -> None:
    err(f"index current: {summary.indexed:,} indexed, {summary.appended:,} appended to, {summary.deleted:,} removed, "
        f"{summary.unchanged:,} unchanged; {summary.docs:,} records, {_mb(summary.bytes)} in {summary.seconds:.1f} s "
        f"({shown(backend.path)})")


def _check_paths(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        if not os.path.exists(p):
            raise CliError(f"{shown(p)}: no such file or directory")
        out.append(os.path.abspath(p))
    return out


# -- index -----------------------------------------------------------------------------------------------
def cmd_index(args: argparse.Namespace) -> int:
    from sessionview.core.index.indexer import Indexer

    paths = _check_paths([args.path])
    backend = _backend(args.url, args.host)
    meter = _Meter(args.quiet)
    indexer = Indexer(backend, progress=meter)
    try:
        summary = _update(indexer, paths)
    finally:
        meter.done()
    for why in summary.skipped[:20]:
        err(f"skipped {why}")
    if not args.quiet:
        _summary(summary, backend)
    if args.watch:
        return _watch(indexer, paths[0], args.quiet)
    backend.close()
    return 0


def _watch(indexer: Indexer, root: str, quiet: bool) -> int:
    import asyncio

    from sessionview.core.watch import watch_sessions

    async def run() -> None:
        async for batch in watch_sessions(root if os.path.isdir(root) else os.path.dirname(root)):
            paths = sorted({p for _, p in batch if os.path.isdir(root) or p == root})
            if not paths:
                continue
            summary = await asyncio.to_thread(_update, indexer, paths)
            if summary.changed and not quiet:
                err(f"{summary.indexed + summary.appended:,} files indexed, {summary.deleted:,} removed: {summary.docs:,} records")

    if not quiet:
        err("watching for changes (Ctrl+C stops)")
    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        return 0
    return 0


# -- search ----------------------------------------------------------------------------------------------
def cmd_search(args: argparse.Namespace) -> int:
    from sessionview.core.index import hits
    from sessionview.core.index.indexer import Indexer
    from sessionview.core.index.model import Filters
    from sessionview.core.index.query import QueryError, parse

    paths = _check_paths(args.paths)
    try:
        query = parse(args.query)
    except QueryError as exc:
        raise CliError(f"search: {exc}") from None
    backend = _backend(args.url, args.host)
    update = paths
    building = args.substring and not backend.has_grams
    if building:
        if not args.quiet:
            err("building the substring index (once; every session is indexed again)" if not args.url and not hasattr(backend, "hosts")
                else "building the substring index (once)")
        update = paths or [s.path for s in backend.files()]  # what was indexed is indexed again
        backend.enable_grams()
    meter = _Meter(args.quiet)
    indexer = Indexer(backend, progress=meter)
    try:
        summary = _update(indexer, update)
    finally:
        meter.done()
    if building and not args.quiet:
        _summary(summary, backend)
    if not paths and not (backend.hosts() if hasattr(backend, "hosts") else backend.files()):
        err("the index is empty: run 'sessionview index PATH' first, or give a PATH to search")
        return 1
    for why in summary.skipped[:20]:
        err(f"skipped {why}")
    filters = Filters(frozenset(args.role or ()), frozenset(args.tool or ()), frozenset(args.format or ()),
                      args.since, args.until, tuple(paths))
    out = Out()
    found = 0
    try:
        for hit in hits.search(backend, query, filters, args.substring):
            out.write(_json(hit) if args.json else _text(hit, out_tty()))
            out.flush()
            found += 1
            if args.limit and found >= args.limit:
                break
    except QueryError as exc:
        raise CliError(f"search: {exc}") from None
    except Exception as exc:
        if hasattr(backend, "error") and type(exc).__module__.startswith("psycopg"):
            raise CliError(backend.error(exc)) from None
        raise
    finally:
        backend.close()
    return 0 if found else 1


def out_tty() -> bool:
    return sys.stdout is not None and sys.stdout.isatty()


def _json(hit: Any) -> str:
    import orjson

    return orjson.dumps({
        **({"host": hit.host, "address": address(hit)} if hit.host else {}),
        "path": hit.path, "n": hit.n, "role": hit.role, "tool": hit.tool or None, "timestamp": hit.timestamp,
        "snippet": hit.snippet, "format": hit.format, "offset": hit.offset if hit.offset >= 0 else None,
        "marks": hit.marked,
    }, default=str).decode("utf-8", "replace") + "\n"


def address(hit: Any) -> str:
    """Where a hit's session is: its path on this host, ``host:path`` (``sessionview show`` takes it) on another."""
    if not hit.remote:
        return hit.path
    from sessionview.fleetindex import hit_address

    return hit_address(hit.host, hit.path)


def _text(hit: Any, tty: bool) -> str:
    from sessionview.core.text import escape_control

    head = f"{shown(address(hit))}:#{hit.n} {escape_control(hit.role, one_line=True)}"
    if hit.tool:
        head += f" [{escape_control(hit.tool, one_line=True)}]"
    if hit.timestamp:
        head += f" {escape_control(hit.timestamp, one_line=True)}"
    on, off = ("\x1b[1;33m", "\x1b[0m") if tty else ("", "")
    body = "".join(f"{on}{escape_control(t, one_line=True)}{off}" if marked else escape_control(t, one_line=True) for t, marked in hit.parts)
    return f"{head}\n    {body}\n"
