"""Brute lines are edited as Brute itself would write them, and refused where Brute would raise.

The property tests compare the production code (``core.brute`` through ``edits.plan_edit``) with a small
reference model written here, separately and deliberately plainly, from ``lib/brute/messages.rb``
(formats.md section 1): ``Brute::Message.new(**JSON.parse(line, symbolize_names: true))``, ``#to_h`` and
``JSON.generate``.
"""

import inspect
import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sessionview.core import rubyjson
from sessionview.core.edit import encode, plan as edits
from sessionview.core.errors import InvalidEdit, Refused
from sessionview.core.formats.brute import BruteAdapter
from sessionview.core.session import JsonlSession

# --------------------------------------------------------------------------------------------------
# the reference model: Ruby, transcribed


class RubyRaises(Exception):
    """Ruby raises here (ArgumentError, TypeError or NoMethodError): Brute cannot load the line."""


class Unknowable(Exception):
    """Ruby accepts it, but writes text (``Float#to_s``, ``inspect``, non-String hash keys) we do not model."""


UNKNOWN_TEXT = object()  # the result of a ``to_s`` we do not model


def call(method, h):
    """``method(**h)``: Ruby's keyword binding (missing or unknown keyword -> ArgumentError)."""
    try:
        inspect.signature(method).bind(**h)
    except TypeError as exc:
        raise RubyRaises(f"ArgumentError: {exc}") from None
    return method(**h)


def to_h(v):
    """``v.to_h`` for a JSON value."""
    if v is None:
        return {}
    if isinstance(v, dict):
        return dict(v)
    if isinstance(v, list):  # Array#to_h: every element must be a [key, value] array
        out = {}
        for e in v:
            if not isinstance(e, list):
                raise RubyRaises("TypeError: wrong element type")
            if len(e) != 2:
                raise RubyRaises("ArgumentError: wrong array length")
            out[e[0]] = e[1]
        return out
    raise RubyRaises("NoMethodError: to_h")


def to_sym(v):
    if not isinstance(v, str):
        raise RubyRaises("NoMethodError: to_sym")
    return v


def symbolize(h):  # .transform_keys(&:to_sym)
    return {to_sym(k): v for k, v in h.items()}


def to_s(v):
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return UNKNOWN_TEXT  # Ruby goes on (and may raise further on); reference_line gives up at the end


def ruby_array(v):  # Kernel#Array
    if v is None:
        return []
    if isinstance(v, list):
        return v
    if isinstance(v, dict):
        return [[k, x] for k, x in v.items()]
    return [v]


def ruby_map(v):  # what #map iterates
    if isinstance(v, list):
        return v
    if isinstance(v, dict):
        return [[k, x] for k, x in v.items()]
    raise RubyRaises("NoMethodError: map")


def compact(h):
    return {k: v for k, v in h.items() if v is not None}


def tool_call_new(id, name, arguments={}):  # noqa: A002 - Ruby's keyword names
    return {"id": id, "name": to_s(name), "arguments": to_h(arguments)}


def block_new(type="text", text=None, signature=None, format=None, id=None, index=None):  # noqa: A002
    type = to_sym(type)
    type = {"redacted": "encrypted"}.get(type, type)
    return compact({"type": type, "text": text, "signature": signature, "format": format, "id": id, "index": index})


def reasoning_build(text=None, signature=None, format=None, blocks=None):  # noqa: A002
    blocks = [call(block_new, symbolize(to_h(b))) for b in ruby_array(blocks)]
    if not blocks and not (to_s_empty(text) and to_s_empty(signature)):
        blocks = [block_new(text=text, signature=signature, format=format)]
    return {"blocks": blocks} if blocks else None


def to_s_empty(v):
    return v is None or v == ""


def message_new(role, content=None, tool_calls=None, tool_call_id=None, reasoning=None):
    calls = None if tool_calls is None else [call(tool_call_new, symbolize(to_h(tc))) for tc in ruby_map(tool_calls)]
    role = to_sym(role)
    if reasoning is not None:
        reasoning = reasoning_build(text=reasoning) if isinstance(reasoning, str) else call(reasoning_build, symbolize(to_h(reasoning)))
    return compact({"role": role, "content": content, "tool_calls": calls, "tool_call_id": tool_call_id, "reasoning": reasoning})


