#!/usr/bin/env python3
"""Benchmark of the pure core (``sessionview.core``) on seeded synthetic sessions.

    python bench/bench_core.py [--sizes 10M,100M,1G] [--repeat 5] [--heavy-repeat 3] [--data-dir DIR]

Missing data files are generated first with ``../shared/bench/gen_session.py --bytes SIZE --seed 42`` (run
as a subprocess; the generator is not part of this repository). Files go to ``--data-dir``, else
``$SV_BENCH_DIR``, else ``bench/data/`` (git-ignored). Every file is read once before it is measured, so
all figures are for a warm page cache.

What is measured, per file (medians over the repeats):

index      ``Document.load(path)``: line offsets without parsing, in GB/s (10^9 bytes/s). Since the core takes
           the file's SHA-256 in the same pass (for safe saves), the scan alone is timed too, as
           ``Source.from_fd(fd, digest=False)``, when the core has that parameter. The floor is the same file
           read with 4 MiB ``os.pread`` calls and no newline scan.
rss        peak RSS of ``Document.load(path)`` in a fresh process: VmHWM after the load minus VmHWM of the
           same interpreter right after it imported the core (one process per repeat).
parse      ``JsonlSession.load(path)`` then ``session.parsed(n)`` for every record, against plain
           ``orjson.loads`` of every line read with ``for line in open(path, "rb")``. Also the slowest single
           ``parsed(n)`` call (what opening that record costs a viewer) and the peak RSS over the baseline.
tail       in a fresh process, from the path: ``tail_open.open_tail(path, count=1)``, a ``JsonlSession`` over that
           one-line document, and ``view()`` of the last record, whose text must start with ``[sv-end``.
           No full index is built. Also reports the bytes read (``/proc/self/io`` rchar) and the wall time
           of the whole process including interpreter start and imports.
check      wall time and peak RSS (``os.wait4``) of ``python -m sessionview check FILE``, a subprocess each
           time. If the CLI fails, the same work is timed through the core instead
           (``JsonlSession.load(path).check()``), so a broken CLI does not leave the column empty.

``--repo DIR`` measures the ``sessionview`` package of another checkout (e.g. a scratch copy with a proposed
change) against the same data. ``--only`` picks measurements, ``--json`` keeps the raw figures. Stdlib only,
besides the project itself (and orjson, which the core imports).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_GEN = os.path.join(os.path.dirname(REPO), "shared", "bench", "gen_session.py")
CHUNK = 4 * 1024 * 1024
MEASUREMENTS = ("index", "rss", "parse", "tail", "check")

TARGET_INDEX_GBPS = 2.0
TARGET_RSS_MIB = 100.0
TARGET_TAIL_MS = 50.0


# ------------------------------------------------------------------------------------------------
# helpers shared by the parent and the workers


def proc_status_kib(field: str) -> int:
    """A ``/proc/self/status`` field in KiB (VmHWM, VmRSS), or ru_maxrss as a fallback for VmHWM."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(field.encode() + b":"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def proc_rchar() -> int | None:
    try:
        with open("/proc/self/io", "rb") as f:
            for line in f:
                if line.startswith(b"rchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def warm(path: str) -> tuple[int, int, int]:
    """Read the whole file once (page cache); return (size, lines, longest line)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        pos = lines = longest = 0
        line_start = 0
        while True:
            chunk = os.pread(fd, CHUNK, pos)
            if not chunk:
                break
            find = chunk.find
            i = find(b"\n")
            while i != -1:
                lines += 1
                end = pos + i + 1
                longest = max(longest, end - line_start)
                line_start = end
                i = find(b"\n", i + 1)
            pos += len(chunk)
        if line_start < size:
            lines += 1
            longest = max(longest, size - line_start)
        return size, lines, longest
    finally:
        os.close(fd)


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


# ------------------------------------------------------------------------------------------------
# workers: each runs in its own interpreter and prints one JSON object on stdout


def worker_index(path: str, repeat: int) -> dict:
    import inspect

    import sessionview
    from sessionview.core.doc.document import Document, Source

    # Since the safe-save work, Source.from_fd takes the file's SHA-256 in the same pass by default;
    # ``digest=False`` is the newline scan alone. Older cores have no such parameter.
    has_digest = "digest" in inspect.signature(Source.from_fd).parameters
    warm(path)
    load, bare, floor, lines, size = [], [], [], 0, 0
    for _ in range(repeat):
        t = time.perf_counter()
        doc = Document.load(path)
        load.append(time.perf_counter() - t)
        lines = len(doc)
        size = doc.source.size
        doc.close()
        if has_digest:
            fd = os.open(path, os.O_RDONLY)
            t = time.perf_counter()
            Source.from_fd(fd, digest=False)
            bare.append(time.perf_counter() - t)
            os.close(fd)
        fd = os.open(path, os.O_RDONLY)
        t = time.perf_counter()
        pos = 0
        while True:
            chunk = os.pread(fd, CHUNK, pos)
            if not chunk:
                break
            pos += len(chunk)
        floor.append(time.perf_counter() - t)
        os.close(fd)
    return {"load_s": load, "no_digest_s": bare, "pread_floor_s": floor, "lines": lines, "size": size,
            "core": os.path.dirname(os.path.abspath(sessionview.__file__))}


def worker_rss(path: str) -> dict:
    import sessionview.core.doc.document as document
    import sessionview.core.doc.parse  # noqa: F401  (the core, as the app imports it)
    import sessionview.core.session  # noqa: F401

    base = proc_status_kib("VmHWM")
    t = time.perf_counter()
    doc = document.Document.load(path)
    elapsed = time.perf_counter() - t
    peak = proc_status_kib("VmHWM")
    lines = len(doc)
    doc.close()
    return {"base_kib": base, "peak_kib": peak, "delta_kib": peak - base, "lines": lines, "load_s": elapsed}


def worker_parse(path: str, repeat: int) -> dict:
    import orjson

    from sessionview.core.session import JsonlSession

    warm(path)
    base = proc_status_kib("VmHWM")
    core, statuses, fmt = [], {}, ""
    slowest = (0.0, 0, 0)  # seconds, record number, record size
    for _ in range(repeat):
        t = time.perf_counter()
        session = JsonlSession.load(path)
        statuses = {}
        clock = time.perf_counter
        for n in range(1, len(session) + 1):
            t1 = clock()
            st = session.parsed(n).status.value
            dt = clock() - t1
            if dt > slowest[0]:
                slowest = (dt, n, session.doc.record_size(n))
            statuses[st] = statuses.get(st, 0) + 1
        core.append(time.perf_counter() - t)
        fmt = session.format
        session.close()
        session.doc.close()
        del session
    core_peak = proc_status_kib("VmHWM")
    plain = []
    for _ in range(repeat):
        t = time.perf_counter()
        with open(path, "rb") as f:
            loads = orjson.loads
            for line in f:
                try:
                    loads(line)
                except orjson.JSONDecodeError:
                    pass
        plain.append(time.perf_counter() - t)
    return {
        "core_s": core,
        "orjson_s": plain,
        "statuses": statuses,
        "format": fmt,
        "core_rss_delta_kib": core_peak - base,
        "slowest_record": slowest,
    }


def worker_tail(path: str) -> dict:
    t_import = time.perf_counter()
    from sessionview.core.doc.document import Document
    from sessionview.core.session import JsonlSession
    from sessionview.core.tail_open import open_tail

    import_s = time.perf_counter() - t_import
    rchar0 = proc_rchar()
    t = time.perf_counter()
    opened = open_tail(path, count=1)
    try:
        session = JsonlSession(Document(opened.source, path=path))
        view = session.view(len(session))
        text = view.text
        elapsed = time.perf_counter() - t
    finally:
        opened.close()
    rchar1 = proc_rchar()
    return {
        "elapsed_s": elapsed,
        "import_s": import_s,
        "bytes_read": None if rchar0 is None or rchar1 is None else rchar1 - rchar0,
        "indexed_lines": opened.source.count,
        "whole": opened.whole,
        "format": session.format,
        "kind": view.kind.value,
        "role": view.role,
        "text_head": text[:40],
        "ok": text.startswith("[sv-end"),
    }


def worker_check_core(path: str) -> dict:
    from sessionview.core.session import JsonlSession

    base = proc_status_kib("VmHWM")
    t = time.perf_counter()
    session = JsonlSession.load(path)
    problems = session.check()
    elapsed = time.perf_counter() - t
    peak = proc_status_kib("VmHWM")
    session.doc.close()
    return {"elapsed_s": elapsed, "problems": len(problems), "format": session.format, "rss_delta_kib": peak - base}


def run_worker(argv: list[str]) -> None:
    kind, path = argv[0], argv[1]
    if kind == "index":
        out = worker_index(path, int(argv[2]))
    elif kind == "rss":
        out = worker_rss(path)
    elif kind == "parse":
        out = worker_parse(path, int(argv[2]))
    elif kind == "tail":
        out = worker_tail(path)
    elif kind == "check-core":
        out = worker_check_core(path)
    else:
        raise SystemExit(f"unknown worker {kind!r}")
    sys.stdout.write(json.dumps(out) + "\n")


# ------------------------------------------------------------------------------------------------
# the parent


CORE_REPO = REPO  # the checkout whose ``sessionview`` is measured (--repo)


def child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = CORE_REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def spawn(cmd: list[str], capture: bool = True) -> tuple[int, float, int, str, str]:
    """Run ``cmd``; return (exit code, wall seconds, child's peak RSS in KiB, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out if capture else subprocess.DEVNULL, stderr=err, cwd=CORE_REPO,
                                env=child_env())
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return proc.returncode, wall, usage.ru_maxrss, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")


def worker(kind: str, path: str, *args: object) -> tuple[dict, float]:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, path, *map(str, args)]
    code, wall, _, out, err = spawn(cmd)
    if code != 0:
        raise RuntimeError(f"worker {kind} failed ({code}): {err.strip()[-2000:]}")
    return json.loads(out.strip().splitlines()[-1]), wall


