"""The integrity check's byte search for tool ids (core/edit/idscan.py) gives the same answers as the full
pairing: for every id, every range, across chunk boundaries, with escaped ids and ids inside other ids; by
either engine (``engine``): Hyperscan, all ids and escapes in one pass (core/edit/literals.py), or memmem."""

from __future__ import annotations

import json
import os

import pytest

from sessionview.core.edit import idscan, literals
from sessionview.core.edit.change import Change
from sessionview.core.edit.integrity import broken_ids, nearest_valid_range
from sessionview.core.session import JsonlSession


def _call(*ids: str | int) -> dict:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": i, "name": "shell", "arguments": {}} for i in ids]}


def _result(cid: str | int, text: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def _lines() -> list[bytes]:
    records = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "go"},
        _call("call_1", "call_10"),
        _result("call_10", "mentions call_1 and \"call_1\" in its text"),
        _result("call_1"),
        _call("call_2"),
        {"role": "user", "content": "a user message naming call_2x and xcall_2"},
        _call("call_3"),
        _call("call_2"),  # a duplicate id
        _result("call_2"),
        _result("call_missing"),  # an orphan
        _call("call_4"),  # dangling
        _call("tu_5"),
    ]
    out = [json.dumps(r, ensure_ascii=False).encode() for r in records]
    out.append(b'{"role":"tool","tool_call_id":"\\u0074u_5","content":"escaped id"}')  # tu_5, spelled with an escape
    out.append(b'{"role":"tool","tool_call_id":"call_3","content":"caf\\u00e9 \\u001b[0m"}')
    out.append(json.dumps(_result("tu_5", "a second result")).encode())
    return out


@pytest.fixture(params=["hyperscan", "memmem"])
def engine(request, monkeypatch):
    """The search's engine: Hyperscan where its wheel is installed (x86-64), else memmem (or bytes.find)."""
    if request.param == "hyperscan" and not literals.available():
        pytest.skip("no hyperscan wheel for this machine")
    if request.param == "memmem":
        monkeypatch.setattr(literals, "_module", False)
    return request.param


@pytest.fixture(params=[3, 17, 1 << 20], ids=["chunk3", "chunk17", "chunk1M"])
def session(request, tmp_path, monkeypatch, engine):
    monkeypatch.setattr(idscan, "CHUNK", request.param)
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(_lines()) + b"\n")
    s = JsonlSession.load(p)
    yield s
    s.close()


IDS = ["call_1", "call_10", "call_2", "call_3", "call_4", "tu_5", "call_missing", "nothing"]


def _entries(p, ids):
    return (
        {i: p.calls[i] for i in ids if i in p.calls},
        {i: p.results[i] for i in ids if i in p.results},
        {i: p.duplicate_calls[i] for i in ids if i in p.duplicate_calls},
    )


@pytest.mark.parametrize("ids", [[i] for i in IDS] + [IDS])
def test_pairing_of_searched_ids_matches_the_full_pairing(session, ids):
    full = session.pairing()
    assert _entries(idscan.IdPairing(session).cover(ids), ids) == _entries(full, ids)


def test_an_escaped_id_is_found(engine):
    lines = _lines()
    source = JsonlSession.from_bytes(b"\n".join(lines) + b"\n").doc.source
    found = idscan.lines_mentioning(source, ["tu_5"])
    assert found is not None and {12, 13, 15} <= found


def test_every_range_gets_the_answer_of_the_full_pairing(session):
    full = session.pairing()
    n = len(session)
    for first in range(1, n + 1):
        for last in range(first, n + 1):
            change = Change("probe", first, last, ())
            assert broken_ids(session, change) == broken_ids(session, change, full), (first, last)
    for first in range(1, n + 1):
        for widen in ("both", "down"):
            assert nearest_valid_range(session, first, first, widen) == nearest_valid_range(session, first, first, widen, full)


