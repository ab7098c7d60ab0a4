"""The small Brute conversation the core edit tests change: a user's question, a tool call and its result, an
answer, a thanks (the same as ``tests/cli/clihelpers.py``'s, for the CLI tests)."""

CONVO = [
    {"role": "user", "content": "list files"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": "ls"}}]},
    {"role": "tool", "content": "a\nb", "tool_call_id": "c1"},
    {"role": "assistant", "content": "Two files."},
    {"role": "user", "content": "thanks"},
]
