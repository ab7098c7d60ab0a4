"""Brute records rendered from their bytes (``core/view/fastrender.py``) give exactly what the view path gives
(``build_view`` then ``view_text`` / ``view_json``), record after record with the pairing running, on hostile
records too; where the fast renderer is not sure it says so, and the view path renders the record."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionview.core.doc.parse import parse_record
from sessionview.core.formats.brute import BruteAdapter
from sessionview.core.session import build_view
from sessionview.core.view import fastrender, render
from sessionview.core.view.fastrender import BruteRender

HOSTILE = (
    "\x00\x07\x08\x0b\x0c\r\x1b\x7f\x80\x85\x9f\xa0\xad\u061c\u200b\u200e\u200f\u2028\u2029\u202a\u202e\u2066\u2069"
    "\ufeff\ud800\udfff"
)
PLAIN = "ab :\n\t|{}[]\"\\/⏎─—✅😀é\u05d0 "
TEXT = st.text(alphabet=st.sampled_from(HOSTILE + PLAIN), max_size=40) | st.sampled_from(
    ["", "\n", "\n\n", "a\n", "\na", "a\n\n\nb", "[compacted:summary] x", "[compacted:X]", "[bold]x[/]", "\x1b[31mred",
     "u003a", "\\u003a", "call_1", "C:\\x:y"]
)
IDS = st.sampled_from(["call_1", "call_2", "", "c:1", "\x1b", "é"]) | TEXT
SCALAR = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | TEXT
JSON = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8)
ARGS = st.dictionaries(st.sampled_from(["command", "path", "a:b", "é", "\n"]) | TEXT, SCALAR | TEXT, max_size=4) | JSON


@st.composite
def calls(draw):
    c = {}
    if draw(st.integers(0, 9)):
        c["id"] = draw(IDS | st.integers(0, 3) | st.none())
    if draw(st.integers(0, 9)):
        c["name"] = draw(st.sampled_from(["shell", "read_file", "", "x:y"]) | TEXT | st.integers(0, 3))
    if draw(st.integers(0, 3)):
        c["arguments"] = draw(ARGS | st.none())
    if not draw(st.integers(0, 15)):
        c["extra"] = 1
    return c


CLEAN_SCALAR = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | TEXT
CLEAN_ARGS = st.dictionaries(TEXT, CLEAN_SCALAR, max_size=4) | st.recursive(
    CLEAN_SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=6
)


@st.composite
def clean_records(draw):
    """A record the fast renderer is meant to take (hostile text, but Brute's shape)."""
    v: dict = {"role": draw(st.sampled_from(["user", "assistant", "tool", "system", "x:y", "\x1b"]))}
    v["content"] = draw(TEXT | st.none())
    if draw(st.booleans()):
        v["tool_calls"] = draw(st.lists(st.fixed_dictionaries({"id": IDS, "name": TEXT}, optional={"arguments": CLEAN_ARGS | st.none()}), max_size=3))
    if v["role"] == "tool" or not draw(st.integers(0, 5)):
        v["tool_call_id"] = draw(IDS | st.none())
    text = json.dumps(v, ensure_ascii=draw(st.booleans()), separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
    return text.encode("utf-8", "surrogatepass")


@st.composite
def records(draw):
    if draw(st.booleans()):
        return draw(clean_records())
    v: dict = {}
    if draw(st.integers(0, 15)):
        v["role"] = draw(st.sampled_from(["user", "assistant", "tool", "system", "", "x:y"]) | TEXT | st.integers(0, 2))
    if draw(st.integers(0, 5)):
        v["content"] = draw(TEXT | st.none() | st.just([{"type": "text", "text": "hi"}]) | st.integers(0, 2))
    if draw(st.integers(0, 2)) == 0:
        v["tool_calls"] = draw(st.lists(calls(), max_size=3) | st.none() | st.just({}) | st.just({"k": {"name": "n"}}) | st.just("x"))
    if draw(st.integers(0, 2)) == 0:
        v["tool_call_id"] = draw(IDS | st.none() | st.integers(0, 3))
    if not draw(st.integers(0, 10)):
        v["reasoning"] = draw(st.none() | TEXT | st.just({"text": "r"}))
    if not draw(st.integers(0, 15)):
        v[draw(st.sampled_from(["timestamp", "extra", "role"]))] = "2025-11-01T10:00:05.000Z"
    keys = list(v)
    order = draw(st.permutations(keys)) if keys else []
    v = {k: v[k] for k in order}
    text = json.dumps(v, ensure_ascii=draw(st.booleans()), separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
    raw = text.encode("utf-8", "surrogatepass")  # a lone surrogate: bytes that are not UTF-8
    spoil = draw(st.integers(0, 12))
    if spoil == 0 and raw.startswith(b"{") and len(raw) > 2:
        raw = b'{"role":"user",' + raw[1:]  # a duplicate key (or a second role)
    elif spoil == 1:
        raw = raw[: draw(st.integers(0, len(raw)))]  # cut
    elif spoil == 2:
        raw = raw.replace(b":", b"\\u003a", 1)
    elif spoil == 3:
        raw = raw.replace(b'"', b'"\xff', 1)  # invalid UTF-8
    elif spoil == 4:
        raw = raw.replace(b"0", b"123456789012345678901234567890", 1)  # a huge integer
    elif spoil == 5:
        raw = b"   " + raw + b" \t"
    elif spoil == 6:
        raw = b"[" * 120 + b"]" * 120 if not draw(st.booleans()) else b'{"role":"user","content":"x","tool_calls":[{"id":"a","name":"b","arguments":' + b'{"a":' * 110 + b"1" + b"}" * 110 + b"}]}"
    return raw


def view_path(n: int, raw: bytes, adapter: BruteAdapter, pairing: render.RunningPairing, log: list | None = None) -> tuple[bytes, bytes]:
    parsed = parse_record(raw)
    view = build_view(adapter, n, parsed, len(raw) + 1, lambda limit: raw if limit is None else (raw + b"\n")[:limit])
    pairing.see(view)
    if log is not None and (view.tool_calls or view.tool_results):  # as ShowStream logs a record it views
        log.append((n, tuple((c.id, c.name) for c in view.tool_calls), tuple(r.call_id for r in view.tool_results)))
    text = render.view_text(view, pairing).encode("utf-8", "backslashreplace")
    js = render.view_json(view).encode("utf-8", "backslashreplace")
    return text, js


def _check(lines: list[bytes]) -> None:
    adapter, p_view, p_fast = BruteAdapter(), render.RunningPairing(), render.RunningPairing()
    log: list = []
    fast = BruteRender(p_fast, log)
    for n, raw in enumerate(lines, 1):
        want_text, want_json = view_path(n, raw, adapter, p_view)
        out: list[bytes] = []
        if fast.text(n, raw, out):
            assert b"".join(out) == want_text, raw
        else:
            assert out == []
            view_path(n, raw, adapter, p_fast, log)  # the view path renders it, and the pairing sees it
        got_json = fast.json(n, raw)
        assert got_json is None or got_json == want_json, raw
    assert (p_fast.calls, p_fast.results, p_fast.names) == (p_view.calls, p_view.results, p_view.names)
    # the log, replayed onto another pairing, makes it what the records made the first
    replayed = render.RunningPairing()
    fastrender.replay(replayed, log)
    assert (replayed.calls, replayed.results, replayed.names) == (p_view.calls, p_view.results, p_view.names)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records(), min_size=1, max_size=8))
def test_the_fast_rendering_is_the_view_rendering(lines):
    _check(lines)


def test_plain_brute_records_take_the_fast_path():
    lines = [
        b'{"role":"user","content":"hello: world\\n\\nsecond paragraph\\n"}',
        b'{"role":"assistant","content":"","tool_calls":[{"id":"call_1","name":"shell","arguments":{"command":"ls -la","timeout":60}}]}',
        b'{"role":"tool","content":"total 0\\n","tool_call_id":"call_1"}',
        b'{"role":"assistant","content":"\xc3\xa9\xe2\x94\x80\xe2\x80\x94","tool_calls":[{"id":"call_2","name":"write_file","arguments":{"path":"a","content":"x\\n\\ny\\n"}}]}',
    ]
    fast = BruteRender(render.RunningPairing())
    for n, raw in enumerate(lines, 1):
        assert fast.text(n, raw, []), raw
        assert fast.json(n, raw) is not None, raw
    _check(lines)


def test_records_it_is_not_sure_of_go_to_the_view_path():
    unsure = [
        b"",
        b"{oops",
        b"[1]",
        b'{"role":"user","content":"a","content":"b"}',  # duplicate keys
        b'{"role":"user","content":[{"type":"text","text":"hi"}]}',
        b'{"role":"user","content":"x","reasoning":"why"}',
        b'{"role":"user","content":"[compacted:summary] s"}',
        b'{"role":"user","content":"x","timestamp":"2025-11-01T10:00:05.000Z"}',
        b'{"role":"assistant","tool_calls":[{"id":1,"name":"a"}]}',
        b'{"role":"assistant","tool_calls":[{"id":"a","name":"b","arguments":{"x":1.5}}]}',
        b'{"role":"assistant","tool_calls":[{"id":"a","name":"b","arguments":{"x":123456789012345678901234567890}}]}',
        b'{"role":"assistant","tool_calls":{"a":{"name":"b"}}}',
        b'{"role":"user","content":"\xff"}',
        b'{"role":"user","content":"\\ud800"}',
        b'{"role":"","content":"x"}',
        b'{"role":"user","content":"a\\u003ab","x":1}',
    ]
    fast = BruteRender(render.RunningPairing())
    for raw in unsure:
        out: list[bytes] = []
        assert not fast.text(1, raw, out) and out == [], raw
    _check(unsure)


def test_text_bytes_escapes_what_escape_control_escapes():
    from sessionview.core.text import escape_control

    for c in map(chr, [*range(0x0, 0x300), *range(0x600, 0x620), *range(0x2000, 0x2070), 0xFEFF, 0xFFFE, 0x1F600]):
        for s in (c, "a" + c + "b", "é" + c, "─" + c + "\n"):
            want = escape_control(s).encode("utf-8", "backslashreplace")
            assert fastrender.text_bytes(s) == want, repr(s)


def test_indent_into_is_render_indent():
    import itertools

    for n in range(6):
        for parts in itertools.product(["", "a", "\n", " ", "é", "\t"], repeat=n):  # a tab: the least byte after a newline
            text = "".join(parts)
            if not text:
                continue
            out: list[bytes] = []
            fastrender.indent_into(out, text.encode())
            assert b"".join(out) == render._indent(text).encode(), repr(text)
            for prefix in ("  | ", "        | ", "    ", "xx"):  # with and without trailing blanks
                assert fastrender.indent(text.encode(), prefix.encode()) == render._indent(text, prefix).encode(), (text, prefix)
    assert fastrender.indent(b"", b"  | ") == render._indent("", "  | ").encode() == b"  |"


def test_one_line_strings_are_escaped_as_escape_control_escapes_them():
    """``line`` (roles, ids, tool names) leaves a printable string as it is and escapes the rest as
    escape_control(one_line=True) does: also characters that are not printable but need no escape (NBSP,
    U+3000), newlines, tabs and lone surrogates."""
    from sessionview.core.text import escape_control
    from sessionview.core.view import fastbytes

    chars = [*range(0x0, 0x300), *range(0x600, 0x620), *range(0x2000, 0x2070), 0x3000, 0xD800, 0xFEFF, 0xFFFE, 0x1F600]
    for c in map(chr, chars):
        for s in (c, "call_" + c, "é" + c + "x"):
            want = escape_control(s, one_line=True).encode("utf-8")
            assert fastbytes.line(s) == want == fastbytes.line_cached(s), repr(s)


def test_arguments_at_their_line_cap_are_the_view_paths():
    """A call's arguments with about ``LINES_CAP`` lines (pretty JSON, and a flat object with a block of text,
    with and without empty lines) render as the view path renders them, on either side of the cap."""
    from sessionview.core.view.tools import LINES_CAP

    lines = []
    for n in (LINES_CAP - 5, LINES_CAP - 4, LINES_CAP - 3, LINES_CAP - 2):
        args = {"items": list(range(n))}  # n + 4 lines
        lines.append(json.dumps({"role": "assistant", "content": "", "tool_calls": [{"id": f"a{n}", "name": "x", "arguments": args}]}, separators=(",", ":")))
    for n in range(LINES_CAP - 8, LINES_CAP - 4):  # n + 6 lines: braces, path, the block's key and n + 2 lines
        for line in ("l", ""):  # lines of text, or empty ones (a block's bytes are then fewer than its lines)
            block = "x\n" + (line + "\n") * n + "y"
            args = {"path": "p", "content": block}
            lines.append(json.dumps({"role": "assistant", "content": "", "tool_calls": [{"id": f"b{n}{line}", "name": "write", "arguments": args}]}, separators=(",", ":")))
    _check([line.encode() for line in lines])


def test_colons_decide_duplicates_only_where_the_bytes_are_not_orjsons():
    """A record orjson would write the same needs no colon count; one with other spacing or escapes has its
    colons counted (role, ids, names, text and arguments): a duplicate key in the arguments, spaced or not, is
    left to the view path, and colons in every string do not make a clean record look like one."""
    dup = [
        b'{"role":"assistant","content":"","tool_calls":[{"id":"a","name":"b","arguments":{"k":"x:y","k":"z"}}]}',
        b'{"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "b", "arguments": {"k": "x", "k": "z"}}]}',
        b'{"role":"assistant","content":"q","tool_calls":[{"id":"a","name":"b","arguments":{"p":"1\\n2\\n3","p":"x\\ny\\nz"}}]}',
    ]
    fast = BruteRender(render.RunningPairing())
    for raw in dup:
        assert not fast.text(1, raw, []), raw
    clean = [
        b'{"role":"assistant","content":"a:b","tool_calls":[{"id":"c:1","name":"x:y","arguments":{"path":"p:q","content":"l1:\\nl2\\n:"}}]}',
        b'{"role": "assistant", "content": "a:b", "tool_calls": [{"id": "c:2", "name": "x:y", "arguments": {"path": "p:q", "content": "l1:\\nl2\\n:"}}]}',
        b'{"role": "tool", "content": "\\u00e9:", "tool_call_id": "c:2"}',
        b'{"role": "assistant", "content": "", "tool_calls": [{"id": "c3", "name": "n", "arguments": {"path": "p", "content": "a\\n\\nb\\n"}}]}',
    ]
    for n, raw in enumerate(clean, 1):
        assert fast.text(n, raw, []), raw
    _check(dup + clean)
