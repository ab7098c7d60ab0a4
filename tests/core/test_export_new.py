"""export.write_file(..., new=True), the app's export: never over an existing file, nothing left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionview.core import export
from sessionview.core.session import open_session

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_a_new_export_is_written_and_never_over_a_file(tmp_path: Path):
    session = open_session(str(FIXTURES / "brute-session.jsonl"))
    out = tmp_path / "s.md"
    assert export.write_file(session, "md", str(out), new=True) == []
    text = out.read_text()
    assert "README.md a 12 lignes" in text
    out.write_text("mine")
    with pytest.raises(FileExistsError):
        export.write_file(session, "html", str(out), new=True)
    assert out.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.md"]  # no temp file left
    export.write_file(session, "md", str(out))  # the CLI's export writes over it, as before
    assert out.read_text() == text
