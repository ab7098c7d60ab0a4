"""The fast paths of rendering give what the plain ones give: indenting, and escaping control characters."""

import itertools
import random

from sessionview.core import text as T
from sessionview.core.view import render


def _indent_by_lines(text, prefix):
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.split("\n"))


def test_indent_matches_the_line_by_line_rule_on_every_short_text():
    for prefix in ("    ", "  | ", "        | ", "xx"):
        for n in range(7):
            for parts in itertools.product(["", "a", "\n", " ", "b c"], repeat=n):
                text = "".join(parts)
                assert render._indent(text, prefix) == _indent_by_lines(text, prefix), (text, prefix)


def test_escape_control_matches_the_pattern_on_random_text():
    rng = random.Random(14)
    for _ in range(50_000):
        s = "".join(chr(rng.choice([rng.randrange(0, 0x80), rng.randrange(0, 0x3000)])) for _ in range(rng.randrange(6)))
        for one_line in (True, False):
            pattern = T._UNSAFE_ONE_LINE if one_line else T._UNSAFE
            assert T.escape_control(s, one_line=one_line) == pattern.sub(T._escape, s), s
    assert T.escape_control("a\x1b[31mb\x7f") == "a\\x1b[31mb\\x7f"
    assert T.escape_control("a\nb\tc", one_line=True) == "a\\nb\\tc"