def string_keys_only(v):
    if v is UNKNOWN_TEXT:
        raise Unknowable("to_s of a Float/Array/Hash")
    if isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            raise Unknowable("a non-String hash key is written with to_s")
        for x in v.values():
            string_keys_only(x)
    elif isinstance(v, list):
        for x in v:
            string_keys_only(x)


def reference_line(text):
    """``JSON.generate(Brute::Message.new(**JSON.parse(text, symbolize_names: true)).to_h)``."""
    parsed = json.loads(text)
    if not isinstance(parsed, dict):
        raise RubyRaises("TypeError: no implicit conversion into Hash")
    h = call(message_new, parsed)
    string_keys_only(h)
    return rubyjson.generate(h)


# --------------------------------------------------------------------------------------------------
# helpers

ORIGINAL = b'{"role":"user","content":"x"}'


def session(*lines):
    return JsonlSession.from_bytes(b"\n".join(lines or (ORIGINAL,)) + b"\n")


def written(text, *, force=True, original=ORIGINAL):
    change = edits.plan_edit(session(original), 1, json_text=text, force=force)
    return change.lines[0].raw, change


def problems(value):
    return [p.message for p in BruteAdapter().schema_problems(1, value)]


# --------------------------------------------------------------------------------------------------
# normalisation, point by point


def test_string_reasoning_becomes_a_text_block():
    raw, _ = written('{"role":"assistant","content":"ok","reasoning":"because"}')
    assert raw == b'{"role":"assistant","content":"ok","reasoning":{"blocks":[{"type":"text","text":"because"}]}}'


def test_reasoning_without_blocks_is_dropped_with_a_note():
    for r in ('""', '{"blocks":[]}', "{}", '{"format":"anthropic-claude-v1"}', "[]"):
        raw, change = written('{"role":"assistant","content":"ok","reasoning":%s}' % r)
        assert raw == b'{"role":"assistant","content":"ok"}', r
        assert any("drops it" in w for w in change.warnings), r


def test_hash_reasoning_with_text_and_signature_but_no_blocks_becomes_one_block():
    raw, _ = written('{"role":"assistant","reasoning":{"signature":"s","text":"t","format":"f"}}')
    assert raw == b'{"role":"assistant","reasoning":{"blocks":[{"type":"text","text":"t","signature":"s","format":"f"}]}}'


def test_redacted_blocks_are_written_as_encrypted_with_keys_in_brutes_order_and_nils_dropped():
    raw, _ = written(
        '{"role":"assistant","reasoning":{"blocks":[{"index":0,"id":null,"format":"anthropic-claude-v1",'
        '"signature":"sig","text":null,"type":"redacted"},{"text":"t"}]}}'
    )
    assert raw == (
        b'{"role":"assistant","reasoning":{"blocks":[{"type":"encrypted","signature":"sig","format":"anthropic-claude-v1","index":0},'
        b'{"type":"text","text":"t"}]}}'
    )


def test_top_level_reasoning_text_is_ignored_when_there_are_blocks():
    raw, change = written('{"role":"assistant","reasoning":{"text":"lost","blocks":[{"type":"summary","text":"kept"}]}}')
    assert raw == b'{"role":"assistant","reasoning":{"blocks":[{"type":"summary","text":"kept"}]}}'
    assert any("ignores its text" in w for w in change.warnings)


def test_a_tool_call_without_arguments_gets_an_empty_object_and_keys_in_brutes_order():
    raw, _ = written('{"tool_calls":[{"name":"ls","id":"c1"}],"content":"","role":"assistant"}', force=True)
    assert raw == b'{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"ls","arguments":{}}]}'
    raw, change = written('{"role":"assistant","tool_calls":[{"id":null,"name":7,"arguments":null}]}', force=True)
    assert raw == b'{"role":"assistant","tool_calls":[{"id":null,"name":"7","arguments":{}}]}'
    assert any("writes it as the string '7'" in w for w in change.warnings)


