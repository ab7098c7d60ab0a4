#!/usr/bin/env python3
"""Benchmark of the full-text index (``sessionview index`` / ``search``) beside a plain scan.

    python bench/bench_index.py [--total 1G] [--files 20] [--data-dir DIR] [--json OUT]

Sessions are generated with ``../shared/bench/gen_session.py --bytes SIZE --seed K`` (seeds 1..files, each
``total/files`` bytes; kept in ``--data-dir``, else ``$SV_BENCH_DIR/index-TOTAL``, else
``bench/data/index-TOTAL``). Then, with a fresh index in a temporary directory (page cache warm: every file
is read once first):

build       ``python -m sessionview index DIR -q`` in a subprocess: wall time, CPU time (its second writer or
            forked extractor included), peak RSS (``os.wait4``: the largest process) and the peak of all its
            processes' memory together (PSS, sampled), the index's size (every file), and the wall time over the
            orjson pass's
append      one line appended to a session (a copy of one, in a directory of its own: the corpus is never
            written), then ``Indexer.update([DIR, COPY_DIR])`` (a stat of every file, the new bytes indexed):
            median and max of 10
query       ``hits.search(...)`` for 20 hits of each fixed query, warm, 5 rounds: median and p95 of all, wall
            and CPU time (CPU varies less on a shared machine)
first hit   ``python -m sessionview search WORD DIR --limit 1`` from a cold interpreter: time until the first
            line of output, median of 5, and its CPU time until then (the index is current; the search still
            stats every file); beside it a bare interpreter's first line. Bytecode
            is compiled once first (to a temporary ``PYTHONPYCACHEPREFIX``), as for an installed package
scan        beside them: ``grep -c WORD`` over every file (per query word), and ``orjson.loads`` of every line

Stdlib only, besides the project itself and orjson.
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
GEN = os.path.join(REPO, "..", "shared", "bench", "gen_session.py")
if not os.path.exists(GEN):
    GEN = "/work/shared/bench/gen_session.py"
sys.path.insert(0, REPO)

QUERIES = ["error", "traceback", "deploy.sh", '"retry build"', "pars*", "yaml -error", "lockfile", "timeout signal",
           "rebase", '"connection refused"', "epoll", "flaky"]
SIZES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    return int(float(t[:-1]) * SIZES[t[-1]]) if t[-1] in SIZES else int(t)


def generate(data: str, total: int, files: int) -> list[str]:
    os.makedirs(data, exist_ok=True)
    each = total // files
    paths = []
    for k in range(1, files + 1):
        p = os.path.join(data, f"s{k:02d}.jsonl")
        if not os.path.exists(p):
            subprocess.run([sys.executable, GEN, "--bytes", str(each), "--seed", str(k), "--out", p], check=True,
                           stdout=subprocess.DEVNULL)
        paths.append(p)
    return paths


def warm(paths: list[str]) -> int:
    total = 0
    for p in paths:
        with open(p, "rb") as f:
            while chunk := f.read(8 << 20):
                total += len(chunk)
    return total


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and every process under it, shared pages split between those sharing them
    (PSS, from /proc/PID/smaps_rollup: a forked child shares its parent's interpreter; 0 where unreadable)."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0) * 1024
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def run_child(argv: list[str], env: dict) -> tuple[float, float, int, float, float]:
    """``(wall s, peak RSS MiB, exit code, CPU s, peak summed RSS MiB)``; CPU (user + system) counts the
    child's own waited-for children too (the build's second writer, or its forked extractor); the peak RSS
    is the largest one process had (``wait4``), the summed one that of all its processes together (PSS),
    sampled every 20 ms."""
    import threading

    t = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    sampler.join()
    return (time.perf_counter() - t, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime,
            peak[0] / (1 << 20))


def first_line_time(argv: list[str], env: dict, cpu: list[float] | None = None) -> float:
    """Seconds to the first line of output; appends the process's CPU seconds until it was killed to ``cpu``."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    proc.stdout.readline()
    elapsed = time.perf_counter() - t
    proc.kill()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = -9
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)
    return elapsed


