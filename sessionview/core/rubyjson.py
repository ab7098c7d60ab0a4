"""Byte-exact ``JSON.generate`` of Ruby's json gem (2.21), plus parsing that keeps numbers' source text.

Ruby's generator (the one Brute and LittleGhost use) writes compact JSON with raw UTF-8. It escapes only
``"``, ``\\`` and the C0 controls (``\\b \\f \\n \\r \\t``, any other as ``\\u00XX`` in lowercase hex); ``/``,
DEL, U+2028 and U+2029 stay raw. Integers of any size are exact. NaN and Infinity raise, as do lone
surrogates (not valid UTF-8) and nesting deeper than 100 (Ruby's ``max_nesting``).

Floats follow the gem's vendored fpconv (Grisu2) and its formatting rules:

* an integral value below 1e15 gets ``.0`` (``100000.0``); from 1e15 up it is scientific (``1e+15``);
* small values stay decimal down to ``0.000000xx`` (``0.00001``, ``0.00000015``), then ``1.5e-10``.

Grisu2 usually finds the shortest digits, as Python's ``repr`` does, but not always (``1e23`` is one of the
exceptions). :func:`float_text` proves, with exact integer arithmetic, that Grisu2's error bounds cannot
change the digits; when they could, it raises :class:`UncertainFloatError` instead of guessing.

:func:`loads_preserving` parses with the stdlib and returns :class:`RawInt` / :class:`RawFloat` numbers
that remember their source text, so ``generate(value, keep_raw_numbers=True)`` writes untouched numbers
back byte for byte.
"""

from __future__ import annotations

import json
import math
import re
import struct
from decimal import Decimal
from typing import Any

__all__ = [
    "MAX_NESTING",
    "DuplicateKeyError",
    "RawFloat",
    "RawInt",
    "RubyJSONError",
    "UncertainFloatError",
    "float_text",
    "generate",
    "generate_str",
    "loads_preserving",
]

MAX_NESTING = 100  # Ruby's JSON default max_nesting: depth 101 raises NestingError


class RubyJSONError(ValueError):
    """A value that Ruby's ``JSON.generate`` would reject, or whose Ruby text cannot be known for sure."""


class UncertainFloatError(RubyJSONError):
    """A float whose Ruby text cannot be proven (Grisu2 may pick other digits than the shortest ones)."""


class DuplicateKeyError(RubyJSONError):
    """An object with the same key twice (raised by ``loads_preserving(..., reject_duplicates=True)``)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")


class RawInt(int):
    """An integer that remembers the text it was parsed from (``.text``)."""

    text: str

    def __new__(cls, text: str) -> "RawInt":
        obj = super().__new__(cls, int(text))
        obj.text = text
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (RawInt, (self.text,))


class RawFloat(float):
    """A float that remembers the text it was parsed from (``.text``): ``1e5`` stays ``1e5``."""

    text: str

    def __new__(cls, text: str) -> "RawFloat":
        obj = super().__new__(cls, float(text))
        obj.text = text
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (RawFloat, (self.text,))


# -- parsing ----------------------------------------------------------------------------------------


def loads_preserving(data: str | bytes | bytearray | memoryview, *, reject_duplicates: bool = False) -> Any:
    """Parse JSON with the stdlib; numbers come back as :class:`RawInt` / :class:`RawFloat`.

    ``NaN``/``Infinity`` (which the stdlib accepts) become non-finite :class:`RawFloat` values that
    :func:`generate` refuses. With ``reject_duplicates``, an object with a repeated key raises
    :class:`DuplicateKeyError`; otherwise the last value wins, as in Ruby. Invalid JSON raises
    ``json.JSONDecodeError`` and invalid UTF-8 ``UnicodeDecodeError`` (both ``ValueError``).
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        text = bytes(data).decode("utf-8")
    else:
        text = data
    hook = _reject_duplicates if reject_duplicates else None
    return json.loads(text, parse_int=RawInt, parse_float=RawFloat, parse_constant=RawFloat, object_pairs_hook=hook)


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


# -- strings ----------------------------------------------------------------------------------------

