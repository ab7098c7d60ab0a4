import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionview.core.edit import encode, plan as edits, preview, summary
from sessionview.core.errors import InvalidEdit, Refused
from sessionview.core.doc.document import BOM
from sessionview.core.session import JsonlSession

from convo import CONVO

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def brute(*lines, crlf=False, final=True):
    term = b"\r\n" if crlf else b"\n"
    data = term.join(json.dumps(x, ensure_ascii=False, separators=(",", ":")).encode() if not isinstance(x, bytes) else x for x in lines)
    return JsonlSession.from_bytes(data + (term if final else b""))


def test_edit_changes_only_the_edited_record_and_keeps_its_crlf():
    s = brute(*CONVO, crlf=True)
    before = s.doc.to_bytes()
    change = edits.plan_edit(s, 4, content="Three files.")
    after = change.apply(s.doc).to_bytes()
    old_lines, new_lines = before.split(b"\r\n"), after.split(b"\r\n")
    assert len(old_lines) == len(new_lines)
    diff = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert diff == [3]
    assert new_lines[3] == b'{"role":"assistant","content":"Three files."}'


def test_edited_brute_line_is_what_brute_writes_key_order_and_nil_dropped():
    s = brute({"role": "user", "content": "x"})
    change = edits.plan_edit(s, 1, json_text='{"reasoning": null, "content": "hé \\u00e9 / \\u2028", "role": "user"}')
    assert change.lines[0].raw == '{"role":"user","content":"hé é / \u2028"}'.encode()


def test_edit_refuses_keys_brute_does_not_know_and_invalid_json():
    s = brute({"role": "user", "content": "x"})
    with pytest.raises(InvalidEdit, match="unknown key"):
        edits.plan_edit(s, 1, json_text='{"role":"user","content":"x","name":"bob"}')
    with pytest.raises(InvalidEdit, match="invalid JSON"):
        edits.plan_edit(s, 1, json_text='{"role":')
    with pytest.raises(InvalidEdit, match="duplicate key"):
        edits.plan_edit(s, 1, json_text='{"role":"user","role":"assistant"}')
    # Brute loads a non-string content and writes it back as it is: written, with a warning
    change = edits.plan_edit(s, 1, json_text='{"role":"user","content":["x"]}')
    assert change.lines[0].raw == b'{"role":"user","content":["x"]}'
    assert any("provider" in w for w in change.warnings)


def test_untouched_numbers_keep_their_text_and_new_ones_are_written_as_ruby_would():
    s = JsonlSession.load(os.path.join(FIX, "bad", "exponent.jsonl"))
    text = encode.pretty_record(s, 1)
    assert "1E2" in text and "1e5" in text
    change = edits.plan_edit(s, 1, json_text=text.replace('"calc"', '"calc2"').replace("-0.0", "2.5e3"))
    raw = change.lines[0].raw
    assert b'"x":1E2' in raw and b'"y":1e5' in raw
    assert b'"z":2500.0' in raw  # a new float is written in Ruby's own format


def test_big_integers_survive_an_edit_exactly():
    s = JsonlSession.load(os.path.join(FIX, "bad", "bigint.jsonl"))
    change = edits.plan_edit(s, 1, content="still big")
    assert b"123456789012345678901234567890" in change.lines[0].raw


def test_content_on_block_content_sets_the_only_text_block_or_refuses():
    s = JsonlSession.from_bytes(
        b'{"role":"user","content":[{"type":"text","text":"old"}]}\n'
        b'{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}\n'
    )
    change = edits.plan_edit(s, 1, content="new")
    assert b'"text":"new"' in change.lines[0].raw
    with pytest.raises(InvalidEdit, match="--json"):
        edits.plan_edit(s, 2, content="x")


def test_delete_that_splits_a_call_from_its_result_is_refused_with_ids_and_nearest_range():
    s = brute(*CONVO)
    with pytest.raises(Refused) as err:
        edits.plan_delete(s, 2, 2)
    assert err.value.ids == ("c1",)
    assert "orphan" in str(err.value) and "--force" not in str(err.value)
    assert err.value.suggestion == (2, 3) and err.value.widen == "both" and err.value.forceable
    with pytest.raises(Refused, match="dangling"):
        edits.plan_delete(s, 3, 3)
    change = edits.plan_delete(s, 2, 3)
    assert len(change.apply(s.doc)) == 3
    forced = edits.plan_delete(s, 3, 3, force=True)
    assert len(forced.apply(s.doc)) == 4


