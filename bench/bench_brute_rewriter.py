"""Write commands beside a Brute-style in-place rewriter: count the outcomes, and look for lost lines.

Brute's SessionLog persists a session by ``File.open(path, "w")`` (truncate, same inode) and one
``puts(JSON.generate(message.to_h))`` per message, rewriting the whole conversation every turn. This
script runs such a rewriter as a child process (``--rewriter``): each turn it loads the file as Brute
would (its view), adds the turn's messages (user, assistant with a tool call, tool result, assistant),
and rewrites the file in place. Meanwhile it runs N sessionview write commands (edit, delete, truncate,
compact, mixed) as subprocesses and prints how each ended.

Lost lines, as the rewriter sees them: every line it loads must be a whole Brute message (a torn line is
lost), and every line it wrote in one turn must be in its next view, unless a sessionview command that
could remove it (truncate) wrote the file in between. The sessionview commands only touch the "seed"
records at the start, so the rewriter's own lines can only go through truncate. When the commands are
done the rewriter makes one last turn and checks that the file is exactly what it wrote.

    python bench/bench_brute_rewriter.py                      # 60 commands beside the rewriter
    python bench/bench_brute_rewriter.py -n 12 --seed-lines 60 --json out.json

Target: no exit status 2, no lost line.
"""

from __future__ import annotations

import argparse
import collections
import fcntl
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def dumps(obj) -> str:  # JSON.generate: compact, raw UTF-8
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def seed_lines(count: int, pad: int) -> list[str]:
    out = []
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        out.append(dumps({"role": role, "content": f"[seed {i}] " + "Lorem ipsum dolor sit amet. " * pad}))
    return out