def test_what_brute_accepts_is_written_back_as_it_is_with_a_provider_warning():
    for content in ("5", "[1,{\"a\":2}]", "true", '{"k":"v"}'):
        raw, change = written('{"role":"user","content":%s}' % content, force=False)
        assert raw == b'{"role":"user","content":%s}' % content.encode()
        assert any("provider is likely to reject" in w for w in change.warnings), content
    raw, change = written('{"role":"user","content":"plain"}', force=False)
    assert change.warnings == ()


# --------------------------------------------------------------------------------------------------
# refusals: anywhere in the message

REFUSED = {
    '{"content":"no role"}': "missing `role` in the message (ArgumentError: missing keyword: :role)",
    '{"role":null}': "role is null, not a string",
    '{"role":5}': "role is a number",
    '{"role":"user","name":"bob"}': "unknown key `name` in the message (ArgumentError: unknown keyword: :name)",
    '{"role":"assistant","reasoning":{"blocks":[{"type":"text","text":"t","foo":1}]}}':
        "unknown key `foo` in reasoning block 1 (ArgumentError: unknown keyword: :foo)",
    '{"role":"assistant","reasoning":{"blocks":[{"type":null}]}}': "`type` in reasoning block 1 is null",
    '{"role":"assistant","reasoning":{"blocks":["x"]}}': "reasoning block 1 is a string, not an object",
    '{"role":"assistant","reasoning":{"blocks":{"type":"text"}}}': "`blocks` in reasoning is an object",
    '{"role":"assistant","reasoning":{"summary":"x"}}': "unknown key `summary` in reasoning",
    '{"role":"assistant","reasoning":5}': "reasoning is a number, not an object",
    '{"role":"assistant","reasoning":false}': "reasoning is false",
    # a name whose Ruby text is unknowable does not hide the refusal further on
    '{"role":"assistant","tool_calls":[{"id":"c","name":1.5}],"reasoning":0}': "reasoning is a number",
    '{"role":"assistant","tool_calls":[{"id":"c","name":"f","arguments":{},"type":"function"}]}':
        "unknown key `type` in tool call 1",
    '{"role":"assistant","tool_calls":[{"id":"c","name":"f","arguments":"{\\"a\\":1}"}]}':
        "`arguments` in tool call 1 is a string, not an object (NoMethodError: undefined method 'to_h' for String)",
    '{"role":"assistant","tool_calls":[{"name":"f"}]}': "missing `id` in tool call 1",
    '{"role":"assistant","tool_calls":[null]}': "missing `id`, `name` in tool call 1",
    '{"role":"assistant","tool_calls":"c1"}': "tool_calls is a string, not a list",
    '{"role":"assistant","tool_calls":{"c1":{"id":"c1","name":"f"}}}': "tool_calls is an object, not a list",
}


@pytest.mark.parametrize("text", list(REFUSED), ids=range(len(REFUSED)))
def test_edit_refuses_what_brute_would_raise_on_and_check_reports_it(text):
    with pytest.raises(InvalidEdit) as info:
        written(text)
    assert str(info.value).startswith("Brute would reject this message: ")
    assert REFUSED[text] in str(info.value)
    assert [f"Brute would refuse this line: {str(info.value).split(': ', 1)[1]}"] == problems(json.loads(text))
    with pytest.raises(RubyRaises):
        reference_line(text)


def test_check_reports_every_line_brute_could_not_load_naming_brute(tmp_path):
    lines = [
        b'{"role":"user","content":"hi"}',
        b'{"role":"assistant","content":"","reasoning":{"blocks":[{"type":"text","text":"t","foo":1}]}}',
        b'{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{},"extra":1}]}',
        b'{"role":"tool","content":"ok","tool_call_id":"c1"}',
        b'{"role":"assistant","content":"","reasoning":{"blocks":[{"type":7}]}}',
        b'{"role":"user","content":5}',
    ]
    s = session(*lines)
    found = {p.number: p.message for p in s.check() if p.kind == "schema warning"}
    assert found == {
        2: "Brute would refuse this line: unknown key `foo` in reasoning block 1 (ArgumentError: unknown keyword: :foo)",
        3: "Brute would refuse this line: unknown key `extra` in tool call 1 (ArgumentError: unknown keyword: :extra)",
        5: "Brute would refuse this line: `type` in reasoning block 1 is a number, not a string "
        "(NoMethodError: undefined method 'to_sym' for Integer)",
    }


