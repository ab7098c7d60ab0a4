"""core.export: Markdown and HTML exports show what a session holds, and no content can act as markup."""

from __future__ import annotations

import io
import json
import os
import re

import pytest

from sessionview.core import export
from sessionview.core.doc.model import Kind, View, merge_views
from sessionview.core.export.common import fence_for
from sessionview.core.formats.base import Adapter
from sessionview.core.session import open_session

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")

HOSTILE = (
    "<script>alert(1)</script> </style><b>bold</b> \"><img src=x onerror=alert(2)> "
    "\x1b]8;;http://evil/\x07click\x1b]8;;\x07 \x1b[31mred\x1b[0m \u202eevil\u202c "
    "```` four ```` [link](javascript:alert(3)) ![img](http://evil/x.png) <http://evil/auto> &#x202e; &lt;"
    "\n# fake heading\n```\nunclosed fence"
)


def _hostile_session(tmp_path):
    lines = [
        {"role": "user", "content": HOSTILE},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c<1>", "name": "sh</style>", "arguments": {"cmd": HOSTILE}}]},
        {"role": "tool", "content": HOSTILE, "tool_call_id": "c<1>"},
    ]
    p = tmp_path / "hostile.jsonl"
    p.write_bytes(b"".join(json.dumps(v).encode() + b"\n" for v in lines))
    return open_session(p)


def _export(session, fmt, first=1, last=None):
    buf = io.StringIO()
    export.write(session, fmt, buf, first, last)
    return buf.getvalue()


def test_html_escapes_hostile_content_and_forbids_everything_active(tmp_path):
    out = _export(_hostile_session(tmp_path), "html")
    assert "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'" in out
    assert "<script" not in out.lower()
    assert out.count("</style>") == 1  # only the export's own stylesheet ends
    assert "<img" not in out and "<b>" not in out and "onerror=alert" not in out.replace("onerror=alert(2)&gt;", "")
    assert "&lt;img src=x onerror=alert(2)&gt;" in out and "&quot;&gt;" in out
    assert "<a " not in out and "href" not in out and "src=" not in out.replace("src=x", "")
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\u202c" not in out
    assert "\\x1b]8;;http://evil/\\x07" in out and "\\u202e" in out
    assert "&amp;#x202e;" in out  # an entity in the text stays text
    assert "http://evil" in out  # the URL is shown, as text
    # every tag in the page is one the export wrote
    tags = set(re.findall(r"</?([a-zA-Z0-9]+)", out))
    assert tags <= {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "p", "section",
                    "div", "pre", "details", "summary", "span", "hr"}


def test_markdown_escapes_hostile_content(tmp_path):
    out = _export(_hostile_session(tmp_path), "md")
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    # no raw HTML, entity, link or image can start in the message text
    prose = [line for line in out.split("\n") if line.startswith(">")]
    assert prose
    for line in prose:
        assert re.search(r"(?<!\\)[<\[]", line) is None, line
        assert re.search(r"(?<!\\)&", line) is None, line
    assert any(line.startswith("> \\# fake heading") for line in prose)
    # the text's unclosed fence stays inside the quote: the next message's heading is a real heading
    assert "\n## #2 assistant" not in out  # labels escape '#'
    assert "\n## \\#2 assistant" in out
    # fenced blocks are longer than any backtick run they hold
    for fence in re.findall(r"^(`{3,})(?:json|text)$", out, re.MULTILINE):
        assert len(fence) >= 5  # the content holds a run of four
    assert "javascript:alert(3)" in out  # shown, escaped, not dropped


def test_markdown_fences_cannot_be_closed_by_content():
    assert fence_for("no ticks") == "```"
    assert fence_for("a ``` b") == "````"
    assert fence_for("`" * 10) == "`" * 11