def test_edits_that_change_ids_match_the_full_pairing(session):
    from sessionview.core.doc.document import Line

    full = session.pairing()
    for number in range(1, len(session) + 1):
        for value in (_call("call_2"), _result("call_4"), _result("tu_5"), {"role": "user", "content": "x"}, _call("new")):
            change = Change("edit", number, number, (Line(json.dumps(value).encode(), b"\n"),))
            assert broken_ids(session, change) == broken_ids(session, change, full), (number, value)


@pytest.mark.parametrize("ids", [["17"], ["a.b"], ["call 1"], ["é"]])
def test_ids_a_byte_search_cannot_answer_fall_back(ids, engine):
    source = JsonlSession.from_bytes(b'{"role":"user","content":"hi"}\n').doc.source
    assert idscan.lines_mentioning(source, ids) is None


def test_many_ids_without_a_common_prefix(engine):
    """memmem would need a pass for each: the full pairing answers; Hyperscan finds them all in one pass."""
    lines = [json.dumps(_call(*[f"x{i}" for i in range(10)])).encode()] + [json.dumps(_result(f"x{i}")).encode() for i in range(20)]
    lines.insert(5, b'{"role":"user","content":"x1x and ax2 and x3_ are other tokens"}')
    source = JsonlSession.from_bytes(b"\n".join(lines) + b"\n").doc.source
    found = idscan.lines_mentioning(source, [f"x{i}" for i in range(20)])
    assert found == (None if engine == "memmem" else set(range(len(lines))) - {5})


def test_a_number_id_falls_back_to_the_full_pairing(tmp_path, engine):
    p = tmp_path / "n.jsonl"
    p.write_bytes(json.dumps(_call(17)).encode() + b"\n" + json.dumps(_result(-0)).encode() + b"\n")
    s = JsonlSession.load(p)
    try:
        assert idscan.IdPairing(s).cover(["17"]).calls == {"17": 1}
        change = Change("probe", 1, 1, ())
        assert broken_ids(session=s, change=change) == broken_ids(s, change, s.pairing())
    finally:
        s.close()


@pytest.mark.parametrize("spelled, cid", [(b"NaN", "nan"), (b"Infinity", "inf"), (b"1e999", "inf"), (b"-1e999", "-inf"),
                                           (b"1e16", "1e+16"), (b"true", "True")])
def test_an_id_read_from_another_json_value_falls_back_to_the_full_pairing(engine, spelled, cid):
    """A result whose id is a JSON NaN, infinity, number or boolean pairs, once read, with a call whose id is
    that value's spelling as a string: the bytes never hold it, so the search must not answer for it."""
    data = (b'{"role":"user","content":"go"}\n'
            b'{"role":"assistant","content":"","tool_calls":[{"id":"%s","name":"shell","arguments":{}}]}\n'
            b'{"role":"tool","tool_call_id":%s,"content":"ok"}\n') % (cid.encode(), spelled)
    s = JsonlSession.from_bytes(data)
    full = s.pairing()
    assert cid in full.results or cid in full.calls
    assert idscan.lines_mentioning(s.doc.source, [cid]) is None
    change = Change("probe", 2, 2, ())
    assert broken_ids(s, change) == broken_ids(s, change, full)


def test_many_ids_with_a_common_prefix_are_searched_once(tmp_path, engine):
    records = [_call(*[f"call_{i:03d}" for i in range(k, k + 3)]) for k in range(0, 30, 3)]
    records += [_result(f"call_{i:03d}") for i in range(30)]
    p = tmp_path / "m.jsonl"
    p.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    s = JsonlSession.load(p)
    try:
        ids = [f"call_{i:03d}" for i in range(30)]
        assert idscan.lines_mentioning(s.doc.source, ids) == set(range(40))
        full = s.pairing()
        for first, last in ((1, 10), (3, 25), (11, 40), (1, 40)):
            change = Change("probe", first, last, ())
            assert broken_ids(s, change) == broken_ids(s, change, full)
    finally:
        s.close()


def test_an_edit_that_keeps_its_ids_reads_no_other_record(session, monkeypatch):
    def no_scan(*args, **kwargs):
        raise AssertionError("searched the file")

    monkeypatch.setattr(idscan, "lines_mentioning", no_scan)
    monkeypatch.setattr(type(session), "pairing", no_scan)
    from sessionview.core.doc.document import Line

    change = Change("edit", 3, 3, (Line(json.dumps(_call("call_1", "call_10") | {"content": "new text"}).encode(), b"\n"),))
    assert broken_ids(session, change) == ([], [])