_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPES = {**{chr(i): f"\\u{i:04x}" for i in range(0x20)}, **_SHORT}  # lowercase hex, as Ruby writes
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _string(s: str) -> str:
    m = _SURROGATE.search(s)
    if m is not None:
        raise RubyJSONError(
            f"lone surrogate U+{ord(m.group()):04X} at index {m.start()} of a string: "
            "not valid UTF-8, Ruby's JSON.generate raises"
        )
    if _ESCAPE.search(s) is None:
        return f'"{s}"'
    return '"' + _ESCAPE.sub(lambda m: _ESCAPES[m.group()], s) + '"'


# -- floats -----------------------------------------------------------------------------------------

_FRAC_BITS = 52
_HIDDEN = 1 << _FRAC_BITS
_EXTRA = 60  # fixed-point bits below the ulp used for the exact checks


def float_text(value: float) -> str:
    """The text Ruby's ``JSON.generate`` writes for ``value``.

    Raises :class:`RubyJSONError` for NaN/Infinity and :class:`UncertainFloatError` when Grisu2's digits
    cannot be proven (the shortest digits lie too close to the rounding interval's edge, or two
    candidates are almost equally close).
    """
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        raise RubyJSONError(f"{x} not allowed in JSON: Ruby's JSON.generate raises GeneratorError")
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0.0:
        return sign + "0.0"
    digits, k = _grisu_digits(abs(x))
    return sign + _format(digits, k)


