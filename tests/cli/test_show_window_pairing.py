"""``show --last N`` of a big file pairs only what it reads: a result whose call came before the window says so,
and does not call itself an orphan; a result with no call anywhere in a whole read still does."""

from sessionview.cli import commands, main
from clihelpers import CONVO, line


def _show(capsys, *args):
    code = main(["show", *args])
    return code, capsys.readouterr().out


def test_a_result_whose_call_is_before_the_window_is_not_called_an_orphan(tmp_path, monkeypatch, capsys):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(line(m) for m in CONVO))
    monkeypatch.setattr(commands, "SHOW_PAIR_FIRST", -1)  # every file is "big": pairing as it is read
    code, out = _show(capsys, str(path), "--last", "3")  # #3..#5: the result of c1 (call at #2) is #3
    assert code == 0
    assert "<- result of c1" in out
    assert "no matching call" not in out
    assert "(no call in #3 on; not looked for before #3)" in out
    code, out = _show(capsys, str(path))  # the whole file: the call is found
    assert "<- result of c1 shell from #2" in out


def test_a_result_with_no_call_anywhere_is_still_an_orphan(tmp_path, monkeypatch, capsys):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(line(m) for m in [CONVO[0], CONVO[2], CONVO[3]]))
    monkeypatch.setattr(commands, "SHOW_PAIR_FIRST", -1)
    code, out = _show(capsys, str(path))
    assert "<- result of c1 (no matching call)" in out
