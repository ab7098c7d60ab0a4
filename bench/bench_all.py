#!/usr/bin/env python3
"""Every row of issue 14 in one run: sessionview and each row's floor, measured in the same process tree.

| row | sessionview | floor |
|---|---|---|
| edit, delete, truncate, compact | ``sessionview edit|delete|truncate|compact`` on a fresh copy | ``cp`` of the file, then ``fsync`` |
| check | ``sessionview check FILE``: wall, peak RSS | orjson over every line (a subprocess): wall, peak RSS |
| full parse | every record viewed (``JsonlSession.view``), in a subprocess | orjson over every line |
| show, first record | ``sessionview show FILE``: launch to the first record on stdout | (target 0.2 s) |
| show, whole | ``sessionview show FILE > /dev/null``: wall, and CPU (user + system) | orjson over every line (target 2×) |
| first screen | ``sessionview FILE`` under ``../shared/bench/tui_timing.py``, on a copy touched at launch (live): wall, CPU | ``../shared/bench/textual_floor.py``; toolong too |
| ready | the same, until the index is complete | |
| tail latency | the same, ``--tail N`` on a copy, once the stats are in too | the same for the floor |
| following | ``--tail`` while ``gen_session.py --append-rate 20 --torn-prob 0.3`` appends: CPU of the tree, peak RSS | the same for the floor |

    python bench/bench_all.py                                  # 1G, writes bench/data/bench_all.json
    python bench/bench_all.py --size 100M --rows edit,check --runs 3
    python bench/bench_all.py --repo /work/main --json before.json  # another checkout's sessionview

The data files go to ``--data-dir`` (default ``$SV_BENCH_DIR`` or ``bench/data``); the sessions are made by
``../shared/bench/gen_session.py`` (seed 42). toolong is installed into its own venv under the data
directory (``pip install toolong==1.5.0``) unless ``--toolong PATH`` names a ``tl`` or ``--no-toolong``.
Page cache warm (each file is read whole right before its timed pair: the kernel here pages cold memory
out); each figure is the median of ``--runs`` (min–max kept in the JSON), and every sample is taken right after a sample of its floor (the first screen: in rounds, sessionview and the floor taking turns to go first), so a change in the machine's load between rows moves both. The ops
work on copies in ``--work-dir`` (default: a fresh directory under ``$TMPDIR``; never the data directory, which
may be shared): a fresh state directory, the copy's mtime set an hour back (an op first waits for a file
modified in the last second to settle), its inode left alone for ``--settle`` seconds (a session at rest: a save
proves a file unchanged by its stat only when its ctime is older than 2 s, and hashes it otherwise), and
``sync`` before every timed write so it pays only for its own. The floor's ``cp`` waits the same ``--settle``
seconds first, so both write their GiB into memory left alone as long (on a VM that reports free pages to its
host, memory freed seconds ago costs several times more to touch than memory freed just now); ``--prefault 1536``
touches and frees that much memory right before each sample of either side, so that both write into memory just
used (the op's own cost, without the VM's). The ops rows also
give the CPU time (user + system) of sessionview and of ``cp``.
"""

from __future__ import annotations

import argparse
import json
import os
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

NEUTRAL = "/"  # the working directory of every measured process: ``python -m`` puts it first on sys.path

ORJSON_FLOOR = r"""
import sys, orjson
loads = orjson.loads
n = bad = 0
with open(sys.argv[1], "rb") as f:
    rest = b""
    while True:
        chunk = f.read(16 << 20)
        if not chunk:
            break
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        for line in lines:
            n += 1
            try:
                loads(line)
            except orjson.JSONDecodeError:
                bad += 1
    if rest:
        n += 1
print(n, bad)
"""

FULL_PARSE = r"""
import sys
from sessionview.core.session import JsonlSession
s = JsonlSession.load(sys.argv[1], digest=False)
for n in range(1, len(s) + 1):
    s.view(n, keep=False)
print(len(s))
"""


