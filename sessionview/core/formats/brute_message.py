"""Brute's message model: ``Brute::Message.new(**JSON.parse(line, symbolize_names: true))`` and ``#to_h``.

This follows ``lib/brute/messages.rb`` (Brute 6.1, see ``formats.md`` section 1) step by step:

* ``Message.new(role:, content: nil, tool_calls: nil, tool_call_id: nil, reasoning: nil)``: an unknown or
  missing keyword raises ``ArgumentError``; ``role.to_sym`` (so a role must be a string); ``content`` and
  ``tool_call_id`` are kept as they are, whatever their type;
* each tool call goes through ``ToolCall.new(**tc.to_h.transform_keys(&:to_sym))`` with
  ``initialize(id:, name:, arguments: {})``, ``name.to_s`` and ``arguments.to_h``;
* ``reasoning``: nil stays nil, a String is ``Reasoning.build(text:)``, anything else
  ``Reasoning.build(**reasoning.to_h...)``; ``build`` returns nil when there are no blocks and no
  text/signature; every block is ``Block.new(type: :text, text:, signature:, format:, id:, index:)``,
  ``redacted`` becomes ``encrypted`` and the block's hash is compacted;
* ``to_h`` writes role, content, tool_calls, tool_call_id, reasoning and drops nil top-level keys (a
  tool call's hash is not compacted).

:func:`load` raises :class:`BruteSchemaError` wherever Ruby would raise, so one bad line, which breaks
the whole session load in Brute, is found. :meth:`Message.to_h` is what Brute writes back.
"""

from __future__ import annotations

import re
from typing import Any

from sessionview.core.values import Frozen

_set = object.__setattr__  # the message model is frozen (sessionview.core.values: no dataclass to build at import)
KEYS = ("role", "content", "tool_calls", "tool_call_id", "reasoning")
TOOL_CALL_KEYS = ("id", "name", "arguments")
REASONING_KEYS = ("text", "signature", "format", "blocks")
BLOCK_KEYS = ("type", "text", "signature", "format", "id", "index")
BLOCK_TYPES = {"redacted": "encrypted"}
ROLES = ("user", "assistant", "tool", "system")
MARK = re.compile(r"\A\[compacted:([a-z_]+)\]")

_MISSING: Any = object()


class BruteSchemaError(ValueError):
    """A hash that ``Brute::Message.new(**hash)`` would raise on: ``reason`` (where and what) and
    ``ruby`` (the exception Ruby raises)."""

    def __init__(self, reason: str, ruby: str) -> None:
        super().__init__(f"{reason} ({ruby})")
        self.reason = reason
        self.ruby = ruby


class NotReproducible(ValueError):
    """Brute accepts the value, but its exact text as Brute writes it cannot be known here (e.g. a
    tool-call name that is a float, which Ruby's ``Float#to_s`` turns into text)."""


def compaction_marker(content: Any) -> str | None:
    """``summary``, ``tool_results`` or ``sliding_window`` when content starts with Brute's marker."""
    if isinstance(content, str):
        m = MARK.match(content)
        if m:
            return m.group(1)
    return None


# -- Ruby's conversions -----------------------------------------------------------------------------


def ruby_class(v: Any) -> str:
    """The Ruby class of a JSON value as ``JSON.parse`` returns it (as Ruby's error messages name it)."""
    if v is None:
        return "nil"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return "String"
    if isinstance(v, int):
        return "Integer"
    if isinstance(v, float):
        return "Float"
    if isinstance(v, list):
        return "Array"
    if isinstance(v, dict):
        return "Hash"
    return type(v).__name__


def _describe(v: Any) -> str:
    return {
        "nil": "null",
        "true": "true",
        "false": "false",
        "String": "a string",
        "Integer": "a number",
        "Float": "a number",
        "Array": "a list",
        "Hash": "an object",
    }.get(ruby_class(v), type(v).__name__)


