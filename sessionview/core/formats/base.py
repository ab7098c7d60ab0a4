"""The adapter interface: turn one parsed record into a common :class:`View` without changing bytes."""

from __future__ import annotations

from typing import Any

from sessionview.core.doc.model import Kind, Problem, View, block_text


class Adapter:
    """Base adapter. Subclasses set ``name``/``title`` and implement :meth:`detect` and :meth:`view`."""

    name = "unknown"
    title = "Unknown JSONL"
    #: whether :func:`sessionview.core.edit.plan` may write records of this format
    writable = False

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

    def schema_problems(self, number: int, value: Any) -> list[Problem]:
        """Schema warnings for a record (a key the format's reader would reject, wrong types...)."""
        return []


def warn(number: int, message: str) -> Problem:
    return Problem("schema warning", message, number, severity="warning")
