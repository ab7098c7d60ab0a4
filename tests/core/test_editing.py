"""The pure helpers behind the editing UI (``sessionview.core.edit.preview``): previews, numbering after a
change, the text of a message alone, digests, whether a loaded session is still the file, and the
summarizer's cancel hook. (Core tests kept beside the UI tests that use them.)"""

from __future__ import annotations

import os
import threading
import time

import pytest

from sessionview.core.edit import change as changes, encode, history, plan as edits, preview as previews, summary, writeback
from sessionview.core.session import JsonlSession, open_session
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

L = [b'{"role":"user","content":"m%d"}\n' % i for i in range(1, 21)]


@pytest.fixture
def session(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(L))
    s = JsonlSession.load(p)
    yield s
    s.close()


def test_preview_of_an_edit_has_context_the_old_and_the_new_record(session):
    change = edits.plan_edit(session, 5, content="five")
    rows = previews.preview(session, change)
    assert [(r.mark, r.old, r.new) for r in rows] == [
        (" ", 3, 3),
        (" ", 4, 4),
        ("-", 5, None),
        ("+", None, 5),
        (" ", 6, 6),
        (" ", 7, 7),
    ]
    assert rows[2].view.text == "m5" and rows[3].view.text == "five"
    assert changes.describe(change) == "1 record replaced" and not changes.is_noop(change)


def test_preview_of_a_long_delete_leaves_out_the_middle_and_renumbers_what_follows(session):
    change = edits.plan_delete(session, 3, 15)
    rows = previews.preview(session, change)
    marks = [r.mark for r in rows]
    assert marks == [" ", " ", "-", "-", "-", "…", "-", "-", "-", " ", " "]
    assert rows[5].note == "7 more records removed"
    assert (rows[-2].old, rows[-2].new) == (16, 3) and rows[-2].view.text == "m16"
    assert changes.describe(change) == "13 records removed"


def test_preview_of_a_compaction(session):
    change = edits.plan_compact(session, 1, 2, "the summary")
    rows = previews.preview(session, change)
    assert [r.mark for r in rows] == ["-", "-", "+", " ", " "]
    assert rows[2].view.text.endswith("the summary") and rows[3].new == 2
    assert changes.describe(change) == "2 records removed, 1 added"


def test_number_after_a_change(session):
    delete = edits.plan_delete(session, 5, 7)
    assert [changes.number_after(delete, n) for n in (4, 5, 6, 7, 8)] == [4, 4, 4, 4, 5]
    compact = edits.plan_compact(session, 5, 7, "s")
    assert [changes.number_after(compact, n) for n in (4, 5, 7, 8, 20)] == [4, 5, 5, 6, 18]


def test_noop_edit(session):
    change = edits.plan_edit(session, 2, content="m2")
    assert changes.is_noop(change)


def test_content_text_per_format(tmp_path):
    brute = open_session(FIXTURES / "brute-session.jsonl")
    assert encode.content_text(brute, 1) == "Liste les fichiers du dépôt, s'il te plaît 📁"
    assert encode.content_text(brute, 7) == ""  # a tool call without content: an empty text to set
    lg = open_session(FIXTURES / "littleghost-filesystem-snapshot.json")
    assert encode.content_text(lg, 1) == "Wie spät ist es in Zürich? ⏰"
    p = tmp_path / "blocks.jsonl"
    p.write_bytes(b'{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}\n')
    assert encode.content_text(open_session(p), 1) is None


def test_range_digest_records_and_bytes(session):
    assert summary.range_records(session, 2, 3) == [L[1][:-1], L[2][:-1]]
    assert summary.range_bytes(session, 2, 3) == len(L[1]) + len(L[2])
    assert summary.range_digest(session, 1, 2).startswith("Compacted 2 records (2 messages,")


def test_is_current_sees_appends_and_rewrites(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(L[:3]))
    s = JsonlSession.load(p)
    assert writeback.is_current(s, str(p))
    with open(p, "ab") as f:
        f.write(L[3])
    assert not writeback.is_current(s, str(p))
    assert history.same_record(s, 2, L[1][:-1]) and not history.same_record(s, 2, b"x")
    assert history.same_record(s, 2, None) and not history.same_record(s, 9, b"x")
    assert not writeback.is_current(s, str(tmp_path / "gone"))
    s.close()


def test_modified_ago(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x")
    os.utime(p, (1000, 1000))
    assert writeback.modified_ago(str(p), 1010.0) == pytest.approx(10.0)
    assert writeback.modified_ago(str(tmp_path / "none"), 0) is None


def test_summarizer_can_be_stopped_from_another_thread():
    started = threading.Event()
    procs = []

    def on_start(proc):
        procs.append(proc)
        started.set()

    errors = []

    def run():
        try:
            summary.run_summarizer("sleep 60", [b"{}"], timeout=120, on_start=on_start)
        except summary.SummarizerFailed as exc:
            errors.append(str(exc))

    t = threading.Thread(target=run)
    t0 = time.monotonic()
    t.start()
    assert started.wait(10)
    summary.stop(procs[0])
    t.join(10)
    assert not t.is_alive() and time.monotonic() - t0 < 10
    assert errors and "status" in errors[0] and procs[0].returncode != 0