def _keywords(what: str, given: dict[str, Any], known: tuple[str, ...], required: tuple[str, ...] = ()) -> None:
    """Ruby's keyword check: missing required keywords first, then unknown ones."""
    missing = [k for k in required if k not in given]
    if missing:
        s = "s" if len(missing) > 1 else ""
        names = ", ".join(f"`{k}`" for k in missing)
        raise BruteSchemaError(f"missing {names} in {what}", f"ArgumentError: missing keyword{s}: {', '.join(':' + k for k in missing)}")
    unknown = [k for k in given if k not in known]
    if unknown:
        s = "s" if len(unknown) > 1 else ""
        names = ", ".join(f"`{k}`" for k in unknown)
        raise BruteSchemaError(f"unknown key{s} {names} in {what}", f"ArgumentError: unknown keyword{s}: {', '.join(':' + k for k in unknown)}")


def _to_h(v: Any, what: str, *, symbolize: bool = True, exact: bool = True) -> dict[str, Any]:
    """Ruby's ``v.to_h`` (then ``transform_keys(&:to_sym)`` when ``symbolize``): nil is ``{}``, a Hash is
    itself, an Array must hold ``[key, value]`` pairs; anything else has no ``to_h``."""
    if v is None:
        return {}
    if isinstance(v, dict):
        return dict(v)
    if isinstance(v, list):
        out: dict[str, Any] = {}
        for i, pair in enumerate(v):
            if not isinstance(pair, list):
                raise BruteSchemaError(
                    f"{what} is a list whose item {i + 1} is not a [key, value] pair",
                    f"TypeError: wrong element type {ruby_class(pair)} at {i} (expected array)",
                )
            if len(pair) != 2:
                raise BruteSchemaError(
                    f"{what} is a list whose item {i + 1} is not a [key, value] pair",
                    f"ArgumentError: wrong array length at {i} (expected 2, was {len(pair)})",
                )
            key, value = pair
            if not isinstance(key, str):
                if symbolize:
                    raise BruteSchemaError(
                        f"{what} has a key that is {_describe(key)}, not a string",
                        f"NoMethodError: undefined method 'to_sym' for {ruby_class(key)}",
                    )
                if exact:
                    raise NotReproducible(f"{what} has a key that is {_describe(key)}: Ruby writes it with to_s")
                key = repr(key)
            out[key] = value
        return out
    raise BruteSchemaError(f"{what} is {_describe(v)}, not an object", f"NoMethodError: undefined method 'to_h' for {ruby_class(v)}")


def _to_s(v: Any, what: str, exact: bool) -> str:
    """Ruby's ``v.to_s`` where its text is certain; otherwise :class:`NotReproducible` (or a stand-in)."""
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, int):
        try:
            return int.__repr__(v)
        except ValueError:
            pass
    if exact:
        raise NotReproducible(
            f"{what} is {_describe(v)}: Brute writes it as text with Ruby's to_s, which cannot be reproduced exactly here; "
            "give it as a string"
        )
    return repr(v)


def _symbol(v: Any, what: str) -> str:
    """Ruby's ``v.to_sym``: only a String has it among JSON values."""
    if not isinstance(v, str):
        raise BruteSchemaError(f"{what} is {_describe(v)}, not a string", f"NoMethodError: undefined method 'to_sym' for {ruby_class(v)}")
    return v


def _empty(v: Any) -> bool:
    """``v.to_s.empty?``: only nil and ``""``."""
    return v is None or v == ""


# -- the model --------------------------------------------------------------------------------------


