"""Recorded usage and time, read from real session files (tests/fixtures/real): counted once per response,
real where the file records it, and times relative to the session's start."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionview.core.doc.model import Kind, ToolCall, ToolResult, View
from sessionview.core.view import timing
from sessionview.core.view.transcript import TranscriptModel
from sessionview.core.view.usage import Usage, UsageTotals, recorded

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"


def stats_of(path: Path):
    m = TranscriptModel.open(str(path))
    try:
        s = m.compute_stats()
        assert s is not None
        return s
    finally:
        m.close()


def test_claude_code_usage_counts_a_streamed_message_once():
    # lines 3 and 4 are two streamed blocks of msg_017zj75…: the same usage, repeated
    s = stats_of(REAL / "claude-code" / "daaain-sidechain_integrated.jsonl")
    u = s.usage
    assert u.records == 3
    assert u.sum == Usage(input=3 + 3 + 3, output=365 + 183 + 190, cache_read=141272, cache_write=141272 + 19830 + 2952)
    assert u.models == {"claude-sonnet-4-5-20250929": 4}
    assert u.last_context == 3 + 141272 + 2952


def test_claude_code_usage_sums_every_response():
    s = stats_of(REAL / "claude-code" / "daaain-representative_messages.jsonl")
    assert s.usage.sum == Usage(input=25 + 45 + 78 + 25 + 45, output=120 + 85 + 95 + 35 + 110)
    assert s.usage.peak_context == 78


def test_codex_token_count_events_counted_once():
    s = stats_of(REAL / "codex" / "agent-sessions-schema-catalog.jsonl")
    u = s.usage
    assert u.recorded
    # the one non-zero token_count: 16341 input of which 3584 cached, 81 output
    assert u.sum.cache_read == 3584 and u.sum.input == 16341 - 3584 and u.sum.output == 81
    assert u.peak_context == 16341
    assert "gpt-5.5" in u.models  # from turn_context


def test_codex_repeated_event_not_counted_twice():
    def event(n: int, total: int, last: int) -> View:
        value = {
            "timestamp": "2026-01-01T00:00:00Z",
            "type": "event_msg",
            "payload": {"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": total, "output_tokens": 1},
                "last_token_usage": {"input_tokens": last, "output_tokens": 1},
            }},
        }
        return View(n, Kind.META, value=value)

    t = UsageTotals()
    t.add(event(1, 100, 100))
    t.add(event(2, 100, 100))  # the same event again (a rate-limit update)
    t.add(event(3, 250, 150))
    assert t.sum == Usage(input=250, output=2)


def test_pi_usage_is_real():
    s = stats_of(REAL / "pi" / "v1-before-compaction.excerpt.jsonl")
    assert s.usage.recorded and s.usage.sum.cache_read > 0
    assert "claude-opus-4-5" in s.usage.models


def test_gemini_tokens_input_includes_cached():
    s = stats_of(REAL / "gemini" / "agent-sessions-jsonl_v040.jsonl")
    u = s.usage
    assert u.sum == Usage(input=11855 + (12069 - 11502), output=81 + 147, cache_read=11502)
    assert u.models == {"gemini-3-flash-preview": 2}


def test_a_file_that_records_nothing_has_no_usage():
    s = stats_of(REAL / "claude-code" / "simonw-sample_session.jsonl")
    assert not s.usage.recorded and s.tokens > 0  # the estimate is all there is


def test_brute_fixture_records_no_usage_and_no_time():
    s = stats_of(Path(__file__).resolve().parent.parent / "fixtures" / "brute-session.jsonl")
    assert not s.usage.recorded
    assert s.timing.start is None and s.timing.duration is None


def test_recorded_reads_nothing_from_an_invalid_view():
    assert recorded(View(1, Kind.INVALID)) is None


# -- time -------------------------------------------------------------------------------------------


def test_timing_of_a_claude_code_session():
    s = stats_of(REAL / "claude-code" / "daaain-sidechain_integrated.jsonl")
    t = s.timing
    assert t.start == timing.parse_time("2025-11-19T22:53:34.908Z")
    assert t.duration == pytest.approx(125.882, abs=0.001)
    # the Task call (#1) was answered at #2, 1m 59.555s later; the quiet before #2 and #5 is a gap
    assert t.calls_timed == 1 and t.longest_call is not None
    assert t.longest_call[1] == 2 and t.longest_call[0] == pytest.approx(119.555, abs=0.001)
    assert [n for n, _ in t.gaps] == [2, 5]


def test_transcript_time_notes_are_relative_to_the_start():
    m = TranscriptModel.open(str(REAL / "claude-code" / "daaain-sidechain_integrated.jsonl"))
    try:
        m.stats = m.compute_stats()
        assert timing.note(m, 1, m.view(1)) == "+0:00"
        assert timing.note(m, 2, m.view(2)) == "took 1m 59s · +1:59"  # a result: its call's duration, no gap twice
        assert timing.note(m, 5, m.view(5)) == "⏸ 1m 17s · +1:22"  # the quiet before it
        assert timing.note(m, 6, m.view(6)) == "+2:05"
        assert timing.call_seconds(m, m.view(2)) == pytest.approx(119.555, abs=0.001)
    finally:
        m.close()


def test_pi_call_durations():
    s = stats_of(REAL / "pi" / "v1-before-compaction.excerpt.jsonl")
    assert s.timing.calls_timed == 6
    assert s.timing.longest_call is not None and s.timing.longest_call[1] == 28


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "+0:00"), (59.9, "+0:59"), (723, "+12:03"), (3723, "+1:02:03"), (2 * 86400 + 11045, "+2d 03:04:05"), (-5, "-0:05")],
)
def test_relative(seconds, text):
    assert timing.relative(1000.0 + seconds, 1000.0) == text


@pytest.mark.parametrize(("seconds", "text"), [(0.44, "0.4s"), (12.7, "12s"), (185, "3m 05s"), (7440, "2h 04m"), (3 * 86400 + 7200, "3d 02h")])
def test_duration(seconds, text):
    assert timing.duration(seconds) == text


def test_parse_time_forms():
    assert timing.parse_time("2025-06-14T10:00:30Z") == timing.parse_time("2025-06-14T10:00:30+00:00")
    assert timing.parse_time("2025-06-14T12:00:30+02:00") == timing.parse_time("2025-06-14T10:00:30Z")
    assert timing.parse_time("2025-06-14T10:00:30") == timing.parse_time("2025-06-14T10:00:30Z")  # no zone: UTC
    assert timing.parse_time("yesterday") is None and timing.parse_time(None) is None


def test_absolute_local_time_shows_the_date_when_it_changes(monkeypatch):
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        a = timing.parse_time("2025-06-14T23:59:00Z")
        b = timing.parse_time("2025-06-15T00:01:00Z")
        assert a is not None and b is not None
        assert timing.absolute(a) == "2025-06-14 23:59:00"
        assert timing.absolute(a + 30, a) == "23:59:30"
        assert timing.absolute(b, a) == "2025-06-15 00:01:00"
        assert timing.absolute_full(a) == "2025-06-14 23:59:00 UTC"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_timing_merges_and_shifts_like_stats():
    def v(n: int, stamp: str, calls=(), results=()) -> View:
        return View(n, Kind.MESSAGE, role="x", timestamp=stamp, tool_calls=calls, tool_results=results)

    a = timing.Timing()
    a.add(v(1, "2026-01-01T00:00:00Z", calls=(ToolCall("c1", "shell", {}),)))
    b = timing.Timing()
    b.add(v(2, "2026-01-01T00:05:00Z", results=(ToolResult("c1", "ok"),)))
    a.merge(b)
    assert a.duration == 300 and [n for n, _ in a.gaps] == [2]
    shifted = a.shifted(10)
    assert shifted.gaps[0][0] == 12 and shifted.start == a.start


def test_a_gemini_json_document_has_times():
    s = stats_of(REAL / "gemini" / "agent-sessions-large.json")
    assert s.timing.start == timing.parse_time("2025-12-16T23:47:01.000Z")
    assert s.timing.duration is not None and s.timing.duration > 0
