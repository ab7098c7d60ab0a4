"""How the app words things: counts with their plural (``1 record``, ``2 records``), and the core's messages
made the app's own (the core speaks to the command line: ``use --force``, ``--keep 18``; in the app a key
does it, so that advice is left out or said in the app's terms)."""

from __future__ import annotations

import re

IRREGULAR = {"match": "matches", "summary": "summaries", "entry": "entries", "this": "these"}


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 record``, ``2 records``, ``1,024 lines`` (``many`` for a plural that is not word + s)."""
    return f"{n:,} {word if n == 1 else (many or IRREGULAR.get(word) or word + 's')}"


_CLI_ADVICE = [
    # (pattern, replacement): the command line's advice as the app says it
    (re.compile(r"[.;,]?\s*Use --force to (?:do|write) it anyway\.?", re.I), ""),
    (re.compile(r",? or use --force\b"), ""),
    (re.compile(r"[.;,]?\s*use --force\b\.?", re.I), ""),
    (re.compile(r"\. Stop it or force the save\b"), ". Stop it first"),
    (re.compile(r"the nearest valid point is --keep (\d+)"), r"the nearest valid point is to keep #1-#\1"),
    (re.compile(r"the nearest valid range is (\d+):(\d+)"), r"the nearest valid range is #\1-#\2"),
    (re.compile(r"replace it(?: whole)? with --json"), "edit its JSON"),
]


def app_advice(text: str) -> str:
    """A core message without the command line's advice (``Use --force to do it anyway``...)."""
    for pattern, repl in _CLI_ADVICE:
        text = pattern.sub(repl, text)
    return text.rstrip(" ;,") if text.rstrip().endswith((";", ",")) else text


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
