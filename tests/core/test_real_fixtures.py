"""Real published session files (tests/fixtures/real/, see SOURCES.md there): each is read as its format, with its
messages, tool calls and results linked, and without false alarms."""

import pathlib

from sessionview.core.doc.model import Kind
from sessionview.core.session import open_session

REAL = pathlib.Path(__file__).parent.parent / "fixtures" / "real"


def opened(rel):
    return open_session(REAL / rel)


def kinds(problems):
    return sorted({p.kind for p in problems})


# -- pi -----------------------------------------------------------------------------------------------


def test_pi_v1_header_with_provider_and_model_is_a_pi_session_with_calls_results_and_compactions():
    s = opened("pi/v1-before-compaction.excerpt.jsonl")
    assert s.format == "pi"
    views = list(s.views())
    assert views[0].kind is Kind.META and "version: 1" in views[0].text and "anthropic/claude-opus-4-5" in views[0].text
    assert sum(v.kind is Kind.COMPACTION for v in views) == 2
    assert sum(len(v.tool_calls) for v in views) >= 5
    assert any(v.reasoning for v in views)
    assert not s.pairing().dangling and not s.pairing().orphans
    assert s.check() == []


def test_pi_v1_header_without_provider_is_a_pi_session():
    s = opened("pi/v1-header-no-model-compaction.excerpt.jsonl")
    assert s.format == "pi"
    views = list(s.views())
    assert any(v.kind is Kind.COMPACTION for v in views)
    # the excerpt cuts the file after line 12: the one result whose call was cut away is the only finding
    assert [(p.kind, p.number) for p in s.check()] == [("orphan tool result", 13)]


def test_pi_two_objects_on_one_line_is_one_invalid_line_not_a_fallback():
    s = opened("pi/v1-two-objects-on-one-line.excerpt.jsonl")
    assert s.format == "pi"
    assert [(p.kind, p.number) for p in s.check()] == [("invalid JSON", 4)]


def test_pi_v3_is_clean():
    s = opened("pi/agent-sessions-v3-small.jsonl")
    assert s.format == "pi" and s.check() == []
    assert sum(v.kind is Kind.COMPACTION for v in s.views()) == 2
