"""The transcript's filter: only some roles, or records that call or answer some tools (re-exported by
:mod:`sessionview.core.view.transcript`)."""

from __future__ import annotations

from sessionview.core.doc.model import Kind, View
from sessionview.core.values import Frozen

_set = object.__setattr__


class Filter(Frozen):
    """Show only records whose role is in ``roles`` and/or that call or answer a tool in ``tools`` (a
    :class:`~sessionview.core.values.Frozen` value: no dataclass to build at import)."""

    __slots__ = ("roles", "tools")
    roles: frozenset[str]
    tools: frozenset[str]

    def __init__(self, roles: frozenset[str] = frozenset(), tools: frozenset[str] = frozenset()) -> None:
        _set(self, "roles", roles)
        _set(self, "tools", tools)

    @property
    def active(self) -> bool:
        return bool(self.roles or self.tools)

    @classmethod
    def parse(cls, text: str) -> "Filter":
        """``user assistant tool:shell`` → roles {user, assistant}, tools {shell}. Commas work too."""
        roles: set[str] = set()
        tools: set[str] = set()
        for word in text.replace(",", " ").split():
            if word.lower().startswith(("tool:", "tool=")):
                if word[5:]:
                    tools.add(word[5:])
            elif word.lower().startswith(("role:", "role=")):
                if word[5:]:
                    roles.add(word[5:])
            else:
                roles.add(word)
        return cls(frozenset(roles), frozenset(tools))

    def describe(self) -> str:
        parts = sorted(self.roles) + [f"tool:{t}" for t in sorted(self.tools)]
        return " ".join(parts)

    def matches(self, view: View, names: dict[str, str]) -> bool:
        if self.roles:
            role = view.role or (view.label if view.kind is not Kind.MESSAGE else None) or view.kind.value
            if role not in self.roles and view.kind.value not in self.roles:
                return False
        if self.tools:
            if any(c.name in self.tools for c in view.tool_calls):
                return True
            for r in view.tool_results:
                name = r.name or names.get(r.call_id or "", "")
                if name in self.tools:
                    return True
            return False
        return True
