"""A session as one self-contained HTML file: inline CSS, no script, no network, nothing clickable.

A Content-Security-Policy of ``default-src 'none'; style-src 'unsafe-inline'`` forbids every script,
image, font, frame and fetch, so even markup that slipped through could do nothing. Nothing slips through:
every string from the session is HTML-escaped (quotes too) after its control characters, ANSI/OSC escapes
and bidi overrides were made visible, and URLs stay text (there is no ``<a href>`` in the output).
"""

from __future__ import annotations

import html
import re
from typing import Any

from sessionview.core.export.common import Entry, TextOut, entries, esc
from sessionview.core.text import plural

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222;background:#fff}
header h1{font-size:1.2em;word-break:break-all}
section{border-left:4px solid #bbb;margin:1.2em 0;padding:.2em 0 .2em 1em}
section.user{border-color:#2a7ae2}section.assistant{border-color:#2aa16a}section.tool{border-color:#a67c00}
section.system{border-color:#888}section.invalid{border-color:#c00;background:#fff4f4}
section.meta,section.unknown{border-color:#ddd;color:#666}
h2{font-size:1em;margin:.2em 0}.when,.sub{color:#777;font-weight:normal;font-size:.9em;margin-left:.6em}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f5f5f5;padding:.5em;margin:.3em 0;font-size:13px}
.reasoning pre{color:#666}.error{color:#c00;font-weight:bold}.problem{color:#c00}
hr.compaction{border:0;border-top:3px double #999;margin:1.5em 0 .3em}
summary{cursor:pointer}
"""

_ROLE_CLASS = re.compile(r"[a-z]{1,20}\Z")


def h(text: str) -> str:
    """Escape a string that is already control-escaped (``&``, ``<``, ``>`` and both quotes)."""
    return html.escape(text, quote=True)


def header(session: Any, first: int, last: int | None) -> str:
    name = h(esc(str(session.path or "-")))
    span = f"records {first} to {last}" if (first != 1 or last is not None) else plural(len(session), "record")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{name}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<header><h1>{name}</h1><p>{h(session.format_title)} · {span}</p></header>\n"
    )


FOOTER = "</body>\n</html>\n"


def _pre(text: str) -> str:
    return f"<pre>{h(text)}</pre>"


def section(e: Entry) -> str:
    cls = e.role if e.kind == "message" and _ROLE_CLASS.match(e.role) else e.kind
    parts: list[str] = []
    if e.kind == "compaction":
        parts.append("<hr class=\"compaction\">")
        title = f"{h(e.number)} compaction: {h(e.compaction or 'summary')}" + (f" ({h(e.role)})" if e.role else "")
    elif e.kind in ("meta", "unknown"):
        title = f"{h(e.number)} [{h(e.role)}]"
    elif e.kind == "invalid":
        title = f"{h(e.number)} broken record: {h(e.role)}"
    else:
        title = f"{h(e.number)} {h(e.role)}" + (f" [compacted:{h(e.compaction)}]" if e.compaction else "")
    if e.timestamp:
        title += f"<span class=\"when\">{h(e.timestamp)}</span>"
    if e.subagent:
        title += f"<span class=\"sub\">subagent {h(e.subagent)}</span>"
    parts.append(f"<section class=\"{cls}\" id=\"m{e.anchor}\">\n<h2>{title}</h2>")
    for r in e.results:
        label = f"← result of {h(r.id)}" + (f" {h(r.name)}" if r.name else "") + f" ({h(r.link)})"
        err = " <span class=\"error\">ERROR</span>" if r.error else ""
        if r.body:
            parts.append(f"<details open><summary>{label}{err}</summary>{_pre(r.body)}</details>")
        else:
            parts.append(f"<p>{label}{err}</p>")
    if e.reasoning:
        parts.append(f"<details class=\"reasoning\"><summary>reasoning</summary>{_pre(e.reasoning)}</details>")
    if e.text:
        parts.append(f"<div class=\"text\">{h(e.text)}</div>")
    for c in e.calls:
        parts.append(f"<details open><summary>→ tool call {h(c.name)} [{h(c.id)}] ({h(c.link)})</summary>{_pre(c.body)}</details>")
    if e.raw is not None:
        parts.append(_pre(e.raw))
    for p in e.problems:
        parts.append(f"<p class=\"problem\">{h(p)}</p>")
    return "\n".join(parts) + "\n</section>\n"


def write(session: Any, out: TextOut, first: int = 1, last: int | None = None) -> int:
    """Write records ``first..last`` of ``session`` to ``out`` as one HTML page; returns the messages written."""
    out.write(header(session, first, last))
    count = 0
    for e in entries(session, first, last):
        out.write(section(e))
        count += 1
    out.write(FOOTER)
    return count