class ToolCall(Frozen):
    __slots__ = ("id", "name", "arguments")
    id: Any
    name: str
    arguments: dict[str, Any]

    def __init__(self, id: Any, name: str, arguments: dict[str, Any]) -> None:
        _set(self, "id", id)
        _set(self, "name", name)
        _set(self, "arguments", arguments)

    def to_h(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


class Block(Frozen):
    __slots__ = ("type", "text", "signature", "format", "id", "index")
    type: str
    text: Any
    signature: Any
    format: Any
    id: Any
    index: Any

    def __init__(self, type: str = "text", text: Any = None, signature: Any = None, format: Any = None, id: Any = None, index: Any = None) -> None:
        _set(self, "type", type)
        _set(self, "text", text)
        _set(self, "signature", signature)
        _set(self, "format", format)
        _set(self, "id", id)
        _set(self, "index", index)

    def to_h(self) -> dict[str, Any]:
        out = {"type": self.type, "text": self.text, "signature": self.signature, "format": self.format, "id": self.id, "index": self.index}
        return {k: v for k, v in out.items() if v is not None}


class Reasoning(Frozen):
    __slots__ = ("blocks",)
    blocks: tuple[Block, ...]

    def __init__(self, blocks: tuple[Block, ...]) -> None:
        _set(self, "blocks", blocks)

    def to_h(self) -> dict[str, Any]:
        return {"blocks": [b.to_h() for b in self.blocks]}

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.blocks if isinstance(b.text, str))


