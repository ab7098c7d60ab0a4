"""Summaries for compaction: the built-in extractive digest, and an external summarizer command.

The digest is deterministic and needs no model: who asked what, which tools ran (how often, with which
key arguments), the last conclusion the assistant reached, and how many messages and bytes it replaces.

A summarizer command is run by the shell (``sh -c``), as git runs an editor setting. The selected records
are piped to it as JSONL on stdin (their raw bytes, one per line), and its stdout is the summary.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from sessionview.core.doc.model import Kind, View
from sessionview.core.edit.change import Editable
from sessionview.core.text import escape_control
from sessionview.core.text import plural

if TYPE_CHECKING:
    import subprocess

DEFAULT_TIMEOUT = 120.0
_ARG_KEYS = ("command", "cmd", "path", "file", "file_path", "pattern", "query", "url", "name")


class SummarizerFailed(Exception):
    """The summarizer command failed, printed nothing, or ran past its timeout."""


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(escape_control(text, one_line=False).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _key_argument(arguments: Any) -> str:
    if isinstance(arguments, dict):
        for key in _ARG_KEYS:
            v = arguments.get(key)
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                return f"{key}={_one_line(str(v), 60)}"
            if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                return f"{key}={_one_line(' '.join(v), 60)}"
        for key, v in arguments.items():
            if isinstance(v, str):
                return f"{key}={_one_line(v, 60)}"
    return ""


def digest(views: Sequence[View], replaced_bytes: int) -> str:
    """The built-in extractive digest of ``views`` (the records a compaction replaces)."""
    asks: list[str] = []
    tool_counts: Counter[str] = Counter()
    tool_args: dict[str, list[str]] = {}
    conclusion = ""
    messages = 0
    for v in views:
        if v.kind is Kind.INVALID:
            continue
        messages += 1
        role = v.role or ""
        if role == "user" and v.text and not v.tool_results and not v.compaction:
            asks.append(_one_line(v.text))
        elif v.compaction == "summary" and v.text:
            asks.append("(earlier summary) " + _one_line(v.text, 240))
        for call in v.tool_calls:
            tool_counts[call.name] += 1
            arg = _key_argument(call.arguments)
            seen = tool_args.setdefault(call.name, [])
            if arg and arg not in seen and len(seen) < 5:
                seen.append(arg)
        if role == "assistant" and v.text.strip():
            conclusion = v.text
    lines = [f"Compacted {plural(len(views), 'record')} ({plural(messages, 'message')}, {plural(replaced_bytes, 'byte')})."]
    if asks:
        lines.append("## Asked")
        lines.extend(f"- {a}" for a in asks[-8:])
        if len(asks) > 8:
            lines.append(f"- … and {plural(len(asks) - 8, 'earlier request')}")
    if tool_counts:
        lines.append("## Tools")
        for name, count in tool_counts.most_common():
            args = tool_args.get(name) or []
            suffix = f": {'; '.join(args)}" if args else ""
            lines.append(f"- {name} ×{count}{suffix}")
    if conclusion:
        lines.append("## Last conclusion")
        lines.append(_one_line(conclusion, 600))
    return "\n".join(lines)


def range_bytes(session: Editable, first: int, last: int) -> int:
    return sum(session.doc.record_size(k) for k in range(first, last + 1))


def range_records(session: Editable, first: int, last: int) -> list[bytes]:
    """The raw records ``first..last`` (what a summarizer command reads on its stdin)."""
    return [session.doc.record(k).raw for k in range(first, last + 1)]


def range_digest(session: Editable, first: int, last: int) -> str:
    """The built-in extractive digest of records ``first..last``."""
    return digest(list(session.views(first, last)), range_bytes(session, first, last))


@dataclass
class SummarizerResult:
    text: str
    stderr: str


def run_summarizer(
    command: str,
    records: Iterable[bytes],
    timeout: float = DEFAULT_TIMEOUT,
    on_start: Callable[["subprocess.Popen[bytes]"], None] | None = None,
) -> SummarizerResult:
    """Run ``sh -c command`` with ``records`` (raw JSONL lines, no terminators) on stdin.

    ``on_start`` receives the process once it runs, so a caller in another thread can :func:`stop` it."""
    import subprocess  # here: a save that runs no summarizer does not import it

    payload = b"".join(r + b"\n" for r in records)
    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so a timeout can kill the whole process group
        )
    except OSError as exc:
        raise SummarizerFailed(f"could not run the summarizer: {exc.strerror or exc}") from None
    if on_start is not None:
        on_start(proc)
    try:
        out, err = proc.communicate(payload, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise SummarizerFailed(f"the summarizer ran past its {timeout:g} s timeout and was stopped") from None
    except BaseException:
        _kill_group(proc)
        raise
    stderr = err.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        tail = f": {_one_line(stderr.splitlines()[-1])}" if stderr else ""
        raise SummarizerFailed(f"the summarizer exited with status {proc.returncode}{tail}")
    text = out.decode("utf-8", "replace").strip()
    if not text:
        raise SummarizerFailed("the summarizer printed nothing")
    return SummarizerResult(text, stderr)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill a running summarizer and everything it started (a user cancelled it)."""
    _kill_group(proc)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
