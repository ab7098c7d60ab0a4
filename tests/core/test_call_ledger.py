"""``check``'s compact pairing (:class:`CallLedger`, fed record by record) finds what :func:`pair` finds."""

import random

from sessionview.core.doc.model import Kind, ToolCall, ToolResult, View
from sessionview.core.doc.pairing import CallLedger, pair
from sessionview.core.session_base import RecordFacts, record_facts


def _views(rng):
    ids = [f"c{i}" for i in range(6)] + [None, 7]
    views = []
    for n in range(1, rng.randrange(1, 14)):
        if rng.random() < 0.2:  # a user's own words (they interrupt the calls still open), or a subagent's
            views.append(View(n, Kind.MESSAGE, role="user", text="u", subagent=rng.choice([None, None, "a1"])))
            continue
        calls = tuple(ToolCall(rng.choice(ids), rng.choice(["a", "b", ""]), None) for _ in range(rng.randrange(3)))
        results = tuple(ToolResult(rng.choice(ids), "") for _ in range(rng.randrange(3)))
        views.append(View(n, Kind.MESSAGE, tool_calls=calls, tool_results=results, subagent=rng.choice([None, None, None, "a1"])))
    return views


def test_the_ledger_finds_the_problems_pair_finds_on_random_records():
    rng = random.Random(14)
    for _ in range(5000):
        views = _views(rng)
        ledger, facts = CallLedger(), RecordFacts(direct=True)
        for v in views:
            record_facts(facts, v)
            if v.tool_calls or v.tool_results:
                ledger.feed(v.number, [(c.id, c.name) for c in v.tool_calls], [r.call_id for r in v.tool_results], v.subagent is not None)
            elif v.role == "user" and v.subagent is None:
                ledger.user(v.number)
        assert facts.ledger.problems() == ledger.problems() == pair(views).problems()
    assert any(pair(_views(random.Random(i))).interrupted for i in range(200))  # the rule is exercised


def test_a_later_run_replays_its_pickled_blocks_in_order(monkeypatch):
    monkeypatch.setattr(RecordFacts, "BLOCK", 2)
    rng = random.Random(7)
    for _ in range(500):
        views = _views(rng)
        cut = rng.randrange(len(views) + 1)
        first, second = RecordFacts(direct=True), RecordFacts(direct=False)
        for v in views[:cut]:
            record_facts(first, v)
        for v in views[cut:]:
            record_facts(second, v)
        import pickle

        second = pickle.loads(pickle.dumps(second))  # as it comes from the child process
        second.replay(first.ledger)
        assert first.ledger.problems() == pair(views).problems()
