"""Format detection and the registry of adapters.

Detection looks at the first parsed values of a file. Each rule applies only if the earlier ones did not
match (see ``shared/reference/formats.md`` §9): Codex, Claude Code, pi, LittleGhost JSONL, OpenAI chat,
Anthropic, Brute, and the generic adapter as the fallback.
"""

from __future__ import annotations

from typing import Any

from sessionview.core.formats.anthropic import AnthropicAdapter
from sessionview.core.formats.base import Adapter
from sessionview.core.formats.brute import BruteAdapter
from sessionview.core.formats.claude_code import ClaudeCodeAdapter
from sessionview.core.formats.codex import CodexAdapter
from sessionview.core.formats.generic import GenericAdapter
from sessionview.core.formats.littleghost_jsonl import LittleGhostJsonlAdapter
from sessionview.core.formats.openai import OpenAIChatAdapter
from sessionview.core.formats.pi import PiAdapter

#: adapters in detection order; the generic adapter is the fallback
ADAPTERS: list[type[Adapter]] = [
    CodexAdapter,
    ClaudeCodeAdapter,
    PiAdapter,
    LittleGhostJsonlAdapter,
    OpenAIChatAdapter,
    AnthropicAdapter,
    BruteAdapter,
]

BY_NAME: dict[str, type[Adapter]] = {a.name: a for a in [*ADAPTERS, GenericAdapter]}


def detect(values: list[Any]) -> Adapter:
    """The adapter for a JSONL file whose first parsed values are ``values``."""
    for adapter in ADAPTERS:
        try:
            if adapter.detect(values):
                return adapter()
        except Exception:  # detection must never raise on hostile input
            continue
    return GenericAdapter()


def by_name(name: str) -> Adapter:
    return BY_NAME[name]()
