"""The token usage a session file records, read per record, and its totals.

What each format records (nothing here is estimated; :func:`sessionview.core.view.stats.view_tokens` is the
estimate for records that record nothing):

* Claude Code: an assistant line's ``message.usage`` (``input_tokens``, ``output_tokens``,
  ``cache_read_input_tokens``, ``cache_creation_input_tokens``). Streamed blocks of one response are lines
  that share ``message.id`` and repeat its usage: it is counted once (the last copy wins);
* Codex: ``event_msg`` lines whose payload is a ``token_count``: ``info.last_token_usage`` is the request just
  made, ``info.total_token_usage`` the running total. ``input_tokens`` includes ``cached_input_tokens``. A
  repeated event (the same total again) is not counted twice;
* pi: an assistant message's ``usage`` (``input``, ``output``, ``cacheRead``, ``cacheWrite``);
* Gemini CLI: a ``gemini`` record's ``tokens`` (``input`` includes ``cached``; ``thoughts`` are output). A
  record appended again with the same ``id`` replaces the earlier copy;
* Brute's RubyLLM variant: top-level ``input_tokens``/``output_tokens``.

``context`` is what the model read for that request (input + cache read + cache write): the size of the
context at that point of the session.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from sessionview.core.doc.model import Kind, View
from sessionview.core.values import Frozen, Value

_set = object.__setattr__

__all__ = ["Usage", "UsageTotals", "recorded", "model_of"]


class Usage(Frozen):
    __slots__ = ("input", "output", "cache_read", "cache_write")
    input: int  # input tokens not read from a cache
    output: int
    cache_read: int
    cache_write: int

    def __init__(self, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0) -> None:
        _set(self, "input", input)
        _set(self, "output", output)
        _set(self, "cache_read", cache_read)
        _set(self, "cache_write", cache_write)

    @property
    def context(self) -> int:
        """The tokens the model read for this request (the context's size then)."""
        return self.input + self.cache_read + self.cache_write

    @property
    def total(self) -> int:
        return self.context + self.output

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.input + other.input, self.output + other.output, self.cache_read + other.cache_read, self.cache_write + other.cache_write)

    def __sub__(self, other: "Usage") -> "Usage":
        return Usage(self.input - other.input, self.output - other.output, self.cache_read - other.cache_read, self.cache_write - other.cache_write)


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


def _is_usage(d: Any, keys: tuple[str, ...]) -> TypeGuard[dict[str, Any]]:
    return isinstance(d, dict) and any(isinstance(d.get(k), int) and not isinstance(d.get(k), bool) for k in keys)


def recorded(view: View) -> tuple[str | None, Usage, Usage | None] | None:
    """The usage record ``view`` carries: ``(key, usage, running total)``, or None.

    ``key`` names the response the usage belongs to where copies of it repeat (a Claude Code ``message.id``,
    a Gemini record ``id``); ``running total`` is a Codex ``total_token_usage`` (None elsewhere)."""
    value = view.value
    if not isinstance(value, dict) or view.kind is Kind.INVALID:
        return None
    message = value.get("message")
    if isinstance(message, dict):
        u = message.get("usage")
        if _is_usage(u, ("input_tokens", "output_tokens")):  # Claude Code (an Anthropic message)
            mid = message.get("id")
            return (
                f"cc:{mid}" if isinstance(mid, str) and mid else None,
                Usage(_int(u.get("input_tokens")), _int(u.get("output_tokens")), _int(u.get("cache_read_input_tokens")), _int(u.get("cache_creation_input_tokens"))),
                None,
            )
        if _is_usage(u, ("input", "output")):  # pi
            eid = value.get("id")
            return (
                f"pi:{eid}" if isinstance(eid, str) and eid else None,
                Usage(_int(u.get("input")), _int(u.get("output")), _int(u.get("cacheRead")), _int(u.get("cacheWrite"))),
                None,
            )
    payload = value.get("payload")
    if value.get("type") == "event_msg" and isinstance(payload, dict) and payload.get("type") == "token_count":
        info = payload.get("info")
        if not isinstance(info, dict):
            return None
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        running = _codex(total) if _is_usage(total, ("input_tokens", "output_tokens")) else None
        if _is_usage(last, ("input_tokens", "output_tokens")):
            return None, _codex(last), running
        if running is not None:
            return None, Usage(), running
        return None
    tokens = value.get("tokens")
    if _is_usage(tokens, ("input", "output")) and value.get("type") in ("gemini", "model"):  # Gemini CLI
        rid = value.get("id")
        cached = _int(tokens.get("cached"))
        return (
            f"gemini:{rid}" if isinstance(rid, str) and rid else None,
            Usage(max(0, _int(tokens.get("input")) - cached), _int(tokens.get("output")) + _int(tokens.get("thoughts")), cached, 0),
            None,
        )
    if _is_usage(value, ("input_tokens", "output_tokens")) and isinstance(value.get("role"), str):  # Brute's RubyLLM variant
        return None, Usage(_int(value.get("input_tokens")), _int(value.get("output_tokens"))), None
    return None


