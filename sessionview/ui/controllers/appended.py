"""Records appended while following: counted into the stats, filtered, and what links to them.

:func:`add_appended` looks at each new record once (its stats, whether the filter keeps it, the calls its
results answer); :func:`links_for` is what a drawn record links to, from the stats known so far."""

from __future__ import annotations

from sessionview.core.doc.model import View
from sessionview.core.tail import Appended
from sessionview.core.view.transcript import TranscriptModel
from sessionview.ui.widgets.blocks import Links

INLINE_APPEND_LIMIT = 2000  # appended records looked at on the UI thread at most


def add_appended(model: TranscriptModel, ev: Appended) -> tuple[int, set[int] | None]:
    """Add the records of ``ev`` to ``model``: the rows it adds and the records of the calls its results
    answer (drawn before their result arrived: to draw again). None for those in a burst too big to look at
    here (over INLINE_APPEND_LIMIT records: the caller recounts and filters in the background)."""
    first, last = model.append(ev)
    stats = model.current_stats()
    if last - first + 1 > INLINE_APPEND_LIMIT:
        return (0 if model.filter.active else last - first + 1), None
    added = 0
    rows = model.rows if model.filter.active else None
    names = model.names() if rows is not None else {}
    answered: list[str] = []
    for n in range(first, last + 1):
        view = model.view(n)
        stats.add(view)
        answered.extend(r.call_id for r in view.tool_results if r.call_id is not None)
        if rows is not None:
            for c in view.tool_calls:
                if c.id is not None:
                    names[c.id] = c.name
            if model.filter.matches(view, names):
                rows.append(n)
                added += 1
        else:
            added += 1
    calls: set[int] = set()
    if answered:
        known = [s for s in (model.stats, model.appended_stats) if s is not None]
        calls = {s.calls[cid] for cid in answered for s in known if cid in s.calls}
    return added, calls


def links_for(model: TranscriptModel | None, view: View) -> Links:
    """What ``view``'s calls and results link to (line numbers), as far as the stats know them."""
    if model is None or (not view.tool_calls and not view.tool_results):
        return Links()
    known = [s for s in (model.stats, model.appended_stats) if s is not None]
    results: dict[str, int | None] = {}
    calls: dict[str, int | None] = {}
    names: dict[str, str] = {}
    for c in view.tool_calls:
        if c.id is not None:
            found = next((s.results[c.id] for s in known if c.id in s.results), None)
            results[c.id] = model.line_number(found) if found is not None else None
    for r in view.tool_results:
        if r.call_id is not None:
            found = next((s.calls[r.call_id] for s in known if r.call_id in s.calls), None)
            calls[r.call_id] = model.line_number(found) if found is not None else None
            name = next((s.names[r.call_id] for s in known if r.call_id in s.names), None)
            if name:
                names[r.call_id] = name
    if model.stats is None:  # not known yet: do not claim "no result"
        results = {k: v for k, v in results.items() if v is not None}
        calls = {k: v for k, v in calls.items() if v is not None}
    return Links(results, calls, names)
