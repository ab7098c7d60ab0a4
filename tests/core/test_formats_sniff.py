"""Format detection asks Brute's rule alone when the sample holds only messages of Brute's keys: the answer must be
the one of every rule in order, and the other formats' modules are not imported for it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from sessionview.core import formats

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EARLIER = [rule for rule in formats._REGISTRY[:-1] if rule[0] != "brute"]


def in_order(sample: list) -> str:
    """The adapter every rule in order picks (no shortcut)."""
    return formats._first_match(sample, formats._REGISTRY[:-1]).name


def samples() -> list[list]:
    rng = random.Random(14)
    calls = [
        [],
        [{"id": "c1", "name": "shell", "arguments": {"command": "ls"}}],
        [{"id": "c1", "name": "shell", "arguments": "{\"command\": \"ls\"}"}],
        [{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}],
        [{"id": "c1", "function": {"name": "shell", "arguments": {}}}],
        ["junk"],
        "not a list",
    ]
    contents = ["text", None, [], [{"type": "text", "text": "x"}], [{"type": "tool_use", "id": "t", "name": "n", "input": {}}],
                {"a": 1}, 3, [{"type": "image_url"}]]
    roles = ["user", "assistant", "tool", "system", "developer", "function", "robot", 7]
    extra = ["metadata", "type", "name", "refusal", "function_call", "sessionId", "payload", "timestamp", "id"]
    out = []
    for _ in range(3000):
        sample = []
        for _ in range(rng.randint(1, 6)):
            v: dict = {}
            if rng.random() < 0.95:
                v["role"] = rng.choice(roles)
            if rng.random() < 0.9:
                v["content"] = rng.choice(contents)
            if rng.random() < 0.4:
                v["tool_calls"] = rng.choice(calls)
            if rng.random() < 0.3:
                v["tool_call_id"] = "c1"
            if rng.random() < 0.2:
                v["reasoning"] = {"text": "why"}
            if rng.random() < 0.15:
                v[rng.choice(extra)] = rng.choice(["x", {"a": 1}, None])
            sample.append(v if rng.random() < 0.97 else rng.choice([[1], "s", 4]))
        out.append(sample)
    for f in sorted(FIXTURES.glob("*.jsonl")):
        head = f.read_bytes()[: formats.HEAD_BYTES]
        out.append(list(formats.head_values(head))[: formats.SAMPLE])
    return out


def test_the_shortcut_gives_the_answer_of_every_rule_in_order():
    taken = 0
    for sample in samples():
        assert formats.detect(sample).name == in_order(sample), sample
        if formats._only_brute_keys(sample):
            taken += 1
            for name, mod, cls in EARLIER:  # each rule before Brute's says no
                adapter = formats._load(mod, cls)
                try:
                    said = adapter.detect(sample)
                except Exception:
                    said = False
                assert not said, (name, sample)
    assert taken > 100  # the shortcut was taken often enough to mean something


def test_the_shortcut_knows_brutes_keys():
    from sessionview.core.formats.brute_message import KEYS

    assert formats._BRUTE_KEYS == set(KEYS)


def test_the_fixtures_keep_their_formats():
    got = {f.name: formats.detect_head(f.read_bytes()[: formats.HEAD_BYTES]).name for f in sorted(FIXTURES.glob("*.jsonl"))}
    assert got["brute-session.jsonl"] == "brute"
    assert got["openai-chat.jsonl"] == "openai"
    assert got["anthropic-messages.jsonl"] == "anthropic"
    assert got["claude-code.jsonl"] == "claude-code"
    assert got["pi-agent.jsonl"] == "pi"


def test_a_brute_file_imports_no_other_format(tmp_path):
    p = tmp_path / "s.jsonl"
    lines = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": "ls"}}]},
             {"role": "tool", "content": "a.txt", "tool_call_id": "c1"}]
    p.write_text("".join(json.dumps(v) + "\n" for v in lines))
    code = (
        "import sys\n"
        "from sessionview.core import formats\n"
        f"print(formats.detect_head(open({str(p)!r}, 'rb').read()).name)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('sessionview.core.formats.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "brute"
    others = [m for m in out[1].split() if m.rsplit(".", 1)[1] in {mod for _, mod, _ in EARLIER}]
    assert others == [], f"detection imported {others}"