def ensure_file(data_dir: str, label: str, seed: int, gen: str) -> str:
    path = os.path.join(data_dir, f"s{label}-seed{seed}.jsonl")
    if os.path.exists(path):
        return path
    if not os.path.exists(gen):
        raise SystemExit(f"{path} is missing and the generator {gen} was not found (use --gen)")
    os.makedirs(data_dir, exist_ok=True)
    part = path + ".part"
    log(f"generating {path} (gen_session.py --bytes {label} --seed {seed})")
    subprocess.run([sys.executable, gen, "--bytes", label, "--seed", str(seed), "--out", part], check=True,
                   stdout=subprocess.DEVNULL)
    os.replace(part, path)
    return path


def log(msg: str) -> None:
    print(f"[bench_core {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def machine() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        import orjson

        orjson_version = orjson.__version__
    except ImportError:
        orjson_version = "missing"
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="minutes"),
        "nproc": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": model,
        "mem": mem,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "orjson": orjson_version,
        "kernel": platform.release(),
        "loadavg_start": os.getloadavg(),
    }


def measure(path: str, label: str, args: argparse.Namespace, which: set[str]) -> dict:
    res: dict = {"label": label, "path": path, "loadavg_before": os.getloadavg()}
    log(f"{label}: warming the page cache")
    size, lines, longest = warm(path)
    res.update(size=size, lines=lines, longest=longest)
    if "index" in which:
        log(f"{label}: index x{args.repeat}")
        r, _ = worker("index", path, args.repeat)
        res["index"] = r
    if "rss" in which:
        log(f"{label}: rss x{args.repeat} (fresh process each)")
        res["rss"] = [worker("rss", path)[0] for _ in range(args.repeat)]
    if "parse" in which:
        log(f"{label}: full parse x{args.heavy_repeat}")
        res["parse"], _ = worker("parse", path, args.heavy_repeat)
    if "tail" in which:
        log(f"{label}: last message x{args.repeat} (fresh process each)")
        runs = []
        for _ in range(args.repeat):
            r, wall = worker("tail", path)
            r["process_wall_s"] = wall
            runs.append(r)
        res["tail"] = runs
    if "check" in which:
        log(f"{label}: sessionview check x{args.heavy_repeat}")
        cli = []
        for _ in range(args.heavy_repeat):
            code, wall, maxrss, out, err = spawn([sys.executable, "-m", "sessionview", "check", "--", path])
            last = (out.strip().splitlines() or [""])[-1]
            cli.append({"exit": code, "wall_s": wall, "maxrss_kib": maxrss, "summary": last[-200:],
                        "stderr": err.strip()[-300:]})
            if code not in (0, 1):
                break  # the CLI is broken: once is enough to show it
        res["check_cli"] = cli
        core = []
        # The same work through the core, only when the CLI could not do it (so the column is never empty).
        for _ in range(args.heavy_repeat if all(x["exit"] not in (0, 1) for x in cli) else 0):
            r, wall = worker("check-core", path)
            r["process_wall_s"] = wall
            core.append(r)
        res["check_core"] = core
    res["loadavg_after"] = os.getloadavg()
    return res


