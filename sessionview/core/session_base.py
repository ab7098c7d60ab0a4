"""The common interface of every kind of session: views, messages, problems, tool pairing, its load stamp.

A session is a JSONL file (:class:`sessionview.core.session.JsonlSession`) or a LittleGhost store document
(:class:`sessionview.core.littleghost.LittleGhostSession`); :func:`sessionview.core.session.open_session`
chooses between them.
"""

from __future__ import annotations

from typing import Any, Iterator

from sessionview.core.doc.model import Kind, Problem, ToolCall, ToolResult, View, merge_views
from sessionview.core.doc.pairing import Pairing, is_user_words, pair
from sessionview.core.formats.base import Adapter, Capabilities
from sessionview.core.store.stamp import LoadStamp

__all__ = ["Session", "RecordFacts", "record_facts", "finish_check", "keeps_for_pairing", "slim"]


class Session:
    """Common interface of JSONL sessions and LittleGhost documents."""

    path: str | None
    adapter: Adapter
    read_only_reason: str | None = None

    @property
    def format(self) -> str:
        return self.adapter.name

    @property
    def format_title(self) -> str:
        return self.adapter.title

    @property
    def capabilities(self) -> Capabilities:
        """What the editing code may do with this session (its format's, unless the kind says more)."""
        return self.adapter.capabilities

    def __len__(self) -> int:  # number of records (#N runs 1..len)
        raise NotImplementedError

    def view(self, number: int) -> View:
        raise NotImplementedError

    def views(self, first: int = 1, last: int | None = None) -> Iterator[View]:
        last = len(self) if last is None else min(last, len(self))
        for n in range(max(first, 1), last + 1):
            yield self.view(n)

    def stream(self, first: int = 1, last: int | None = None) -> Iterator[View]:
        """Views ``first..last`` for one pass over a session of any size (export): none is kept once yielded."""
        return self.views(first, last)

    def messages(self, first: int = 1, last: int | None = None) -> list[View]:
        """Views with streamed blocks of one message merged."""
        return merge_views(list(self.views(first, last)))

    def document_problems(self) -> list[Problem]:
        """Problems of the document as a whole (e.g. a digest mismatch)."""
        return []

    def pairing(self) -> Pairing:
        return pair(self.views())

    def check(self) -> list[Problem]:
        """Every problem: per record, then tool pairing, then document-wide."""
        facts = RecordFacts()
        for v in self.views():
            record_facts(facts, v)
        return finish_check(self, [facts])

    def _binary(self) -> bool:
        """Whether the file's first bytes look binary (a NUL, or mostly bytes that are not UTF-8 text)."""
        return False

    @property
    def stamp(self) -> LoadStamp:
        """The save layer's stamp of what was loaded (the file on disk is compared with it before a save)."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class RecordFacts:
    """What ``check`` keeps of a run of records: their problems, and slim views for the whole-file rules."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.slim: list[Slim] = []  # compact: a View costs several times more
        self.count = 0
        self.not_utf8 = 0
        self.messages = False  # a message or compaction of a known format was seen


def keeps_for_pairing(v: View) -> bool:
    """Whether the whole-file rules (:func:`~sessionview.core.doc.pairing.pair`) need record ``v``: a new
    rule over other records (user messages, say) widens this."""
    return bool(v.tool_calls or v.tool_results) or is_user_words(v)


def record_facts(facts: RecordFacts, v: View) -> None:
    """The per-record part of ``check`` (the hook for a new per-record rule)."""
    facts.problems.extend(v.problems)
    facts.not_utf8 += any(p.kind == "not UTF-8" for p in v.problems)
    facts.count += 1
    facts.messages = facts.messages or v.kind in (Kind.MESSAGE, Kind.COMPACTION)
    if keeps_for_pairing(v):
        facts.slim.append(
            (v.number, v.kind, tuple((c.id, c.name) for c in v.tool_calls), tuple((r.call_id, r.is_error, r.name) for r in v.tool_results), v.numbers,
             v.role, v.subagent, v.injected)
        )


def finish_check(session: Session, parts: list[RecordFacts]) -> list[Problem]:
    """The whole-file part of ``check`` over the facts of consecutive runs of records, in order."""
    problems: list[Problem] = list(session.document_problems())
    for part in parts:
        problems.extend(part.problems)
    problems.extend(pair(unslim(t) for part in parts for t in part.slim).problems())
    count = sum(part.count for part in parts)
    not_utf8 = sum(part.not_utf8 for part in parts)
    if count and not_utf8 * 2 >= count and session._binary():
        # garbage bytes, not a session with a few bad lines: one finding instead of one per "line"
        return [Problem("binary file", f"not text: {not_utf8} of {count} pieces between newlines are not UTF-8", None)]
    if not any(part.messages for part in parts) and not any(p.severity == "error" for p in problems):
        problems.append(Problem("no messages", f"no messages of a known format ({session.format_title})", None))
    problems.sort(key=lambda p: (p.number or 0))
    return problems


Slim = tuple[int, Kind, tuple[tuple[Any, str], ...], tuple[tuple[Any, Any, Any], ...], Any, Any, Any, bool]


def unslim(t: Slim) -> View:
    """The slim view (:func:`slim`) of a record from what :func:`record_facts` kept of it."""
    number, kind, calls, results, numbers, role, subagent, injected = t
    return View(
        number, kind, role=role, tool_calls=tuple(ToolCall(i, name, None) for i, name in calls),
        tool_results=tuple(ToolResult(cid, "", err, name) for cid, err, name in results), numbers=numbers,
        subagent=subagent, injected=injected,
    )


def slim(v: View) -> View:
    """A view with only what pairing needs (ids, names, numbers), so a check of a huge file keeps little in
    memory: the arguments of the calls and the content of the results are dropped."""
    calls = tuple(ToolCall(c.id, c.name, None) for c in v.tool_calls)
    results = tuple(ToolResult(r.call_id, "", r.is_error, r.name) for r in v.tool_results)
    return View(
        v.number, v.kind, role=v.role, tool_calls=calls, tool_results=results, numbers=v.numbers,
        subagent=v.subagent, injected=v.injected,
    )