def test_a_value_brute_accepts_but_whose_text_is_unknowable_is_refused_without_blaming_brute():
    with pytest.raises(InvalidEdit, match="cannot write this value exactly"):
        written('{"role":"assistant","tool_calls":[{"id":"c","name":1.5}]}')
    assert problems({"role": "assistant", "tool_calls": [{"id": "c", "name": 1.5}]}) == []


# --------------------------------------------------------------------------------------------------
# role system


def test_setting_role_system_is_refused_unless_forced():
    with pytest.raises(Refused, match="SessionLog drops system messages") as err:
        written('{"role":"system","content":"be brief"}', force=False)
    assert err.value.forceable and "--force" not in str(err.value)
    raw, _ = written('{"role":"system","content":"be brief"}', force=True)
    assert raw == b'{"role":"system","content":"be brief"}'


def test_other_formats_may_still_write_system_messages():
    s = JsonlSession.from_bytes(b'{"role":"user","content":[{"type":"text","text":"x"}]}\n')
    assert s.format != "brute"
    change = edits.plan_edit(s, 1, json_text='{"role":"system","content":"x"}')
    assert change.lines[0].raw == b'{"role":"system","content":"x"}'


# --------------------------------------------------------------------------------------------------
# numbers the user did not touch keep their text


def test_untouched_numbers_keep_their_text_through_the_brute_model():
    original = b'{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{"n":1E2,"m":-0}}]}'
    text = encode.pretty_record(session(original), 1).replace('""', '"now"')
    raw, _ = written(text, original=original)
    assert raw == b'{"role":"assistant","content":"now","tool_calls":[{"id":"c1","name":"f","arguments":{"n":1E2,"m":-0}}]}'
    raw, _ = written('{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{"n":1e2}}]}')
    assert raw.endswith(b'{"n":100.0}}]}')  # a number the user typed is written as Ruby writes it


# --------------------------------------------------------------------------------------------------
# properties: production == reference model

_scalar = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5)
_json = st.recursive(_scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3), max_leaves=6)
_maybe_str = st.none() | st.text(max_size=6) | st.just("")


def _sometimes_pairs(d):
    """A hash, or the same as a list of [key, value] pairs (which Ruby's Array#to_h also accepts)."""
    return st.one_of(st.just(d), st.just([[k, v] for k, v in d.items()]))


def _shuffled_dict(entries):
    """A dict from (key, strategy, chance in tenths) entries, each present with that chance, in a random
    key order. Keys Brute does not know get a small chance, so most inputs get past the keyword check."""

    @st.composite
    def build(draw):
        items = [(key, draw(strat)) for key, strat, tenths in entries if draw(st.integers(0, 9)) < tenths]
        return dict(draw(st.permutations(items))) if items else {}

    return build()


_block_type = st.sampled_from(["text", "summary", "encrypted", "redacted", "thinking", "", "text", "redacted", None, 3])
_block = _shuffled_dict(
    [
        ("type", _block_type, 7),
        ("text", _maybe_str | st.integers(), 6),
        ("signature", _maybe_str, 5),
        ("format", _maybe_str, 5),
        ("id", _maybe_str, 3),
        ("index", st.none() | st.integers(0, 9), 3),
        ("foo", st.just(1), 1),
    ]
).flatmap(_sometimes_pairs)
_blocks = st.lists(_block | st.none() | st.just("x"), max_size=3) | st.none() | st.just({}) | st.just({"type": "text"})
_reasoning = (
    _maybe_str
    | _shuffled_dict([("text", _maybe_str, 5), ("signature", _maybe_str, 3), ("format", _maybe_str, 3), ("blocks", _blocks, 6)]).flatmap(_sometimes_pairs)
    | st.just({"summary": "x"})
    | st.integers()
    | st.booleans()
)
_arguments = st.dictionaries(st.text(max_size=4), _json, max_size=3).flatmap(_sometimes_pairs) | st.none() | st.text(max_size=4) | st.integers() | st.just([[1, 2]])
_tool_call = _shuffled_dict(
    [
        ("id", _maybe_str | st.integers(), 9),
        ("name", _maybe_str | st.integers() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False), 9),
        ("arguments", _arguments, 7),
        ("type", st.just("function"), 1),
    ]
).flatmap(_sometimes_pairs)
_tool_calls = st.lists(_tool_call | st.none(), max_size=3) | st.none() | st.just({}) | st.just({"c": {"id": "c", "name": "f"}}) | st.text(max_size=3)
_role = st.sampled_from(["user", "assistant", "tool", "system", "", "narrator", "user", "assistant", None, 5])
_content = _json
_message_input = _shuffled_dict(
    [
        ("role", _role, 9),
        ("content", _content, 7),
        ("tool_calls", _tool_calls, 4),
        ("tool_call_id", _maybe_str | st.integers(), 3),
        ("reasoning", _reasoning, 6),
        ("name", st.just("x"), 1),
    ]
)

