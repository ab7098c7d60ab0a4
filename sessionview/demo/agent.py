"""A simulated Brute agent for the demo: it writes a session the way Brute does.

It plays a small, coherent run (:data:`STORY`): the user asks for an option, the agent looks, edits, runs
the tests (one fails, with an error), fixes it and commits; then the next option. Each turn appends the
user's message, the assistant's tool calls, their results and a reply. The reply is written in two pieces with a pause between them, so a viewer sees a partial last line that
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

#: The run the agent plays, one feature at a time (``{flag}`` and ``{fmt}`` are the feature's): each turn is
#: the user's message, the tool calls with their results (``!`` marks a result that is an error), and the
#: reply. The answers follow from the results, and a failing test is fixed before it is committed.
FEATURES = [("--json", "JSON"), ("--csv", "CSV"), ("--markdown", "Markdown")]
STORY: list[tuple[str, list[tuple[str, dict, str]], str]] = [
    (
        "What does `todo list` print today? I'd like a {flag} option for scripts.",
        [("shell", {"command": "python -m todo list"}, "[ ] buy milk        due 2026-01-02\n[x] file taxes\n[ ] call the bank  due 2026-01-05")],
        "It prints one line per item: a checkbox, the title and the due date when there is one. "
        "I'll add `{flag}` to print the same items as {fmt}.",
    ),
    (
        "Go ahead.",
        [
            ("fs_read", {"path": "src/todo/cli.py", "limit": 40}, "def cmd_list(args):\n    for item in store.items():\n        print(item.line())\n"),
            ("fs_edit", {"path": "src/todo/cli.py", "old": "print(item.line())", "new": "print(render(items, args.format))"},
             "edited src/todo/cli.py (+9 -2)"),
        ],
        "`todo list {flag}` now goes through `render()`; the default output is unchanged. Shall I run the tests?",
    ),
    (
        "Yes, run them.",
        [("shell", {"command": "pytest -q"},
          "!error: exit status 1\nF.........\nFAILED tests/test_cli.py::test_list_{slug} - KeyError: 'due'\n1 failed, 11 passed in 0.31s")],
        "One test fails: an item without a due date has no `due` key, and the {fmt} renderer assumed it. "
        "I'll treat a missing date as empty.",
    ),
    (
        "OK, fix it.",
        [
            ("fs_edit", {"path": "src/todo/render.py", "old": "item['due']", "new": "item.get('due')"}, "edited src/todo/render.py (+1 -1)"),
            ("shell", {"command": "pytest -q"}, "............\n12 passed in 0.29s"),
        ],
        "Fixed: items without a due date render with an empty date. All 12 tests pass ✅",
    ),
    (
        "Commit it.",
        [("shell", {"command": "git commit -am 'list: add {flag}'"}, "[main {commit}] list: add {flag}\n 3 files changed, 31 insertions(+), 3 deletions(-)")],
        "Committed as `{commit}`: list: add {flag}.",
    ),
]
COMMITS = ["3f2c1a9", "8b41d07", "c09e5a2"]


def dumps(**fields: object) -> str:
    """A Brute line: keys in Brute's order, compact, raw UTF-8."""
    order = ("role", "content", "tool_calls", "tool_call_id", "reasoning")
    return json.dumps({k: fields[k] for k in order if k in fields}, ensure_ascii=False, separators=(",", ":"))


class SimulatedAgent(threading.Thread):
    def __init__(self, path: str, *, pace: float = 1.2, seed: int = 7, rewrite_every: int = 3, compact_every: int = 5) -> None:
        super().__init__(name="sessionview-demo-agent", daemon=True)
        self.path = path
        self.pace = pace
        self.rng = random.Random(seed)
        self.rewrite_every = rewrite_every
        self.compact_every = compact_every
        self.lines: list[str] = []
        self.turn = 0
        self.feature = 0  # which of FEATURES the story is on
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
        """Brute compacts: the system prompt, a summary of what was done, and the last turn."""
        done = "\n".join(f"- added `todo list {flag}` ({fmt}), tests pass, committed" for flag, fmt in FEATURES[: self.feature % len(FEATURES) + 1])
        summary = dumps(
            role="user",
            content=f"[compacted:summary] ## Objective\n- give `todo list` output formats for scripts\n## Work done\n{done}\n"
            "## Outstanding\n- nothing",
        )
        keep = self.lines[-4:]
        self.lines = [self.lines[0], summary, *keep] if self.lines else [summary]
        self.rewrite()

    def turn_lines(self, turn: int) -> tuple[str, list[tuple[str, dict, str]], str]:
        """The user's message, the tool calls and the reply of ``turn`` (1-based), with the feature's words."""
        ask, steps, reply = STORY[(turn - 1) % len(STORY)]
        flag, fmt = FEATURES[self.feature % len(FEATURES)]
        words = {"flag": flag, "fmt": fmt, "slug": flag.lstrip("-"), "commit": COMMITS[self.feature % len(COMMITS)]}

        def fill(value: object) -> object:
            if isinstance(value, str):
                return value.format(**words)
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            return value

        return str(fill(ask)), [(name, fill(args), str(fill(result))) for name, args, result in steps], str(fill(reply))  # type: ignore[misc]

    # -- the loop -------------------------------------------------------------------------------------
    def run(self) -> None:
        if not self.lines:
            self.lines = []
            with open(self.path, "w", encoding="utf-8") as f:
                first = dumps(role="system", content="You are Brute, a coding agent (simulated by the sessionview demo). Work in small steps.")
                f.write(first + "\n")
            self.lines.append(first)
        while self.sleep():
            self.turn += 1
            ask, steps, reply = self.turn_lines(self.turn)
            self.append(dumps(role="user", content=ask))
            for k, (name, args, result) in enumerate(steps):
                if not self.sleep(0.7 if k == 0 else 0.4):
                    return
                self.call_seq += 1
                cid = f"tc_{self.call_seq:03d}"
                thought = f"Use {name} to see for myself." if k == 0 else f"Then {name}."
                self.append(
                    dumps(
                        role="assistant",
                        content="",
                        tool_calls=[{"id": cid, "name": name, "arguments": args}],
                        reasoning={"blocks": [{"type": "text", "text": thought, "signature": "c2ln"}]},
                    )
                )
                if not self.sleep(0.5):
                    return
                self.append(dumps(role="tool", content=result[1:] if result.startswith("!") else result, tool_call_id=cid))
            if not self.sleep(0.5):
                return
            if not self.append_in_two_pieces(dumps(role="assistant", content=reply)):
                return
            if self.compact_every and self.turn % self.compact_every == 0:
                self.compact()
            elif self.rewrite_every and self.turn % self.rewrite_every == 0:
                self.rewrite()
            if self.turn % len(STORY) == 0:
                self.feature += 1  # committed: the next feature


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