class Message(Frozen):
    __slots__ = ("role", "content", "tool_calls", "tool_call_id", "reasoning", "notes")
    _uncompared = ("notes",)  # as field(compare=False): not in equality or the hash
    role: str
    content: Any
    tool_calls: tuple[ToolCall, ...] | None
    tool_call_id: Any
    reasoning: Reasoning | None
    #: what loading changed that a person may not expect (reasoning dropped, fields ignored...)
    notes: tuple[str, ...]

    def __init__(
        self,
        role: str,
        content: Any = None,
        tool_calls: tuple[ToolCall, ...] | None = None,
        tool_call_id: Any = None,
        reasoning: Reasoning | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        _set(self, "role", role)
        _set(self, "content", content)
        _set(self, "tool_calls", tool_calls)
        _set(self, "tool_call_id", tool_call_id)
        _set(self, "reasoning", reasoning)
        _set(self, "notes", notes)

    @classmethod
    def from_h(cls, h: Any, *, exact: bool = True) -> "Message":
        return load(h, exact=exact)

    def to_h(self) -> dict[str, Any]:
        """The hash Brute writes: keys in Brute's order, nil top-level keys dropped."""
        out: dict[str, Any] = {"role": self.role}
        if self.content is not None:
            out["content"] = self.content
        if self.tool_calls is not None:
            out["tool_calls"] = [c.to_h() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning.to_h()
        return out

    @property
    def marker(self) -> str | None:
        return compaction_marker(self.content)

    def reasoning_text(self) -> str | None:
        r = self.reasoning
        if r is None:
            return None
        text = r.text
        if text:
            return text
        return f"[{', '.join(b.type for b in r.blocks)} reasoning]"

    def provider_warnings(self) -> list[str]:
        """What Brute loads and writes back, but a provider is likely to reject."""
        out = []
        if self.content is not None and not isinstance(self.content, str):
            out.append(
                f"content is {_describe(self.content)}, not a string: Brute loads it and writes it back as it is, "
                "but a provider is likely to reject the request"
            )
        if self.role not in ROLES:
            out.append(f"role {self.role!r} is not user, assistant or tool: Brute keeps it, but a provider is likely to reject it")
        return out


def load(h: Any, *, exact: bool = True) -> Message:
    """``Brute::Message.new(**h)`` for a parsed line. Raises :class:`BruteSchemaError` where Ruby raises,
    and (with ``exact``) :class:`NotReproducible` where Brute's output text cannot be known. Ruby's refusal
    wins wherever it is in the line, so a value that cannot be reproduced never hides it."""
    msg = _load(h, exact=False)
    return _load(h, exact=True) if exact else msg


def _load(h: Any, *, exact: bool) -> Message:
    if not isinstance(h, dict):
        raise BruteSchemaError(f"the line is {_describe(h)}, not a JSON object", f"TypeError: no implicit conversion of {ruby_class(h)} into Hash")
    _keywords("the message", h, KEYS, ("role",))
    notes: list[str] = []
    tool_calls = _tool_calls(h.get("tool_calls"), exact, notes)
    role = _symbol(h["role"], "role")
    reasoning = _reasoning(h.get("reasoning"), notes)
    return Message(role, h.get("content"), tool_calls, h.get("tool_call_id"), reasoning, tuple(notes))


def refusal(h: Any) -> BruteSchemaError | None:
    """Why Brute could not load this line, or None."""
    try:
        load(h, exact=False)
    except BruteSchemaError as exc:
        return exc
    return None


def _tool_calls(calls: Any, exact: bool, notes: list[str]) -> tuple[ToolCall, ...] | None:
    if calls is None:
        return None
    if isinstance(calls, dict):
        # Hash#map yields [key, value] pairs whose key is a Symbol: ``[:k, v].to_h`` raises
        if calls:
            raise BruteSchemaError(
                "tool_calls is an object, not a list", "TypeError: wrong element type Symbol at 0 (expected array)"
            )
        return ()
    if not isinstance(calls, list):
        raise BruteSchemaError(f"tool_calls is {_describe(calls)}, not a list", f"NoMethodError: undefined method 'map' for {ruby_class(calls)}")
    out = []
    for i, tc in enumerate(calls, 1):
        what = f"tool call {i}"
        h = _to_h(tc, what)
        _keywords(what, h, TOOL_CALL_KEYS, ("id", "name"))
        name = _to_s(h["name"], f"`name` in {what}", exact)
        if not isinstance(h["name"], str):
            notes.append(f"`name` in {what} is {_describe(h['name'])}: Brute writes it as the string {name!r}")
        args = _to_h(h.get("arguments", {}), f"`arguments` in {what}", symbolize=False, exact=exact)
        out.append(ToolCall(h["id"], name, args))
    return tuple(out)


def _reasoning(r: Any, notes: list[str]) -> Reasoning | None:
    if r is None:
        return None
    if isinstance(r, str):
        kw: dict[str, Any] = {"text": r}
    else:
        kw = _to_h(r, "reasoning")
        _keywords("reasoning", kw, REASONING_KEYS)
    blocks = [_block(b, i) for i, b in enumerate(_array(kw.get("blocks"), "`blocks` in reasoning"), 1)]
    text, signature, fmt = kw.get("text"), kw.get("signature"), kw.get("format")
    if blocks:
        ignored = [k for k in ("text", "signature", "format") if kw.get(k) is not None]
        if ignored:
            notes.append(f"reasoning has blocks, so Brute ignores its {', '.join(ignored)} and does not write {'them' if len(ignored) > 1 else 'it'}")
        return Reasoning(tuple(blocks))
    if _empty(text) and _empty(signature):
        notes.append("reasoning has no blocks and no text: Brute drops it, so it is not written")
        return None
    return Reasoning((Block("text", text, signature, fmt),))


def _array(v: Any, what: str) -> list[Any]:
    """Ruby's ``Array(v)``: nil is ``[]``, an Array itself, a Hash its ``[key, value]`` pairs, else ``[v]``."""
    if v is None:
        return []
    if isinstance(v, list):
        return v
    if isinstance(v, dict):
        if v:
            raise BruteSchemaError(f"{what} is an object, not a list", "TypeError: wrong element type Symbol at 0 (expected array)")
        return []
    raise BruteSchemaError(f"{what} is {_describe(v)}, not a list", f"NoMethodError: undefined method 'to_h' for {ruby_class(v)}")


def _block(b: Any, i: int) -> Block:
    what = f"reasoning block {i}"
    h = _to_h(b, what)
    _keywords(what, h, BLOCK_KEYS)
    kind = _symbol(h["type"], f"`type` in {what}") if "type" in h else "text"
    kind = BLOCK_TYPES.get(kind, kind)
    return Block(kind, h.get("text"), h.get("signature"), h.get("format"), h.get("id"), h.get("index"))
