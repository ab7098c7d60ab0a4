"""The operation layer (``core.ops``), the adapters' capabilities, the one no-op answer, the bounded
history and the shared ``$EDITOR`` round trip (``sessionview.editor``)."""

import os
import shutil
import sys

import pytest

from sessionview import editor
from sessionview.core import formats, ops
from sessionview.core.edit import change as changes, plan as edits, writeback
from sessionview.core.edit.history import EditHistory
from sessionview.core.errors import Refused
from sessionview.core.session import open_session
from sessionview.core.store import backups
from sessionview.core.store.save import SaveResult

L = [b'{"role":"user","content":"m%d"}\n' % i for i in range(1, 7)]


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(L))
    return p


# -- capabilities ------------------------------------------------------------------------------------


def test_adapters_declare_what_they_can_do():
    caps = {name: cls.capabilities for name, cls in formats.BY_NAME.items()}
    assert {n for n, c in caps.items() if not c.editable} == {"gemini"}
    assert {n for n, c in caps.items() if c.compactable} == {"brute", "openai", "anthropic", "littleghost-jsonl", "jsonl"}
    assert not any(c.whole_document for c in caps.values())


def test_the_store_document_is_written_whole(fixtures):
    s = open_session(fixtures / "littleghost-filesystem-snapshot.json")
    assert s.capabilities.whole_document and s.capabilities.compactable and s.capabilities.editable
    assert not open_session(fixtures / "brute-session.jsonl").capabilities.whole_document


def test_compaction_refusal_names_the_capability(fixtures):
    s = open_session(fixtures / "claude-code.jsonl")
    with pytest.raises(Refused, match="lines are linked by ids and parents"):
        edits.plan_compact(s, 1, 2, "summary")


# -- no-op: answered once, nothing touches the disk --------------------------------------------------


def test_a_no_op_change_is_not_saved_and_keeps_no_backup(path):
    s = open_session(path)
    change = edits.plan_edit(s, 2, content="m2")
    assert changes.is_noop(change)
    before = os.stat(path)
    outcome = ops.commit(s, change)
    assert outcome == writeback.Outcome(False, change.description)
    assert backups.list_backups(str(path)) == []
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns


def test_commit_then_describe_is_typed(path):
    s = open_session(path)
    outcome = ops.commit(s, edits.plan_delete(s, 6, 6))
    assert outcome.changed and isinstance(outcome.result, SaveResult)
    said = ops.describe(outcome)
    assert said.written and said.extra == "" and said.missing == ""


def test_describe_phrases_each_fact_once():
    r = SaveResult("p", "p", True, 1, None, rebased_bytes=1200, carried_bytes=34, lost_partial_bytes=0,
                   warnings=("dir fsync failed",), not_carried_bytes=7, kept_paths=("/state/u",))
    said = ops.describe(writeback.Outcome(True, "delete #4", r))
    assert said.kept == "1,234 bytes appended meanwhile kept"
    assert said.extra == "1,234 bytes appended meanwhile kept; dir fsync failed"
    assert said.missing == "7 bytes another process wrote during the save are not in the new file; they are kept in /state/u"


# -- plan with every summary source ------------------------------------------------------------------


def test_compaction_summary_sources(path):
    s = open_session(path)
    assert ops.compaction_summary(s, 1, 2, ops.SummarySource(text="typed")) == "typed"
    assert ops.compaction_summary(s, 1, 2, ops.SummarySource()).startswith("Compacted 2 records")
    if shutil.which("wc"):
        assert ops.compaction_summary(s, 1, 2, ops.SummarySource(command="wc -l | tr -d ' '")) == "2"
    change = ops.plan_compact(s, 1, 2, ops.SummarySource(text="done"))
    assert change.lines[0].raw == b'{"role":"user","content":"[compacted:summary] done"}'


def test_run_with_retry_refuses_a_read_only_session(fixtures, tmp_path):
    p = tmp_path / "doc.json"
    p.write_bytes((fixtures / "littleghost-filesystem-snapshot.json").read_bytes() + b" ")  # no longer round-trips
    assert open_session(p).read_only_reason
    with pytest.raises(ops.ReadOnly, match="read-only"):
        ops.run_with_retry(str(p), lambda s: edits.plan_delete(s, 1, 1), lambda s, c: 0)


def test_run_with_retry_plans_and_acts_once(path):
    seen = []
    code = ops.run_with_retry(str(path), lambda s: edits.plan_delete(s, 3, 3),
                              lambda s, c: seen.append(ops.commit(s, c)) or 0)
    assert code == 0 and len(seen) == 1 and seen[0].changed
    assert path.read_bytes() == b"".join(L[:2] + L[3:])


# -- history ---------------------------------------------------------------------------------------


def test_history_is_bounded_and_read_only(path):
    h = EditHistory(str(path), limit=2)
    for n in (6, 5, 4):
        h.apply(edits.plan_delete(h.session, n, n))
    assert [d.change.description for d in h.done] == ["delete #5", "delete #4"]
    assert isinstance(h.done, tuple) and h.undone == ()
    h.undo()
    assert [d.change.description for d in h.undone] == ["delete #4"]
    h.forget()
    assert h.done == () and h.undone == ()


