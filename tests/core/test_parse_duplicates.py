"""The duplicate-key test of :func:`parse_record` (by the quotes of the bytes) against two others: the earlier
walk over the keys and colons (:func:`has_duplicate_keys`) and the stdlib parser's own pairs. Records are
generated as text, so keys repeat (also spelled differently: ``\\"`` and ``\\u0022``), strings hold escaped
quotes, backslashes and colons, numbers are huge or spelled as Ruby writes floats, and bytes can be invalid
UTF-8."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from dupkeys_oracle import _walk, has_duplicate_keys

from sessionview.core.doc.parse import MAX_DEPTH, Status, parse_record

pieces = st.sampled_from([
    "a", "b", ":", " ", "é", "😀", "{", "]", "\\\"", "\\\\", "\\/", "\\n", "\\u0022", "\\u003a", "\\u003A",
    "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\\\\\\"", "\\\\u0022",
])
strings = st.lists(pieces, max_size=6).map(lambda p: '"' + "".join(p) + '"')
keys = st.sampled_from(['"a"', '"b"', '"a\\u0022"', '"a\\""', '"\\u0061"', '"k:v"', '""'])
numbers = st.sampled_from([
    "0", "-0", "-0.0", "1.0e+20", "1e20", "1E2", "1.5", "-1e-7", "18446744073709551615", "18446744073709551616",
    "-9223372036854775809", "123456789012345678901234567890", "1.0", "NaN", "1e400",
])
scalars = strings | numbers | st.sampled_from(["true", "false", "null"])
space = st.sampled_from(["", "", " ", "\t"])


@st.composite
def documents(draw, depth=0):
    if depth > 3 or draw(st.integers(0, 3)) == 0:
        return draw(scalars)
    s = draw(space)
    if draw(st.booleans()):
        items = draw(st.lists(st.tuples(keys, st.deferred(lambda: documents(depth + 1))), max_size=4))
        body = f"{s},{s}".join(f"{k}{draw(space)}:{draw(space)}{v}" for k, v in items)
        return "{" + s + body + s + "}"
    items = draw(st.lists(st.deferred(lambda: documents(depth + 1)), max_size=4))
    return "[" + s + f"{s},{s}".join(items) + s + "]"


@st.composite
def records(draw):
    raw = draw(documents()).encode("utf-8")
    if draw(st.integers(0, 9)) == 0 and len(raw) > 2:  # a byte that is not UTF-8, somewhere
        at = draw(st.integers(1, len(raw) - 1))
        raw = raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + raw[at:]
    return raw


def _stdlib_duplicates(raw: bytes) -> bool:
    found = False

    def pairs(items):
        nonlocal found
        found = found or len({k for k, _ in items}) != len(items)
        return dict(items)

    json.loads(raw.decode("utf-8"), object_pairs_hook=pairs)
    return found


@settings(max_examples=600, deadline=None)
@given(records())
def test_duplicate_keys_by_quotes_agree_with_the_key_walk_and_the_stdlib(raw):
    p = parse_record(raw)
    assert isinstance(p.status, Status)
    if not p.ok:
        return
    duplicates = _stdlib_duplicates(raw)
    assert (p.status is Status.DUPLICATE_KEYS) == duplicates == has_duplicate_keys(raw, p.value), raw
    # the depth bound: the containers of the value, or the brackets of the bytes where a repeated key dropped some
    expected = raw.count(b"[") + raw.count(b"{") if duplicates else _walk(p.value)[3]
    assert p.depth_bound == expected
    assert p.depth_bound <= MAX_DEPTH or p.status is not Status.OK


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=8), st.sampled_from([b"", b" ", b"\t", b"\r", b"\x0b", b"\x0c"]))
def test_blank_lines_are_exactly_those_strip_empties(raw, pad):
    for r in (pad, pad + raw, raw + pad, pad * 3):
        assert (parse_record(r).status is Status.BLANK) == (not r.strip())


def test_the_quote_count_cases_one_by_one():
    cases = {
        b'{"a":1,"a":2}': True,
        b'{"a":"\\"","a":2}': True,
        b'{"a\\"":1,"a\\u0022":2}': True,  # one key, spelled twice
        b'{"x":"\\u0022\\u0022","a":1,"a":2}': True,  # \u0022 quotes in the value make up for the dropped key
        b'{"x":"\\\\","y":"\\\\\\""}': False,
        b'{"k\\"":"v\\""}': False,  # a quote in a key
        b'{"a":{"b":1},"a":{"b":1}}': True,
        b'[{"a":1},{"a":1}]': False,
        b'"just a string with \\" in it"': False,
    }
    for raw, duplicates in cases.items():
        assert (parse_record(raw).status is Status.DUPLICATE_KEYS) == duplicates, raw
        assert _stdlib_duplicates(raw) == duplicates
