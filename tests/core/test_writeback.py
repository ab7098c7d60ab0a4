"""The glue from a planned change to a safe save: stamps are taken at load, rebase, refusals."""

import pytest

import xxhash

from sessionview.core.edit import plan as edits, writeback
from sessionview.core.errors import Conflict
from sessionview.core.session import JsonlSession

A = b'{"role":"user","content":"one"}\n'
B = b'{"role":"assistant","content":"two"}\n'
C = b'{"role":"user","content":"three"}\n'


def test_a_brute_style_rewrite_in_place_after_load_is_a_conflict(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(A + B)
    s = JsonlSession.load(p)
    change = edits.plan_edit(s, 2, content="TWO")
    # Brute truncates the same inode and writes a longer, different history
    with open(p, "r+b") as f:
        f.truncate(0)
        f.write(B + A + C)
    with pytest.raises(Conflict, match="changed on disk"):
        writeback.commit(s, change, root=str(tmp_path))
    assert p.read_bytes() == B + A + C


def test_appends_since_load_are_rebased_byte_exact(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(A + B)
    s = JsonlSession.load(p)
    change = edits.plan_edit(s, 1, content="ONE")
    with open(p, "ab") as f:
        f.write(b'{"role":"user", "content":"appended \\u00e9"}\r\n')
    out = writeback.commit(s, change, root=str(tmp_path))
    assert out.changed
    assert p.read_bytes() == b'{"role":"user","content":"ONE"}\n' + B + b'{"role":"user", "content":"appended \\u00e9"}\r\n'


def test_appends_that_continue_an_edited_last_record_are_refused(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(A + b'{"role":"assistant","content":"par')
    s = JsonlSession.load(p)
    change = edits.plan_edit(s, 2, json_text='{"role":"assistant","content":"x"}', force=True)
    with open(p, "ab") as f:
        f.write(b'tial"}\n')
    with pytest.raises(Conflict):
        writeback.commit(s, change, root=str(tmp_path))
    assert p.read_bytes() == A + b'{"role":"assistant","content":"partial"}\n'


def test_the_stamp_hash_is_taken_while_indexing(tmp_path):

    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + A + B)
    s = JsonlSession.load(p)
    assert s.doc.source.hexdigest == xxhash.xxh3_128(p.read_bytes()).hexdigest()
    p.write_bytes(C)  # changes after load do not change what was stamped
    assert s.stamp.hexdigest == xxhash.xxh3_128(b"\xef\xbb\xbf" + A + B).hexdigest()
    assert s.stamp.size == len(b"\xef\xbb\xbf" + A + B)
