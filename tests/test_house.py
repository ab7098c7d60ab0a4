"""The house's rules, checked by the tools that own them: import-linter, ruff and mypy (configured in
pyproject.toml), plus the size of every module. A broken rule fails the suite with the tool's own words."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAX_LINES = 500


def _tool(name: str) -> list[str]:
    exe = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if exe is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return [exe]


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)


def test_import_contracts_hold():
    r = _run(_tool("lint-imports") + ["--no-cache"])
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_finds_nothing():
    r = _run(_tool("ruff") + ["check", "--no-cache", "sessionview", "tests", "bench", "scripts"])
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_on_the_core(tmp_path):
    r = _run(_tool("mypy") + ["--cache-dir", str(tmp_path / "mypy")])
    assert r.returncode == 0, r.stdout + r.stderr


def test_no_module_over_500_lines():
    big = []
    for p in sorted((ROOT / "sessionview").rglob("*.py")):
        n = sum(1 for _ in p.open(encoding="utf-8"))
        if n > MAX_LINES:
            big.append(f"{p.relative_to(ROOT)}: {n} lines")
    assert not big, "split these modules: " + ", ".join(big)
