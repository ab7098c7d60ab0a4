"""What the session list shows of a file beyond its name and size, from a bounded read: its first bytes
(:data:`HEAD`) and, for a bigger file, its last bytes (:data:`TAIL`). Never the whole file.

- **title**: the format's own title (Claude Code ``custom-title``/``ai-title``/``summary`` lines, pi
  ``session_info`` names, Gemini CLI's ``summary``), else the first prompt the user typed;
- **messages**: exact when the whole file is in the head, else the head's share scaled to the file's lines (``~``);
- **tokens**: always an estimate (about 4 characters a token) of the head's text, scaled to the file's size;
- **problems**: for a file within the head, what ``check`` finds (every problem but a partial last line);
  for a bigger one, only the broken records of the head and the tail (``exact`` false: at least that many).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable

from sessionview.core.doc.model import Kind, View, merge_views
from sessionview.core.text import approx_tokens

HEAD = 128 * 1024  # the first bytes sketched (of those the catalog reads anyway to detect the format)
TAIL = 64 * 1024
TITLE_MAX = 200
#: the format's own title: (record type, key holding the title), best first
OWN_TITLES = (("custom-title", "customTitle"), ("ai-title", "aiTitle"), ("summary", "summary"), ("session_info", "name"))


@dataclass(frozen=True, slots=True)
class Sketch:
    title: str | None = None
    messages: int | None = None
    messages_exact: bool = True
    tokens: int | None = None  # an estimate, always
    problems: int | None = None
    problems_exact: bool = True


def own_title(value: Any) -> tuple[int, str] | None:
    """``(rank, title)`` when ``value`` is a record that names the session (lower rank wins)."""
    if not isinstance(value, dict):
        return None
    for rank, (kind, key) in enumerate(OWN_TITLES):
        if value.get("type") == kind and isinstance(value.get(key), str) and value[key].strip():
            return rank, value[key]
    update = value.get("$set") if isinstance(value.get("$set"), dict) else value if "projectHash" in value else None
    if isinstance(update, dict) and isinstance(update.get("summary"), str) and update["summary"].strip():
        return len(OWN_TITLES), update["summary"]  # Gemini CLI's session summary
    return None


def is_prompt(v: View) -> bool:
    """A message the user typed: not a tool result, nor the harness's, nor a subagent's, nor a summary."""
    return (
        v.kind is Kind.MESSAGE and v.role == "user" and bool(v.text.strip()) and not v.tool_results
        and not v.injected and v.subagent is None and not v.compaction and not v.text.lstrip().startswith("<")
    )


def one_line(text: str) -> str:
    return " ".join(text.split())[:TITLE_MAX]


def _tokens(views: Iterable[View]) -> int:
    n = 0
    for v in views:
        n += approx_tokens(v.text or "") + approx_tokens(v.reasoning or "")
        for r in v.tool_results:
            if r.content != v.text:
                n += approx_tokens(r.content)
    return n


def _lines(data: bytes, drop_first: bool) -> bytes:
    """``data`` without a cut first line (``drop_first``) and without a cut last line."""
    if drop_first:
        cut = data.find(b"\n")
        data = data[cut + 1 :] if cut >= 0 else b""
    return data


def sketch_lines(path: str, head: bytes, size: int, lines: int | None, adapter: Any = None) -> Sketch:
    """The sketch of a JSONL file whose first bytes are ``head`` (``size`` bytes and ``lines`` lines in all;
    ``adapter``: its format, when known)."""
    from sessionview.core.doc.document import Document
    from sessionview.core.session import JsonlSession

    head = head[:HEAD]
    whole = len(head) >= size
    data = head if whole else head[: head.rfind(b"\n") + 1]
    session = JsonlSession(Document.from_bytes(data, path=path), adapter=adapter)
    views = list(session.views())
    titles = [t for t in (own_title(v.value) for v in views) if t is not None]
    messages = merge_views(v for v in views if v.kind is Kind.MESSAGE)
    prompt = next((one_line(v.text) for v in messages if is_prompt(v)), None)
    tokens = _tokens(views)
    broken = sum(1 for v in views for p in v.problems if p.kind != "partial")
    if whole:
        problems = sum(1 for p in session.check() if p.kind != "partial")
        count: int | None = len(messages)
        exact = True
    else:
        tail_views = _tail_views(path, session, size, len(data))
        titles += [t for t in (own_title(v.value) for v in tail_views) if t is not None]
        problems = broken + sum(1 for v in tail_views for p in v.problems if p.kind != "partial")
        shown = len(session)
        count = round(len(messages) * lines / shown) if lines and shown else None
        exact = False
        tokens = round(tokens * size / max(1, len(data)))
    title = one_line(min(titles, key=lambda t: t[0])[1]) if titles else prompt
    return Sketch(title, count, exact, tokens, problems, whole)


def _tail_views(path: str, head_session: Any, size: int, head_end: int) -> list[View]:
    """The views of the whole lines in the last :data:`TAIL` bytes after the head (read with the head's format)."""
    from sessionview.core.doc.document import Document
    from sessionview.core.session import JsonlSession

    start = max(head_end, size - TAIL)
    if start >= size:
        return []
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            data = os.pread(fd, size - start, start)
        finally:
            os.close(fd)
    except OSError:
        return []
    data = _lines(data, drop_first=start > head_end)
    if not data:
        return []
    return list(JsonlSession(Document.from_bytes(data, path=path), adapter=head_session.adapter).views())


def sketch_session(session: Any) -> Sketch:
    """The sketch of a session already read whole (a JSON document): exact, but for the token estimate."""
    views = list(session.views())
    titles = [t for t in (own_title(v.value) for v in views) if t is not None]
    messages = merge_views(v for v in views if v.kind is Kind.MESSAGE)
    prompt = next((one_line(v.text) for v in messages if is_prompt(v)), None)
    title = one_line(min(titles, key=lambda t: t[0])[1]) if titles else prompt
    problems = sum(1 for p in session.check() if p.kind != "partial")
    return Sketch(title, len(messages), True, _tokens(views), problems, True)