def _blocks_of(md: str) -> list[str]:
    """The bodies of the fenced blocks of a Markdown text, parsed as CommonMark does (closing fence: at
    least as long as the opening one, nothing after it)."""
    bodies, lines, i = [], md.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^(`{3,})(\S*)$", lines[i])
        if m:
            fence, body, i = m.group(1), [], i + 1
            while i < len(lines) and not re.match(r"^`{%d,}\s*$" % len(fence), lines[i]):
                body.append(lines[i])
                i += 1
            bodies.append("\n".join(body))
        i += 1
    return bodies


def test_markdown_tool_calls_and_results_are_whole_fenced_blocks(tmp_path):
    out = _export(_hostile_session(tmp_path), "md")
    bodies = _blocks_of(out)
    assert len(bodies) == 2
    assert bodies[1].count("unclosed fence") == 1 and "```` four ````" in bodies[1]  # the result, whole
    assert '"cmd":' in bodies[0]


def test_exports_show_timestamps_compaction_and_broken_records():
    cc = open_session(os.path.join(FIX, "claude-code.jsonl"))
    md, page = _export(cc, "md"), _export(cc, "html")
    assert "2025\\-11\\-01T10:00:05.000Z" in md or "2025-11-01T10:00:05.000Z" in md
    assert "<span class=\"when\">2025-11-01T10:00:05.000Z</span>" in page
    assert "compaction: compact\\_boundary" in md and "<hr class=\"compaction\">" in page
    assert "result of toolu\\_01X Bash (call #4)" in md.replace("\\(", "(").replace("\\)", ")").replace("\\#", "#")
    bad = open_session(os.path.join(FIX, "bad", "invalid-json.jsonl"))
    assert "broken record: invalid JSON" in _export(bad, "md")
    assert "<section class=\"invalid\"" in _export(bad, "html")


def test_export_range_keeps_only_those_records():
    s = open_session(os.path.join(FIX, "brute-session.jsonl"))
    out = _export(s, "md", 3, 4)
    assert "\\#3 tool" in out and "\\#4 assistant" in out
    assert "\\#2 " not in out and "\\#5 " not in out
    assert "records 3 to 4" in out


def test_export_shows_subagent_marks_where_views_carry_them():
    from sessionview.core.export import html, markdown
    from sessionview.core.export.common import entry

    class SubView(View):  # View.subagent is not there yet: the export reads it with getattr
        pass

    v = SubView(1, Kind.MESSAGE, role="assistant", text="found it", timestamp="2025-01-01T00:00:00Z")
    v.subagent = "explorer<1>"
    e = entry(v)
    assert e.subagent == "explorer<1>"
    assert "subagent explorer\\<1\\>" in markdown.section(e)
    assert "<span class=\"sub\">subagent explorer&lt;1&gt;</span>" in html.section(e)
    assert entry(View(1, Kind.MESSAGE, role="user", text="hi")).subagent is None


def test_timestamps_come_from_the_top_level_iso_key():
    a = Adapter()
    assert a.timestamp_of({"timestamp": "2025-11-01T10:00:05.000Z"}) == "2025-11-01T10:00:05.000Z"
    assert a.timestamp_of({"timestamp": "yesterday"}) is None
    assert a.timestamp_of({"timestamp": 1730455205000}) is None
    assert a.timestamp_of({"role": "user"}) is None
    codex = open_session(os.path.join(FIX, "codex-rollout.jsonl"))
    assert all(v.timestamp and v.timestamp.startswith("2025-10-29T") for v in codex.views())
    pi = open_session(os.path.join(FIX, "pi-agent.jsonl"))
    assert any(v.timestamp for v in pi.views())
    brute = open_session(os.path.join(FIX, "brute-session.jsonl"))
    assert all(v.timestamp is None for v in brute.views())


def test_merged_views_keep_the_first_timestamp():
    a = View(1, Kind.MESSAGE, role="assistant", text="a", group="m1", timestamp="2025-01-01T00:00:00Z")
    b = View(2, Kind.MESSAGE, role="assistant", text="b", group="m1", timestamp="2025-01-01T00:00:09Z")
    (m,) = merge_views([a, b])
    assert m.timestamp == "2025-01-01T00:00:00Z" and m.numbers == (1, 2) and m.text == "a\nb"


def test_write_file_is_atomic_and_refuses_the_session_itself(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(open(os.path.join(FIX, "brute-session.jsonl"), "rb").read())
    s = open_session(p)
    with pytest.raises(ValueError, match="the session itself"):
        export.write_file(s, "md", str(p))
    out = tmp_path / "s.html"
    out.write_text("old")
    export.write_file(s, "html", str(out))
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert [n for n in os.listdir(tmp_path) if n.startswith(".")] == []  # no temp file left