# ------------------------------------------------------------------------------------------------
# report


def fmt_bytes(n: float) -> str:
    if n >= 2**30:
        return f"{n / 2**30:.2f} GiB"
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 2**10:.0f} KiB"


def spread(xs: list[float], scale: float = 1.0, unit: str = "", digits: int = 0) -> str:
    m = median(xs) * scale
    lo, hi = min(xs) * scale, max(xs) * scale
    return f"{m:,.{digits}f}{unit} ({lo:,.{digits}f}–{hi:,.{digits}f})"


def verdict(ok: bool) -> str:
    return "met" if ok else "**MISSED**"


def report(results: list[dict], info: dict, args: argparse.Namespace) -> str:
    out: list[str] = []
    w = out.append
    w(f"Machine: {info['nproc']} CPUs ({info['affinity']} usable), {info['cpu']}, {info['mem']} RAM, "
      f"{info['implementation']} {info['python']}, orjson {info['orjson']}, Linux {info['kernel']}. "
      f"Date: {info['date']}. Load average at start: {' / '.join(f'{x:.2f}' for x in info['loadavg_start'])}.")
    cores = {r["index"]["core"] for r in results if "index" in r}
    if os.path.abspath(args.repo) != REPO or any(c != os.path.join(REPO, "sessionview") for c in cores):
        w(f"Core measured from `{', '.join(sorted(cores)) or args.repo}` (not this checkout).")
    w(f"Repeats: {args.repeat} (index, rss, tail), {args.heavy_repeat} (parse, check); median shown, (min–max) after it. "
      "GB/s and MB/s are 10^9 and 10^6 bytes per second; RSS in MiB (2^20).")
    w("")
    w("| file | size | lines | longest line | load average before / after |")
    w("|---|---|---|---|---|")
    for r in results:
        la = " / ".join(f"{r[k][0]:.2f}" for k in ("loadavg_before", "loadavg_after") if k in r)
        w(f"| `{os.path.basename(r['path'])}` | {r['size']:,} B ({fmt_bytes(r['size'])}) | {r['lines']:,} | "
          f"{fmt_bytes(r['longest'])} | {la} |")
    w("")
    if any("index" in r or "rss" in r for r in results):
        w("**Indexing** (`Document.load`, offsets only) — target ≥ 2 GB/s; peak RSS at 1 GiB ≤ 100 MiB")
        w("")
        w("| size | `Document.load` ms | GB/s | index without digest (`Source.from_fd(fd, digest=False)`) GB/s | "
          "pread-only floor GB/s | peak RSS over baseline (MiB) | baseline (MiB) |")
        w("|---|---|---|---|---|---|---|")
        for r in results:
            cells = [r["label"]]
            if "index" in r:
                ix = r["index"]
                cells += [spread(ix["load_s"], 1e3, digits=1),
                          f"{r['size'] / median(ix['load_s']) / 1e9:.2f}",
                          f"{r['size'] / median(ix['no_digest_s']) / 1e9:.2f}" if ix.get("no_digest_s") else "n/a",
                          f"{r['size'] / median(ix['pread_floor_s']) / 1e9:.2f}"]
            else:
                cells += ["–"] * 4
            if "rss" in r:
                deltas = [x["delta_kib"] / 1024 for x in r["rss"]]
                cells += [spread(deltas, digits=1), f"{median([x['base_kib'] / 1024 for x in r['rss']]):.1f}"]
            else:
                cells += ["–"] * 2
            w("| " + " | ".join(cells) + " |")
        w("")
    if any("parse" in r for r in results):
        w("**Full parse** (`JsonlSession.load` + `session.parsed(n)` for every record) vs plain `orjson.loads` per line")
        w("")
        w("| size | core s | core lines/s | core MB/s | orjson s | orjson lines/s | orjson MB/s | core / orjson | "
          "slowest record | statuses | core RSS over baseline (MiB) |")
        w("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in results:
            if "parse" not in r:
                continue
            p = r["parse"]
            c, o = median(p["core_s"]), median(p["orjson_s"])
            st = ", ".join(f"{k} {v:,}" for k, v in sorted(p["statuses"].items()))
            w(f"| {r['label']} | {spread(p['core_s'], digits=2)} | {r['lines'] / c:,.0f} | {r['size'] / c / 1e6:,.0f} | "
              f"{spread(p['orjson_s'], digits=2)} | {r['lines'] / o:,.0f} | {r['size'] / o / 1e6:,.0f} | {c / o:.1f}x | "
              f"{p['slowest_record'][0] * 1e3:.0f} ms (#{p['slowest_record'][1]}, {fmt_bytes(p['slowest_record'][2])}) | "
              f"{st} ({p['format']}) | {p['core_rss_delta_kib'] / 1024:.0f} |")
        w("")
    if any("tail" in r for r in results):
        w("**Last message from the path, fresh process** (`open_tail(path, 1)` + `JsonlSession.view(last)`; "
          "no full index) — target < 50 ms at 1 GiB")
        w("")
        w("| size | time to last message, ms | bytes read | lines indexed | imports ms | whole process wall ms | "
          "text starts with |")
        w("|---|---|---|---|---|---|---|")
        for r in results:
            if "tail" not in r:
                continue
            t = r["tail"]
            ok = all(x["ok"] for x in t)
            br = median([x["bytes_read"] for x in t if x["bytes_read"] is not None] or [float("nan")])
            w(f"| {r['label']} | {spread([x['elapsed_s'] for x in t], 1e3, digits=2)} | {fmt_bytes(br)} | "
              f"{t[0]['indexed_lines']} | {median([x['import_s'] for x in t]) * 1e3:.0f} | "
              f"{median([x['process_wall_s'] for x in t]) * 1e3:.0f} | "
              f"`{t[0]['text_head'][:24]}` ({t[0]['format']} {t[0]['role']}){'' if ok else ' **(not the end marker!)**'} |")
        w("")
    if any("check_cli" in r for r in results):
        w("**`sessionview check FILE`** (subprocess wall time, peak RSS from wait4) and the same work through the core")
        w("")
        w("| size | CLI wall s | CLI peak RSS (MiB) | CLI result | core `JsonlSession.load().check()` s | "
          "core process wall s | core check RSS over baseline (MiB) | problems |")
        w("|---|---|---|---|---|---|---|---|")
        for r in results:
            if "check_cli" not in r:
                continue
            cli, core = r["check_cli"], r["check_core"]
            good = [x for x in cli if x["exit"] in (0, 1)]
            if good:
                cli_cells = [spread([x["wall_s"] for x in good], digits=2),
                             f"{median([x['maxrss_kib'] for x in good]) / 1024:.0f}",
                             f"exit {good[0]['exit']}: {good[0]['summary'][-60:]}".replace("|", "\\|")]
            else:
                msg = (cli[0]["stderr"] or cli[0]["summary"]).splitlines()[-1][:110].replace("|", "\\|")
                cli_cells = [f"{cli[0]['wall_s']:.2f} (failed)", "–", f"**exit {cli[0]['exit']}**: {msg}"]
            if core:
                core_cells = [spread([x["elapsed_s"] for x in core], digits=2),
                              f"{median([x['process_wall_s'] for x in core]):.2f}",
                              f"{median([x['rss_delta_kib'] for x in core]) / 1024:.0f}", str(core[0]["problems"])]
            else:
                core_cells = ["not needed (the CLI ran)"] + ["–"] * 3
            w(f"| {r['label']} | " + " | ".join(cli_cells + core_cells) + " |")
        w("")
    # targets
    big = [r for r in results if r["size"] >= 2**30 * 0.9]
    if not any(k in r for r in results for k in ("index", "rss", "tail")):
        return "\n".join(out) + "\n"
    w("**Targets**")
    w("")
    for r in results:
        if "index" in r:
            g = r["size"] / median(r["index"]["load_s"]) / 1e9
            w(f"- indexing ≥ {TARGET_INDEX_GBPS} GB/s at {r['label']}: {g:.2f} GB/s — {verdict(g >= TARGET_INDEX_GBPS)}")
    for r in big:
        if "rss" in r:
            m = max(x["delta_kib"] for x in r["rss"]) / 1024
            w(f"- peak RSS ≤ {TARGET_RSS_MIB:.0f} MiB while indexing {r['label']}: worst {m:.1f} MiB over baseline — "
              f"{verdict(m <= TARGET_RSS_MIB)}")
        if "tail" in r:
            m = median([x["elapsed_s"] for x in r["tail"]]) * 1e3
            ok = all(x["ok"] for x in r["tail"])
            w(f"- last message < {TARGET_TAIL_MS:.0f} ms at {r['label']}: median {m:.2f} ms — "
              f"{verdict(m < TARGET_TAIL_MS and ok)}")
    if not big and any("rss" in r or "tail" in r for r in results):
        w("- (the RSS and last-message targets are defined at 1 GiB, which was not measured)")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        run_worker(argv[1:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10M,100M,1G", help="comma-separated gen_session.py sizes (default 10M,100M,1G)")
    ap.add_argument("--repeat", type=int, default=5, help="repeats of index, rss and tail (default 5)")
    ap.add_argument("--heavy-repeat", type=int, default=3, help="repeats of the full parse and check (default 3)")
    ap.add_argument("--data-dir", default=os.environ.get("SV_BENCH_DIR") or os.path.join(HERE, "data"),
                    help="where the data files are (default $SV_BENCH_DIR or bench/data)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--gen", default=os.environ.get("SV_GEN_SESSION", DEFAULT_GEN), help="path of gen_session.py")
    ap.add_argument("--only", default=",".join(MEASUREMENTS),
                    help=f"comma-separated subset of {','.join(MEASUREMENTS)} (default: all)")
    ap.add_argument("--json", metavar="PATH", help="also write the raw measurements as JSON")
    ap.add_argument("--repo", default=REPO,
                    help="measure the sessionview package of another checkout, e.g. a scratch copy with a proposed "
                         "change (default: this repository)")
    args = ap.parse_args(argv)
    global CORE_REPO
    CORE_REPO = os.path.abspath(args.repo)
    which = {x.strip() for x in args.only.split(",") if x.strip()}
    unknown = which - set(MEASUREMENTS)
    if unknown:
        ap.error(f"unknown measurement(s): {', '.join(sorted(unknown))}")
    if args.repeat < 1 or args.heavy_repeat < 1:
        ap.error("repeats must be at least 1")
    labels = [s.strip() for s in args.sizes.split(",") if s.strip()]
    info = machine()
    paths = [(label, ensure_file(args.data_dir, label, args.seed, args.gen)) for label in labels]
    results = [measure(path, label, args, which) for label, path in paths]
    info["loadavg_end"] = os.getloadavg()
    text = report(results, info, args)
    sys.stdout.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "args": vars(args), "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
