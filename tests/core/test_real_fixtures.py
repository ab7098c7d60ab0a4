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


# -- Gemini CLI and other whole JSON documents --------------------------------------------------------


def test_gemini_legacy_document_is_messages_with_thoughts_and_linked_tool_calls():
    s = opened("gemini/agent-sessions-large.json")
    assert s.format_title == "Gemini CLI chat document"
    views = list(s.views())
    assert all(v.kind is Kind.MESSAGE for v in views)
    assert views[0].role == "user" and views[0].text == "Run a command"
    assert views[1].role == "assistant" and views[1].reasoning == "Placeholder thoughts for schema coverage."
    assert views[1].tool_calls[0].name == "run_shell_command"
    assert "Exit Code: 0" in views[1].tool_results[0].content
    assert s.pairing().result_of("run_shell_command-1") == 2
    assert s.check() == []
    assert s.read_only_reason and "byte for byte" in s.read_only_reason


def test_gemini_small_document_and_api_history_document():
    small = opened("gemini/agent-sessions-small.json")
    assert [v.role for v in small.views()] == ["user", "assistant"] and small.check() == []
    drift = opened("gemini/agent-sessions-schema_drift.json")
    assert [v.text for v in drift.views()] == ["Describe this image:\n[inlineData]", "It looks like..."]


def test_gemini_jsonl_layout_is_read_only_with_its_reason():
    s = opened("gemini/agent-sessions-jsonl_v040.jsonl")
    assert s.format == "gemini"
    views = list(s.views())
    assert [v.kind for v in views].count(Kind.MESSAGE) == 3
    assert s.pairing().result_of("run_shell_command_stage0") == 4
    assert s.check() == []
    assert "same id" in s.read_only_reason


def test_gemini_document_edit_is_refused_with_the_reason(tmp_path):
    import shutil

    import pytest

    from sessionview.core.edit.change import open_editable
    from sessionview.core.errors import Refused

    p = tmp_path / "session-x.json"
    shutil.copy(REAL / "gemini/agent-sessions-small.json", p)
    with pytest.raises(Refused, match="read-only: Gemini CLI rewrites this document whole"):
        open_editable(str(p))


def test_a_healthy_pretty_printed_document_of_unknown_format_is_never_broken_lines(tmp_path):
    import json

    p = tmp_path / "package.jsonl"
    p.write_text(json.dumps({"name": "x", "deps": {"a": 1, "b": [1, 2]}}, indent=2))
    s = open_session(p)
    assert len(s) == 1 and s.format_title == "JSON document of unknown format"
    assert not any(pr.kind == "invalid JSON" for pr in s.check())


def test_a_pretty_printed_list_of_openai_messages_is_shown_as_messages(tmp_path):
    import json

    p = tmp_path / "chat.json"
    p.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], indent=2))
    s = open_session(p)
    assert [(v.role, v.text) for v in s.views()] == [("user", "hi"), ("assistant", "hello")]


def test_a_truncated_pretty_printed_document_is_one_problem_not_hundreds(tmp_path):
    p = tmp_path / "session-cut.json"
    p.write_bytes((REAL / "gemini/agent-sessions-large.json").read_bytes()[:1500])
    problems = open_session(p).check()
    assert [pr.kind for pr in problems] == ["invalid JSON"]


def test_the_session_list_lists_and_describes_a_gemini_document_from_its_head(tmp_path):
    import shutil

    from sessionview.core import catalog

    shutil.copy(REAL / "gemini/agent-sessions-large.json", tmp_path / "session-a.json")
    (tmp_path / "package.json").write_text('{\n  "name": "x"\n}\n')
    entries = list(catalog.scan(str(tmp_path)))
    assert [e.rel for e in entries] == ["session-a.json"]
    assert catalog.describe(entries[0].path)[:2] == ("Gemini CLI chat document", 7)


# -- Claude Code ----------------------------------------------------------------------------------------


def test_claude_code_inline_sidechain_lines_are_the_subagents_and_linked_to_the_task_call():
    from sessionview.core.formats.claude_code import subagent_calls

    s = opened("claude-code/daaain-sidechain_integrated.jsonl")
    views = s.messages()
    assert [v.subagent for v in views] == [None, None, "", "e1c84ba5", None]
    assert subagent_calls(s.views()) == {"e1c84ba5": "toolu_01JA2mLseQCAW3MdwPE4qWEk"}
    # the published file was cut short ("..."): the subagent's Grep result is not the one its call made
    assert [(p.kind, p.number) for p in s.check()] == [("dangling tool call", 4), ("orphan tool result", 5)]


