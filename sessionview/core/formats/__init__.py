"""Format detection and the registry of adapters.

Detection looks at the first parsed values of a file (:func:`detect`; :func:`detect_head` finds them in the
first bytes of a file). Each rule applies only if the earlier ones did not
match (see ``shared/reference/formats.md`` §9): Codex, Claude Code, pi, Gemini CLI JSONL, LittleGhost JSONL, OpenAI chat,
Anthropic, Brute, and the generic adapter as the fallback.
"""

from __future__ import annotations

import importlib
import itertools
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

if TYPE_CHECKING:
    from sessionview.core.formats.base import Adapter

#: (format name, module, class) in detection order; the generic adapter, last, is the fallback. An adapter's
#: module is imported the first time it is needed (a search imports only the formats of its hits)
_REGISTRY: tuple[tuple[str, str, str], ...] = (
    ("codex", "codex", "CodexAdapter"),
    ("claude-code", "claude_code", "ClaudeCodeAdapter"),
    ("pi", "pi", "PiAdapter"),
    ("gemini", "gemini", "GeminiAdapter"),
    ("littleghost-jsonl", "littleghost_jsonl", "LittleGhostJsonlAdapter"),
    ("openai", "openai", "OpenAIChatAdapter"),
    ("anthropic", "anthropic", "AnthropicAdapter"),
    ("brute", "brute", "BruteAdapter"),
    ("jsonl", "generic", "GenericAdapter"),
)
_BY_CLASS = {cls: mod for _, mod, cls in _REGISTRY}
_MODULE = {name: (mod, cls) for name, mod, cls in _REGISTRY}
_loaded: dict[str, type[Adapter]] = {}  # class name -> class


def _load(mod: str, cls: str) -> type[Adapter]:
    adapter = _loaded.get(cls)
    if adapter is None:
        adapter = _loaded[cls] = getattr(importlib.import_module(f"{__name__}.{mod}"), cls)
    return adapter


class _ByName(Mapping[str, "type[Adapter]"]):
    """Format name to adapter class, importing an adapter's module only when it is looked up."""

    def __getitem__(self, name: str) -> type[Adapter]:
        return _load(*_MODULE[name])

    def __contains__(self, name: object) -> bool:
        return name in _MODULE

    def __iter__(self) -> Iterator[str]:
        return (n for n, _, _ in _REGISTRY)

    def __len__(self) -> int:
        return len(_REGISTRY)


BY_NAME: Mapping[str, type[Adapter]] = _ByName()

if TYPE_CHECKING:
    #: adapters in detection order; the generic adapter is the fallback (every adapter module is imported
    #: when one of these is first used)
    ADAPTERS: list[type[Adapter]]
    _ALL: list[type[Adapter]]


def __getattr__(name: str) -> Any:
    """``ADAPTERS``, ``_ALL`` and the adapter classes (``formats.BruteAdapter``), imported on first use."""
    if name in ("ADAPTERS", "_ALL"):
        every = [_load(mod, cls) for _, mod, cls in _REGISTRY]
        globals().update(ADAPTERS=every[:-1], _ALL=every)
        return globals()[name]
    if name in _BY_CLASS:
        return _load(_BY_CLASS[name], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SAMPLE = 24  # parsed values the rules look at
HEAD_BYTES = 256 * 1024  # the first bytes of a file read to detect its format


def detect(values: Iterable[Any]) -> Adapter:
    """The adapter for a JSONL file whose first parsed values (non-blank, valid lines) are ``values``.

    Only the first :data:`SAMPLE` values are taken from ``values`` (which may be a lazy iterator).
    """
    sample = list(itertools.islice(values, SAMPLE))
    if _only_brute_keys(sample):  # every rule before Brute's says no: Brute's decides, and only it is imported
        return _first_match(sample, _REGISTRY[-2:-1])
    return _first_match(sample, _REGISTRY[:-1])


def _first_match(sample: list[Any], rules: Iterable[tuple[str, str, str]]) -> Adapter:
    for _, mod, cls in rules:
        adapter = _load(mod, cls)
        try:
            if adapter.detect(sample):
                return adapter()
        except Exception:  # detection must never raise on hostile input
            continue
    return _load("generic", "GenericAdapter")()


_BRUTE_KEYS = frozenset(("role", "content", "tool_calls", "tool_call_id", "reasoning"))  # brute_message.KEYS


def _only_brute_keys(sample: list[Any]) -> bool:
    """Whether ``sample`` holds only messages of Brute's keys, none with a block list for content or an OpenAI
    ``function`` call. Each rule before Brute's then says no (``tests/core/test_formats_sniff.py`` checks it
    against the rules themselves): Codex, Claude Code, pi and Gemini CLI need keys Brute has not (``type``,
    ``payload``, ``sessionId``...), LittleGhost ``metadata``, OpenAI a ``function`` call or another signal
    Brute's keys do not carry, Anthropic a block list."""
    if not sample:
        return False
    for v in sample:
        if not isinstance(v, dict) or "role" not in v or not _BRUTE_KEYS.issuperset(v) or isinstance(v.get("content"), list):
            return False
        calls = v.get("tool_calls")
        if isinstance(calls, list):
            for c in calls:
                if isinstance(c, dict) and isinstance(c.get("function"), dict):
                    return False
    return True


def head_values(head: bytes) -> Iterator[Any]:
    """The parsed values of the valid, non-blank lines in ``head``, the first bytes of a JSONL file.

    A ``head`` of :data:`HEAD_BYTES` or more may end in a cut line: its last piece is left out.
    """
    from sessionview.core.doc.parse import parse_record

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
