#!/usr/bin/env python3
"""Side-by-side TUI benchmark: sessionview against toolong, on the same files, in one run.

Uses the shared tmux harness (``../shared/bench/tui_timing.py``) and session generator
(``../shared/bench/gen_session.py``), both run as subprocesses. For each size it measures time to first
screen (the file's last message visible), peak memory, idle CPU and, on the smallest size, tail latency
(a line appended -> on screen) for:

- ``sessionview``  (this project, ``sessionview FILE``)
- ``toolong``      (stock toolong 1.5.0, ``tl FILE``; it hangs on long JSON lines, so it gets a short timeout)
- ``toolong-json`` (toolong with its access-log regexes removed: ``../shared/bench/toolong_jsononly.py``)
- ``textual-floor`` (a bare Textual app that reads only the last lines: ``../shared/bench/textual_floor.py``)

toolong is installed into its own venv (``bench/data/tl-venv``) with ``pip install toolong``.

    python bench/bench_tui.py                       # 10M,100M,1G, 3 runs each
    python bench/bench_tui.py --sizes 10M --runs 1 --viewers sessionview,toolong-json

Every viewer opens a copy of the session in a scratch directory, touched right before it starts, so that the
session counts as live (see ``live``). Results: a markdown table on stdout, JSON per run with ``--results``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.environ.get("SV_SHARED_BENCH") or os.path.join(REPO, "..", "shared", "bench")
if not os.path.isdir(SHARED):
    SHARED = "/work/shared/bench"


def ensure_file(data: str, size: str) -> str:
    path = os.path.join(data, f"s{size}-seed42.jsonl")
    if not os.path.exists(path):
        print(f"generating {path} ...", file=sys.stderr)
        subprocess.run(
            [sys.executable, os.path.join(SHARED, "gen_session.py"), "--bytes", size, "--seed", "42", "--out", path],
            check=True,
        )
    return path


def ensure_toolong(data: str) -> str:
    venv = os.path.join(data, "tl-venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(os.path.join(venv, "bin", "tl")):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "toolong==1.5.0"], check=True)
    return venv


def live(cmd: str) -> str:
    """``cmd`` run by a shell that first sets the file's mtime to now, so that the session counts as live."""
    return "sh -c " + shlex.quote('touch -c -- "$0" && exec "$@"') + " {file} " + cmd


def viewers(data: str, names: list[str]) -> dict[str, dict]:
    """Every viewer opens a scratch copy touched right before (``live``): a session modified in the last
    seconds is live and stays at its end once indexed, where a finished one moves to its first prompt (issue
    12) and the harness would never see the end again for "ready" or the tail. The floor pays the same."""
    sv = shutil.which("sessionview") or f"{shlex.quote(sys.executable)} -m sessionview"
    out: dict[str, dict] = {}
    if "sessionview" in names:
        out["sessionview"] = {"cmd": live(f"{sv} {{file}}"), "ready_absent": "indexing"}
    if any(n.startswith("toolong") for n in names):
        venv = ensure_toolong(data)
        if "toolong" in names:
            out["toolong"] = {"cmd": live(f"{venv}/bin/tl {{file}}"), "ready_absent": "Scanning", "timeout": 20}
        if "toolong-json" in names:
            out["toolong-json"] = {
                "cmd": live(f"{venv}/bin/python {SHARED}/toolong_jsononly.py {{file}}"),
                "ready_absent": "Scanning",
            }
    if "textual-floor" in names:
        out["textual-floor"] = {"cmd": live(f"{shlex.quote(sys.executable)} {SHARED}/textual_floor.py {{file}}")}
    return out


def run_one(label: str, spec: dict, path: str, runs: int, tail: int, idle: float, out: str, scratch: str) -> dict:
    cmd = [
        sys.executable, os.path.join(SHARED, "tui_timing.py"),
        "--label", label, "--cmd", spec["cmd"], "--file", path, "--runs", str(runs),
        "--out", out, "--timeout", str(spec.get("timeout", 120)), "--socket", f"svbench-tui-{os.getpid()}",
    ]
    if spec.get("ready_absent"):
        cmd += ["--ready-absent", spec["ready_absent"]]
    tail_file = os.path.join(scratch, f"tail-{label}.jsonl")
    if tail:
        cmd += ["--tail", str(tail), "--tail-file", tail_file]
    if idle:
        cmd += ["--idle-s", str(idle)]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, cwd="/")
    if os.path.exists(tail_file):
        os.unlink(tail_file)
    try:
        with open(out) as f:
            return json.load(f)["summary"]
    except (OSError, ValueError, KeyError):
        return {"errors": ["no result"]}


def fmt_s(d: dict | None) -> str:
    return f"{d['median']:.2f} s" if d else "never"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10M,100M,1G")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tail", type=int, default=20, help="tail probes on the smallest size (0: none)")
    ap.add_argument("--idle", type=float, default=3.0, help="seconds of idle CPU measurement")
    ap.add_argument("--viewers", default="sessionview,toolong,toolong-json,textual-floor")
    ap.add_argument("--data-dir", default=os.environ.get("SV_BENCH_DIR") or os.path.join(HERE, "data"))
    ap.add_argument("--scratch", help="where the copies go (default: a new directory under $TMPDIR, removed at the end)")
    ap.add_argument("--results", help="a directory to keep the harness's JSON per viewer and size in")
    a = ap.parse_args()
    if not shutil.which("tmux"):
        sys.exit("bench_tui.py needs tmux (apt-get install tmux)")
    scratch = tempfile.mkdtemp(prefix="sv-bench-tui-", dir=a.scratch)  # copies and results: the data directory is only read
    os.makedirs(os.path.join(scratch, "results"), exist_ok=True)
    # An installed package has its bytecode compiled; an editable checkout may not (PYTHONDONTWRITEBYTECODE),
    # and compiling ~40 modules at every start would be measured as start-up time.
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(REPO, "sessionview")], check=False)
    sizes = [s.strip() for s in a.sizes.split(",") if s.strip()]
    table = viewers(a.data_dir, [v.strip() for v in a.viewers.split(",")])
    rows = []
    for i, size in enumerate(sizes):
        path = os.path.join(scratch, os.path.basename(ensure_file(a.data_dir, size)))
        subprocess.run(["cp", "--reflink=auto", ensure_file(a.data_dir, size), path], check=True)
        for label, spec in table.items():
            out = os.path.join(a.results or os.path.join(scratch, "results"), f"{label}-{size}.json")
            s = run_one(label, spec, path, a.runs, a.tail if i == 0 else 0, a.idle, out, scratch)
            mem = (s.get("mem_end") or {}).get("sum_VmHWM_mib")
            tail = s.get("tail")
            rows.append(
                (size, label, fmt_s(s.get("first_screen_s")), fmt_s(s.get("ready_s")),
                 f"{mem:.0f} MiB" if mem else "n/a",
                 f"{s['idle_cpu_pct']:.1f} %" if "idle_cpu_pct" in s else "n/a",
                 f"{tail['median_s'] * 1000:.0f} / {tail['p95_s'] * 1000:.0f} ms" if tail else "",
                 "; ".join(str(e) for e in s.get("errors") or [])[:60])
            )
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
        os.unlink(path)
    shutil.rmtree(scratch, ignore_errors=True)
    print("| size | viewer | first screen | ready | peak RSS (tree) | idle CPU | tail median / p95 | errors |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
