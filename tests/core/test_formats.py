"""Format adapters: detection, views, merging, pairing, and robustness on hostile values."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionview.core import formats
from sessionview.core.formats.anthropic import AnthropicAdapter
from sessionview.core.formats.brute import BruteAdapter
from sessionview.core.formats.claude_code import ClaudeCodeAdapter
from sessionview.core.formats.codex import CodexAdapter
from sessionview.core.formats.generic import GenericAdapter
from sessionview.core.formats.littleghost_jsonl import LittleGhostJsonlAdapter
from sessionview.core.formats.openai import OpenAIChatAdapter
from sessionview.core.formats.pi import PiAdapter
from sessionview.core.littleghost import LittleGhostStoreAdapter
from sessionview.core.doc.model import Kind
from sessionview.core.doc.pairing import pair
from sessionview.core.session import JsonlSession


def load(fixtures, name):
    return JsonlSession.load(fixtures / name)


def views(session):
    return list(session.views())


# -- detection --------------------------------------------------------------------------------------

FIXTURE_FORMATS = {
    "brute-session.jsonl": "brute",
    "claude-code.jsonl": "claude-code",
    "codex-rollout.jsonl": "codex",
    "codex-legacy.jsonl": "codex",
    "pi-agent.jsonl": "pi",
    "littleghost-messages.inferred.jsonl": "littleghost-jsonl",
    "openai-chat.jsonl": "openai",
    "anthropic-messages.jsonl": "anthropic",
}


@pytest.mark.parametrize("name,fmt", sorted(FIXTURE_FORMATS.items()))
def test_fixture_formats_are_detected(fixtures, name, fmt):
    s = load(fixtures, name)
    assert s.format == fmt
    assert s.format_title


def test_edge_case_fixture_is_plain_chat(fixtures):
    # role-keyed lines with extra keys: Brute-like or generic, never one of the richer formats
    assert load(fixtures, "roundtrip-edge-cases.jsonl").format in ("brute", "jsonl")


def test_registry_order_and_names():
    assert [a.name for a in formats.ADAPTERS] == [
        "codex",
        "claude-code",
        "pi",
        "gemini",
        "littleghost-jsonl",
        "openai",
        "anthropic",
        "brute",
    ]
    assert formats.by_name("jsonl").name == "jsonl"
    assert isinstance(formats.by_name("openai"), OpenAIChatAdapter)


@pytest.mark.parametrize(
    "values,expected",
    [
        ([], "jsonl"),
        ([{"role": "user", "content": "hi"}], "brute"),
        ([{"role": "user", "content": [{"type": "text", "text": "x"}], "metadata": {}}], "littleghost-jsonl"),
        ([{"role": "user", "content": [{"type": "text", "text": "x"}]}], "anthropic"),
        ([{"role": "system", "content": [{"type": "text", "text": "x"}]}], "openai"),
        ([{"role": "assistant", "content": "no", "refusal": "I can't"}], "openai"),
        (
            [{"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}],
            "openai",
        ),
        ([{"role": "assistant", "tool_calls": [{"id": "a", "name": "f", "arguments": {}}]}], "brute"),
        ([{"type": "summary", "summary": "t", "leafUuid": "u"}], "claude-code"),
        ([{"type": "user", "sessionId": "s", "uuid": "u", "message": {"role": "user", "content": "x"}}], "claude-code"),
        ([{"type": "session", "version": 3, "id": "x"}], "pi"),
        ([{"timestamp": "t", "type": "session_meta", "payload": {}}], "codex"),
        ([{"id": "x", "timestamp": "t", "instructions": None}], "codex"),
        ([{"record_type": "state"}, {"type": "message", "role": "user", "content": []}], "codex"),
        ([{"hello": 1}, [1, 2], "text", 5], "jsonl"),
    ],
)
def test_detection_rules(values, expected):
    assert formats.detect(values).name == expected


def test_codex_envelope_wins_over_role_lines():
    values = [{"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "user"}}, {"role": "user", "content": "x"}]
    assert formats.detect(values).name == "codex"


# -- Brute ------------------------------------------------------------------------------------------


def test_brute_still_works(fixtures):
    vs = views(load(fixtures, "brute-session.jsonl"))
    assert vs[1].tool_calls[0].id == "tc_01" and vs[1].tool_calls[0].arguments == {"command": "ls -la"}
    assert [v.compaction for v in vs if v.compaction] == ["summary", "tool_results", "sliding_window"]


# -- OpenAI -----------------------------------------------------------------------------------------


def test_openai_views(fixtures):
    vs = views(load(fixtures, "openai-chat.jsonl"))
    assert [v.role for v in vs] == ["system", "user", "assistant", "tool", "assistant", "user", "assistant"]
    assert all(v.kind is Kind.MESSAGE for v in vs)
    call = vs[2].tool_calls[0]
    assert (call.id, call.name) == ("call_W1", "get_weather")
    assert call.arguments == {"city": "São Paulo", "units": "metric"}
    assert call.raw_arguments == '{"city":"São Paulo","units":"metric"}'
    assert vs[2].text == ""  # content null
    assert vs[3].tool_results[0].call_id == "call_W1"
    assert vs[3].tool_results[0].content == '{"temp_c":21.5,"sky":"nublado"}'
    assert vs[5].text.startswith("[Summary of earlier conversation]")  # content as an array of parts
    assert all(not v.problems for v in vs)


def test_openai_raw_arguments_are_kept_verbatim():
    raw = '{"x":1e5,"s":"caf\\u00e9"}'
    line = json.dumps({"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": raw}}]})
    s = JsonlSession.from_bytes(line.encode() + b"\n")
    call = s.view(1).tool_calls[0]
    assert call.raw_arguments == raw
    assert call.arguments == {"x": 100000.0, "s": "café"}


def test_openai_invalid_arguments_are_shown_raw_with_a_warning():
    line = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": '}}]}
    v = OpenAIChatAdapter().view(1, line)
    assert v.tool_calls[0].arguments == '{"x": '
    probs = OpenAIChatAdapter().schema_problems(1, line)
    assert any("not valid JSON" in p.message for p in probs)


def test_openai_refusal_is_shown():
    v = OpenAIChatAdapter().view(1, {"role": "assistant", "content": None, "refusal": "I can't help"})
    assert "[refusal] I can't help" in v.text


# -- Anthropic --------------------------------------------------------------------------------------


def test_anthropic_views(fixtures):
    vs = views(load(fixtures, "anthropic-messages.jsonl"))
    assert [v.role for v in vs] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert vs[1].reasoning == "I should read the file."
    assert vs[1].text == "Reading it."
    assert vs[1].tool_calls[0].id == "toolu_01R" and vs[1].tool_calls[0].arguments == {"path": "config.yaml"}
    res = vs[2].tool_results[0]
    assert (res.call_id, res.content, res.is_error) == ("toolu_01R", "port: 8080\nname: señal", False)
    assert vs[3].reasoning == "[redacted thinking]" and vs[3].text == "The port is 8080."
    assert vs[4].text == "<summary>Earlier: read config.yaml, port 8080.</summary>\nNow change it to 9090."
    assert vs[6].tool_results[0].is_error is True
    assert vs[6].tool_results[0].content == "permission denied"


def test_anthropic_schema_warnings():
    probs = AnthropicAdapter().schema_problems(1, {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "x"}]})
    assert any("tool_result block in an assistant message" in p.message for p in probs)
    probs = AnthropicAdapter().schema_problems(1, {"role": "system", "content": "x"})
    assert any("role must be user or assistant" in p.message for p in probs)


# -- Claude Code ------------------------------------------------------------------------------------


def test_claude_code_views(fixtures):
    vs = views(load(fixtures, "claude-code.jsonl"))
    kinds = [v.kind for v in vs]
    assert kinds == [
        Kind.META,
        Kind.MESSAGE,
        Kind.MESSAGE,
        Kind.MESSAGE,
        Kind.MESSAGE,
        Kind.MESSAGE,
        Kind.MESSAGE,
        Kind.COMPACTION,
        Kind.COMPACTION,
        Kind.MESSAGE,
        Kind.META,
    ]
    assert vs[0].label == "summary" and vs[0].text == "Fix unicode test — ünïcödé"
    assert vs[2].group == vs[3].group == "msg_01A"
    assert vs[1].group is None  # user lines are never merged
    assert vs[4].tool_results[0].call_id == "toolu_01X" and vs[4].tool_results[0].is_error is True
    assert vs[7].compaction == "compact_boundary" and "Conversation compacted" in vs[7].text
    assert "trigger: auto" in vs[7].text
    assert vs[8].compaction == "summary" and vs[8].text.startswith("This session is being continued")
    assert vs[10].label == "file-history-snapshot"


def test_claude_code_streamed_blocks_merge_by_message_id(fixtures):
    s = load(fixtures, "claude-code.jsonl")
    merged = s.messages()
    assert len(merged) == len(s) - 1
    m = next(v for v in merged if v.group == "msg_01A")
    assert m.numbers == (3, 4)
    assert m.number == 3
    assert m.reasoning == "Run pytest first."
    assert [(c.id, c.name) for c in m.tool_calls] == [("toolu_01X", "Bash")]
    assert m.tool_calls[0].arguments == {"command": "pytest -q", "description": "Run tests"}
    # the sidechain message with another id stays its own view
    assert any(v.numbers == (7,) and v.text == "It is in tests/test_text.py line 12." for v in merged)


def test_claude_code_unknown_line_type_is_shown_raw():
    line = b'{"type":"brand-new-thing","sessionId":"s","uuid":"u","x":1}\n'
    s = JsonlSession.from_bytes(b'{"type":"summary","summary":"t","leafUuid":"u"}\n' + line)
    assert s.format == "claude-code"
    v = s.view(2)
    assert v.kind is Kind.UNKNOWN and v.label == "brand-new-thing"
    assert v.raw == line.rstrip(b"\n")


# -- Codex ------------------------------------------------------------------------------------------


def test_codex_views(fixtures):
    vs = views(load(fixtures, "codex-rollout.jsonl"))
    assert [v.label for v in vs if v.kind is Kind.META] == [
        "session_meta",
        "event_msg:user_message",
        "turn_context",
        "event_msg:token_count",
        "event_msg:context_compacted",
    ]
    assert vs[1].role == "user" and vs[1].text.startswith("<environment_context>")
    assert vs[2].text == "Compte les lignes de café.txt ☕"
    assert vs[5].reasoning == "**Counting lines**" and vs[5].role == "assistant"
    call = vs[6].tool_calls[0]
    assert (call.id, call.name) == ("call_abc123", "shell")
    assert call.raw_arguments == '{"command":["wc","-l","café.txt"]}'
    assert call.arguments == {"command": ["wc", "-l", "café.txt"]}
    res = vs[7].tool_results[0]
    assert (res.call_id, res.content, res.is_error) == ("call_abc123", "3 café.txt\n", False)
    assert vs[8].role == "assistant" and vs[8].text == "café.txt contient 3 lignes."
    assert vs[10].kind is Kind.COMPACTION and vs[10].compaction == "compacted"
    assert vs[10].text.startswith("Summary: user asked to count lines")


def test_codex_legacy_views(fixtures):
    vs = views(load(fixtures, "codex-legacy.jsonl"))
    assert vs[0].kind is Kind.META and vs[0].label == "session_meta"
    assert vs[1].kind is Kind.META and vs[1].label == "state"
    assert vs[2].role == "user" and vs[2].text == "Liste les fichiers puis ajoute c.txt ✨"
    assert vs[5].tool_calls[0].id == "call_L1" and vs[5].text == "$ ls -1"
    assert vs[6].tool_results[0].content == "a.txt\nb.txt\n" and vs[6].tool_results[0].is_error is False
    assert vs[8].tool_results[0].is_error is True  # exit code 1
    assert vs[9].tool_calls[0].name == "apply_patch" and vs[9].tool_calls[0].arguments.startswith("*** Begin Patch")
    assert vs[10].tool_results[0].call_id == "call_C1"


def test_codex_function_output_as_content_items():
    v = CodexAdapter().view(
        1,
        {"timestamp": "t", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "c", "output": [{"type": "input_text", "text": "hello"}]}},
    )
    assert v.tool_results[0].content == "hello"


# -- pi ---------------------------------------------------------------------------------------------


def test_pi_views(fixtures):
    vs = views(load(fixtures, "pi-agent.jsonl"))
    assert [(v.kind, v.label) for v in vs if v.kind is Kind.META] == [(Kind.META, "session"), (Kind.META, "model_change"), (Kind.META, "label")]
    assert vs[1].text == "anthropic/claude-sonnet-4-5"
    assert vs[2].role == "user" and vs[2].text == "Qu'y a-t-il dans src/ ? 🗂"
    assert vs[3].reasoning == "List the directory."
    assert vs[3].tool_calls[0].id == "toolu_P1" and vs[3].tool_calls[0].arguments == {"command": "ls src"}
    res = vs[4].tool_results[0]
    assert (res.call_id, res.name, res.is_error, res.content) == ("toolu_P1", "bash", False, "main.ts\nutf8-✓.ts")
    assert vs[6].kind is Kind.COMPACTION and vs[6].compaction == "compaction"
    assert vs[6].text.startswith("User asked what is in src/")
    assert vs[8].text == "listing → a0000005"


def test_pi_other_roles():
    a = PiAdapter()
    v = a.view(1, {"type": "message", "message": {"role": "bashExecution", "command": "ls", "output": "x\n", "exitCode": 0}})
    assert v.text == "$ ls\nx\n"
    v = a.view(2, {"type": "message", "message": {"role": "compactionSummary", "summary": "s", "tokensBefore": 5}})
    assert v.kind is Kind.COMPACTION and v.compaction == "summary" and v.text == "s"
    v = a.view(3, {"type": "branch_summary", "summary": "b", "fromId": "x"})
    assert v.kind is Kind.COMPACTION and v.compaction == "branch_summary"


# -- LittleGhost JSONL ------------------------------------------------------------------------------


def test_littleghost_jsonl_views(fixtures):
    vs = views(load(fixtures, "littleghost-messages.inferred.jsonl"))
    assert [v.role for v in vs] == ["user", "assistant", "tool", "assistant", "user", "developer"]
    assert vs[1].text == "Ich schaue nach."
    assert vs[1].tool_calls[0].id == "toolu_01" and vs[1].tool_calls[0].arguments == {"tz": "Europe/Zurich"}
    res = vs[2].tool_results[0]
    assert (res.call_id, res.content, res.is_error) == ("toolu_01", "14:05", False)
    assert all(not v.problems for v in vs)


def test_littleghost_schema_warnings():
    probs = LittleGhostJsonlAdapter().schema_problems(
        1, {"role": "robot", "content": [{"type": "tool_use", "id": "", "name": "x", "input": "{}"}], "metadata": {}, "name": "n"}
    )
    text = " | ".join(p.message for p in probs)
    assert "unknown key(s) 'name'" in text
    assert "unsupported role" in text
    assert "non-empty id and name" in text
    assert "input must be an object" in text


def test_littleghost_reasoning_and_error_status():
    v = LittleGhostJsonlAdapter().view(
        1,
        {
            "role": "tool",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": {"ok": False}, "status": "error"}, {"type": "reasoning", "text": "hmm"}],
            "metadata": {},
        },
    )
    assert v.tool_results[0].is_error is True and v.tool_results[0].content == '{"ok":false}'
    assert v.reasoning == "hmm"


# -- pairing ----------------------------------------------------------------------------------------

PAIRS = {
    "brute-session.jsonl": {"tc_01": (2, 3), "tc_02": (7, 8), "tc_03": (7, 9)},
    "claude-code.jsonl": {"toolu_01X": (4, 5)},
    "codex-rollout.jsonl": {"call_abc123": (7, 8)},
    "codex-legacy.jsonl": {"call_L1": (6, 7), "call_F1": (8, 9), "call_C1": (10, 11)},
    "pi-agent.jsonl": {"toolu_P1": (4, 5)},
    "littleghost-messages.inferred.jsonl": {"toolu_01": (2, 3)},
    "openai-chat.jsonl": {"call_W1": (3, 4)},
    "anthropic-messages.jsonl": {"toolu_01R": (2, 3), "toolu_01S": (6, 7)},
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_pairing_links_every_result_to_its_call(fixtures, name):
    s = load(fixtures, name)
    p = pair(s.views())
    assert p.dangling == [] and p.orphans == [] and p.duplicate_calls == {}
    assert {cid: (p.calls[cid], p.result_of(cid)) for cid in p.calls} == PAIRS[name]
    assert s.check() == []


def test_pairing_on_merged_claude_code_messages(fixtures):
    p = pair(load(fixtures, "claude-code.jsonl").messages())
    assert p.calls == {"toolu_01X": 3} and p.result_of("toolu_01X") == 5


# -- hostile values ---------------------------------------------------------------------------------

ALL_ADAPTERS = [
    CodexAdapter,
    ClaudeCodeAdapter,
    PiAdapter,
    LittleGhostJsonlAdapter,
    OpenAIChatAdapter,
    AnthropicAdapter,
    BruteAdapter,
    GenericAdapter,
    LittleGhostStoreAdapter,
]

HOSTILE = [
    {"role": 5, "content": {"x": []}, "tool_calls": "nope"},
    {"role": "assistant", "content": [None, 5, [], {"type": 7}, {"type": "text", "text": {"a": 1}}], "tool_calls": [None, 3, {"function": "x"}, {"function": {"arguments": 5}}]},
    {"role": "tool", "tool_call_id": {"a": 1}, "content": [{"type": "tool_result", "tool_use_id": [1], "content": {"deep": [1]}}]},
    {"role": "assistant", "tool_calls": {"k": {"name": 1}, "j": 5}},
    {"type": "user", "sessionId": 1, "uuid": [], "message": {"role": None, "content": {"type": "tool_use"}}},
    {"type": "assistant", "sessionId": "s", "uuid": "u", "message": {"id": ["x"], "content": "text"}},
    {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": 5, "preTokens": "x"}, "content": [1]},
    {"type": "summary", "summary": {"a": 1}},
    {"timestamp": 1, "type": "response_item", "payload": {"type": "function_call", "arguments": ["x"], "call_id": {"a": 1}}},
    {"timestamp": 1, "type": "response_item", "payload": {"type": "function_call_output", "output": '{"output": 5, "metadata": "x"}'}},
    {"timestamp": 1, "type": "response_item", "payload": {"type": "reasoning", "summary": "x", "content": [5, {"text": 1}]}},
    {"timestamp": 1, "type": "response_item", "payload": {"type": "local_shell_call", "action": {"command": [1, None]}}},
    {"timestamp": 1, "type": "response_item", "payload": [1, 2]},
    {"timestamp": 1, "type": "compacted", "payload": {"message": 5, "replacement_history": "x"}},
    {"timestamp": 1, "type": "event_msg", "payload": "x"},
    {"timestamp": 1, "type": 5, "payload": None},
    {"type": "message", "message": {"role": "toolResult", "content": {"x": 1}, "isError": "yes"}},
    {"type": "message", "message": {"role": ["x"], "content": [{"type": "toolCall", "arguments": "x", "id": {}}]}},
    {"type": "message", "message": "x"},
    {"type": "compaction", "summary": None},
    {"type": "label", "label": 5, "targetId": None},
    {"record_type": {"a": 1}},
    {"role": "user", "content": [{"type": "reasoning", "data": 1}, {"type": "image", "name": 3}], "metadata": 5},
    {"role": "assistant", "content": "x", "refusal": 5, "function_call": {"name": 3, "arguments": {"a": 1}}},
    {},
    [],
    [1, {"role": "user"}],
    "just a string",
    5,
    3.5,
    None,
    True,
]


@pytest.mark.parametrize("adapter", ALL_ADAPTERS, ids=lambda a: a.name)
def test_hostile_values_never_raise(adapter):
    a = adapter()
    for i, value in enumerate(HOSTILE, 1):
        v = a.view(i, value)
        assert v.number == i
        assert isinstance(v.kind, Kind)
        # handled by the adapter itself, not by the safety net
        assert not any("adapter error" in p.message for p in v.problems), (value, v.problems)
        probs = a.schema_problems(i, value)
        assert isinstance(probs, list)


def test_hostile_example_from_the_brief():
    value = {"role": 5, "content": {"x": []}, "tool_calls": "nope"}
    for adapter in ALL_ADAPTERS:
        v = adapter().view(1, value)
        assert v.tool_calls == ()


def test_hostile_lines_through_a_session():
    lines = [json.dumps(v) for v in HOSTILE] + ["{bad json", ""]
    data = ("\n".join(lines) + "\n").encode()
    for adapter in ALL_ADAPTERS:
        s = JsonlSession(JsonlSession.from_bytes(data).doc, adapter=adapter())
        for v in s.views():
            assert not any("could not interpret" in p.message or "adapter error" in p.message for p in v.problems)
        s.check()  # pairing over hostile views must not raise either


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda c: st.lists(c, max_size=4)
    | st.dictionaries(
        st.sampled_from(["role", "content", "type", "message", "payload", "tool_calls", "function", "arguments", "id", "text", "output", "call_id", "summary", "timestamp", "sessionId", "uuid", "input"]),
        c,
        max_size=6,
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(_json)
def test_random_values_never_break_a_view(value):
    for adapter in ALL_ADAPTERS:
        a = adapter()
        v = a.view(1, value)
        assert not any("adapter error" in p.message for p in v.problems)
        a.schema_problems(1, value)
        formats.detect([value])
