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

Results: a markdown table on stdout, JSON per run under ``bench/data/results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.environ.get("SV_SHARED_BENCH") or os.path.join(REPO, "..", "shared", "bench")


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


def viewers(data: str, names: list[str]) -> dict[str, dict]:
    sv = shutil.which("sessionview") or f"{shlex.quote(sys.executable)} -m sessionview"
    out: dict[str, dict] = {}
    if "sessionview" in names:
        out["sessionview"] = {"cmd": f"{sv} {{file}}", "ready_absent": "indexing"}
    if any(n.startswith("toolong") for n in names):
        venv = ensure_toolong(data)
        if "toolong" in names:
            out["toolong"] = {"cmd": f"{venv}/bin/tl {{file}}", "ready_absent": "Scanning", "timeout": 20}
        if "toolong-json" in names:
            out["toolong-json"] = {
                "cmd": f"{venv}/bin/python {SHARED}/toolong_jsononly.py {{file}}",
                "ready_absent": "Scanning",
            }
    if "textual-floor" in names:
        out["textual-floor"] = {"cmd": f"{shlex.quote(sys.executable)} {SHARED}/textual_floor.py {{file}}"}
    return out


def run_one(label: str, spec: dict, path: str, runs: int, tail: int, idle: float, out: str) -> dict:
    cmd = [
        sys.executable, os.path.join(SHARED, "tui_timing.py"),
        "--label", label, "--cmd", spec["cmd"], "--file", path, "--runs", str(runs),
        "--out", out, "--timeout", str(spec.get("timeout", 120)),
    ]
    if spec.get("ready_absent"):
        cmd += ["--ready-absent", spec["ready_absent"]]
    if tail:
        tail_file = path.replace(".jsonl", f"-tail-{label}.jsonl")
        if os.path.exists(tail_file):
            os.unlink(tail_file)
        cmd += ["--tail", str(tail), "--tail-file", tail_file]
    if idle:
        cmd += ["--idle-s", str(idle)]
    subprocess.run(cmd, stdout=subprocess.DEVNULL)
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
    a = ap.parse_args()
    if not shutil.which("tmux"):
        sys.exit("bench_tui.py needs tmux (apt-get install tmux)")
    os.makedirs(os.path.join(a.data_dir, "results"), exist_ok=True)
    # An installed package has its bytecode compiled; an editable checkout may not (PYTHONDONTWRITEBYTECODE),
    # and compiling ~40 modules at every start would be measured as start-up time.
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(REPO, "sessionview")], check=False)
    sizes = [s.strip() for s in a.sizes.split(",") if s.strip()]
    table = viewers(a.data_dir, [v.strip() for v in a.viewers.split(",")])
    rows = []
    for i, size in enumerate(sizes):
        path = ensure_file(a.data_dir, size)
        for label, spec in table.items():
            out = os.path.join(a.data_dir, "results", f"{label}-{size}.json")
            s = run_one(label, spec, path, a.runs, a.tail if i == 0 else 0, a.idle, out)
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
    print("| size | viewer | first screen | ready | peak RSS (tree) | idle CPU | tail median / p95 | errors |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
