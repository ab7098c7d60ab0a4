"""The adapter interface: turn one parsed record into a common :class:`View` without changing bytes, and
declare what the editing code may do with a format's records (:class:`Capabilities`, :meth:`Adapter.encode`).
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any, Callable, ClassVar

from sessionview.core.doc.model import Kind, Problem, View, block_text
from sessionview.core.errors import InvalidEdit, Refused
from sessionview.core.formats.brute_message import compaction_marker
from sessionview.core.values import Frozen

#: the prefix a compaction summary gets where the format marks it in the text (Brute's convention)
COMPACT_PREFIX = "[compacted:summary] "
#: block types whose ``text`` is a message's text
TEXT_TYPES = ("text", "input_text", "output_text")


_set = object.__setattr__


class Capabilities(Frozen):
    """What the editing code may do with a session (asked, never guessed from a format's name). A
    :class:`~sessionview.core.values.Frozen` value: no dataclass to build at import."""

    __slots__ = ("editable", "compactable", "not_compactable", "whole_document")
    #: a message may be replaced: its text, or the whole record as JSON
    editable: bool
    #: a range of records may become one new summary record (false where lines link by ids and parents)
    compactable: bool
    #: why not, when not compactable (ends the sentence "compaction is not supported for X: ...")
    not_compactable: str
    #: written back whole (a store document holding the messages), not as JSONL lines
    whole_document: bool

    def __init__(
        self, editable: bool = False, compactable: bool = False,
        not_compactable: str = "its lines are linked by ids and parents, so a new summary line would break the format",
        whole_document: bool = False,
    ) -> None:
        _set(self, "editable", editable)
        _set(self, "compactable", compactable)
        _set(self, "not_compactable", not_compactable)
        _set(self, "whole_document", whole_document)


class Encoded(Frozen):
    """One record as the format's writer would produce it: its bytes, the value they hold, and what the
    writer accepts but a person should know (a provider would reject it, a field is dropped...)."""

    __slots__ = ("raw", "value", "warnings")
    raw: bytes
    value: Any
    warnings: tuple[str, ...]

    def __init__(self, raw: bytes, value: Any, warnings: tuple[str, ...] = ()) -> None:
        _set(self, "raw", raw)
        _set(self, "value", value)
        _set(self, "warnings", warnings)


class Adapter:
    """Base adapter. Subclasses set ``name``/``title``/``capabilities`` and implement :meth:`detect` and
    :meth:`view`; formats whose writer does more than ``JSON.generate`` override :meth:`encode`."""

    name = "unknown"
    title = "Unknown JSONL"
    capabilities: ClassVar[Capabilities] = Capabilities()
    #: records form a tree by ``id``/``parentId`` (see :mod:`sessionview.core.doc.branches`)
    tree: ClassVar[bool] = False
    #: a changed record is appended again under its ``id``; the last copy is the record (Gemini CLI JSONL)
    updates_by_id: ClassVar[bool] = False

    @classmethod
    def detect(cls, values: list[Any]) -> bool:
        """Whether the first parsed values (non-blank, valid lines) look like this format."""
        return False

    def view(self, number: int, value: Any) -> View:
        """The view of record ``number`` whose parsed JSON is ``value``."""
        if isinstance(value, dict) and isinstance(value.get("role"), str):
            return View(number, Kind.MESSAGE, role=value["role"], text=block_text(value.get("content")), value=value)
        label = value.get("type") if isinstance(value, dict) and isinstance(value.get("type"), str) else None
        return View(number, Kind.UNKNOWN, label=label or type(value).__name__, value=value)

    def plain_view(self, number: int, value: Any) -> View | None:
        """The view of a record that needs nothing more, or None (the default): a record this returns a view for
        is what :meth:`view` makes of it, not of kind UNKNOWN, with no :meth:`schema_problems` and no
        :meth:`timestamp_of`. A format answers here from the parsed dict, without its schema's model, for the
        records it writes every time (the full parse of a big file, ``check``)."""
        return None

    def timestamp_of(self, value: Any) -> str | None:
        """When record ``value`` was written, as an ISO 8601 string; None where the format records none.

        The base reads the top-level ``timestamp`` key that Claude Code, Codex and pi write (ISO 8601);
        a format that keeps its time elsewhere overrides this."""
        stamp = value.get("timestamp") if isinstance(value, dict) else None
        return stamp if isinstance(stamp, str) and is_iso8601(stamp) else None

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        """Schema warnings for a record (a key the format's reader would reject, wrong types...)."""
        return []

    # -- writing ------------------------------------------------------------------------------------
    def encode(self, value: Any) -> Encoded:
        """``value`` as this format's writer writes a record; :class:`InvalidEdit` where its reader would
        reject it. Numbers keep their original text (:class:`rubyjson.RawInt`)."""
        return Encoded(generate(value), value)

    def write_refusal(self, value: Any) -> str | None:
        """Why writing ``value`` would be lost or harmful though the format accepts it (a forced write
        goes through); None when it is fine."""
        return None

    def summary_value(self, text: str) -> Any:
        """The record a compaction writes for the summary ``text`` (asked only when compactable)."""
        body = text if compaction_marker(text) else COMPACT_PREFIX + text
        return {"role": "user", "content": body}

    def drop_results(self, value: Any, view: View, marker: Callable[[str | None], str]) -> Any:
        """A copy of ``value`` whose tool results' content is ``marker(call id)``, every id kept; refused
        (:class:`Refused`) where the format keeps results where a marker cannot stand for them.

        The base replaces ``tool_result`` blocks' ``content`` in a block list, or the whole content of a
        message that is a tool result alone (role ``tool``/``toolResult``, a string or a list of text blocks)."""
        value = copy.deepcopy(value)
        holder = self.content_holder(value)
        if holder is not None and view.tool_results:
            obj, key = holder
            content = obj.get(key)
            if isinstance(content, list):
                blocks = [b for b in content if isinstance(b, dict) and isinstance(b.get("type"), str) and (b["type"] == "tool_result" or b["type"].endswith("_tool_result"))]
                for b in blocks:
                    cid = b.get("tool_use_id")
                    b["content"] = marker(cid if isinstance(cid, str) else None)
                if blocks:
                    return value
            if view.role in ("tool", "toolResult") and not view.tool_calls and len(view.tool_results) == 1:
                text = marker(view.tool_results[0].call_id)
                obj[key] = [{"type": "text", "text": text}] if isinstance(content, list) else text
                return value
        raise Refused(f"dropping a tool result's content is not supported here: {self.title} keeps this record's results where a marker cannot replace them")

    def content_holder(self, value: Any) -> tuple[dict[str, Any], str] | None:
        """The object and key that hold a message's content in ``value``."""
        if not isinstance(value, dict):
            return None
        return (value, "content") if "content" in value or "role" in value else None

    def content_text(self, value: Any) -> str | None:
        """The text of the message ``value`` alone, when it has one text to edit (what :meth:`set_text`
        replaces); None when it has none or several text blocks."""
        holder = self.content_holder(value)
        if holder is None:
            return None
        obj, key = holder
        content = obj.get(key)
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [b["text"] for b in _text_blocks(content)]
            if len(texts) == 1:
                return texts[0]
        return None

    def set_text(self, value: Any, text: str) -> Any:
        """A copy of ``value`` with its message text set to ``text``; refuses when there is no single text."""
        value = copy.deepcopy(value)
        holder = self.content_holder(value)
        if holder is None:
            raise InvalidEdit("this record has no message content to set; use --json to replace it whole")
        obj, key = holder
        content = obj.get(key)
        if content is None or isinstance(content, str):
            obj[key] = text
            return value
        if isinstance(content, list):
            texts = _text_blocks(content)
            if len(texts) == 1:
                texts[0]["text"] = text
                return value
            raise InvalidEdit(
                f"the content has {len(texts)} text blocks, so there is no single text to set; use --json to edit the blocks"
            )
        raise InvalidEdit("the content is not text; use --json to replace the message")


def _text_blocks(content: list[Any]) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict) and b.get("type") in TEXT_TYPES and isinstance(b.get("text"), str)]


def generate(value: Any) -> bytes:
    """Ruby's ``JSON.generate`` of ``value``, numbers keeping their text; :class:`InvalidEdit` if it cannot."""
    from sessionview.core import rubyjson  # here: viewing never writes (and it imports decimal)

    try:
        return rubyjson.generate(value, keep_raw_numbers=True)
    except rubyjson.RubyJSONError as exc:
        raise InvalidEdit(f"cannot write this value exactly: {exc}") from None


def is_iso8601(text: str) -> bool:
    """Whether ``text`` is an ISO 8601 date and time (``2025-11-01T10:00:05.000Z`` and the like)."""
    if len(text) > 64 or "T" not in text:
        return False
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def warn(number: int, message: str) -> Problem:
    return Problem("schema warning", message, number, severity="warning")