# messages as Brute itself produces them (valid, already normalised)
_brute_block = st.builds(
    lambda t, text, sig, fmt, i: {k: v for k, v in {"type": t, "text": text, "signature": sig, "format": fmt, "index": i}.items() if v is not None},
    st.sampled_from(["text", "summary", "encrypted"]),
    st.none() | st.text(max_size=8),
    st.none() | st.text(min_size=1, max_size=8),
    st.none() | st.sampled_from(["anthropic-claude-v1", "openai-responses-v1"]),
    st.none() | st.integers(0, 5),
)
_brute_message = st.builds(
    lambda role, content, calls, tcid, blocks: {
        k: v
        for k, v in {
            "role": role,
            "content": content,
            "tool_calls": calls,
            "tool_call_id": tcid,
            "reasoning": {"blocks": blocks} if blocks else None,
        }.items()
        if v is not None
    },
    st.sampled_from(["user", "assistant", "tool"]),
    st.none() | st.text(max_size=20),
    st.none() | st.lists(st.builds(lambda i, n, a: {"id": i, "name": n, "arguments": a}, st.text(min_size=1, max_size=6), st.text(min_size=1, max_size=6), st.dictionaries(st.text(max_size=4), _json, max_size=3)), max_size=2),
    st.none() | st.text(min_size=1, max_size=6),
    st.lists(_brute_block, max_size=3),
)


def _production(text):
    """The line ``plan_edit`` writes, or the exception it raises."""
    try:
        return written(text, force=True)[0]
    except (InvalidEdit, Refused) as exc:
        return exc


def _compare(value):
    text = json.dumps(value, ensure_ascii=False)
    got = _production(text)
    try:
        expected = reference_line(text)
    except RubyRaises:
        assert isinstance(got, InvalidEdit) and "Brute would reject" in str(got), (text, got)
        assert problems(value), text  # check reports the line Brute could not load
        return
    except (Unknowable, rubyjson.RubyJSONError):
        assert isinstance(got, InvalidEdit) and "Brute would reject" not in str(got), (text, got)
        return
    assert got == expected, text
    assert not problems(value), text


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_message_input)
def test_any_json_input_is_written_as_brute_would_write_it_or_refused_where_brute_raises(value):
    _compare(value)


@settings(max_examples=200, deadline=None)
@given(_brute_message)
def test_lines_brute_writes_are_accepted_unchanged_and_editing_them_is_idempotent(value):
    try:
        line = rubyjson.generate(value)
    except rubyjson.UncertainFloatError:
        assume(False)  # not a line whose Ruby text is known: nothing to compare
    assert reference_line(line.decode()) == line  # Brute's own "round-trips through to_h"
    assert written(line.decode())[0] == line
    assert not problems(json.loads(line))
    _compare(value)


@pytest.mark.parametrize(
    "value",
    [
        {"role": "assistant", "reasoning": "because"},
        {"role": "assistant", "reasoning": {"blocks": [{"text": "t", "type": "redacted", "signature": None}]}},
        {"role": "assistant", "tool_calls": [{"name": "f", "id": "c"}]},
        {"role": "assistant", "tool_calls": [[["id", "c"], ["name", "f"]]]},
        {"role": "assistant", "tool_calls": {}},
        {"role": "assistant", "reasoning": {"blocks": [None]}},
        {"role": "user", "content": None},
        {"role": "user", "content": 5},
        {"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "arguments": []}]},
    ],
)
def test_examples_of_every_shape_match_the_reference_model(value):
    _compare(value)
    assert not isinstance(_production(json.dumps(value)), Exception)