def _grisu_digits(x: float) -> tuple[str, int]:
    """Digits and decimal exponent (value = digits * 10**k) that Grisu2 produces for ``x > 0``.

    Grisu2 looks for the highest decimal position with a multiple inside its rounding interval G, then
    takes the multiple closest to its estimate of ``x``. G lies strictly inside the exact interval
    between ``x`` and its neighbours' midpoints (exact edges are never in G) and contains that interval
    shrunk by about 2 units of 2**-62 on each side; its estimate of ``x`` is within about 1 unit. A
    candidate in the strip between an exact edge and the margin ``M`` may or may not be in G, and two
    candidates whose distances to ``x`` differ by less than ``M`` may be ranked either way: when either
    could change the result, the digits are uncertain.
    """
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    biased = (bits >> _FRAC_BITS) & 0x7FF
    frac = bits & (_HIDDEN - 1)
    if biased:
        f, e = frac | _HIDDEN, biased - 1075
    else:
        f, e = frac, -1074
    # Fixed point: every quantity below is an integer count of units 2**(e - _EXTRA).
    X = f << _EXTRA
    HI = (2 * f + 1) << (_EXTRA - 1)
    # fpconv narrows the lower gap only when the stored fraction is exactly the hidden bit
    LO = ((4 * f - 1) << (_EXTRA - 2)) if f == _HIDDEN else ((2 * f - 1) << (_EXTRA - 1))
    # Grisu2 works in units u <= HI * 2**-62 (its scaled upper boundary has at least 62 bits). Each
    # estimate is off by less than u * (1 + 2**-32), and the interval is narrowed by one more u per side.
    M = (HI >> 61) + (HI >> 90) + 1

    # Python's repr is the shortest decimal in a (never narrower) interval, so no multiple of a higher
    # power of ten than its last digit's can be inside G: start the search just above it.
    t = Decimal(repr(x)).normalize().as_tuple()
    top = int(t.exponent) + 1
    for p in range(top, top - 6, -1):
        num, den = 1, 1  # 10**p in fixed-point units, as num/den
        if p >= 0:
            num = 10**p
        else:
            den = 10**-p
        if _EXTRA - e >= 0:
            num <<= _EXTRA - e
        else:
            den <<= e - _EXTRA
        # multiples k * 10**p strictly inside the exact interval (LO, HI), and surely inside G
        first = (LO * den) // num + 1
        last = -((-HI * den) // num) - 1
        sure_first = -((-(LO + M) * den) // num)
        sure_last = ((HI - M) * den) // num
        if first > last:
            continue
        if sure_first > sure_last:
            raise UncertainFloatError(
                f"{x!r}: a decimal lies at the very edge of the rounding interval; "
                "whether Ruby's Grisu2 picks it is unsure"
            )
        target = X * den
        k0 = target // num  # the closest candidates are k0 and k0 + 1; their neighbours are the runners-up
        near = range(max(first, k0 - 1), min(last, k0 + 2) + 1)
        dists = sorted((abs(k * num - target), k) for k in near)
        best_dist, best = dists[0]
        if not sure_first <= best <= sure_last:
            raise UncertainFloatError(f"{x!r}: the closest digits lie at the very edge of the rounding interval")
        if len(dists) > 1 and dists[1][0] - best_dist <= M * den:
            raise UncertainFloatError(f"{x!r}: two digit strings are almost equally close; Ruby's choice is unsure")
        digits = str(best)
        if digits.endswith("0"):  # would mean a higher position had a sure multiple: never guess
            raise UncertainFloatError(f"{x!r}: could not confirm Ruby's digits")
        return digits, p
    raise UncertainFloatError(f"{x!r}: could not confirm Ruby's digits")


def _format(digits: str, k: int) -> str:
    """fpconv's layout of ``digits * 10**k`` (with ruby/json's ``.0`` for integral values)."""
    nd = len(digits)
    exp10 = k + nd - 1
    mag = abs(exp10)
    if k >= 0 and mag < 15:
        return digits + "0" * k + ".0"
    if k < 0 and (k > -7 or mag < 10):
        offset = nd + k
        if offset <= 0:
            return "0." + "0" * -offset + digits
        return digits[:offset] + "." + digits[offset:]
    mantissa = digits[0] + ("." + digits[1:] if nd > 1 else "")
    return f"{mantissa}e{'-' if exp10 < 0 else '+'}{mag}"


# -- generation -------------------------------------------------------------------------------------


def generate(value: Any, *, keep_raw_numbers: bool = False) -> bytes:
    """The UTF-8 bytes Ruby's ``JSON.generate(value)`` writes. Raises :class:`RubyJSONError`.

    With ``keep_raw_numbers``, :class:`RawInt` and :class:`RawFloat` values are written as their original
    source text (which must be a valid, finite JSON number).
    """
    return generate_str(value, keep_raw_numbers=keep_raw_numbers).encode("utf-8")


def generate_str(value: Any, *, keep_raw_numbers: bool = False) -> str:
    """Like :func:`generate`, as a ``str``."""
    out: list[str] = []
    _emit(value, out, 0, keep_raw_numbers)
    return "".join(out)


def _number_text(v: int | float, keep_raw: bool) -> str:
    if keep_raw and isinstance(v, (RawInt, RawFloat)):
        text = v.text
        if not _NUMBER.match(text):
            raise RubyJSONError(f"{text!r} is not a JSON number: Ruby cannot write it")
        if isinstance(v, RawFloat) and not math.isfinite(v):
            raise RubyJSONError(f"{text} not allowed in JSON: Ruby's JSON.generate raises GeneratorError")
        return text
    if isinstance(v, int):
        try:
            return int.__repr__(v)
        except ValueError as exc:  # beyond Python's int/str digit limit
            raise RubyJSONError(f"integer too large to convert here: {exc}") from None
    return float_text(v)


def _emit(v: Any, out: list[str], depth: int, keep_raw: bool) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(_string(v))
    elif isinstance(v, (int, float)):
        out.append(_number_text(v, keep_raw))
    elif isinstance(v, dict):
        depth += 1
        if depth > MAX_NESTING:
            raise RubyJSONError(f"nesting of {depth} is too deep (Ruby's max_nesting is {MAX_NESTING})")
        if not v:
            out.append("{}")
            return
        out.append("{")
        first = True
        for key, item in v.items():
            if not isinstance(key, str):
                raise RubyJSONError(f"object key {key!r} is not a string")
            if not first:
                out.append(",")
            first = False
            out.append(_string(key))
            out.append(":")
            _emit(item, out, depth, keep_raw)
        out.append("}")
    elif isinstance(v, (list, tuple)):
        depth += 1
        if depth > MAX_NESTING:
            raise RubyJSONError(f"nesting of {depth} is too deep (Ruby's max_nesting is {MAX_NESTING})")
        if not v:
            out.append("[]")
            return
        out.append("[")
        for i, item in enumerate(v):
            if i:
                out.append(",")
            _emit(item, out, depth, keep_raw)
        out.append("]")
    else:
        raise RubyJSONError(f"cannot serialise a {type(v).__name__} as JSON")