def test_ids_with_a_long_common_prefix_are_searched_once(tmp_path, engine):
    records = [_call("toolu_0001_a", "toolu_0001_b"), _result("toolu_0001_b"), _call("toolu_0001_ab"), _result("toolu_0001_a")]
    records += [_result("toolu_0001_ab"), {"role": "user", "content": "names toolu_0001_a_x and toolu_0001"}]
    p = tmp_path / "l.jsonl"
    p.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    s = JsonlSession.load(p)
    try:
        assert idscan.lines_mentioning(s.doc.source, ["toolu_0001_a", "toolu_0001_b"]) == {0, 1, 3}
        full = s.pairing()
        for first in range(1, len(s) + 1):
            for last in range(first, len(s) + 1):
                change = Change("probe", first, last, ())
                assert broken_ids(s, change) == broken_ids(s, change, full)
    finally:
        s.close()


# -- the search in two processes ---------------------------------------------------------------------------


def _big_source(tmp_path, n=4000):
    from sessionview.core.doc.document import Document

    lines = []
    for i in range(n):
        if i % 97 == 0:
            lines.append(b'{"role":"tool","tool_call_id":"call_%05d","content":"x"}\n' % i)
        else:
            lines.append(b'{"role":"user","content":"filler %d \\u00e9 text"}\n' % i)
    lines[2500] = b'{"role":"user","content":"escaped \\u0041 here"}\n'
    p = tmp_path / "big.jsonl"
    p.write_bytes(b"".join(lines))
    return Document.load(p, digest=False)


@pytest.mark.parametrize("child", ["ok", "fails", "no fork"])
def test_the_search_in_two_processes_finds_what_one_finds(tmp_path, monkeypatch, child):
    import sessionview.core.edit.idscan as idscan_mod

    doc = _big_source(tmp_path)
    ids = ["call_00097", "call_02425", "call_03880"]
    monkeypatch.setattr(literals, "_module", False)  # no Hyperscan (its search runs in threads)
    monkeypatch.setattr(idscan_mod, "PARALLEL_MIN", 1 << 62)
    one = idscan_mod.lines_mentioning(doc.source, ids)
    assert {97, 2425, 3880, 2500} <= one
    monkeypatch.setattr(idscan_mod, "PARALLEL_MIN", 1)
    monkeypatch.setattr(idscan_mod, "CHUNK", 4096)  # chunk borders in both halves
    monkeypatch.setattr(idscan_mod, "_can_fork", lambda: True)
    monkeypatch.setattr(idscan_mod, "_memmem", False)  # no memmem: the search in two processes
    if child == "fails":
        real = idscan_mod._scan
        parent = os.getpid()

        def broken(source, lo, hi, *args):
            if os.getpid() != parent:
                raise RuntimeError("the child dies")
            return real(source, lo, hi, *args)

        monkeypatch.setattr(idscan_mod, "_scan", broken)
    if child == "no fork":
        monkeypatch.setattr(idscan_mod.os, "fork", lambda: (_ for _ in ()).throw(OSError(11, "EAGAIN")))
    assert idscan_mod.lines_mentioning(doc.source, ids) == one
    doc.close()


def test_no_fork_with_other_threads_running():
    import threading

    import sessionview.core.edit.idscan as idscan_mod

    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not idscan_mod._can_fork()
    finally:
        stop.set()
        t.join()


# -- memmem in two threads -------------------------------------------------------------------------------


needs_memmem = pytest.mark.skipif(idscan._memmem_finder() is None, reason="no libc memmem here")


