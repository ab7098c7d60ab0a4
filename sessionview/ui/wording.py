"""How the app words things: counts with their plural (``1 record``, ``2 records``), and the core's refusals
made the app's own: the core says what and why, and flags what a forced operation would do
(:attr:`~sessionview.core.errors.Refused.forceable`, ``suggestion``); in the app a key does it, so the advice
is said in the app's terms (``the nearest valid range is #2-#3``), never as a command-line option."""

from __future__ import annotations

import re

from sessionview.core import text as _text


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 record``, ``2 records``, ``1,024 lines`` (``many`` for a plural that is not word + s)."""
    return _text.plural(n, word, many, grouped=True)


#: the core's advice to edit a record as JSON (an invalid edit, not a refusal), as the app's editor says it
_JSON_ADVICE = re.compile(r"(?:replace it(?: whole)? with|use) --json(?: to (?:replace it whole|replace the message|edit the blocks))?")


def app_advice(what: BaseException | str) -> str:
    """A core refusal (or its message) as the app says it: with its nearest valid range in ``#N`` terms
    (``suggestion``), and no command-line advice. Whether it can be done anyway is the caller's key to offer
    (``forceable``)."""
    text = str(what)
    suggestion = getattr(what, "suggestion", None)
    if suggestion:
        first, last = suggestion
        if getattr(what, "widen", None) == "down":
            text += f"; the nearest valid point is to keep #1-#{first - 1}"
        else:
            text += f"; the nearest valid range is #{first}-#{last}"
    return _JSON_ADVICE.sub("edit its JSON", text)


def problem_text(kind: str, message: str) -> str:
    """``invalid JSON: Expecting value…``; a message that already starts with its kind is said once
    (``duplicate keys (the last one wins)``, not ``duplicate keys: duplicate keys…``)."""
    if not message or message == kind:
        return kind
    if message.casefold().startswith(kind.casefold()):
        return message
    return f"{kind}: {message}"


def compaction_label(name: str) -> str:
    """The label of a compaction marker: ``compacted · sliding_window``, or ``compacted`` alone when the
    marker's own name already says it (``compacted · compacted``)."""
    return name if name.casefold().startswith("compact") else f"compacted · {name}"
