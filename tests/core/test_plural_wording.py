"""Counts are said with their plural everywhere in the core (``1 item``, ``1 message``, ``1 record``)."""

from sessionview.core.doc.model import Kind, View
from sessionview.core.edit.summary import digest
from sessionview.core.formats.codex import CodexAdapter
from sessionview.core.text import plural
from sessionview.core.view import render


def test_plural_helper():
    assert plural(1, "record") == "1 record" and plural(2, "record") == "2 records"
    assert plural(0, "match") == "0 matches" and plural(3, "summary") == "3 summaries"
    assert plural(1024, "line", grouped=True) == "1,024 lines" and plural(2, "child", "children") == "2 children"


def test_codex_replacement_history_of_one_item():
    v = CodexAdapter().view(1, {"timestamp": "2025-01-01T00:00:00Z", "type": "compacted",
                                "payload": {"message": "", "replacement_history": [{"type": "message"}]}})
    assert "[replacement history: 1 item]" in v.text


def test_digest_of_one_message():
    text = digest([View(1, Kind.MESSAGE, role="user", text="hi")], 1)
    assert text.startswith("Compacted 1 record (1 message, 1 byte).")


def test_show_says_one_token():
    assert "(~1 token)" in render.view_text(View(1, Kind.MESSAGE, role="user", text="hi"))