@pytest.mark.parametrize("chunk", [4096, 1 << 20])
def test_the_search_in_two_threads_finds_what_bytes_find_finds(tmp_path, monkeypatch, chunk, engine):
    """memmem and Hyperscan both let go of the GIL: a big file is searched in two threads, a half each."""
    if engine == "memmem" and idscan._memmem_finder() is None:
        pytest.skip("no libc memmem here")
    doc = _big_source(tmp_path)
    ids = ["call_00097", "call_02425", "call_03880"]
    monkeypatch.setattr(idscan, "CHUNK", chunk)
    monkeypatch.setattr(idscan, "PARALLEL_MIN", 1 << 62)
    monkeypatch.setattr(idscan, "_memmem", False)
    hyperscan = literals._module
    monkeypatch.setattr(literals, "_module", False)
    one = idscan.lines_mentioning(doc.source, ids)  # by bytes.find, in one thread
    assert {97, 2425, 3880, 2500} <= one
    monkeypatch.setattr(literals, "_module", hyperscan)
    monkeypatch.setattr(idscan, "_memmem", None)
    monkeypatch.setattr(idscan, "PARALLEL_MIN", 1)
    threads = []
    real = idscan._scan_threads
    monkeypatch.setattr(idscan, "_scan_threads", lambda *a: (threads.append(1), real(*a))[1])
    assert idscan.lines_mentioning(doc.source, ids) == one
    assert threads == [1]
    doc.close()


@needs_memmem
def test_memmem_finds_every_occurrence_that_bytes_find_finds():
    import random

    rnd = random.Random(7)
    finds = idscan._memmem_finder()
    assert finds is not None
    for _ in range(300):
        buf = bytes(rnd.choice(b"ab\\u0") for _ in range(rnd.randrange(0, 60)))
        needle = bytes(rnd.choice(b"ab\\u0") for _ in range(rnd.randrange(1, 5)))
        lo = rnd.randrange(0, len(buf) + 1)
        hi = rnd.randrange(lo, len(buf) + 2)
        assert list(finds(buf, needle, lo, hi)) == list(idscan._bytes_finder(buf, needle, lo, hi))


@pytest.mark.parametrize("how", ["hyperscan", "memmem", "find"])
@pytest.mark.parametrize("escape", [b"\\u0041", b"\\u005f", b"\\u007e", b"\\u002B", b"\\u0020"])
def test_a_line_with_an_escaped_ascii_character_is_always_a_candidate(tmp_path, monkeypatch, how, escape):
    """Whichever search runs: an id spelled with an escape elsewhere (\\u0041 is A) still counts, as the full parse has it."""
    if how == "hyperscan" and not literals.available():
        pytest.skip("no hyperscan wheel for this machine")
    if how == "memmem" and idscan._memmem_finder() is None:
        pytest.skip("no libc memmem here")
    if how != "hyperscan":
        monkeypatch.setattr(literals, "_module", False)
    monkeypatch.setattr(idscan, "_memmem", False if how == "find" else None)
    monkeypatch.setattr(idscan, "CHUNK", 5)  # the escape across chunk borders too
    lines = [b'{"role":"user","content":"caf\\u00e9 \\u001b[0m \\u0080"}', b'{"role":"user","content":"x' + escape + b'y"}',
             b'{"role":"user","content":"plain"}']
    source = JsonlSession.from_bytes(b"\n".join(lines) + b"\n").doc.source
    assert idscan.lines_mentioning(source, ["call_1"]) == {1}


@needs_memmem
def test_an_escaped_id_blocks_a_delete_as_the_full_pairing_does(tmp_path, engine):
    """The tool call is kept, its one result is deleted; another line answers the call with the id spelled
    with escapes: the searched pairing and the full one agree on what breaks."""
    records = [json.dumps(_call("call_AB")).encode(), json.dumps(_result("call_AB")).encode(),
               b'{"role":"tool","tool_call_id":"call_\\u0041\\u0042","content":"again"}']
    p = tmp_path / "e.jsonl"
    p.write_bytes(b"\n".join(records) + b"\n")
    s = JsonlSession.load(p)
    try:
        full = s.pairing()
        for first, last in [(1, 1), (2, 2), (3, 3), (2, 3), (1, 3)]:
            change = Change("probe", first, last, ())
            assert broken_ids(s, change) == broken_ids(s, change, full)
        assert 2 in idscan.lines_mentioning(s.doc.source, ["call_AB"])
    finally:
        s.close()


