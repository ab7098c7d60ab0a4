"""One way to say things: counts with their plural, a problem's kind said once, a compaction's label, the
core's command-line advice left out of the app, and ``#a-#b`` as the core writes ranges."""

from __future__ import annotations

from pathlib import Path

from sessionview.ui.wording import app_advice, compaction_label, plural, problem_text
from edithelpers import flat, make_app, opened, select
from uihelpers import SIZE, after_workers


def test_plural():
    assert plural(1, "record") == "1 record" and plural(2, "record") == "2 records" and plural(0, "record") == "0 records"
    assert plural(1_024, "more line") == "1,024 more lines" and plural(1, "more line") == "1 more line"


def test_a_problem_that_starts_with_its_kind_is_said_once():
    assert problem_text("duplicate keys", "duplicate keys (the last one wins)") == "duplicate keys (the last one wins)"
    assert problem_text("invalid JSON", "Expecting value") == "invalid JSON: Expecting value"
    assert problem_text("partial", "") == "partial"


def test_a_compaction_named_compacted_is_not_said_twice():
    assert compaction_label("compacted") == "compacted"
    assert compaction_label("sliding_window") == "compacted · sliding_window"


def test_a_refusal_is_said_in_the_apps_terms_and_the_command_lines():
    from sessionview.cli.writing import refusal
    from sessionview.core.errors import AnotherWriter, Refused

    exc = Refused("refused: delete #3 would leave tool call tc_1 without a result (dangling)", ids=["tc_1"],
                  suggestion=(2, 3), forceable=True, widen="both")
    assert app_advice(exc) == "refused: delete #3 would leave tool call tc_1 without a result (dangling); the nearest valid range is #2-#3"
    assert refusal(exc) == (
        "refused: delete #3 would leave tool call tc_1 without a result (dangling); the nearest valid range is 2:3. "
        "Use --force to do it anyway"
    )
    down = Refused("refused: truncate after #5 would leave tool call c without a result", suggestion=(7, 9), forceable=True, widen="down")
    assert app_advice(down).endswith("the nearest valid point is to keep #1-#6")
    assert refusal(down).endswith("the nearest valid point is --keep 6. Use --force to do it anyway")
    writer = AnotherWriter("refused: another process has s.jsonl open for writing: 12 (brute); its later writes would go to the replaced file")
    assert "--" not in app_advice(writer) and "force" not in app_advice(writer)
    assert refusal(writer).endswith("replaced file. Stop it, or use --force to save anyway")
    plain = Refused("nothing to undo in this run")
    assert refusal(plain) == app_advice(plain) == "nothing to undo in this run"
    assert app_advice("record #4 is invalid JSON; replace it whole with --json") == "record #4 is invalid JSON; edit its JSON"


def _lines(*raw: str) -> bytes:
    return "".join(r + "\n" for r in raw).encode()


async def test_one_match_of_a_filter_is_one_record(tmp_path: Path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(_lines('{"role":"user","content":"hi"}', '{"role":"assistant","content":"hello"}', '{"role":"user","content":"bye"}'))
    app = make_app(p)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("f", *"assistant", "enter")
        await after_workers(pilot, lambda: screen.model.filter.active and "match" in screen.search_status, what="the filter")
        assert screen.search_status == "1 record matches"


async def test_a_duplicate_key_is_said_once_in_the_transcript_and_the_detail(tmp_path: Path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(_lines('{"role":"user","content":"hi"}', '{"role":"user","role":"assistant","content":"twice"}'))
    app = make_app(p)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await select(pilot, screen, 2)
        await pilot.press("i")
        await pilot.pause()
        text = flat(app)
        assert "duplicate keys (the last one wins)" in text
        assert "duplicate keys: duplicate keys" not in text