def turn_lines(k: int, pad: int) -> list[str]:
    cid = f"toolu_{k:05d}"
    return [
        dumps({"role": "user", "content": f"[turn {k}] Lis README.md et résume-le 📁"}),
        dumps({"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "name": "fs_read", "arguments": {"path": "README.md", "limit": 40}}]}),
        dumps({"role": "tool", "content": f"[turn {k}] " + "README line; 日本語 ✅\n" * pad, "tool_call_id": cid}),
        dumps({"role": "assistant", "content": f"[turn {k}] Le README décrit le projet en {pad} lignes."}),
    ]


# -- the rewriter (child process) -----------------------------------------------------------------


def rewriter(path: str, lock: str, stop: str, log: str, think: float, pad: int) -> int:
    """Brute's SessionLog in a loop. Appends one JSON object per turn to ``log``."""
    k = 0
    with open(log, "a", buffering=1) as journal:
        while True:
            last = os.path.exists(stop)  # the stop file asks for one last turn, then exit
            t_load = time.monotonic()
            with open(lock, "a") as lk:
                fcntl.flock(lk, fcntl.LOCK_SH)  # only for the checker's consistent reads, never held by sessionview
                with open(path, "r", encoding="utf-8", newline="") as f:
                    view = [ln for ln in f.read().split("\n") if ln.strip()]
            torn = []
            for ln in view:
                try:
                    obj = json.loads(ln)
                    if not isinstance(obj, dict) or "role" not in obj:
                        torn.append(ln[:80])
                except ValueError:
                    torn.append(ln[:80])
            time.sleep(think)  # the model call
            k += 1
            new = turn_lines(k, pad)
            messages = view + new
            t_write = time.monotonic()
            with open(lock, "a") as lk:
                fcntl.flock(lk, fcntl.LOCK_EX)
                with open(path, "w", encoding="utf-8") as f:  # truncate in place, like File.open(path, "w")
                    for m in messages:
                        f.write(m + "\n")  # puts: buffered like Ruby's IO
                t_done = time.monotonic()
            journal.write(json.dumps({"turn": k, "t_load": t_load, "t_write": t_write, "t_done": t_done,
                                      "view": view, "wrote": messages, "torn": torn}) + "\n")
            if last:
                with open(path, encoding="utf-8", newline="") as f:
                    final = [ln for ln in f.read().split("\n") if ln]
                journal.write(json.dumps({"final": final == messages}) + "\n")
                return 0


# -- the driver -----------------------------------------------------------------------------------


def commands(n: int, rng: random.Random, seed: int) -> list[list[str]]:
    out = []
    for i in range(n):
        kind = ["edit", "delete", "compact", "truncate"][i % 4]
        if kind == "edit":
            out.append(["edit", "{f}", str(rng.randint(1, max(1, seed // 4))), "--content", f"[seed edited {i}]"])
        elif kind == "delete":
            a = rng.randint(1, max(1, seed // 4))
            out.append(["delete", "{f}", f"{a}:{a + 1}"])
        elif kind == "compact":
            a = rng.randint(1, max(1, seed // 4))
            out.append(["compact", "{f}", f"{a}:{a + 2}", "--summary", f"[seed compacted {i}]"])
        else:
            out.append(["truncate", "{f}", "--keep", "{keep}"])
    return out


def count_lines(path: str) -> int:
    with open(path, "rb") as f:
        return sum(1 for ln in f.read().split(b"\n") if ln.strip())


def classify(rc: int, err: str) -> str:
    if rc == 0:
        return "written" if ": written" in err else "nothing to write"
    if rc == 1 and "another process is rewriting" in err:
        return "refused-rewriting"
    if rc == 1 and "conflict" in err:
        return "conflict"
    if rc == 1:
        return "refused-other"
    return f"other (exit {rc})"


def analyse(journal: list[dict], runs: list[dict]) -> dict:
    turns = [j for j in journal if "turn" in j]
    final = next((j["final"] for j in journal if "final" in j), None)
    torn = sum(len(t["torn"]) for t in turns)
    lost = []
    for prev, cur in itertools.pairwise(turns):
        present = collections.Counter(cur["view"])
        # a truncate that wrote between this turn's write and the next load may drop the rewriter's lines
        truncated = any(r["cmd"][0] == "truncate" and r["rc"] == 0 and ": written" in r["err"]
                        and r["t0"] < cur["t_load"] and r["t1"] > prev["t_write"] for r in runs)
        if truncated:
            continue
        for ln in prev["wrote"]:
            if "[seed" in ln:  # seed records are what the commands edit
                continue
            if present[ln] <= 0:
                lost.append(ln[:80])
            else:
                present[ln] -= 1
    return {"turns": len(turns), "torn": torn, "lost": len(lost), "lost_examples": lost[:5],
            "final_intact": final}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--commands", type=int, default=60, help="write commands to run (default 60)")
    ap.add_argument("--seed-lines", type=int, default=400, help="records at the start the commands edit")
    ap.add_argument("--pad", type=int, default=40, help="size factor of each message (default 40: ~1.5 MB files)")
    ap.add_argument("--think", type=float, default=0.02, help="seconds between a turn's load and its write")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    ap.add_argument("--dir", help="work directory (default: a temporary one)")
    ap.add_argument("--rewriter", nargs=6, metavar=("PATH", "LOCK", "STOP", "LOG", "THINK", "PAD"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rewriter:
        p, lock, stop, log, think, pad = args.rewriter
        return rewriter(p, lock, stop, log, float(think), int(pad))

    work = args.dir or tempfile.mkdtemp(prefix="sv-rewriter-")
    path = os.path.join(work, "session.jsonl")
    lock, stop, log = path + ".lock", path + ".stop", path + ".log"
    for p in (stop, log):
        if os.path.exists(p):
            os.unlink(p)
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(m + "\n" for m in seed_lines(args.seed_lines, args.pad)))
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("SESSIONVIEW_STATE_DIR", os.path.join(work, "state"))
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--rewriter", path, lock, stop, log,
                              str(args.think), str(args.pad)], env=env)
    rng = random.Random(42)
    runs = []
    try:
        while not os.path.exists(log) or os.path.getsize(log) == 0:  # the rewriter's first turn is done
            if child.poll() is not None:
                raise SystemExit("the rewriter died")
            time.sleep(0.01)
        for cmd in commands(args.commands, rng, args.seed_lines):
            keep = str(max(1, count_lines(path) - 3))
            argv_ = [a.replace("{f}", path).replace("{keep}", keep) for a in cmd]
            t0 = time.monotonic()
            r = subprocess.run([sys.executable, "-m", "sessionview", *argv_], capture_output=True, env=env, timeout=120)
            t1 = time.monotonic()
            err = r.stderr.decode("utf-8", "replace")
            runs.append({"cmd": argv_[:1] + argv_[2:], "rc": r.returncode, "err": err, "t0": t0, "t1": t1,
                         "outcome": classify(r.returncode, err)})
    finally:
        open(stop, "w").close()
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
            child.wait()
    with open(log, encoding="utf-8") as f:
        journal = [json.loads(ln) for ln in f if ln.strip()]
    figures = analyse(journal, runs)
    outcomes = collections.Counter(r["outcome"] for r in runs)
    codes = collections.Counter(r["rc"] for r in runs)
    figures.update({"commands": len(runs), "outcomes": dict(outcomes), "exit_codes": {str(k): v for k, v in codes.items()},
                    "exit_2": [r["err"].strip()[:200] for r in runs if r["rc"] == 2]})
    print(f"{len(runs)} write commands beside a Brute-style rewriter ({figures['turns']} rewrites of {path})")
    for k, v in sorted(outcomes.items()):
        print(f"  {k:<20} {v}")
    print("  exit codes:", ", ".join(f"{k}: {v}" for k, v in sorted(codes.items())))
    for e in figures["exit_2"]:
        print("  exit 2:", e)
    print(f"  torn lines seen by the rewriter: {figures['torn']}")
    print(f"  lost lines: {figures['lost']}" + (f" e.g. {figures['lost_examples'][0]}" if figures["lost"] else ""))
    print(f"  the rewriter's last write intact at the end: {figures['final_intact']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    ok = not figures["exit_2"] and not figures["lost"] and not figures["torn"] and figures["final_intact"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
