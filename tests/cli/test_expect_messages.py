"""``--expect``: what it says when it names records the change does not touch, or records that do not exist."""

from __future__ import annotations

import hashlib
import re

from clihelpers import line

from sessionview.cli import main
from sessionview.remote.writes import expect_arg


def run(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def ten(tmp_path):
    p = tmp_path / "b.jsonl"
    p.write_bytes(b"".join(line({"role": "user", "content": f"message {i}"}) for i in range(1, 11)))
    return p


def test_an_expect_naming_another_record_than_the_change_says_so(capsys, tmp_path):
    p = ten(tmp_path)
    before = p.read_bytes()
    raws = before.splitlines()
    for digest in (hashlib.sha256(raws[3]).hexdigest(), hashlib.sha256(raws[2]).hexdigest()):  # #4's bytes, #3's
        code, err = run(capsys, "edit", str(p), "4", "--content", "X", "--expect", f"3:{digest}")
        assert code == 2 and "the change touches #4, but --expect names #3" in err, err
        assert "changed since" not in err
    code, err = run(capsys, "delete", str(p), "4:5", "--expect", expect_arg(7, raws[6:9]))
    assert code == 2 and "the change touches #4-#5, but --expect names #7-#9" in err, err
    assert p.read_bytes() == before


def test_an_expect_for_a_record_that_does_not_exist_reports_it_as_without(capsys, tmp_path):
    p = ten(tmp_path)
    before = p.read_bytes()
    code, plain = run(capsys, "edit", str(p), "99", "--content", "X")
    assert code == 2 and "record 99 is outside 1:10" in plain
    code, err = run(capsys, "edit", str(p), "99", "--content", "X", "--expect", "99:" + "0" * 64)
    assert code == 2 and err == plain
    assert p.read_bytes() == before


def test_a_wrong_digest_on_the_record_the_change_touches_is_still_a_conflict(capsys, tmp_path):
    p = ten(tmp_path)
    code, err = run(capsys, "edit", str(p), "4", "--content", "X", "--expect", "4:" + "0" * 64)
    assert code == 1 and "#4 is not the record that was shown (the file changed since)" in err
    raws = p.read_bytes().splitlines()
    code, err = run(capsys, "edit", str(p), "4", "--content", "X", "--expect", expect_arg(4, raws[3:4]))
    assert code == 0, err


def test_the_helps_digest_recipes_give_what_expect_checks(capsys, tmp_path):
    import shutil
    import subprocess

    import pytest

    if shutil.which("sed") is None:
        pytest.skip("no sed")
    from sessionview.cli.parser import build_parser

    sub = next(a for a in build_parser("edit")._actions if hasattr(a, "choices") and a.choices)
    text = sub.choices["edit"].format_help()
    assert "without the line ending" in text and "raw 32-byte SHA-256 digests" in text
    recipes = {m[1]: m[2] for m in re.finditer(r"^  (record 4|records 2:4):\s+(.+)$", text, re.M)}
    assert set(recipes) == {"record 4", "records 2:4"}
    for ending in (b"\n", b"\r\n"):
        p = tmp_path / "s.jsonl"
        p.write_bytes(b"".join(line({"role": "user", "content": f"m {i}"})[:-1] + ending for i in range(1, 6)))
        raws = [ln.removesuffix(b"\r") for ln in p.read_bytes().split(b"\n")[:-1]]
        got = {k: subprocess.run(["sh", "-c", cmd], cwd=tmp_path, capture_output=True, check=True).stdout.decode().strip()
               for k, cmd in recipes.items()}
        assert f"4:{got['record 4']}" == expect_arg(4, raws[3:4])
        assert f"2:4:{got['records 2:4']}" == expect_arg(2, raws[1:4])
        code, err = run(capsys, "delete", str(p), "2:4", "--expect", f"2:4:{got['records 2:4']}")
        assert code == 0, err


def test_one_record_outside_the_file_is_named_a_record(capsys, tmp_path, monkeypatch):
    p = ten(tmp_path)
    monkeypatch.setenv("VISUAL", "true")
    assert run(capsys, "edit", str(p), "99")[1].strip().endswith(": record 99 is outside 1:10")  # the editor's way
    assert run(capsys, "edit", str(p), "0", "--json", "{}")[1].strip().endswith(": record 0 is outside 1:10")