def p95(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--total", default="1G")
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--data-dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    total = parse_size(args.total)
    data = args.data_dir or os.path.join(os.environ.get("SV_BENCH_DIR") or os.path.join(HERE, "data"), f"index-{args.total}")
    paths = generate(data, total, args.files)
    size = warm(paths)
    lines = 0
    import orjson

    t = time.perf_counter()
    c = time.process_time()
    for p in paths:
        with open(p, "rb") as f:
            for raw in f:
                orjson.loads(raw)
                lines += 1
    orjson_s = time.perf_counter() - t
    orjson_cpu = time.process_time() - c
    grep = {}
    for q in ["error", "traceback", "lockfile", "rebase"]:
        t = time.perf_counter()
        subprocess.run(["grep", "-c", q, *paths], stdout=subprocess.PIPE)  # not /dev/null: GNU grep stops at the first match then
        grep[q] = time.perf_counter() - t
    out: dict = {"bytes": size, "files": len(paths), "lines": lines, "orjson_s": orjson_s, "orjson_cpu_s": orjson_cpu, "grep_s": grep}
    print(f"{len(paths)} files, {size / 1e9:.2f} GB, {lines:,} lines; orjson every line {orjson_s:.2f} s (CPU {orjson_cpu:.2f} s); "
          f"grep -c {statistics.median(grep.values()):.2f} s (median of {len(grep)} words)", flush=True)

    tmp = tempfile.mkdtemp(prefix="sv-bench-index-")
    index = os.path.join(tmp, "index.sqlite")
    env = dict(os.environ, SESSIONVIEW_INDEX=index, PYTHONPATH=REPO)
    cli = [sys.executable, "-m", "sessionview"]
    load_before = os.getloadavg()[0]
    wall, rss, code, cpu, summed = run_child([*cli, "index", data, "-q"], env)
    files = [os.path.join(tmp, n) for n in os.listdir(tmp) if n.startswith("index.sqlite")]
    out.update(build_s=wall, build_cpu_s=cpu, build_rss_mib=rss, build_rss_summed_mib=summed, build_exit=code,
               build_over_orjson=wall / orjson_s, build_loadavg_before=load_before,
               index_bytes=sum(os.path.getsize(f) for f in files if os.path.isfile(f)), index_files=len(files))
    print(f"build: {wall:.1f} s ({wall / orjson_s:.1f}x the orjson pass; CPU {cpu:.1f} s), peak RSS {rss:.0f} MiB "
          f"(all its processes together {summed:.0f} MiB), index {out['index_bytes'] / 1e6:.0f} MB in {len(files)} files "
          f"(exit {code}; load {load_before:.1f} before)", flush=True)

    os.environ["SESSIONVIEW_INDEX"] = index
    from sessionview.core.index import hits
    from sessionview.core.index.indexer import Indexer
    from sessionview.core.index.query import parse
    from sessionview.core.index.sqlite import SqliteBackend

    backend = SqliteBackend(index)
    ix = Indexer(backend)
    ix.update([data])
    # the appends go to a copy (the corpus is shared and never written): one more session, in its own directory
    mine = os.path.join(tmp, "appended")
    os.makedirs(mine)
    target = os.path.join(mine, "s-append.jsonl")
    subprocess.run(["cp", "--reflink=auto", paths[len(paths) // 2], target], check=True)
    ix.update([mine])
    appends = []
    for i in range(10):
        with open(target, "ab") as f:
            f.write(json.dumps({"role": "user", "content": f"appended line {i} with okapi{i}"}).encode() + b"\n")
        t = time.perf_counter()
        s = ix.update([data, mine])
        appends.append(time.perf_counter() - t)
        assert s.appended == 1 and s.docs == 1, s
    assert [h.n for h in hits.search(backend, parse("okapi9"))], "the appended line is not found"
    out.update(append_median_ms=statistics.median(appends) * 1000, append_max_ms=max(appends) * 1000)
    print(f"append: median {out['append_median_ms']:.1f} ms, max {out['append_max_ms']:.1f} ms", flush=True)

    lat: list[float] = []
    lat_cpu: list[float] = []
    per: dict[str, list[float]] = {q: [] for q in QUERIES}
    counts = {}
    for _ in range(5):
        for q in QUERIES:
            t = time.perf_counter()
            c = time.process_time()
            found = [h for _, h in zip(range(20), hits.search(backend, parse(q)), strict=False)]
            lat_cpu.append(time.process_time() - c)
            dt = time.perf_counter() - t
            lat.append(dt)
            per[q].append(dt)
            counts[q] = len(found)
    out.update(query_median_ms=statistics.median(lat) * 1000, query_p95_ms=p95(lat) * 1000,
               query_cpu_median_ms=statistics.median(lat_cpu) * 1000, query_cpu_p95_ms=p95(lat_cpu) * 1000,
               per_query_ms={q: statistics.median(v) * 1000 for q, v in per.items()}, hits=counts)
    print(f"query: median {out['query_median_ms']:.1f} ms, p95 {out['query_p95_ms']:.1f} ms "
          f"(p95 {out['query_p95_ms'] / 1000 / orjson_s * 100:.1f}% of the orjson pass); CPU median "
          f"{out['query_cpu_median_ms']:.1f} ms, p95 {out['query_cpu_p95_ms']:.1f} ms", flush=True)
    for q in QUERIES:
        print(f"  {q:24} {out['per_query_ms'][q]:7.1f} ms  {counts[q]} hits", flush=True)

    # a cold interpreter, but with compiled bytecode as an installed package has (this environment may set
    # PYTHONDONTWRITEBYTECODE): the caches go to a temporary prefix, warmed by one run first
    cold = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cold["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    first_line_time([*cli, "search", "traceback", data, "--limit", "1"], cold)
    first_cpu: list[float] = []
    firsts = [first_line_time([*cli, "search", "traceback", data, "--limit", "1"], cold, first_cpu) for _ in range(5)]
    bare = statistics.median(first_line_time([sys.executable, "-c", "print()"], cold) for _ in range(5))
    out.update(first_hit_median_s=statistics.median(firsts), first_hit_max_s=max(firsts),
               first_hit_cpu_median_s=statistics.median(first_cpu), bare_interpreter_s=bare)
    print(f"first hit from a cold CLI: median {out['first_hit_median_s']:.3f} s, max {out['first_hit_max_s']:.3f} s "
          f"(CPU median {out['first_hit_cpu_median_s']:.3f} s; a bare interpreter's first line {bare:.3f} s)", flush=True)
    backend.close()
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = -1.0
    out["loadavg_1m"] = load
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
