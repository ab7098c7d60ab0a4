"""rubyjson: byte-exact Ruby ``JSON.generate`` and number-preserving parsing."""

import json
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionview.core import rubyjson
from sessionview.core.rubyjson import (
    DuplicateKeyError,
    RawFloat,
    RawInt,
    RubyJSONError,
    UncertainFloatError,
    float_text,
    generate,
    loads_preserving,
)

# -- floats -----------------------------------------------------------------------------------------

# formats.md §7 (Ruby column), plus values checked against ruby/json 2.21's fpconv layout rules.
FLOATS = [
    (1.0, "1.0"),
    (1e5, "100000.0"),
    (1e15, "1e+15"),
    (1e16, "1e+16"),
    (1e-5, "0.00001"),
    (1.5e-7, "0.00000015"),
    (0.0, "0.0"),
    (-0.0, "-0.0"),
    (0.1, "0.1"),
    (21.5, "21.5"),
    (-1.5, "-1.5"),
    (100.0, "100.0"),
    (123456789012345.0, "123456789012345.0"),  # integral, exponent 14: decimal with .0
    (1234567890123456.0, "1.234567890123456e+15"),  # exponent 15: scientific
    (1e-7, "0.0000001"),
    (1e-10, "1e-10"),
    (1.5e-10, "1.5e-10"),
    (0.000135, "0.000135"),
    (3.141592653589793, "3.141592653589793"),
    (1e100, "1e+100"),
    (-2.5e-300, "-2.5e-300"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
]


@pytest.mark.parametrize("value,text", FLOATS)
def test_float_table(value, text):
    assert float_text(value) == text
    assert generate(value) == text.encode()
    assert generate([value]) == f"[{text}]".encode()


def test_negative_zero_keeps_its_sign():
    assert generate({"x": -0.0}) == b'{"x":-0.0}'


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_raise(value):
    with pytest.raises(RubyJSONError, match="not allowed"):
        generate({"x": value})


def test_uncertain_float_raises_instead_of_guessing():
    # 1e23 sits exactly on its rounding boundary: the shortest digits ("1e+23") are not what Grisu2 prints
    # (Ruby writes 9.999999999999999e+22). The serializer must refuse rather than guess.
    with pytest.raises(UncertainFloatError):
        float_text(1e23)
    with pytest.raises(UncertainFloatError):
        generate({"n": 1e23})


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_text_round_trips_or_refuses(x):
    try:
        text = float_text(x)
    except UncertainFloatError:
        return
    assert float(text) == x
    assert math.copysign(1.0, float(text)) == math.copysign(1.0, x)
    mag = abs(x)
    if mag != 0 and mag == int(mag) and mag < 1e15:
        assert text.endswith(".0") and "e" not in text
    if mag >= 1e15 and mag == int(mag):
        assert "e+" in text  # integral values from 1e15 up are scientific; 1000000000000000.5 is not
    if 1e-6 <= mag < 1:
        assert text.lstrip("-").startswith("0.") and "e" not in text


def test_refusals_are_rare():
    xs = [struct.unpack("<d", struct.pack("<Q", (i * 0x9E3779B97F4A7C15) % 2**64))[0] for i in range(1, 3001)]
    xs = [x for x in xs if math.isfinite(x)]
    unsure = 0
    for x in xs:
        try:
            float_text(x)
        except UncertainFloatError:
            unsure += 1
    assert unsure / len(xs) < 0.03


# -- integers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, 10**40, -(10**60)])
def test_integers_of_any_size_are_exact(n):
    assert generate(n) == str(n).encode()
    assert generate({"n": n}) == f'{{"n":{n}}}'.encode()


def test_bool_is_not_an_integer():
    assert generate([True, False, None, 1, 0]) == b"[true,false,null,1,0]"


# -- strings ----------------------------------------------------------------------------------------


def test_short_escapes():
    assert generate('"\\\b\f\n\r\t') == b'"\\"\\\\\\b\\f\\n\\r\\t"'


@pytest.mark.parametrize("code", [c for c in range(0x20) if chr(c) not in "\b\f\n\r\t"])
def test_other_controls_are_lowercase_u00xx(code):
    assert generate(chr(code)) == f'"\\u{code:04x}"'.encode()


def test_slash_del_and_line_separators_stay_raw():
    s = "a/b \x7f \u2028 \u2029"
    assert generate(s) == ('"' + s + '"').encode("utf-8")


def test_non_ascii_is_raw_utf8():
    s = "café 日本語 😀"
    assert generate({"k": s}) == '{"k":"café 日本語 😀"}'.encode("utf-8")


def test_keys_are_escaped_like_strings():
    assert generate({'a"\n': 1}) == b'{"a\\"\\n":1}'


def test_lone_surrogate_raises():
    with pytest.raises(RubyJSONError, match="surrogate"):
        generate({"t": "bad \ud83d here"})
    with pytest.raises(RubyJSONError, match="surrogate"):
        generate({"\udc00": 1})


# -- structure --------------------------------------------------------------------------------------


def _nest(depth: int, kind: str = "list"):
    v: object = 1
    for _ in range(depth):
        v = [v] if kind == "list" else {"k": v}
    return v


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_nesting_100_is_allowed_101_raises(kind):
    out = generate(_nest(100, kind))
    assert out.count(b"[" if kind == "list" else b"{") == 100
    with pytest.raises(RubyJSONError, match="too deep"):
        generate(_nest(101, kind))


def test_key_order_is_kept_and_output_is_compact():
    assert generate({"z": 1, "a": [1, {"y": None, "b": "x"}], "m": {}}) == b'{"z":1,"a":[1,{"y":null,"b":"x"}],"m":{}}'


def test_tuples_are_arrays():
    assert generate((1, "a")) == b'[1,"a"]'


@pytest.mark.parametrize("bad", [{1: "x"}, {"s": {1, 2}}, object(), b"bytes"])
def test_unsupported_values_raise(bad):
    with pytest.raises(RubyJSONError):
        generate(bad)


# -- raw number preservation ------------------------------------------------------------------------


def test_loads_preserving_keeps_number_text():
    src = '{"a":1e5,"b":1E+02,"c":-0,"d":1.50,"e":18446744073709551616,"f":[0.1,-7]}'
    v = loads_preserving(src)
    assert isinstance(v["a"], RawFloat) and v["a"].text == "1e5" and v["a"] == 100000.0
    assert isinstance(v["c"], RawInt) and v["c"].text == "-0" and v["c"] == 0
    assert isinstance(v["e"], RawInt) and v["e"] == 2**64
    assert generate(v, keep_raw_numbers=True) == src.encode()
    # without keep_raw_numbers the values are written the way Ruby would write them
    assert generate(v) == b'{"a":100000.0,"b":100.0,"c":0,"d":1.5,"e":18446744073709551616,"f":[0.1,-7]}'


def test_loads_preserving_accepts_bytes():
    v = loads_preserving('{"t":"café","n":2.50}'.encode())
    assert v["t"] == "café"
    assert generate(v, keep_raw_numbers=True) == '{"t":"café","n":2.50}'.encode()


def test_raw_numbers_survive_copying_values():
    import copy
    import pickle

    v = loads_preserving('{"n":1e5}')
    for clone in (copy.deepcopy(v), pickle.loads(pickle.dumps(v))):
        assert clone["n"].text == "1e5"
        assert generate(clone, keep_raw_numbers=True) == b'{"n":1e5}'


def test_raw_nan_is_never_written():
    v = loads_preserving('{"n":NaN,"m":-Infinity}')
    assert math.isnan(v["n"])
    with pytest.raises(RubyJSONError):
        generate(v, keep_raw_numbers=True)
    with pytest.raises(RubyJSONError):
        generate(v)


def test_edited_numbers_use_ruby_formatting_next_to_raw_ones():
    v = loads_preserving('{"a":1e5,"b":2}')
    v["b"] = 1e5
    assert generate(v, keep_raw_numbers=True) == b'{"a":1e5,"b":100000.0}'


def test_duplicate_keys():
    assert loads_preserving('{"a":1,"a":2}') == {"a": 2}  # the last one wins, as in Ruby
    with pytest.raises(DuplicateKeyError) as info:
        loads_preserving('{"x":{"a":1,"b":2,"a":3}}', reject_duplicates=True)
    assert info.value.key == "a"
    assert isinstance(info.value, ValueError)
    assert loads_preserving('{"a":{"a":1}}', reject_duplicates=True) == {"a": {"a": 1}}


def test_invalid_json_raises_value_error():
    with pytest.raises(ValueError):
        loads_preserving('{"a":')
    with pytest.raises(ValueError):
        loads_preserving(b"\xff")


# -- properties -------------------------------------------------------------------------------------

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)
_scalars = st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80) | _text
_json_no_floats = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_text, children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(_json_no_floats)
def test_matches_stdlib_compact_json_without_floats(v):
    assert generate(v) == json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode()


_json_any = st.recursive(
    _scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_text, children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(_json_any)
def test_raw_numbers_round_trip_stdlib_output(v):
    src = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    assert generate(loads_preserving(src), keep_raw_numbers=True) == src.encode()


def test_module_exports():
    for name in rubyjson.__all__:
        assert hasattr(rubyjson, name)