# -- Hyperscan: many literals in one pass ------------------------------------------------------------------


@pytest.mark.skipif(not literals.available(), reason="no hyperscan wheel for this machine")
def test_hyperscan_finds_every_occurrence_of_every_literal_that_bytes_find_finds():
    import random

    rnd = random.Random(11)
    for _ in range(300):
        buf = bytes(rnd.choice(b"ab\\u0") for _ in range(rnd.randrange(0, 80)))
        needles = sorted({bytes(rnd.choice(b"ab\\u0") for _ in range(rnd.randrange(1, 6))) for _ in range(rnd.randrange(1, 6))})
        compiled = literals.compile_literals(needles)
        assert compiled is not None
        got = sorted(compiled.scanner()(buf))
        want = sorted((k, i) for k, n in enumerate(needles) for i in idscan._bytes_finder(buf, n, 0, len(buf)))
        assert got == want, (buf, needles)


def test_without_hyperscan_nothing_compiles(monkeypatch):
    monkeypatch.setattr(literals, "_module", False)
    assert not literals.available() and literals.compile_literals([b"call_1"]) is None
    monkeypatch.setattr(literals, "_module", None)
    assert literals.compile_literals([]) is None and literals.compile_literals([b""]) is None


# -- a property: the search misses no line the full pairing has ---------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_POOL = ["c1", "c10", "c1_", "xc1", "c", "a-b", "a", "call_1", "call_11", "ll_1"]


def _spelled(draw, cid: str) -> str:
    """``cid`` as JSON string content, some characters as ``\\u00XX`` escapes."""
    mask = draw(st.lists(st.booleans(), min_size=len(cid), max_size=len(cid)))
    return "".join(f"\\u{ord(ch):04x}" if m else ch for ch, m in zip(cid, mask, strict=True))


@st.composite
def _files(draw):
    lines = []
    for _ in range(draw(st.integers(1, 10))):
        kind, cid, other = draw(st.sampled_from(["call", "result", "user"])), draw(st.sampled_from(_POOL)), draw(st.sampled_from(_POOL))
        if kind == "call":
            lines.append('{"role":"assistant","content":"","tool_calls":[{"id":"%s","name":"t","arguments":{}}]}' % _spelled(draw, cid))
        elif kind == "result":
            lines.append('{"role":"tool","tool_call_id":"%s","content":"%s"}' % (_spelled(draw, cid), other))
        else:
            lines.append('{"role":"user","content":"%s %s"}' % (cid, other))
    term = draw(st.sampled_from([b"\n", b"\r\n"]))
    data = term.join(line.encode() for line in lines) + (term if draw(st.booleans()) else b"")
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data


@settings(max_examples=150, deadline=None)
@given(data=_files(), wanted=st.lists(st.sampled_from(_POOL), min_size=1, max_size=4, unique=True),
       chunk=st.sampled_from([3, 7, 64, 1 << 20]), threads=st.booleans(), hyperscan=st.booleans())
def test_the_search_finds_every_line_the_full_pairing_pairs_through(data, wanted, chunk, threads, hyperscan):
    """Escaped ids, ids inside other tokens, a BOM, CRLF, no last newline, chunk borders, one or two threads,
    either engine: every record that pairs (or duplicates a call) through a wanted id is among the lines found."""
    saved = (idscan.CHUNK, idscan.PARALLEL_MIN, literals._module)
    idscan.CHUNK, idscan.PARALLEL_MIN = chunk, (1 if threads else 1 << 62)
    if not hyperscan:
        literals._module = False
    try:
        s = JsonlSession.from_bytes(data)
        full = s.pairing()
        found = idscan.lines_mentioning(s.doc.source, wanted)
        assert found is not None
        need = set()
        for i in wanted:
            if i in full.calls:
                need.add(full.calls[i] - 1)
            need |= {n - 1 for n in full.results.get(i, [])} | {n - 1 for n in full.duplicate_calls.get(i, [])}
        assert need <= found
    finally:
        idscan.CHUNK, idscan.PARALLEL_MIN, literals._module = saved
