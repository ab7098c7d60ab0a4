#!/usr/bin/env python3
"""The directory of 50,000 session files: the app's session list, for one or more checkouts.

Makes (once, in ``--data-dir``; default ``$SV_BENCH_DIR/listing-50k`` or ``bench/data/listing-50k``) a tree of
``--files`` small sessions, seeded: mostly Brute JSONL of a few KB (a cheap in-script generator with the shapes
``../shared/bench/gen_session.py`` writes: a system prompt, user prompts, assistant text, ``shell``/``fs_read``
tool calls and their results; one process per file would take too long for 50k), plus copies of the other
formats' fixtures (``../shared/reference/fixtures``), in 100 directories of 500. mtimes are set one second
apart, so the newest file (the first row of the list, sorted by last change) is known: ``NEWEST``.

Then, for each checkout (``--repo``, repeatable; the measured process runs with cwd ``/`` and
``PYTHONPATH=REPO``), ``sessionview DIR`` under ``../shared/bench/tui_timing.py`` (tmux, 200x50), with HOME and
the XDG directories in a fresh temporary directory per launch (no ``config.toml`` ``[hosts]``, no index of the
user: the background full-text index starts from nothing, as for a new user; ``--no-index`` turns it off):

* **rows**: launch until the first row (``NEWEST``'s name) is on screen;
* **complete**: until the header says ``50,000 sessions`` (the scan is complete);
* **CPU**: user + system of the process tree at ``complete``, and after ``--idle`` more seconds (the
  describer and the background indexer at work), with the CPU share over those seconds;
* **peak RSS**: the largest VmHWM of the tree at the end.

There is no CLI that lists a local directory (``sessionview hosts`` lists ``[hosts]`` over SSH), so only the
app is measured. The checkouts alternate, run by run (``--runs`` rounds), and the 1-minute load average is
recorded with each sample.

    python bench/bench_listing.py --repo /tmp/list-before --repo /tmp/list-after --runs 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.environ.get("SV_SHARED_BENCH") or os.path.join(REPO, "..", "shared", "bench")
if not os.path.isdir(SHARED):
    SHARED = "/work/shared/bench"
FIXTURES = os.path.join(os.path.dirname(SHARED), "reference", "fixtures")
PER_DIR = 500
NEUTRAL = "/"
WORDS = ("agent build cache change commit config deploy epoll field file filter fork index install key list lock merge "
         "module option package patch path queue read request retry return rust scroll search session shell signal "
         "socket stream string table task test thread token tool tuple update value wheel worker write yaml").split()
NEWEST_NAME = "newest-session.jsonl"


def _text(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(n)).capitalize() + "."


def brute_session(rnd: random.Random, k: int) -> bytes:
    """A Brute JSONL session of a few KB: system, then turns of user / assistant with a tool call / tool / text."""
    lines = [{"role": "system", "content": "You are a coding agent. " + _text(rnd, rnd.randint(20, 60))}]
    for t in range(rnd.randint(2, 8)):
        lines.append({"role": "user", "content": f"Task {k}-{t}: " + _text(rnd, rnd.randint(5, 40))})
        for c in range(rnd.randint(0, 3)):
            cid = f"call_{k}_{t}_{c}"
            if rnd.random() < 0.5:
                call = {"id": cid, "name": "shell", "arguments": {"command": f"grep -rn {rnd.choice(WORDS)} src/"}}
            else:
                call = {"id": cid, "name": "fs_read", "arguments": {"path": f"src/{rnd.choice(WORDS)}.py"}}
            lines.append({"role": "assistant", "content": "", "tool_calls": [call]})
            out = "\n".join(f"src/{rnd.choice(WORDS)}.py:{rnd.randint(1, 999)}: " + _text(rnd, 8) for _ in range(rnd.randint(1, 12)))
            lines.append({"role": "tool", "content": out, "tool_call_id": cid})
        lines.append({"role": "assistant", "content": _text(rnd, rnd.randint(10, 80))})
    return b"".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for line in lines)


def ensure_tree(root: str, files: int, seed: int) -> str:
    """The tree (made once: a ``.done`` file marks it complete); returns the newest file's path."""
    done = os.path.join(root, ".done")
    newest = os.path.join(root, "d000", NEWEST_NAME)
    if os.path.exists(done):
        return newest
    print(f"making {files:,} sessions in {root} ...", file=sys.stderr, flush=True)
    shutil.rmtree(root, ignore_errors=True)
    rnd = random.Random(seed)
    fixtures = sorted(f for f in os.listdir(FIXTURES) if f.endswith((".jsonl", ".json"))) if os.path.isdir(FIXTURES) else []
    base = time.time() - files - 86400  # one second apart, the newest a day ago (none is live)
    paths = []
    for i in range(files):
        d = os.path.join(root, f"d{i // PER_DIR:03d}")
        os.makedirs(d, exist_ok=True)
        if i == files - 1:
            path, data = newest, brute_session(rnd, i)
        elif fixtures and i % 50 == 7:  # 2%: the other formats' fixtures, copied
            fx = fixtures[(i // 50) % len(fixtures)]
            path = os.path.join(d, f"f{i:05d}-{fx}")
            with open(os.path.join(FIXTURES, fx), "rb") as f:
                data = f.read()
        else:
            path, data = os.path.join(d, f"s{i:05d}.jsonl"), brute_session(rnd, i)
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
    for i, path in enumerate(paths):
        os.utime(path, (base + i, base + i))
    with open(done, "w") as f:
        f.write(f"{files} files, seed {seed}\n")
    return newest


def launch_cmd(repo: str, root: str, homes: str, no_index: bool = False) -> str:
    """A shell line: a fresh HOME and XDG dirs under ``homes``, cwd ``/``, PYTHONPATH the checkout, the app.
    ``no_index``: a config.toml that turns the background full-text index off."""
    py = shlex.quote(sys.executable)
    config = ('mkdir -p "$h/.config/sessionview" && echo "index_in_background = false" > "$h/.config/sessionview/config.toml" && '
              if no_index else "")
    script = (
        'h=$(mktemp -d "$0/home-XXXXXX") && mkdir -p "$h/.config" "$h/.local/share" "$h/.cache" "$h/.local/state" && '
        + config +
        'cd / && exec env HOME="$h" XDG_CONFIG_HOME="$h/.config" XDG_DATA_HOME="$h/.local/share" '
        'XDG_CACHE_HOME="$h/.cache" XDG_STATE_HOME="$h/.local/state" PYTHONPATH="$1" COLORTERM=truecolor '
        f'{py} -m sessionview "$2"'
    )
    return f"sh -c {shlex.quote(script)} {shlex.quote(homes)} {shlex.quote(repo)} {shlex.quote(root)}"


def run_once(repo: str, root: str, newest: str, files: int, idle: float, scratch: str, tag: str, no_index: bool = False) -> dict:
    out = os.path.join(scratch, f"{tag}.json")
    homes = tempfile.mkdtemp(prefix="homes-", dir=scratch)
    cmd = [sys.executable, os.path.join(SHARED, "tui_timing.py"), "--label", tag, "--cmd", launch_cmd(repo, root, homes, no_index),
           "--file", newest, "--marker", os.path.basename(newest), "--ready-present", f"{files:,} sessions",
           "--runs", "1", "--timeout", "120", "--idle-s", str(idle), "--settle-s", "0",
           "--socket", f"svbench-list-{os.getpid()}", "--out", out]
    load = os.getloadavg()[0]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, cwd=NEUTRAL, check=False)
    shutil.rmtree(homes, ignore_errors=True)
    try:
        with open(out) as f:
            r = json.load(f)["runs"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return {"error": "no result", "load": load}
    ready, end = r.get("mem_ready") or {}, r.get("mem_end") or {}
    return {"rows_s": r.get("first_screen_s"), "complete_s": r.get("ready_s"), "cpu_complete_s": ready.get("sum_cpu_s"),
            "cpu_end_s": end.get("sum_cpu_s"), "idle_cpu_pct": r.get("idle_cpu_pct"),
            "peak_rss_mib": end.get("top_VmHWM_mib"), "error": r.get("error"), "load": load,
            "load_after": os.getloadavg()[0]}


def summary(samples: list[dict]) -> dict:
    out = {}
    for key in ("rows_s", "complete_s", "cpu_complete_s", "cpu_end_s", "idle_cpu_pct", "peak_rss_mib", "load"):
        xs = [s[key] for s in samples if s.get(key) is not None]
        out[key] = {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)} if xs else None
    return out


def fmt(d: dict | None, unit: str = "", digits: int = 2) -> str:
    if not d:
        return "never"
    return f"{d['median']:.{digits}f}{unit} ({d['min']:.{digits}f}–{d['max']:.{digits}f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_data = os.path.join(os.environ["SV_BENCH_DIR"], "listing-50k") if os.environ.get("SV_BENCH_DIR") \
        else os.path.join(HERE, "data", "listing-50k")
    ap.add_argument("--data-dir", default=default_data, help="the tree of sessions (made once)")
    ap.add_argument("--repo", action="append", help="a checkout to measure (repeatable; default this one)")
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--runs", type=int, default=3, help="rounds; each runs every checkout once, in turn")
    ap.add_argument("--idle", type=float, default=5.0, help="seconds after the list is complete to measure CPU over")
    ap.add_argument("--no-index", action="store_true", help="turn the background full-text index off (config.toml)")
    ap.add_argument("--json", help="write the samples and summaries here")
    a = ap.parse_args()
    if not shutil.which("tmux"):
        sys.exit("bench_listing.py needs tmux")
    repos = [os.path.abspath(r) for r in (a.repo or [REPO])]
    newest = ensure_tree(a.data_dir, a.files, a.seed)
    for r in repos:  # compiled once, as an installed package is: compiling is not listing
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(r, "sessionview")], check=False)
    scratch = tempfile.mkdtemp(prefix="sv-bench-list-")
    samples: dict[str, list[dict]] = {r: [] for r in repos}
    try:
        for i in range(a.runs):
            for j, r in enumerate(repos):
                s = run_once(r, a.data_dir, newest, a.files, a.idle, scratch, f"run{i}-{j}", a.no_index)
                s["at"] = time.strftime("%H:%M:%S", time.gmtime())
                samples[r].append(s)
                print(f"{r} run {i + 1}: rows {s.get('rows_s')} complete {s.get('complete_s')} cpu {s.get('cpu_complete_s')}"
                      f" / {s.get('cpu_end_s')} idle {s.get('idle_cpu_pct')}% rss {s.get('peak_rss_mib')} MiB"
                      f" load {s['load']:.1f} {s.get('error') or ''}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    sums = {r: summary(samples[r]) for r in repos}
    print(f"| checkout | first rows | {a.files:,} sessions listed | CPU at listed | CPU {a.idle:g} s later | CPU share then "
          "| peak RSS | load |")
    print("|---|---|---|---|---|---|---|---|")
    for r in repos:
        s = sums[r]
        print(f"| {r} | {fmt(s['rows_s'], ' s')} | {fmt(s['complete_s'], ' s')} | {fmt(s['cpu_complete_s'], ' s')} | "
              f"{fmt(s['cpu_end_s'], ' s')} | {fmt(s['idle_cpu_pct'], ' %', 0)} | {fmt(s['peak_rss_mib'], ' MiB', 0)} | "
              f"{fmt(s['load'], '', 1)} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"files": a.files, "data_dir": a.data_dir, "idle_s": a.idle, "samples": samples, "summary": sums}, f, indent=1)


if __name__ == "__main__":
    main()
