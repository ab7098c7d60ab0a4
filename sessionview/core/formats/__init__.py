"""Format detection and the registry of adapters.

Detection looks at the first parsed values of a file (:func:`detect`; :func:`detect_head` finds them in the
first bytes of a file). Each rule applies only if the earlier ones did not
match (see ``shared/reference/formats.md`` §9): Codex, Claude Code, pi, Gemini CLI JSONL, LittleGhost JSONL, OpenAI chat,
Anthropic, Brute, and the generic adapter as the fallback.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable, Iterator

from sessionview.core.doc.parse import parse_record
from sessionview.core.formats.anthropic import AnthropicAdapter
from sessionview.core.formats.base import Adapter
from sessionview.core.formats.brute import BruteAdapter
from sessionview.core.formats.claude_code import ClaudeCodeAdapter
from sessionview.core.formats.codex import CodexAdapter
from sessionview.core.formats.gemini import GeminiAdapter
from sessionview.core.formats.generic import GenericAdapter
from sessionview.core.formats.littleghost_jsonl import LittleGhostJsonlAdapter
from sessionview.core.formats.openai import OpenAIChatAdapter
from sessionview.core.formats.pi import PiAdapter

#: adapters in detection order; the generic adapter is the fallback
ADAPTERS: list[type[Adapter]] = [
    CodexAdapter,
    ClaudeCodeAdapter,
    PiAdapter,
    GeminiAdapter,
    LittleGhostJsonlAdapter,
    OpenAIChatAdapter,
    AnthropicAdapter,
    BruteAdapter,
]

_ALL: list[type[Adapter]] = [*ADAPTERS, GenericAdapter]
BY_NAME: dict[str, type[Adapter]] = {a.name: a for a in _ALL}

SAMPLE = 24  # parsed values the rules look at
HEAD_BYTES = 256 * 1024  # the first bytes of a file read to detect its format


def detect(values: Iterable[Any]) -> Adapter:
    """The adapter for a JSONL file whose first parsed values (non-blank, valid lines) are ``values``.

    Only the first :data:`SAMPLE` values are taken from ``values`` (which may be a lazy iterator).
    """
    sample = list(itertools.islice(values, SAMPLE))
    for adapter in ADAPTERS:
        try:
            if adapter.detect(sample):
                return adapter()
        except Exception:  # detection must never raise on hostile input
            continue
    return GenericAdapter()


def head_values(head: bytes) -> Iterator[Any]:
    """The parsed values of the valid, non-blank lines in ``head``, the first bytes of a JSONL file.

    A ``head`` of :data:`HEAD_BYTES` or more may end in a cut line: its last piece is left out.
    """
    lines = head.split(b"\n")
    if len(head) >= HEAD_BYTES:
        lines = lines[:-1]  # the last piece may be cut
    for raw in lines:
        raw = raw.rstrip(b"\r")
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        parsed = parse_record(raw)
        if parsed.ok:
            yield parsed.value


def detect_head(head: bytes) -> Adapter:
    """The adapter for a JSONL file whose first bytes are ``head`` (read :data:`HEAD_BYTES` of them)."""
    return detect(head_values(head))


def by_name(name: str) -> Adapter:
    return BY_NAME[name]()