def test_truncate_keeps_records_and_refuses_to_split_pairs():
    s = brute(*CONVO)
    assert edits.plan_truncate(s, 3).apply(s.doc).to_bytes().count(b"\n") == 3
    with pytest.raises(Refused) as err:
        edits.plan_truncate(s, 2)
    assert err.value.suggestion == (2, 5) and err.value.widen == "down"  # keep #1
    nothing = edits.plan_truncate(s, 10)
    assert nothing.apply(s.doc).to_bytes() == s.doc.to_bytes()


def test_compact_writes_brutes_marker_where_the_first_replaced_message_was():
    s = brute(*CONVO)
    change = edits.plan_compact(s, 1, 4, "They listed files.")
    new = change.apply(s.doc)
    assert new.record(1).raw == b'{"role":"user","content":"[compacted:summary] They listed files."}'
    assert new.record(2).raw == b'{"role":"user","content":"thanks"}'
    with pytest.raises(Refused):
        edits.plan_compact(s, 1, 2, "splits c1")


def test_bom_moves_to_the_new_first_line_when_line_1_is_deleted():
    s = JsonlSession.from_bytes(BOM + b'{"role":"user","content":"a"}\n{"role":"user","content":"b"}\n')
    assert edits.plan_delete(s, 1, 1).apply(s.doc).to_bytes() == BOM + b'{"role":"user","content":"b"}\n'


def test_partial_last_line_is_kept_and_never_part_of_a_range_without_force():
    s = brute(*CONVO, b'{"role":"assistant","content":"wri', final=False)
    assert s.doc.record(6).partial
    new = edits.plan_edit(s, 5, content="ok").apply(s.doc)
    assert new.to_bytes().endswith(b'{"role":"assistant","content":"wri')
    with pytest.raises(Refused, match="partial"):
        edits.plan_delete(s, 5, 6)
    with pytest.raises(Refused, match="partial"):
        edits.plan_truncate(s, 5)


def test_inverse_restores_the_exact_bytes():
    s = brute(*CONVO, crlf=True)
    for change in (edits.plan_edit(s, 4, content="x"), edits.plan_delete(s, 4, 5), edits.plan_compact(s, 1, 4, "sum")):
        new = change.apply(s.doc)
        assert change.inverse.apply(new).to_bytes() == s.doc.to_bytes()


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_any_forced_delete_then_inverse_is_byte_identical(data):
    lines = data.draw(st.lists(st.sampled_from([b'{"role":"user","content":"x"}', b"not json", b"", b'{"a":1e5}']), min_size=1, max_size=12))
    crlf = data.draw(st.booleans())
    s = JsonlSession.from_bytes((b"\r\n" if crlf else b"\n").join(lines) + b"\n")
    first = data.draw(st.integers(1, len(s)))
    last = data.draw(st.integers(first, len(s)))
    change = edits.plan_delete(s, first, last, force=True)
    assert change.inverse.apply(change.apply(s.doc)).to_bytes() == s.doc.to_bytes()


def test_unified_diff_shows_context_and_changes():
    s = brute(*CONVO)
    diff = preview.unified_diff(s.doc, edits.plan_delete(s, 4, 4), "s.jsonl")
    assert diff.splitlines()[:3] == ["--- a/s.jsonl", "+++ b/s.jsonl", "@@ -1,5 +1,4 @@ delete #4"]
    assert '-{"role":"assistant","content":"Two files."}' in diff


def test_builtin_digest_names_asks_tools_arguments_conclusion_and_size():
    s = brute(*CONVO)
    views = list(s.views(1, 4))
    text = summary.digest(views, 1234)
    assert "Compacted 4 records (4 messages, 1234 bytes)" in text
    assert "list files" in text
    assert "shell ×1: command=ls" in text
    assert "Two files." in text


def test_summarizer_success_failure_empty_and_timeout():
    r = summary.run_summarizer("wc -l | tr -d ' '", [b"{}", b"{}", b"{}"])
    assert r.text == "3"
    with pytest.raises(summary.SummarizerFailed, match="status 3"):
        summary.run_summarizer("echo boom >&2; exit 3", [b"{}"])
    with pytest.raises(summary.SummarizerFailed, match="printed nothing"):
        summary.run_summarizer("cat >/dev/null", [b"{}"])
    with pytest.raises(summary.SummarizerFailed, match="timeout"):
        summary.run_summarizer("sleep 30", [b"{}"], timeout=0.5)


def test_parse_range():
    assert edits.parse_range("3", 10) == (3, 3)
    assert edits.parse_range("3:5", 10) == (3, 5)
    assert edits.parse_range("3:", 10) == (3, 10)
    for bad in ("0", "5:3", "x", "3:11"):
        with pytest.raises(InvalidEdit):
            edits.parse_range(bad, 10)
