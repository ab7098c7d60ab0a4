"""The small Brute conversation the core edit tests and the CLI tests change: a user's question, a tool call and its
result, an answer, a thanks (``tests/`` is on sys.path: its conftest's directory)."""

CONVO = [
    {"role": "user", "content": "list files"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": "ls"}}]},
    {"role": "tool", "content": "a\nb", "tool_call_id": "c1"},
    {"role": "assistant", "content": "Two files."},
    {"role": "user", "content": "thanks"},
]
