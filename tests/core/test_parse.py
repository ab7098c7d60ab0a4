import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionview.core.doc.parse import DEFAULT_CAP, Status, nesting_depth, parse_record


@pytest.mark.parametrize(
    "raw, status, note",
    [
        (b'{"role":"user","content":"hi"}', Status.OK, None),
        (b'{"n":1E2}', Status.OK, None),
        (b'{"n":18446744073709551615}', Status.OK, None),
        (b'{"n":18446744073709551616}', Status.OK, "integer beyond 64 bits"),
        (b'{"n":-9223372036854775809}', Status.OK, "integer beyond 64 bits"),
        (b'{"n":NaN}', Status.OK, "NaN/Infinity"),
        (b'{"s":"\\ud83d alone"}', Status.OK, "lone surrogate"),
        ('{"s":"a\u2028b"}'.encode(), Status.OK, None),
        (b'{"a":1,"a":2}', Status.DUPLICATE_KEYS, None),
        (b'{"a":{"b":1,"b":1}}', Status.DUPLICATE_KEYS, None),
        (b'{"a":"k:v","b":"x\\":y"}', Status.OK, None),  # colons inside strings are not keys
        (b'{"a" : 1, "b"\t:\t2}', Status.OK, None),
        (b'{"a":1', Status.INVALID_JSON, None),
        (b'{"s":"raw nul \x00"}', Status.INVALID_JSON, None),
        (b'{"s":"\xff"}', Status.NOT_UTF8, None),
        (b"", Status.BLANK, None),
        (b"   ", Status.BLANK, None),
    ],
)
def test_classification(raw, status, note):
    p = parse_record(raw)
    assert p.status is status, p
    if note:
        assert note in p.notes
    if status is Status.INVALID_JSON:
        assert p.error and "column" in p.error


def test_big_integers_are_exact_not_floats():
    p = parse_record(b'{"n":123456789012345678901234567890}')
    assert p.value["n"] == 123456789012345678901234567890
    assert isinstance(p.value["n"], int)


def test_digits_inside_strings_do_not_break_parsing():
    p = parse_record(b'{"id":"12345678901234567890123","x":1.5}')
    assert p.status is Status.OK and p.value["x"] == 1.5


def test_unterminated_last_line_is_partial_only_when_incomplete():
    assert parse_record(b'{"role":"user","con', terminated=False).status is Status.PARTIAL
    assert parse_record(b'{"role":"user"}', terminated=False).status is Status.OK
    assert parse_record(b'{"role":"user","con', terminated=True).status is Status.INVALID_JSON


def test_too_deep_is_found_by_a_byte_scan_without_recursion():
    deep = b"[" * 100_000 + b"]" * 100_000
    p = parse_record(deep)
    assert p.status is Status.TOO_DEEP
    assert nesting_depth(deep) == 100_000
    # brackets inside strings do not count
    assert nesting_depth(b'{"s":"[[[[[[{{{{"}') == 1
    assert parse_record(b'{"s":"' + b"[" * 5000 + b'"}').status is Status.OK


def test_without_counted_quotes_the_bytes_orjson_writes_prove_no_duplicate_and_others_take_the_exact_test():
    assert parse_record(b'{"role":"user","content":"a \\"quote\\""}').status is Status.OK  # orjson's own bytes
    assert parse_record(b'{"role": "user", "content": "hi"}').status is Status.OK  # not orjson's: the count decides
    assert parse_record(b'{"role":"user","role":"user"}').status is Status.DUPLICATE_KEYS
    assert parse_record(b'{"a":{"k":1,"k":1}}').status is Status.DUPLICATE_KEYS
    # nested deeper than orjson writes (255) but not than the limit (512): no dumps, the exact test, OK
    deep = b'{"k":' * 300 + b"1" + b"}" * 300
    p = parse_record(deep)
    assert p.status is Status.OK and p.depth_bound == 300
    assert parse_record(b'{"k":' * 299 + b'{"k":1,"k":1' + b"}" * 300).status is Status.DUPLICATE_KEYS


def test_oversized_is_never_parsed():
    raw = b'{"s":"' + b"x" * 100 + b'"}'
    p = parse_record(raw, cap=50)
    assert p.status is Status.OVERSIZED and p.value is None and p.size == len(raw)
    p = parse_record(raw, cap=50, terminated=False)
    assert p.status is Status.OVERSIZED  # over the cap wins over partial


def test_a_50_mb_line_parses_under_the_default_cap_and_is_oversized_over_it():
    raw = b'{"role":"tool","content":"' + b"y" * (50 * 1024 * 1024) + b'","tool_call_id":"t"}'
    assert parse_record(raw).status is Status.OVERSIZED  # default cap 16 MiB
    assert parse_record(raw, cap=64 * 1024 * 1024).status is Status.OK
    assert DEFAULT_CAP == 16 * 1024 * 1024


def test_never_raises_on_hostile_input():
    for raw in [b"\x00", b"[" * 2000, b"{" * 600 + b"}" * 600, b'"\\u', b"1" * 10000, b"-", b"\xef\xbb\xbf{}"]:
        p = parse_record(raw)
        assert isinstance(p.status, Status)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300)
@given(json_values)
def test_parsed_value_equals_the_stdlib_value(value):
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    p = parse_record(raw)
    if "\\ud" in raw.decode("utf-8", "replace") or any(0xD800 <= ord(c) <= 0xDFFF for c in raw.decode("utf-8", "surrogatepass")):
        return
    assert p.status is Status.OK
    assert p.value == value


@settings(max_examples=300)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise_and_accepted_values_match_the_stdlib(raw):
    p = parse_record(raw)
    assert isinstance(p.status, Status)
    if p.ok and "NaN/Infinity" not in p.notes:
        # whatever was accepted parses the same with the stdlib: orjson never silently lost data
        assert p.value == json.loads(raw.decode("utf-8"))


def _reference_counts(raw: bytes) -> tuple[int, int]:
    keys = 0
    depth_seen = [0]

    def pairs(items):
        nonlocal keys
        keys += len(items)
        return dict(items)

    json.loads(raw, object_pairs_hook=pairs)

    def depth(v, d=0):
        if isinstance(v, (list, dict)):
            depth_seen[0] = max(depth_seen[0], d + 1)
            for x in (v.values() if isinstance(v, dict) else v):
                depth(x, d + 1)

    depth(json.loads(raw))
    return keys, depth_seen[0]


tricky_text = st.text(alphabet=st.sampled_from(list('ab"\\:{}[],\n \t')), max_size=12)
tricky_json = st.recursive(
    st.none() | st.integers() | tricky_text,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(tricky_text, c, max_size=3),
    max_leaves=15,
)


@settings(max_examples=400)
@given(tricky_json, st.booleans())
def test_byte_scans_match_a_real_parser(value, spaced):
    from dupkeys_oracle import _raw_key_count

    raw = json.dumps(value, separators=(", ", " : ") if spaced else (",", ":")).encode()
    keys, depth = _reference_counts(raw)
    assert _raw_key_count(raw) == keys
    assert nesting_depth(raw) == depth
