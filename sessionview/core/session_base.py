"""The common interface of every kind of session: views, messages, problems, tool pairing, its load stamp.

A session is a JSONL file (:class:`sessionview.core.session.JsonlSession`) or a LittleGhost store document
(:class:`sessionview.core.littleghost.LittleGhostSession`); :func:`sessionview.core.session.open_session`
chooses between them.
"""

from __future__ import annotations

from typing import Any, Iterator

from sessionview.core.doc.model import Kind, Problem, ToolCall, ToolResult, View, merge_views
from sessionview.core.doc.pairing import CallLedger, Pairing, is_user_words, pair
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
        """Let go of what the session holds (a helper process, the file's descriptor): idempotent, from any
        thread. The kinds that hold nothing do nothing."""

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RecordFacts:
    """What ``check`` keeps of a run of records: their problems, and the tool calls and results for the
    whole-file rules. The first run of a file feeds them to a :class:`CallLedger` at once (``direct``); a later
    run (the second half, in another process) keeps them as compact pickled blocks, fed to the ledger after
    the runs before it."""

    BLOCK = 4096  # records with tools per pickled block

    def __init__(self, direct: bool = True) -> None:
        self.problems: list[Problem] = []
        self.ledger: CallLedger | None = CallLedger() if direct else None
        self.blocks: list[bytes] = []  # pickled lists of (number, calls, results, what): what is MAIN, SUB or USER
        self._block: list[tuple[int, tuple[tuple[Any, str], ...], tuple[Any, ...], int]] = []
        self.count = 0
        self.not_utf8 = 0
        self.messages = False  # a message or compaction of a known format was seen

    MAIN, SUB, USER = 0, 1, 2  # a record with tools of the main chain, of a subagent; a user's own message

    def tools(self, number: int, calls: tuple[tuple[Any, str], ...], results: tuple[Any, ...], sub: bool = False) -> None:
        if self.ledger is not None:
            self.ledger.feed(number, calls, results, sub)
            return
        self._hold((number, calls, results, self.SUB if sub else self.MAIN))

    def user(self, number: int) -> None:
        """A user's own message (the rule of a user message between a call and its result needs them)."""
        if self.ledger is not None:
            self.ledger.user(number)
            return
        self._hold((number, (), (), self.USER))

    def _hold(self, item: tuple[int, tuple[tuple[Any, str], ...], tuple[Any, ...], int]) -> None:
        self._block.append(item)
        if len(self._block) >= self.BLOCK:
            self.seal()

    def seal(self) -> None:
        """Pickle the records held since the last block (before the facts are handed on)."""
        if self._block:
            import pickle  # here: only check's second half pickles (a write command never does)

            self.blocks.append(pickle.dumps(self._block, protocol=pickle.HIGHEST_PROTOCOL))
            self._block = []

    def replay(self, ledger: CallLedger) -> None:
        self.seal()
        import pickle

        for block in self.blocks:
            for number, calls, results, what in pickle.loads(block):
                if what == self.USER:
                    ledger.user(number)
                else:
                    ledger.feed(number, calls, results, what == self.SUB)
        self.blocks = []

    def __getstate__(self) -> dict[str, Any]:
        self.seal()
        return self.__dict__


def keeps_for_pairing(v: View) -> bool:
    """Whether the whole-file rules (:class:`~sessionview.core.doc.pairing.CallLedger`) need record ``v``: a new
    rule over other records (user messages, say) widens this."""
    return bool(v.tool_calls or v.tool_results) or is_user_words(v)


def record_facts(facts: RecordFacts, v: View) -> None:
    """The per-record part of ``check`` (the hook for a new per-record rule)."""
    if v.problems:
        facts.problems.extend(v.problems)
        facts.not_utf8 += any(p.kind == "not UTF-8" for p in v.problems)
    facts.count += 1
    if not facts.messages:
        facts.messages = v.kind is Kind.MESSAGE or v.kind is Kind.COMPACTION
    if v.tool_calls or v.tool_results:
        facts.tools(v.number, tuple((c.id, c.name) for c in v.tool_calls), tuple(r.call_id for r in v.tool_results), v.subagent is not None)
    elif is_user_words(v):
        facts.user(v.number)


def finish_check(session: Session, parts: list[RecordFacts]) -> list[Problem]:
    """The whole-file part of ``check`` over the facts of consecutive runs of records, in order (only the first
    may be ``direct``)."""
    problems: list[Problem] = list(session.document_problems())
    for part in parts:
        problems.extend(part.problems)
    ledger = parts[0].ledger if parts and parts[0].ledger is not None else CallLedger()
    for i, part in enumerate(parts):
        if part.ledger is None:
            part.replay(ledger)
        elif i:
            raise ValueError("only the first run of records feeds the ledger directly")
    problems.extend(ledger.problems())
    count = sum(part.count for part in parts)
    not_utf8 = sum(part.not_utf8 for part in parts)
    if count and not_utf8 * 2 >= count and session._binary():
        # garbage bytes, not a session with a few bad lines: one finding instead of one per "line"
        return [Problem("binary file", f"not text: {not_utf8} of {count} pieces between newlines are not UTF-8", None)]
    if not any(part.messages for part in parts) and not any(p.severity == "error" for p in problems):
        problems.append(Problem("no messages", f"no messages of a known format ({session.format_title})", None))
    problems.sort(key=lambda p: (p.number or 0))
    return problems


def slim(v: View) -> View:
    """A view with only what pairing needs (ids, names, numbers), so a check of a huge file keeps little in
    memory: the arguments of the calls and the content of the results are dropped."""
    calls = tuple(ToolCall(c.id, c.name, None) for c in v.tool_calls)
    results = tuple(ToolResult(r.call_id, "", r.is_error, r.name) for r in v.tool_results)
    return View(
        v.number, v.kind, role=v.role, tool_calls=calls, tool_results=results, numbers=v.numbers,
        subagent=v.subagent, injected=v.injected,
    )
