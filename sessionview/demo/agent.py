"""A simulated Brute agent for the demo: it writes a session the way Brute does.

Each turn appends a user message, an assistant message with tool calls, their results and a reply. The
reply is written in two pieces with a pause between them, so a viewer sees a partial last line that
completes later. Every few turns the agent rewrites the whole file (truncate, then write) as Brute's
``SessionLog`` does at the end of a turn: usually with the same content plus the new messages (a viewer
should treat it as an append), and now and then after a compaction that replaces old messages with a
``[compacted:summary]`` marker (a viewer should reload and say the agent compacted it).

Stdlib only; runs in a thread (:class:`SimulatedAgent`) or as ``python -m sessionview.demo.agent PATH``.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time

TOOLS = [
    ("shell", {"command": "git status --short"}, " M src/app.py\n?? notes.md"),
    ("shell", {"command": "pytest -q tests/test_api.py"}, "........ 8 passed in 0.42s"),
    ("fs_read", {"path": "README.md", "limit": 20}, "# demo\n\nA small project used by the sessionview demo.\n"),
    ("grep", {"pattern": "TODO", "path": "src"}, "src/app.py:12: # TODO: handle the empty case\nsrc/db.py:40: # TODO: retry"),
    ("fs_write", {"path": "notes.md", "content": "- checked the API tests\n- two TODOs left\n"}, "wrote 44 bytes to notes.md"),
]
ASKS = [
    "What changed since the last commit?",
    "Run the API tests, please.",
    "Any TODOs left in src/?",
    "Summarise the README in one line.",
    "Write down what we did in notes.md 📝",
    "¿Puedes revisar el estado del repositorio?",
]
REPLIES = [
    "Two files changed: `src/app.py` is modified and `notes.md` is new.",
    "All 8 API tests pass ✅",
    "Two TODOs: an empty-case check in `src/app.py` and a retry in `src/db.py`.",
    "It is a small project used to show off sessionview.",
    "Done — `notes.md` lists what we checked and what is left.",
    "El repositorio tiene un archivo modificado y uno nuevo.",
]


def dumps(**fields: object) -> str:
    """A Brute line: keys in Brute's order, compact, raw UTF-8."""
    order = ("role", "content", "tool_calls", "tool_call_id", "reasoning")
    return json.dumps({k: fields[k] for k in order if k in fields}, ensure_ascii=False, separators=(",", ":"))


class SimulatedAgent(threading.Thread):
    def __init__(self, path: str, *, pace: float = 1.2, seed: int = 7, rewrite_every: int = 3, compact_every: int = 7) -> None:
        super().__init__(name="sessionview-demo-agent", daemon=True)
        self.path = path
        self.pace = pace
        self.rng = random.Random(seed)
        self.rewrite_every = rewrite_every
        self.compact_every = compact_every
        self.lines: list[str] = []
        self.turn = 0
        self.call_seq = 0
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()

    def sleep(self, factor: float = 1.0) -> bool:
        """Sleep about ``pace * factor`` seconds; False when asked to stop."""
        return not self._stop_event.wait(self.pace * factor * self.rng.uniform(0.6, 1.4))

    # -- writing --------------------------------------------------------------------------------------
    def append(self, *lines: str) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
        self.lines.extend(lines)

    def append_in_two_pieces(self, line: str) -> bool:
        cut = max(1, len(line) // 2)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line[:cut])
            f.flush()
            if not self.sleep(0.8):
                f.write(line[cut:] + "\n")
                self.lines.append(line)
                return False
            f.write(line[cut:] + "\n")
        self.lines.append(line)
        return True

    def rewrite(self) -> None:
        """Brute's SessionLog: File.open(path, "w") { write every message }."""
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in self.lines))

    def compact(self) -> None:
        keep = self.lines[-4:]
        summary = dumps(
            role="user",
            content=f"[compacted:summary] ## Objective\n- keep the demo repo tidy\n## Work done\n- {self.turn} turns so far\n## Outstanding\n- nothing",
        )
        self.lines = [self.lines[0], summary, *keep] if self.lines else [summary]
        self.rewrite()

    # -- the loop -------------------------------------------------------------------------------------
    def run(self) -> None:
        if not self.lines:
            self.lines = []
            with open(self.path, "w", encoding="utf-8") as f:
                first = dumps(role="system", content="You are Brute, a coding agent (simulated by the sessionview demo).")
                f.write(first + "\n")
            self.lines.append(first)
        while self.sleep():
            self.turn += 1
            i = self.rng.randrange(len(ASKS))
            self.append(dumps(role="user", content=ASKS[i]))
            if not self.sleep(0.7):
                return
            name, args, result = TOOLS[i % len(TOOLS)]
            self.call_seq += 1
            cid = f"tc_{self.call_seq:03d}"
            self.append(
                dumps(
                    role="assistant",
                    content="",
                    tool_calls=[{"id": cid, "name": name, "arguments": args}],
                    reasoning={"blocks": [{"type": "text", "text": f"Use {name} to answer.", "signature": "c2ln"}]},
                )
            )
            if not self.sleep(0.5):
                return
            self.append(dumps(role="tool", content=result, tool_call_id=cid))
            if not self.sleep(0.5):
                return
            if not self.append_in_two_pieces(dumps(role="assistant", content=REPLIES[i])):
                return
            if self.compact_every and self.turn % self.compact_every == 0:
                self.compact()
            elif self.rewrite_every and self.turn % self.rewrite_every == 0:
                self.rewrite()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m sessionview.demo.agent PATH [PACE]", file=sys.stderr)
        return 2
    agent = SimulatedAgent(args[0], pace=float(args[1]) if len(args) > 1 else 1.2)
    agent.start()
    try:
        while agent.is_alive():
            time.sleep(0.2)
    except KeyboardInterrupt:
        agent.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
