"""``show`` prints a call's string arguments with newlines as a block of text, not as an escaped JSON string,
and keeps every other argument as pretty JSON; control characters inside the block stay escaped."""

from __future__ import annotations

import json
import subprocess
import sys


def test_show_prints_multiline_string_arguments_as_blocks(tmp_path):
    p = tmp_path / "w.jsonl"
    args = {"path": "a.py", "content": "import os\n\tprint(1)  \n\x1b[2J\n", "mode": 420}
    p.write_text(json.dumps({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "fs_write", "arguments": args}]}) + "\n")
    r = subprocess.run([sys.executable, "-m", "sessionview", "show", str(p)], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert '"path": "a.py",' in out and '"mode": 420' in out
    assert '"content": ⏎\n' in out
    assert "\n            | import os\n            | \tprint(1)  \n            | \\x1b[2J\n            |\n" in out
    assert "\\n" not in out and "\x1b" not in out
