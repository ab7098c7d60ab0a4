"""A message value on its way into a record: read from a person's JSON, its numbers kept, and encoded the
way the session's format writes it (the adapter says how: :meth:`~sessionview.core.formats.base.Adapter.encode`).
And back: a record as pretty JSON for an editor, or the text of a message alone.
"""

from __future__ import annotations

import json
from typing import Any

from sessionview.core import rubyjson
from sessionview.core.edit.change import Editable
from sessionview.core.errors import InvalidEdit, Refused
from sessionview.core.formats.base import Encoded


def encode(session: Editable, value: Any) -> Encoded:
    """The bytes of one record as the format's writer would produce them, the value they hold, and
    warnings. A Brute value goes through Brute's own model (``Message.new(**h).to_h``)."""
    return session.adapter.encode(value)


def write_refusal(session: Editable, value: Any, force: bool) -> None:
    """Refuse ``value`` when the format accepts it but would lose or mangle it (unless ``force``)."""
    reason = None if force else session.adapter.write_refusal(value)
    if reason:
        raise Refused(reason, forceable=True)


def parse_user_json(text: str | bytes) -> Any:
    try:
        return rubyjson.loads_preserving(text, reject_duplicates=True)
    except rubyjson.DuplicateKeyError as exc:
        raise InvalidEdit(f"duplicate key: {exc}") from None
    except ValueError as exc:
        raise InvalidEdit(f"invalid JSON: {exc}") from None


def original_numbers(raw: bytes) -> set[str]:
    """The text of every number in the record ``raw``."""
    texts: set[str] = set()
    try:
        value = rubyjson.loads_preserving(raw)
    except Exception:
        return texts
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (rubyjson.RawInt, rubyjson.RawFloat)):
            texts.add(v.text)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return texts


def normalise_numbers(value: Any, keep: set[str]) -> Any:
    """Numbers whose text appeared in the original record keep it; others become what the writer emits."""
    if isinstance(value, rubyjson.RawInt):
        return value if value.text in keep else int(value)
    if isinstance(value, rubyjson.RawFloat):
        return value if value.text in keep else float(value)
    if isinstance(value, dict):
        return {k: normalise_numbers(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise_numbers(v, keep) for v in value]
    return value


def pretty_json(value: Any, indent: int = 2, _level: int = 0) -> str:
    """Pretty JSON that keeps every number's original text (for editing in an editor or a TextArea)."""
    pad = " " * (indent * (_level + 1))
    end = " " * (indent * _level)
    if isinstance(value, (rubyjson.RawInt, rubyjson.RawFloat)):
        return value.text
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {pretty_json(v, indent, _level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(pad + pretty_json(v, indent, _level + 1) for v in value) + "\n" + end + "]"
    return json.dumps(value, ensure_ascii=False)


def pretty_record(session: Editable, number: int) -> str:
    """Record ``number`` as pretty JSON with its numbers' original text, for an editor."""
    rec = session.doc.record(number)
    try:
        value = rubyjson.loads_preserving(rec.raw)
    except Exception as exc:
        raise Refused(f"record #{number} is not valid JSON ({exc}); replace it with --json") from None
    return pretty_json(value) + "\n"


def content_text(session: Editable, number: int) -> str | None:
    """The text of message ``number`` alone, when it has one text to edit (what ``plan_edit(content=)``
    replaces); None when it has none or several text blocks."""
    try:
        value = rubyjson.loads_preserving(session.doc.record(number).raw)
    except Exception:
        return None
    return session.adapter.content_text(value)
