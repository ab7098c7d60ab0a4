"""pi sessions form a tree by id/parentId: a record with several children is a branch point, and every record
below one of its children is on that branch (shown by ``show``, ``show --json`` and the app's rows)."""

import json

from sessionview.core.doc import branches
from sessionview.core.doc.branches import Branch
from sessionview.core.session import JsonlSession
from sessionview.core.view import render

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-05-12T01:02:27.657Z", "cwd": "/p"}


def entry(rid, parent, role, text):
    return {
        "type": "message", "id": rid, "parentId": parent, "timestamp": "2026-05-12T01:02:28.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}]},
    }


def branched_lines():
    # #2 u1 -> #3 a1 -> (#4 u2 -> #5 a2) and (#6 u2' -> #7 a2' -> (#8, #9: a nested branch point at #7))
    return [
        HEADER,
        entry("u1", None, "user", "first question"),
        entry("a1", "u1", "assistant", "first answer"),
        entry("u2", "a1", "user", "branch one"),
        entry("a2", "u2", "assistant", "answer one"),
        entry("u3", "a1", "user", "branch two"),
        entry("a3", "u3", "assistant", "answer two"),
        entry("u4", "a3", "user", "nested one"),
        entry("u5", "a3", "user", "nested two"),
    ]


def session(lines):
    data = b"".join(json.dumps(v, separators=(",", ":")).encode() + b"\n" for v in lines)
    return JsonlSession.from_bytes(data, path="branched.jsonl")


def test_branch_points_and_branches_of_a_hand_made_tree():
    s = session(branched_lines())
    assert s.format == "pi"
    found = s.branches()
    assert found.points == {3: 2, 7: 2}
    assert found.on == {
        4: Branch(3, 1, 2), 5: Branch(3, 1, 2),
        6: Branch(3, 2, 2), 7: Branch(3, 2, 2),
        8: Branch(7, 1, 2), 9: Branch(7, 2, 2),
    }
    views = list(s.views())
    assert views[2].branch_point == 2 and views[2].branch is None
    assert views[6].branch == Branch(3, 2, 2) and views[6].branch_point == 2
    assert views[1].branch is None and views[1].branch_point == 0


def test_show_labels_branches_and_branch_points():
    s = session(branched_lines())
    text = {v.number: render.view_text(v).split("\n", 1)[0] for v in s.views()}
    assert "[branch point: 2 branches]" in text[3]
    assert "[branch 1/2 from #3]" in text[4]
    assert "[branch 2/2 from #3 · branch point: 2 branches]" in text[7]
    assert "branch" not in text[2]
    d = render.view_dict(s.view(6))
    assert d["branch"] == {"point": 3, "index": 2, "count": 2}
    assert render.view_dict(s.view(3))["branch_point"] == 2


def test_a_linear_pi_file_has_no_branch_marks(tmp_path):
    lines = branched_lines()[:5]
    s = session(lines)
    assert not s.branches()
    assert all(v.branch is None and not v.branch_point for v in s.views())


def test_appended_lines_extend_the_tree():
    lines = branched_lines()
    s = session(lines[:5])
    assert not s.branches()
    grown = session(lines)
    s.doc = grown.doc
    assert s.branches().points == {3: 2, 7: 2}


def test_ids_read_from_other_key_orders_and_a_long_line():
    long = entry("b", "a", "assistant", "x" * 5000)
    reordered = {"message": long["message"], "parentId": "a", "id": "b", "type": "message"}
    assert branches.ids_of(json.dumps(long, separators=(",", ":")).encode()[:512]) == ("b", "a")
    assert branches.ids_of(json.dumps(reordered).encode()) == ("b", "a")
    assert branches.ids_of(b"not json") == (None, None)
    lines = [HEADER, entry("a", None, "user", "q"), reordered, {**entry("c", "a", "assistant", "y" * 3000)}]
    assert session(lines).branches().points == {2: 2}


def test_labels_without_a_known_number():
    assert branches.label(Branch(3, 2, 4), 0, lambda n: None) == "branch 2/4"
    assert branches.label(None, 3) == "branch point: 3 branches"
