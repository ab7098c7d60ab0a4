"""The user's ``[keymap]`` checked before it is applied: every binding id must be one of the app's, and
every key one that Textual knows. What is wrong is said with the file and its line (``path:line: …``)."""

from __future__ import annotations

import difflib
from typing import Iterable

from textual.keys import KEY_ALIASES, KEY_NAME_REPLACEMENTS, KEY_TO_UNICODE_NAME, Keys, key_to_character

MODIFIERS = {"ctrl", "shift", "alt", "meta", "super", "hyper"}


def _classes() -> list[type]:
    """Every class of the app that has keys (its screens imported here so that all of them are known; the
    App class is known once it is imported, as it is when it applies the keymap)."""
    from textual.dom import DOMNode

    import sessionview.ui.dialogs.confirm  # noqa: F401
    import sessionview.ui.dialogs.edit  # noqa: F401
    import sessionview.ui.dialogs.export  # noqa: F401
    import sessionview.ui.dialogs.help  # noqa: F401
    import sessionview.ui.dialogs.history  # noqa: F401
    import sessionview.ui.screens.browser  # noqa: F401
    import sessionview.ui.screens.context  # noqa: F401
    import sessionview.ui.screens.outline  # noqa: F401
    import sessionview.ui.screens.prompts  # noqa: F401
    import sessionview.ui.screens.session  # noqa: F401

    found: list[type] = []
    todo = [DOMNode]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("sessionview.ui"):
            found.append(cls)
    return found


def binding_ids() -> set[str]:
    ids: set[str] = set()
    for cls in _classes():
        for b in cls.__dict__.get("BINDINGS", ()):
            binding_id = getattr(b, "id", None)
            if binding_id:
                ids.add(binding_id)
    return ids


def valid_key(key: str) -> bool:
    """Whether ``key`` (``ctrl+r``, ``question_mark``, ``d``) names a key Textual can report."""
    *mods, name = key.strip().split("+")
    if not name or any(m not in MODIFIERS for m in mods):
        return False
    if len(name) == 1:
        return True
    names = {k.value for k in Keys} | set(KEY_ALIASES) | set(KEY_NAME_REPLACEMENTS.values()) | set(KEY_TO_UNICODE_NAME)
    return name in names or key_to_character(name) is not None or name.startswith("f") and name[1:].isdigit()


def check_keymap(keymap: dict[str, str], path: str, ids: Iterable[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """The entries that can be applied, and what is wrong with the others (``path:line: …``)."""
    from sessionview.core.config import where

    known = set(ids) if ids is not None else binding_ids()
    good: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, keys in keymap.items():
        at = where(path, binding_id, "keymap")
        if binding_id not in known:
            close = difflib.get_close_matches(binding_id, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else " (the help screen, ?, lists every id)"
            problems.append(f"{at}: [keymap] unknown binding id {binding_id!r}{hint}")
            continue
        bad = [k.strip() for k in keys.split(",") if not valid_key(k)]
        if bad:
            problems.append(f"{at}: [keymap] {binding_id}: unknown key {', '.join(repr(k) for k in bad)} (e.g. \"ctrl+r\", \"d\", \"f5\")")
            continue
        good[binding_id] = keys
    return good, problems
