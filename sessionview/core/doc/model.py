"""The common, read-only view of a session's entries, whatever the file format.

Views are derived from parsed records for display and checks; they are never the source of bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Iterable, Iterator

from sessionview.core.doc.branches import Branch
from sessionview.core.values import Value


class Kind(str, Enum):
    MESSAGE = "message"  # a conversation message (user, assistant, tool, system, ...)
    COMPACTION = "compaction"  # a compaction marker or summary, shown as a divider
    META = "meta"  # a known non-message line (session header, token counts, ...)
    UNKNOWN = "unknown"  # a parsed line of a type the adapter does not know: shown raw
    INVALID = "invalid"  # a record that could not be parsed (see ``problems``)


# ToolCall, ToolResult and Problem are values (equal and hashed by their fields, as ``@dataclass(slots=True,
# unsafe_hash=True)`` would make them: sessionview.core.values, no dataclass to build at import) but not frozen: a
# frozen ``__init__`` sets each field through ``object.__setattr__``, 4x the cost, and a pass over a big session
# builds one per call and result. Nothing assigns to them after construction.
class ToolCall(Value):
    __slots__ = ("id", "name", "arguments", "raw_arguments")
    id: str | None
    name: str
    arguments: Any  # a parsed object where possible
    raw_arguments: str | None  # the original JSON string, for formats that store one

    def __init__(self, id: str | None, name: str, arguments: Any, raw_arguments: str | None = None) -> None:
        self.id = id
        self.name = name
        self.arguments = arguments
        self.raw_arguments = raw_arguments


class ToolResult(Value):
    __slots__ = ("call_id", "content", "is_error", "name")
    call_id: str | None
    content: str
    is_error: bool | None
    name: str | None  # the tool's name where the format records it on the result

    def __init__(self, call_id: str | None, content: str, is_error: bool | None = None, name: str | None = None) -> None:
        self.call_id = call_id
        self.content = content
        self.is_error = is_error
        self.name = name


class Problem(Value):
    """Something wrong with a record. ``kind`` is a stable plain-words name used by ``check``."""

    __slots__ = ("kind", "message", "number", "ids", "severity")
    kind: str  # "invalid JSON", "not UTF-8", "oversized", "too deep", "duplicate keys", "partial",
    #            "schema warning", "digest mismatch", "dangling tool call", "orphan tool result",
    #            "duplicate tool call id", "user message before tool result"
    message: str
    number: int | None  # the record number (#N) it concerns
    ids: tuple[str, ...]
    severity: str  # "error" or "warning"

    def __init__(self, kind: str, message: str, number: int | None = None, ids: tuple[str, ...] = (), severity: str = "error") -> None:
        self.kind = kind
        self.message = message
        self.number = number
        self.ids = ids
        self.severity = severity


@dataclass(slots=True)
class View:
    """One displayable entry: usually one record, or several records merged (Claude Code streaming)."""

    number: int  # #N: the first record's number
    kind: Kind
    role: str | None = None
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    reasoning: str | None = None
    compaction: str | None = None  # marker kind: "summary", "tool_results", "sliding_window", ...
    label: str | None = None  # line type for META/UNKNOWN lines, e.g. "session_meta"
    problems: list[Problem] = field(default_factory=list)
    numbers: tuple[int, ...] = ()  # every record merged into this view (defaults to (number,))
    group: str | None = None  # merge key: consecutive views with the same group form one message
    value: Any = None  # the parsed record (or document slice), for the detail view and --json
    raw: bytes | None = None  # for INVALID/UNKNOWN views: the record's bytes (a preview when oversized)
    timestamp: str | None = None  # when the record was written, ISO 8601, where the format records it
    subagent: str | None = None  # a subagent's line: its agent id ("" when the line names none)
    injected: bool = False  # put there by the harness (a command wrapper, a meta line), not the user's words
    branch: Branch | None = None  # on a branch of the id/parentId tree (pi): which one, from which record
    branch_point: int = 0  # the number of branches that start at this record (0: not a branch point)

    def __post_init__(self) -> None:
        if not self.numbers:
            self.numbers = (self.number,)


def merge_views(views: Iterable[View]) -> list[View]:
    """Merge consecutive views that share a ``group`` (streamed blocks of one message)."""
    return list(iter_merged(views))


def iter_merged(views: Iterable[View]) -> Iterator[View]:
    """:func:`merge_views` one view at a time, holding only the message being merged (for big sessions)."""
    prev: View | None = None
    for v in views:
        if prev is not None and v.group is not None and prev.group == v.group and v.kind is Kind.MESSAGE and prev.kind is Kind.MESSAGE:
            prev = replace(
                prev,
                role=prev.role or v.role,
                text="\n".join(t for t in (prev.text, v.text) if t),
                tool_calls=prev.tool_calls + v.tool_calls,
                tool_results=prev.tool_results + v.tool_results,
                reasoning="\n".join(t for t in (prev.reasoning or "", v.reasoning or "") if t) or None,
                compaction=prev.compaction or v.compaction,
                problems=prev.problems + v.problems,
                numbers=prev.numbers + v.numbers,
                timestamp=prev.timestamp or v.timestamp,
            )
            continue
        if prev is not None:
            yield prev
        prev = v
    if prev is not None:
        yield prev


def block_text(content: Any) -> str:
    """Plain text of a content value: a string, or a list of typed blocks (text parts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                t = block.get("type")
                if isinstance(block.get("text"), str) and t in (None, "text", "input_text", "output_text", "summary_text"):
                    parts.append(block["text"])
                elif t in ("image", "input_image", "image_url", "document"):
                    parts.append(f"[{t}]")
        return "\n".join(parts)
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return content["text"]
    return _compact(content)


def _compact(value: Any) -> str:
    import orjson

    try:
        return orjson.dumps(value).decode()
    except TypeError:
        import json

        return json.dumps(value, ensure_ascii=False)
