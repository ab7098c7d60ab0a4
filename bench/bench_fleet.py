#!/usr/bin/env python3
"""Benchmark of one index for a fleet: search latency on PostgreSQL fed by two hosts, against SQLite on one.

    python bench/bench_fleet.py [--total 1G] [--files 20] [--data-dir DIR] [--json OUT]

Sessions are generated with ``../shared/bench/gen_session.py --bytes SIZE --seed K`` (seeds 1..files, each
``total/files`` bytes), the first half in ``DIR/a`` and the second in ``DIR/b`` (kept in ``--data-dir``,
else ``$SV_BENCH_DIR/fleet-TOTAL``, else ``bench/data/fleet-TOTAL``). A throwaway PostgreSQL server is
started as the tests start theirs (``tests/pgindex/pg_server.py``: initdb into a temp dir, a private
socket, fsync off), then:

build pg      ``python -m sessionview index --to URL --host a DIR/a -q`` and the same for ``b``, both at once
              (two hosts feeding one database): wall time of both, the database's size, and CPU time
              (user + system) of the two indexers and of the server's processes that served them
build sqlite  ``python -m sessionview index DIR -q`` into a fresh SQLite index: wall time, its size
query         ``hits.search(...)`` for 20 checked hits of each fixed query, warm, 5 rounds, median and p95:
              on PostgreSQL from a third host ``c`` (every hit remote: snippets from the stored text),
              from host ``a`` (its half read back from the files), and on SQLite

Besides the project: psycopg, and PostgreSQL's binaries (Debian's postgresql, postgresql-contrib).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "pgindex"))

from bench_index import GEN, QUERIES, p95, parse_size, warm  # noqa: E402


def generate(data: str, total: int, files: int) -> tuple[list[str], list[str]]:
    each = total // files
    halves: tuple[list[str], list[str]] = ([], [])
    for k in range(1, files + 1):
        side = "a" if k <= files // 2 else "b"
        os.makedirs(os.path.join(data, side), exist_ok=True)
        p = os.path.join(data, side, f"s{k:02d}.jsonl")
        if not os.path.exists(p):
            subprocess.run([sys.executable, GEN, "--bytes", str(each), "--seed", str(k), "--out", p], check=True,
                           stdout=subprocess.DEVNULL)
        halves[side == "b"].append(p)
    return halves


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def server_cpu(srv) -> float:
    """CPU seconds of the server's exited processes (a connection's backend is reaped by the postmaster:
    its user + system time is in the postmaster's cutime + cstime)."""
    with open(os.path.join(srv.base, "data", "postmaster.pid")) as f:
        pid = int(f.readline())
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def timed_queries(backend, substring: bool = False) -> dict:
    from sessionview.core.index import hits
    from sessionview.core.index.query import parse

    per: dict[str, list[float]] = {q: [] for q in QUERIES}
    found: dict[str, int] = {}
    for _ in range(5):
        for q in QUERIES:
            t = time.perf_counter()
            got = [h for _, h in zip(range(20), hits.search(backend, parse(q), substring=substring), strict=False)]
            per[q].append(time.perf_counter() - t)
            found[q] = len(got)
    every = [x for v in per.values() for x in v]
    return {"median_ms": statistics.median(every) * 1e3, "p95_ms": p95(every) * 1e3,
            "per_query_median_ms": {q: round(statistics.median(v) * 1e3, 1) for q, v in per.items()}, "hits": found}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--total", default="1G")
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--data-dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    total = parse_size(args.total)
    data = args.data_dir or os.path.join(os.environ.get("SV_BENCH_DIR") or os.path.join(HERE, "data"), f"fleet-{args.total}")
    a, b = generate(data, total, args.files)
    size = warm(a + b)
    print(f"corpus: {len(a) + len(b)} sessions, {size:,} bytes ({len(a)} on host a, {len(b)} on host b)", flush=True)

    import pg_server

    from sessionview.core.index.sqlite import SqliteBackend
    from sessionview.fleetindex.postgres import PostgresBackend

    reason = pg_server.available()
    if reason:
        print(f"skipped: {reason}")
        return 1
    srv = pg_server.start()
    out: dict = {"bytes": size, "files": len(a) + len(b)}
    tmp = tempfile.mkdtemp(prefix="sv-bench-fleet-")
    try:
        url = srv.url(srv.new_db())
        env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
        t = time.perf_counter()
        client0, server0 = _children_cpu(), server_cpu(srv)
        procs = [subprocess.Popen([sys.executable, "-m", "sessionview", "index", "--to", url, "--host", h,
                                   os.path.join(data, h), "-q"], env=env) for h in ("a", "b")]
        codes = [p.wait() for p in procs]
        out["build_pg_s"] = time.perf_counter() - t
        assert codes == [0, 0], codes
        time.sleep(0.5)  # the two server processes exit once their clients have gone
        out["build_pg_cpu_client_s"] = _children_cpu() - client0
        out["build_pg_cpu_server_s"] = server_cpu(srv) - server0
        pa = PostgresBackend(url, host="a")
        out["pg_bytes"] = pa.conn.execute("select pg_database_size(current_database())").fetchone()[0]
        out["pg_docs"] = pa.count_docs()
        print(f"build pg (two hosts at once): {out['build_pg_s']:.1f} s, {out['pg_bytes'] / 1e6:.0f} MB, "
              f"{out['pg_docs']:,} records; CPU {out['build_pg_cpu_client_s']:.1f} s in the indexers, "
              f"{out['build_pg_cpu_server_s']:.1f} s in the server", flush=True)

        sq_path = os.path.join(tmp, "index.sqlite")
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sessionview", "index", data, "-q"], env={**env, "SESSIONVIEW_INDEX": sq_path}, check=True)
        out["build_sqlite_s"] = time.perf_counter() - t
        out["sqlite_bytes"] = sum(os.path.getsize(sq_path + s) for s in ("", "-wal") if os.path.exists(sq_path + s))
        print(f"build sqlite (one host): {out['build_sqlite_s']:.1f} s, {out['sqlite_bytes'] / 1e6:.0f} MB", flush=True)

        pa.conn.execute("vacuum analyze")
        pc = PostgresBackend(url, host="c")
        sq = SqliteBackend(sq_path)
        for name, backend in (("pg_from_c", pc), ("pg_from_a", pa), ("sqlite", sq)):
            timed_queries(backend)  # warm
            out[name] = r = timed_queries(backend)
            print(f"query {name}: median {r['median_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms", flush=True)
            print("   ", json.dumps(r["per_query_median_ms"]), flush=True)
        for backend in (pa, pc, sq):
            backend.close()
    finally:
        srv.stop()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
