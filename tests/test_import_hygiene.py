"""The core must stay pure: importing every core module loads neither textual nor rich."""

import pathlib
import subprocess
import sys

import sessionview.core

CORE = pathlib.Path(sessionview.core.__file__).parent


def core_modules() -> list[str]:
    mods = []
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE.parent.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods.append(".".join(parts))
    return mods


def test_core_has_modules():
    mods = core_modules()
    assert "sessionview.core.doc.document" in mods and "sessionview.core.session" in mods


def test_core_imports_neither_textual_nor_rich():
    code = (
        "import importlib, sys\n"
        f"for m in {core_modules()!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core loaded: {out.stdout.strip()}"


def test_cli_help_path_stays_light():
    code = (
        "import sys\n"
        "from sessionview import cli\n"
        "cli.build_parser()\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
