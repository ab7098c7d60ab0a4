"""Helpers of the embedded index store (:mod:`.sqlite`): its files on disk, its filters as SQL, its rows."""

from __future__ import annotations

import contextlib
import glob
import os
import re

from sessionview.core.index.model import Candidate, Doc, Filters

PART = ".part-"  # a part's file name: the index's, then this, the building process's id and a number


def _remove(path: str) -> None:
    for base in [path, *glob.glob(glob.escape(path) + PART + "*[0-9]")]:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(base + suffix)


def _remove_stale_parts(path: str, keep: set[str]) -> None:
    """Remove the part files that no index lists and whose building process is gone (it was killed)."""
    for file in glob.glob(glob.escape(path) + PART + "*[0-9]"):
        pid = os.path.basename(file)[len(os.path.basename(path) + PART):].split("-")[0]
        if os.path.basename(file) in keep or not pid.isdigit() or _alive(int(pid)):
            continue
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(file + suffix)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def part_path(path: str, n: int) -> str:
    """Where a bulk build's second writer puts its part of the index (see :meth:`SqliteBackend.adopt`)."""
    return f"{path}{PART}{os.getpid()}-{n}"


def _candidate(r: tuple) -> Candidate:
    return Candidate(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7] or "", r[8], r[9] / 1e9, 0.0)


def _inside(path: str, under: str) -> bool:
    return path == under or path.startswith(under.rstrip(os.sep) + os.sep)


def _filter_sql(filters: Filters) -> tuple[str, list]:
    clauses: list[str] = []
    params: list = []
    if filters.roles:
        clauses.append(f"d.role in ({','.join('?' * len(filters.roles))})")
        params.extend(sorted(filters.roles))
    if filters.tools:
        clauses.append("(" + " or ".join("instr(',' || d.tool || ',', ?) > 0" for _ in filters.tools) + ")")
        params.extend(f",{t}," for t in sorted(filters.tools))
    if filters.formats:
        clauses.append(f"f.format in ({','.join('?' * len(filters.formats))})")
        params.extend(sorted(filters.formats))
    if filters.since is not None:
        clauses.append("coalesce(d.epoch, f.mtime_ns / 1e9) >= ?")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append("coalesce(d.epoch, f.mtime_ns / 1e9) <= ?")
        params.append(filters.until)
    if filters.paths:
        ors = []
        for p in filters.paths:
            prefix = p.rstrip(os.sep) + os.sep
            ors.append("(f.path = ? or substr(f.path, 1, ?) = ?)")
            params.extend([p, len(prefix), prefix])
        clauses.append("(" + " or ".join(ors) + ")")
    return ("where " + " and ".join(clauses)) if clauses else "", params


def _text(s: str) -> str:
    try:
        s.encode()
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "replace").decode()


_SURROGATE = re.compile("[\ud800-\udfff]")


def _bad(s: str | None) -> bool:
    return s is not None and not s.isascii() and _SURROGATE.search(s) is not None


def _unencodable(d: Doc) -> bool:
    """Whether a string of ``d`` has a lone surrogate (no UTF-8 for it)."""
    return _bad(d.text) or _bad(d.role) or _bad(d.tool) or _bad(d.timestamp) or any(_bad(c) or _bad(n) for c, n in d.calls)


def _clean(d: Doc) -> Doc:
    calls = tuple((_text(c), _text(n)) for c, n in d.calls)
    return Doc(d.n, d.offset, d.length, _text(d.role), _text(d.tool), d.timestamp and _text(d.timestamp), d.epoch, _text(d.text), calls)


def _locked(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text