def test_claude_code_meta_lines_and_command_wrappers_are_injected():
    s = opened("claude-code/daaain-edge_cases.jsonl")
    injected = [v for v in s.views() if v.injected]
    assert injected and all(v.role == "user" for v in injected)
    assert any("<command-name>" in v.text for v in injected)
    assert any("<local-command-stdout>" in v.text for v in injected)
    assert not any(v.injected for v in s.views() if v.role == "assistant")
    catalog = opened("claude-code/agent-sessions-small-catalog.jsonl")
    assert sum(v.injected for v in catalog.views()) >= 3


def test_a_summary_line_with_a_message_but_no_summary_string_shows_its_text():
    from sessionview.core.formats.claude_code import ClaudeCodeAdapter

    v = ClaudeCodeAdapter().view(1, {"type": "summary", "message": {"role": "user", "content": "what happened"}})
    assert v.label == "summary" and v.text == "what happened"


def test_subagent_files_are_linked_to_their_parent_session():
    from sessionview.core.formats.claude_code import agent_id_of, parent_of, subagent_files

    main = REAL / "claude-code/agent-sessions-subagent-project/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"
    subs = subagent_files(str(main))
    assert [pathlib.Path(p).name for p in subs] == ["agent-a0ad4f44468bdf20d.jsonl"]
    assert parent_of(subs[0]) == str(main) and agent_id_of(subs[0]) == "a0ad4f44468bdf20d"
    assert all(v.subagent == "a0ad4f44468bdf20d" for v in open_session(subs[0]).views() if v.kind is Kind.MESSAGE)


def test_claude_code_fixtures_have_only_the_findings_their_authors_put_there():
    clean = ["daaain-dag_compact_after_rewind.jsonl", "daaain-representative_messages.jsonl", "simonw-sample_session.jsonl",
             "agent-sessions-subagent-project/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"]
    for name in clean:
        s = opened("claude-code/" + name)
        assert s.format == "claude-code" and s.check() == [], name
        assert sum(v.kind is Kind.MESSAGE for v in s.views()) >= 2, name


# -- Codex ----------------------------------------------------------------------------------------------


def test_codex_spawn_and_wait_calls_answered_by_collab_events_are_not_dangling():
    import json

    from sessionview.core.session import JsonlSession

    def line(payload, t="response_item"):
        return json.dumps({"timestamp": "2026-04-25T19:05:06.724Z", "type": t, "payload": payload})

    rows = [
        line({"id": "t1", "timestamp": "2026-04-25T19:05:00Z", "cwd": "/"}, "session_meta"),
        line({"type": "function_call", "name": "spawn_agent", "arguments": "{}", "call_id": "call_YOG7"}),
        line({"type": "collab_agent_spawn_end", "call_id": "call_YOG7", "sender_thread_id": "a", "new_thread_id": "b"}, "event_msg"),
        line({"type": "function_call", "name": "wait_agent", "arguments": "{}", "call_id": "wait-1"}),
        line({"type": "collab_waiting_end", "call_id": "wait-1", "sender_thread_id": "a", "statuses": {}}, "event_msg"),
        line({"type": "function_call", "name": "close_agent", "arguments": "{}", "call_id": "c-1"}),
        line({"type": "item_completed", "item": {"type": "CollabAgentToolCall", "id": "c-1", "status": "completed"}}, "event_msg"),
    ]
    s = JsonlSession.from_bytes(("\n".join(rows) + "\n").encode())
    assert s.format == "codex"
    assert s.check() == []
    assert s.pairing().result_of("call_YOG7") == 3 and s.pairing().result_of("c-1") == 7


def test_codex_schema_catalog_reads_every_line_with_only_the_trimmed_ids_flagged():
    s = opened("codex/agent-sessions-schema-catalog.jsonl")
    assert s.format == "codex"
    views = list(s.views())
    assert sum(v.kind is Kind.COMPACTION for v in views) >= 6
    assert not any(v.kind is Kind.INVALID for v in views)
    # every call_id in this catalog is "[trimmed for fixture]", so two calls share one id
    assert {p.kind for p in s.check()} <= {"duplicate tool call id", "schema warning"}


# -- edits that empty a session -------------------------------------------------------------------------


def test_truncate_keep_0_needs_force(tmp_path):
    import pytest

    from sessionview.core.edit.change import open_editable
    from sessionview.core.edit.plan import plan_truncate
    from sessionview.core.errors import Refused

    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n')
    s = open_editable(str(p))
    with pytest.raises(Refused, match="empty the session"):
        plan_truncate(s, 0)
    assert plan_truncate(s, 0, force=True).first == 1