def _codex(u: dict[str, Any]) -> Usage:
    inp = _int(u.get("input_tokens"))
    cached = min(inp, _int(u.get("cached_input_tokens")))
    return Usage(inp - cached, _int(u.get("output_tokens")), cached, _int(u.get("cache_write_input_tokens")))


def model_of(view: View) -> str | None:
    """The model a record names (a response's model, a Codex ``turn_context``, a pi ``model_change``)."""
    value = view.value
    if not isinstance(value, dict):
        return None
    message = value.get("message")
    if isinstance(message, dict) and isinstance(message.get("model"), str):
        name = message["model"]
        return None if name.startswith("<") else name  # Claude Code's "<synthetic>" lines
    payload = value.get("payload")
    if value.get("type") == "turn_context" and isinstance(payload, dict) and isinstance(payload.get("model"), str):
        return payload["model"]
    if value.get("type") == "model_change" and isinstance(value.get("modelId"), str):
        return value["modelId"]
    if value.get("type") in ("gemini", "model") and isinstance(value.get("model"), str):
        return value["model"]
    return None


_NO_USAGE = Usage()


class UsageTotals(Value):
    """The recorded usage of a session, summed over records seen in order (:meth:`add`), each response once
    (a :class:`~sessionview.core.values.Value`: no dataclass to build at import)."""

    __slots__ = ("sum", "records", "models", "last_context", "peak_context", "_seen", "_running", "keep")
    sum: Usage
    records: int  # records that carry usage
    models: dict[str, int]  # model -> records naming it
    last_context: int  # the context of the last request
    peak_context: int
    _seen: dict[str, Usage]  # recent response keys -> the usage counted
    _running: Usage | None  # the last Codex running total
    keep: int

    def __init__(
        self, sum: Usage = _NO_USAGE, records: int = 0, models: dict[str, int] | None = None, last_context: int = 0,
        peak_context: int = 0, _seen: dict[str, Usage] | None = None, _running: Usage | None = None, keep: int = 256,
    ) -> None:
        self.sum = sum
        self.records = records
        self.models = {} if models is None else models
        self.last_context = last_context
        self.peak_context = peak_context
        self._seen = {} if _seen is None else _seen
        self._running = _running
        self.keep = keep

    @property
    def recorded(self) -> bool:
        return self.records > 0

    def add(self, view: View) -> Usage | None:
        """Count ``view``'s usage; returns what it adds (None when it carries none or repeats a copy)."""
        model = model_of(view)
        if model:
            self.models[model] = self.models.get(model, 0) + 1
        found = recorded(view)
        if found is None:
            return None
        key, usage, running = found
        if running is not None:  # Codex: a repeated event carries the same running total
            if self._running is not None and running == self._running:
                return None
            self._running = running
        if key is not None:
            before = self._seen.pop(key, None)
            self._seen[key] = usage
            if len(self._seen) > self.keep:
                self._seen.pop(next(iter(self._seen)))
            if before is not None:
                self.sum = self.sum - before + usage
                self._context(usage)
                return None
        self.records += 1
        self.sum = self.sum + usage
        self._context(usage)
        return usage

    def _context(self, usage: Usage) -> None:
        if usage.context:
            self.last_context = usage.context
            self.peak_context = max(self.peak_context, usage.context)

    def merge(self, other: "UsageTotals") -> None:
        self.sum = self.sum + other.sum
        self.records += other.records
        for k, v in other.models.items():
            self.models[k] = self.models.get(k, 0) + v
        if other.last_context:
            self.last_context = other.last_context
        self.peak_context = max(self.peak_context, other.peak_context)
        self._seen.update(other._seen)
        if other._running is not None:
            self._running = other._running