def gen(data: str, size: str) -> str:
    path = os.path.join(data, f"s{size}-seed42.jsonl")
    if not os.path.exists(path):
        print(f"generating {path} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, os.path.join(SHARED, "gen_session.py"), "--bytes", size, "--seed", "42", "--out", path], check=True)
    return path


def timed(cmd: list[str], *, env: dict | None = None, stdout=subprocess.DEVNULL, check: bool = True) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MiB, wait4) and exit status of ``cmd``."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE, cwd=NEUTRAL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if check and p.returncode not in (0, 1):
        raise RuntimeError(f"{cmd}: exit {p.returncode}: {err[-500:]}")
    return wall, usage.ru_maxrss / 1024, p.returncode


def timed_cpu(cmd: list[str], *, env: dict | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, wait4) and exit status of ``cmd``."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=NEUTRAL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if code not in (0, 1):
        raise RuntimeError(f"{cmd}: exit {code}: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, code


def _cpu_timed(cmd: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system of ``cmd`` and the children it waited for) of ``cmd``."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=NEUTRAL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise RuntimeError(f"{cmd}: exit {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


def stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


class Bench:
    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.data = a.data_dir
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = a.repo + (os.pathsep + self.env["PYTHONPATH"] if self.env.get("PYTHONPATH") else "")
        self.sv = [sys.executable, "-m", "sessionview"]
        self.results: dict = {"size": a.size, "repo": a.repo, "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                              "load_before": os.getloadavg(), "rows": {}}
        self.path = gen(self.data, a.size)
        self.work = a.work_dir or tempfile.mkdtemp(prefix="sv-bench-")  # copies that are written: never the data dir
        os.makedirs(self.work, exist_ok=True)
        self.scratch = tempfile.mkdtemp(prefix="sv-bench-", dir=a.scratch)  # the screen rows' copies and results
        self.orjson_samples: list[tuple[float, float]] = []

    def row(self, name: str, sv: dict, floor: dict | None, key: str = "median", target: float | None = None, note: str = "") -> None:
        ratio = sv[key] / floor[key] if floor and floor.get(key) else None
        self.results["rows"][name] = {"sessionview": sv, "floor": floor, "ratio": ratio, "target": target, "note": note}
        r = f"{ratio:.2f}×" if ratio is not None else ""
        print(f"{name}: {sv[key]:.3f} vs {floor[key] if floor else float('nan'):.3f} {r} {note}", file=sys.stderr, flush=True)

    # -- floors -------------------------------------------------------------------------------
    def cp_fsync(self, src: str) -> float:
        return self.cp_fsync_cpu(src)[0]

    def cp_fsync_cpu(self, src: str, quiet: float = 0.0) -> tuple[float, float]:
        """Wall seconds of ``cp`` and then ``fsync`` of the copy, and the CPU seconds of both; ``quiet``: seconds
        to wait first, as the op waits (memory freed that long ago costs more to touch again: see :meth:`ops`)."""
        dst = os.path.join(self.work, "floor-copy.jsonl")
        os.sync()
        time.sleep(quiet)
        prefault(self.a.prefault)
        warm(src)
        t = time.perf_counter()
        c = time.process_time()
        p = subprocess.Popen(["cp", src, dst])
        _, status, usage = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError("cp failed")
        fd = os.open(dst, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        wall = time.perf_counter() - t
        cpu = usage.ru_utime + usage.ru_stime + time.process_time() - c
        os.unlink(dst)
        return wall, cpu

    def orjson_once(self) -> tuple[float, float]:
        w, m, _ = timed([sys.executable, "-c", ORJSON_FLOOR, self.path])
        self.orjson_samples.append((w, m))
        return w, m

    def paired(self, cmd: list[str], check: bool = True) -> tuple[list[float], list[float], list[float], list[float]]:
        """``cmd`` and the orjson floor, alternately (the machine's load changes between them otherwise)."""
        walls, rss, fwalls, frss = [], [], [], []
        for _ in range(self.a.runs):
            warm(self.path)
            fw, fm = self.orjson_once()
            w, m, _ = timed(cmd, env=self.env, check=check)
            fwalls.append(fw)
            frss.append(fm)
            walls.append(w)
            rss.append(m)
        return walls, rss, fwalls, frss

    # -- rows ---------------------------------------------------------------------------------
    def turns(self) -> list[int]:
        """Record numbers of the user messages (each starts a turn)."""
        out = []
        with open(self.path, "rb") as f:
            for n, line in enumerate(f, 1):
                if line.startswith(b'{"role":"user"'):
                    out.append(n)
        return out

    def ops(self) -> None:
        users = self.turns()
        count = sum(1 for _ in open(self.path, "rb"))
        mid = users[len(users) // 2]
        nxt = users[len(users) // 2 + 1] - 1
        jobs = {
            "edit": ["edit", "{f}", str(count), "--content", "edited by bench_all"],
            "delete": ["delete", "{f}", f"{mid}:{nxt}"],
            "truncate": ["truncate", "{f}", "--keep", str(users[-1] - 1)],
            "compact": ["compact", "{f}", f"{mid}:{nxt}", "--summary", "a summary from bench_all"],
        }
        work = os.path.join(self.work, "op-copy.jsonl")
        floors: list[float] = []
        for name, args in jobs.items():
            walls, cpus, fcpus, backup_bytes = [], [], [], []
            for _ in range(self.a.runs):
                # The floor waits as long as the op does before it writes: this machine (a VM with free page
                # reporting) hands memory freed seconds ago back to its host, and touching it again costs
                # 1.0-2.2 s of system time per GiB against 0.3 s for memory freed just now (a `cp` of 1 GiB
                # right after an `rm` of 1 GiB, then after 3 s of sleep). Both write a new GiB of page cache.
                fw, fc = self.cp_fsync_cpu(self.path, quiet=self.a.settle)
                floors.append(fw)
                fcpus.append(fc)
                shutil.copyfile(self.path, work)
                old = time.time() - 3600  # not "modified just now": the ops wait a second for such a file to settle
                os.utime(work, (old, old))
                touched = time.monotonic()
                state = tempfile.mkdtemp(prefix="sv-state-", dir=self.work)
                env = dict(self.env, SESSIONVIEW_STATE_DIR=state)
                before = os.stat(work)
                os.sync()
                time.sleep(max(0.0, self.a.settle - (time.monotonic() - touched)))
                prefault(self.a.prefault)
                warm(work)  # (reading changes neither its ctime nor its mtime)
                w, cpu, rc = timed_cpu(self.sv + [a.replace("{f}", work) for a in args], env=env)
                if rc != 0:
                    raise RuntimeError(f"{name} refused (exit {rc})")
                walls.append(w)
                cpus.append(cpu)
                backup_bytes.append(_copied_bytes(state, before))
                shutil.rmtree(state)
            floor = stats(floors[-self.a.runs:])
            cpu_ratio = statistics.median(cpus) / statistics.median(fcpus) if statistics.median(fcpus) else None
            self.row(name, stats(walls), floor, target=2.0, note=f"backup bytes copied: {max(backup_bytes):,}; "
                     f"CPU {statistics.median(cpus):.2f} s vs cp {statistics.median(fcpus):.2f} s"
                     + (f" ({cpu_ratio:.1f}×)" if cpu_ratio else ""))
            self.results["rows"][name]["cpu"] = {"sessionview": stats(cpus), "floor": stats(fcpus), "ratio": cpu_ratio}
        os.unlink(work)
        if not self.a.work_dir:
            os.rmdir(self.work)

    def check(self) -> None:
        walls, rss, fwalls, frss = self.paired(self.sv + ["check", self.path], check=False)
        self.row("check", stats(walls), stats(fwalls), target=1.5)
        self.row("check peak RSS (MiB)", stats(rss), stats(frss), note="target ≤ 100 MB")

    def parse(self) -> None:
        walls, _, fwalls, _ = self.paired([sys.executable, "-c", FULL_PARSE, self.path])
        self.row("full parse", stats(walls), stats(fwalls), target=1.5)

    def show(self) -> None:
        firsts = []
        for _ in range(self.a.runs):
            t = time.perf_counter()
            p = subprocess.Popen(self.sv + ["show", self.path], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=NEUTRAL)
            assert p.stdout is not None
            got = b""
            while b"\n#2 " not in got and b"\n#3 " not in got:  # the first record printed whole
                chunk = os.read(p.stdout.fileno(), 65536)
                if not chunk:
                    break
                got += chunk
            firsts.append(time.perf_counter() - t)
            p.kill()
            p.wait()
        self.row("show, first record (s)", stats(firsts), None, note="target ≤ 0.2 s")
        walls, fwalls, cpus, fcpus = [], [], [], []
        for _ in range(self.a.runs):  # each sample right after one of its floor; CPU: user + system of the tree
            fw, fc = _cpu_timed([sys.executable, "-c", ORJSON_FLOOR, self.path])
            w, c = _cpu_timed(self.sv + ["show", self.path], env=self.env)
            walls.append(w)
            fwalls.append(fw)
            cpus.append(c)
            fcpus.append(fc)
        self.row("show, whole", stats(walls), stats(fwalls), target=2.0)
        self.row("show, whole: CPU (s)", stats(cpus), stats(fcpus), note="user + system, show's second process included")

    def tui(self) -> None:
        """The screen rows. Every viewer runs on copies in a scratch directory (``--scratch``), touched right
        before each launch (``live()``): a session modified in the last seconds counts as live and stays at its
        end once indexed, where a finished one moves to its first prompt (issue 12), so the harness could not
        see the end again for "ready" or the tail. Each viewer, the floor included, pays the same ``sh`` and
        ``touch``. sessionview is "ready" once its index is complete ("indexing" gone) and, for the tail and
        the following, once its stats are in too (the header's "~… tok" gone: at most 256 MiB, see
        ``STATS_AUTO_LIMIT``), so those rows measure following and not the end of opening."""
        if not shutil.which("tmux"):
            self.results["rows"]["tui"] = {"error": "no tmux"}
            return
        viewers = {
            "sessionview": {"cmd": live(f"{' '.join(map(shlex.quote, self.sv))} {{file}}"), "ready_absent": "indexing", "follow_ready_absent": "~… tok"},
            "textual-floor": {"cmd": live(f"{shlex.quote(sys.executable)} {SHARED}/textual_floor.py {{file}}")},
        }
        tl = self.toolong()
        if tl:
            viewers["toolong"] = {"cmd": live(f"{tl} {{file}}"), "ready_absent": "Scanning", "timeout": 30}
        small = self.scratch_copy(gen(self.data, self.a.tail_size), "tail")  # (the harness copies it again to append)
        first_file = self.scratch_copy(self.path, "first")
        out: dict = {}
        try:
            # The first screen in rounds, one launch of each viewer per round, sessionview and the floor taking
            # turns to go first (toolong last): the machine's drift and the state of its memory (a launch right
            # after another process freed a lot of it starts faster) then fall on both sides alike.
            firsts: dict[str, list[dict]] = {label: [] for label in viewers}
            for i in range(self.a.first_runs or self.a.runs):
                order = ["textual-floor", "sessionview"] if i % 2 == 0 else ["sessionview", "textual-floor"]
                for label in order + [v for v in viewers if v not in order]:
                    firsts[label].append(self.tui_run(label, viewers[label], first_file, 1, f"{label}-first-{i}"))
            # The tail and the following in rounds too (--follow-runs), sessionview and the floor taking turns to
            # go first: one 20 s sample of each was 1.22x in one run and 1.50x in the next on this machine.
            tails: dict[str, list[dict]] = {label: [] for label in viewers if label != "toolong"}
            follows: dict[str, list[dict]] = {label: [] for label in tails}
            bg = (f"{shlex.quote(sys.executable)} {SHARED}/gen_session.py --append-rate 20 --torn-prob 0.3 "
                  f"--duration {self.a.follow_s} --out {{file}}")
            for i in range(self.a.follow_runs):
                order = ["textual-floor", "sessionview"] if i % 2 == 0 else ["sessionview", "textual-floor"]
                for label in order:
                    spec = viewers[label]
                    follow_spec = {**spec, "ready_absent": spec.get("follow_ready_absent", spec.get("ready_absent"))}
                    tails[label].append(self.tui_run(label, follow_spec, small, 1, f"{label}-tail-{i}", tail=20))
                    follows[label].append(self.tui_run(label, follow_spec, small, 1, f"{label}-follow-{i}", tail=20, bg=bg,
                                                       idle=self.a.follow_s / 2))
            for label in viewers:
                out[label] = {"first": merged(firsts[label]), "tail": merged(tails.get(label, [])),
                              "follow": merged(follows.get(label, []))}
        finally:
            os.unlink(first_file)
            os.unlink(small)
        self.results["tui"] = out
        sv, fl = out["sessionview"], out["textual-floor"]

        def med(d: dict, *keys: str) -> dict | None:
            for k in keys:
                d = (d or {}).get(k) if isinstance(d, dict) else None
            return {"median": d} if isinstance(d, (int, float)) else (d if isinstance(d, dict) and "median" in d else None)

        pairs = [
            ("first screen (s)", med(sv, "first", "first_screen_s"), med(fl, "first", "first_screen_s"), 1.3),
            ("first screen: CPU (s)", med(sv, "first", "mem_first_screen", "sum_cpu_s"), med(fl, "first", "mem_first_screen", "sum_cpu_s"), 1.3),
            ("ready: index complete (s)", med(sv, "first", "ready_s"), None, None),
            ("tail latency, median (s)", med(sv, "tail", "tail", "median_s"), med(fl, "tail", "tail", "median_s"), 1.1),
            ("following: CPU (%)", med(sv, "follow", "tail_cpu_pct"), med(fl, "follow", "tail_cpu_pct"), 1.5),
            ("following: peak RSS (MiB)", med(sv, "follow", "mem_end", "sum_VmHWM_mib"), med(fl, "follow", "mem_end", "sum_VmHWM_mib"), None),
            ("first screen: peak RSS (MiB)", med(sv, "first", "mem_end", "sum_VmHWM_mib"), med(fl, "first", "mem_end", "sum_VmHWM_mib"), None),
        ]
        for name, a, b, target in pairs:
            if a is not None:
                self.row(name, a, b, target=target)
        t = med(out.get("toolong", {}), "first", "first_screen_s")
        if t is not None and pairs[0][1] is not None:
            self.row("first screen vs toolong (s)", pairs[0][1], t, note="toolong 1.5.0")

    def scratch_copy(self, path: str, tag: str) -> str:
        """A copy of ``path`` in the scratch directory (the shared data directory stays as it is)."""
        dst = os.path.join(self.scratch, f"{tag}-{os.path.basename(path)}")
        subprocess.run(["cp", "--reflink=auto", path, dst], check=True)
        return dst

    def toolong(self) -> str | None:
        if self.a.no_toolong:
            return None
        if self.a.toolong:
            return self.a.toolong
        venv = os.path.join(self.data, "tl-venv")
        tl = os.path.join(venv, "bin", "tl")
        if not os.path.exists(tl):
            try:
                subprocess.run([sys.executable, "-m", "venv", venv], check=True)
                subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "toolong==1.5.0"], check=True)
            except (OSError, subprocess.CalledProcessError) as exc:
                print(f"toolong could not be installed: {exc}", file=sys.stderr)
                return None
        return tl

    def tui_run(self, label: str, spec: dict, path: str, runs: int, tag: str, tail: int = 0, bg: str | None = None, idle: float = 0) -> dict:
        out = os.path.join(self.scratch, "results", f"{tag}.json")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        cmd = [sys.executable, os.path.join(SHARED, "tui_timing.py"), "--label", label, "--cmd", spec["cmd"], "--file", path,
               "--runs", str(runs), "--out", out, "--timeout", str(spec.get("timeout", 120)), "--socket", f"svbench-all-{os.getpid()}"]
        if spec.get("ready_absent"):
            cmd += ["--ready-absent", spec["ready_absent"]]
        if tail:
            tail_file = os.path.join(self.scratch, f"tail-{tag}.jsonl")
            if os.path.exists(tail_file):
                os.unlink(tail_file)
            cmd += ["--tail", str(tail), "--tail-file", tail_file, "--tail-runs", "1"]
        if bg:
            cmd += ["--bg-cmd", bg]
        if idle:
            cmd += ["--idle-s", str(idle)]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, env=self.env, cwd=NEUTRAL)
        if tail and os.path.exists(tail_file):
            os.unlink(tail_file)
        try:
            with open(out) as f:
                return json.load(f)["summary"]
        except (OSError, ValueError, KeyError):
            return {"errors": ["no result"]}


def merged(summaries: list[dict]) -> dict:
    """One summary of ``tui_timing.py`` for the runs of several (each a launch): every figure's median, min and
    max over them (a nested dict of figures: the median of each), their errors together."""
    out: dict = {}
    for key in {k for s in summaries for k in s}:
        vals = [s[key] for s in summaries if key in s]
        if key == "errors":
            out[key] = [e for v in vals for e in (v or [])]
        elif all(isinstance(v, dict) and "median" in v for v in vals):
            pts = [v["median"] for v in vals if isinstance(v.get("median"), (int, float))]
            out[key] = stats(pts) if pts else vals[0]
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            out[key] = stats(vals)
        elif all(isinstance(v, dict) for v in vals):
            sub: dict = {}
            for k in {k for v in vals for k in v}:
                nums = [v[k] for v in vals if isinstance(v.get(k), (int, float))]
                if nums:
                    sub[k] = statistics.median(nums)
            out[key] = sub
        else:
            out[key] = vals[0]
    return out


def live(cmd: str) -> str:
    """``cmd`` (with ``{file}``) run by a shell that first sets the file's mtime to now: the session counts as
    live when the viewer opens it."""
    return "sh -c " + shlex.quote('touch -c -- "$0" && exec "$@"') + " {file} " + cmd


PREFAULT = r"""
import mmap, sys
size = int(sys.argv[1]) << 20
m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, size, mmap.PAGESIZE):
    m[off] = 1
"""


def prefault(mib: int) -> None:
    """Touch ``mib`` MiB of fresh memory and free it (``--prefault``), right before a timed write: the write's new
    page cache then comes from memory just used, on either side, instead of memory the VM handed back to its host.
    In a child process that exits (touched here, it would count in the peak RSS of every later child: Linux
    carries ``ru_maxrss`` across fork and exec)."""
    if mib > 0:
        subprocess.run([sys.executable, "-c", PREFAULT, str(mib)], check=True)


def warm(path: str) -> None:
    """Read every byte of ``path`` (into one reused buffer), so that its pages are in the page cache and were
    just used: this machine's kernel pages cold memory out (DAMON ``pageout``), the page cache included, so a
    file left alone for seconds may be read from the disk again, by the floor or by the op, whichever comes."""
    buf = bytearray(8 << 20)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buf):
            pass


def _copied_bytes(state: str, replaced: os.stat_result) -> int:
    """Bytes the backups under ``state`` hold in inodes of their own (a hard link to the replaced file: 0)."""
    total = 0
    for d, _, names in os.walk(state):
        for n in names:
            if n.endswith(".bak"):
                st = os.stat(os.path.join(d, n))
                if (st.st_dev, st.st_ino) != (replaced.st_dev, replaced.st_ino):
                    total += st.st_blocks * 512
    return total


def table(res: dict) -> str:
    lines = ["| row | sessionview | floor | ratio | target |", "|---|---|---|---|---|"]
    for name, r in res["rows"].items():
        if "error" in r:
            lines.append(f"| {name} | {r['error']} | | | |")
            continue
        sv, fl = r["sessionview"], r["floor"]
        spread = f" ({sv['min']:.2f}–{sv['max']:.2f})" if "min" in sv and sv.get("n", 1) > 1 else ""
        ratio = f"{r['ratio']:.2f}×" if r["ratio"] is not None else ""
        target = f"≤ {r['target']}×" if r.get("target") else ""
        note = f" {r['note']}" if r.get("note") else ""
        lines.append(f"| {name} | {sv['median']:.3f}{spread} | {fl['median']:.3f} | {ratio} | {target}{note} |" if fl else
                     f"| {name} | {sv['median']:.3f}{spread} | | | {target}{note} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--tail-size", default="100M", help="the session followed for tail latency and the live agent")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rows", default="ops,check,parse,show,tui")
    ap.add_argument("--first-runs", type=int, default=9,
                    help="rounds of the first screen (each viewer launched once a round; 0: --runs): one launch of the same "
                    "code took 0.49-0.66 s in ten in a row on this machine, too wide for a median of 3")
    ap.add_argument("--follow-s", type=float, default=20.0, help="seconds the live agent appends")
    ap.add_argument("--follow-runs", type=int, default=3, help="rounds of the tail and the following (each viewer once a round)")
    ap.add_argument("--data-dir", default=os.environ.get("SV_BENCH_DIR") or os.path.join(HERE, "data"))
    ap.add_argument("--repo", default=REPO, help="the checkout whose sessionview is measured")
    ap.add_argument("--work-dir", help="where the ops' copies and state directories go (default: a new temporary directory)")
    ap.add_argument("--prefault", type=int, default=0, metavar="MIB",
                    help="before each timed sample of an op and of its cp floor, touch and free MIB MiB of memory "
                    "(default 0: off; 1536 takes the VM's cost of memory it handed back to its host out of both sides)")
    ap.add_argument("--settle", type=float, default=2.5, help="seconds an op's copy is left alone before the op (default 2.5)")
    ap.add_argument("--json", help="where the figures go (default DATA_DIR/bench_all.json)")
    ap.add_argument("--toolong", help="a toolong 'tl' to use instead of installing one")
    ap.add_argument("--no-toolong", action="store_true")
    ap.add_argument("--scratch", help="where the screen rows put their copies of the sessions and the harness's results "
                    "(default: a new directory under $TMPDIR, removed at the end; the data directory is only read)")
    a = ap.parse_args()
    a.repo = os.path.abspath(a.repo)
    os.makedirs(a.data_dir, exist_ok=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(a.repo, "sessionview")], check=False)
    b = Bench(a)
    rows = [r.strip() for r in a.rows.split(",")]
    for name in rows:
        if name == "ops":
            b.ops()
        elif name in ("check", "parse", "show"):
            getattr(b, name)()
        elif name == "tui":
            b.tui()
    shutil.rmtree(b.scratch, ignore_errors=True)
    b.results["orjson_samples"] = b.orjson_samples
    b.results["load_after"] = os.getloadavg()
    path = a.json or os.path.join(a.data_dir, "bench_all.json")
    with open(path, "w") as f:
        json.dump(b.results, f, indent=1)
    print(table(b.results))
    print(f"\nload average before {b.results['load_before'][0]:.1f}, after {b.results['load_after'][0]:.1f}; JSON: {path}")


if __name__ == "__main__":
    main()
