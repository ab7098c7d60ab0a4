import pytest

from sessionview.core.edit import plan as edits
from sessionview.core.errors import Conflict, Refused
from sessionview.core.edit.history import EditHistory, locate, rebase, still_applied
from sessionview.core.session import JsonlSession

L = [b'{"role":"user","content":"m%d"}\n' % i for i in range(1, 7)]


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(L))
    return p


def test_apply_undo_redo_each_a_new_save(path):
    h = EditHistory(str(path))
    h.apply(edits.plan_edit(h.session, 2, content="two"))
    h.apply(edits.plan_delete(h.session, 5, 6))
    assert path.read_bytes() == L[0] + b'{"role":"user","content":"two"}\n' + L[2] + L[3]
    h.undo()
    assert path.read_bytes() == L[0] + b'{"role":"user","content":"two"}\n' + b"".join(L[2:])
    h.undo()
    assert path.read_bytes() == b"".join(L)
    with pytest.raises(Refused, match="nothing to undo"):
        h.undo()
    h.redo()
    h.redo()
    assert path.read_bytes() == L[0] + b'{"role":"user","content":"two"}\n' + L[2] + L[3]
    with pytest.raises(Refused, match="nothing to redo"):
        h.redo()


def test_undo_after_an_agent_rewrote_the_file_finds_the_records_again(path):
    h = EditHistory(str(path))
    h.apply(edits.plan_edit(h.session, 3, content="three"))
    # Brute rewrites the file: a new first message, then everything else, then a new turn
    new = path.read_bytes()
    path.write_bytes(b'{"role":"user","content":"new first"}\n' + new + b'{"role":"user","content":"next"}\n')
    h.reload()
    h.undo()
    lines = path.read_bytes().split(b"\n")
    assert lines[3] == b'{"role":"user","content":"m3"}' and lines[0].endswith(b'"new first"}')


def test_overwritten_edit_is_detected_and_can_be_reapplied(path):
    h = EditHistory(str(path))
    h.apply(edits.plan_edit(h.session, 2, content="two"))
    assert h.overwritten() is None
    # the agent's turn ends and it writes its own (older) history back, plus one message
    path.write_bytes(b"".join(L) + b'{"role":"assistant","content":"more"}\n')
    lost = h.overwritten()
    assert lost is not None and lost.description == "edit #2"
    h.reapply(lost)
    assert path.read_bytes().split(b"\n")[1] == b'{"role":"user","content":"two"}'
    assert path.read_bytes().endswith(b'{"role":"assistant","content":"more"}\n')


def test_conflict_keeps_the_change_and_reapply_after_reload_works(path):
    h = EditHistory(str(path))
    change = edits.plan_edit(h.session, 4, content="four")
    path.write_bytes(L[5] + b"".join(L[:5]))  # rewritten in another order: not an append
    with pytest.raises(Conflict):
        h.apply(change)
    h.reapply(change)
    assert b'{"role":"user","content":"four"}\n' in path.read_bytes()
    assert path.read_bytes().startswith(L[5])


def test_rebase_refuses_when_the_target_is_gone(path):
    s = JsonlSession.load(path)
    change = edits.plan_edit(s, 2, content="two")
    path.write_bytes(L[0])
    with pytest.raises(Refused, match="no longer"):
        rebase(JsonlSession.load(path), change)


def test_locate_and_insertion_anchor(path):
    s = JsonlSession.load(path)
    assert locate(s, [L[3].rstrip(b"\n")], 1) == 4
    assert locate(s, [], 3, anchor=L[1].rstrip(b"\n")) == 3
    assert locate(s, [b"nope"], 3) is None
    deleted = edits.plan_delete(s, 3, 3)
    assert still_applied(s, deleted) is False  # the record is still there
