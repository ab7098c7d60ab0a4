"""A session as Markdown: one section per message, tool calls and results as fenced blocks.

Content is data, never markup: message text is quoted with every character that could start HTML, a
link, an image or a heading escaped (so ``<script>`` and ``[x](javascript:...)`` show as text), and the
quote ends whatever code fence the text opens. Tool arguments, results and raw records go in fences longer
than any backtick run they hold. Control characters, ANSI/OSC escapes and bidi overrides are shown
escaped (``\\x1b``, ``\\u202e``).
"""

from __future__ import annotations

import re
from typing import Any

from sessionview.core.export.common import Entry, TextOut, entries, esc, fence_for
from sessionview.core.text import plural

#: what could act as markup inside a label (labels never start a line, so list markers need nothing)
_PUNCT = re.compile(r"([\\`*_\[\]<>&!#|~])")
#: what must not act as markup inside quoted message text: HTML, entities, links and images
_PROSE = re.compile(r"([<&\[\]\\])")
_HEADING = re.compile(r"^(\s*)#", re.MULTILINE)


def inline(text: str) -> str:
    """A label (a role, a name, an id) as literal Markdown text on one line."""
    return _PUNCT.sub(r"\\\1", esc(text))


def _prose(text: str) -> str:
    """Message text, keeping emphasis, lists and code but no HTML, entities, links, images or headings,
    inside a quote (which also ends any code fence the text leaves open)."""
    body = _PROSE.sub(r"\\\1", text)
    body = _HEADING.sub(lambda m: m.group(1) + "\\#", body)
    return "\n".join("> " + line if line else ">" for line in body.split("\n"))


def _fenced(text: str, info: str = "") -> str:
    fence = fence_for(text)
    return f"{fence}{info}\n{text}\n{fence}"


def header(session: Any, first: int, last: int | None) -> str:
    name = esc(str(session.path or "-"))
    span = f"records {first} to {last}" if (first != 1 or last is not None) else plural(len(session), "record")
    return f"# {inline(name)}\n\n{inline(session.format_title)} · {span}\n"


def section(e: Entry) -> str:
    parts: list[str] = []
    head = f"{inline(e.number)} {inline(e.role)}"
    if e.kind == "compaction":
        parts.append("---")
        head = f"{inline(e.number)} compaction: {inline(e.compaction or 'summary')}" + (f" \\({inline(e.role)}\\)" if e.role else "")
    elif e.kind in ("meta", "unknown"):
        head = f"{inline(e.number)} \\[{inline(e.role)}\\]"
    elif e.kind == "invalid":
        head = f"{inline(e.number)} broken record: {inline(e.role)}"
    elif e.compaction:
        head += f" \\[compacted:{inline(e.compaction)}\\]"
    parts.append(f"## {head}")
    notes = []
    if e.timestamp:
        notes.append(f"at {inline(e.timestamp)}")
    if e.subagent:
        notes.append(f"subagent {inline(e.subagent)}")
    if notes:
        parts.append("*" + " · ".join(notes) + "*")
    for r in e.results:
        label = f"result of {inline(r.id)}" + (f" {inline(r.name)}" if r.name else "") + f" \\({inline(r.link)}\\)"
        parts.append(f"**← {label}**" + (" **ERROR**" if r.error else ""))
        if r.body:
            parts.append(_fenced(r.body, "text"))
    if e.reasoning:
        parts.append("*reasoning:*")
        parts.append(_fenced(e.reasoning, "text"))
    if e.text:
        parts.append(_prose(e.text))
    for c in e.calls:
        parts.append(f"**→ tool call {inline(c.name)}** \\[{inline(c.id)}\\] \\({inline(c.link)}\\)")
        parts.append(_fenced(c.body, "json"))
    if e.raw is not None:
        parts.append(_fenced(e.raw, "text"))
    for p in e.problems:
        parts.append(f"- problem: {inline(p)}")
    return "\n\n".join(parts) + "\n"


def write(session: Any, out: TextOut, first: int = 1, last: int | None = None) -> int:
    """Write records ``first..last`` of ``session`` to ``out`` as Markdown; returns the messages written."""
    out.write(header(session, first, last))
    count = 0
    for e in entries(session, first, last):
        out.write("\n" + section(e))
        count += 1
    return count
