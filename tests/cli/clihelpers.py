"""The small Brute conversation the CLI tests edit, and how one of its lines is written."""

import json

CONVO = [
    {"role": "user", "content": "list files"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": "ls"}}]},
    {"role": "tool", "content": "a\nb", "tool_call_id": "c1"},
    {"role": "assistant", "content": "Two files."},
    {"role": "user", "content": "thanks"},
]


def line(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