# -- the editor round trip -----------------------------------------------------------------------------


def _editor(tmp_path, body):
    script = tmp_path / "ed.py"
    script.write_text("import sys\n" + body)
    return f"{sys.executable} {script}"


def test_editor_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("VISUAL", "")
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "p = sys.argv[1]\nopen(p, 'a').write('more')\n"))
    assert editor.edit_text("text ") == "text more"
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "sys.exit(3)\n"))
    with pytest.raises(editor.EditorExited) as exc:
        editor.edit_text("x")
    assert exc.value.status == 3


def test_editor_missing_and_temp_file_removed(tmp_path, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    with pytest.raises(editor.NoEditor):
        editor.edit_text("x")
    names = tmp_path / "names"
    monkeypatch.setenv("EDITOR", _editor(tmp_path, f"open({str(names)!r}, 'w').write(sys.argv[1])\n"))
    entered = []

    class Suspend:
        def __enter__(self):
            entered.append(True)

        def __exit__(self, *a):
            return False

    editor.edit_text("x", suspend=Suspend)
    assert entered == [True]
    assert not os.path.exists(names.read_text())


def test_a_refusal_on_a_file_caught_mid_rewrite_is_retried(tmp_path):
    """Loaded just after an in-place truncation, the file is empty and the plan is refused; the agent's
    rewrite lands a moment later. The refusal is not believed until the file stayed as loaded."""
    import threading

    from sessionview.core.errors import InvalidEdit

    p = tmp_path / "s.jsonl"
    p.write_bytes(b"")
    os.utime(p, (1, 1))  # not modified "just now": no wait before the first load
    full = b'{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n'
    calls = []

    def plan(session):
        calls.append(len(session))
        if len(session) == 0:
            threading.Timer(0.03, p.write_bytes, (full,)).start()  # the rest of the rewrite
            raise InvalidEdit("range 2:2 is past the end: the session has 0 records")
        return edits.plan_delete(session, 2, 2)

    result = ops.run_with_retry(str(p), plan, lambda session, change: change.description)
    assert calls == [0, 2]
    assert result == "delete #2"


_FULL = b'{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n{"role":"user","content":"c"}\n'


@pytest.mark.parametrize(("caught", "records"), [(b"", 0), (_FULL[:40], 2)], ids=["empty", "cut mid-line"])
def test_a_refusal_on_a_file_caught_mid_write_waits_out_a_preempted_rewriter(tmp_path, caught, records):
    """An agent preempted between its truncation and its first write (the file empty), or after its first
    buffered write (a prefix that ends inside a line), leaves the file so for longer than the usual quiet
    moment (seen under load in the rewriter bench): such a file's refusal waits longer."""
    import threading

    from sessionview.core.errors import InvalidEdit
    from sessionview.core.store import stable

    p = tmp_path / "s.jsonl"
    p.write_bytes(caught)
    os.utime(p, (1, 1))
    calls = []
    delay = (stable.QUIET + stable.MID_WRITE_QUIET) / 2  # past the usual quiet moment, within the longer one
    assert stable.QUIET < delay < stable.MID_WRITE_QUIET

    def plan(session):
        calls.append(len(session))
        if len(session) < 3:
            threading.Timer(delay, p.write_bytes, (_FULL,)).start()  # the rest of the rewrite
            raise InvalidEdit(f"range 3:3 is past the end: the session has {len(session)} records")
        return edits.plan_delete(session, 3, 3)

    result = ops.run_with_retry(str(p), plan, lambda session, change: change.description)
    assert calls == [records, 3]
    assert result == "delete #3"


def test_a_refusal_on_a_whole_quiet_file_waits_only_the_short_moment(tmp_path, monkeypatch):
    from sessionview.core.errors import InvalidEdit
    from sessionview.core.store import stable

    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"role":"user","content":"a"}\n')
    os.utime(p, (1, 1))
    waits = []
    real = stable.wait_stable
    monkeypatch.setattr(stable, "wait_stable", lambda path, quiet=0.1, timeout=3.0: waits.append(quiet) or real(path, quiet, timeout))

    def plan(session):
        raise InvalidEdit("range 5:5 is past the end: the session has 1 record")

    with pytest.raises(InvalidEdit):
        ops.run_with_retry(str(p), plan, lambda session, change: None)
    assert waits == [stable.QUIET]


def test_a_refusal_on_an_empty_quiet_file_stands(tmp_path):
    from sessionview.core.errors import InvalidEdit

    p = tmp_path / "s.jsonl"
    p.write_bytes(b"")
    os.utime(p, (1, 1))
    calls = []

    def plan(session):
        calls.append(len(session))
        raise InvalidEdit("range 1:1 is past the end: the session has 0 records")

    with pytest.raises(InvalidEdit):
        ops.run_with_retry(str(p), plan, lambda session, change: None)
    assert calls == [0]


def test_a_refusal_on_a_quiet_file_stands(tmp_path):
    from sessionview.core.errors import InvalidEdit

    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"role":"user","content":"a"}\n')
    os.utime(p, (1, 1))

    def plan(session):
        raise InvalidEdit("range 5:5 is past the end: the session has 1 record")

    with pytest.raises(InvalidEdit):
        ops.run_with_retry(str(p), plan, lambda session, change: None)
