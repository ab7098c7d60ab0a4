"""The core must stay pure: importing every core module loads neither textual nor rich."""

import os
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


#: what a search of a current index never needs: the UI, the formats of other sessions, documents and sessions
#: (jsondoc, doc.document), every other command's module
SEARCH_NEVER = (
    "textual", "rich", "sessionview.ui", "sessionview.core.jsondoc", "sessionview.core.doc.document",
    "sessionview.core.session_base", "sessionview.core.sketch", "sessionview.cli.commands", "sessionview.cli.writing",
    "sessionview.core.formats.codex", "sessionview.core.formats.claude_code", "sessionview.core.formats.pi",
    "sessionview.core.formats.gemini", "sessionview.core.formats.littleghost_jsonl", "sessionview.core.formats.openai",
    "sessionview.core.formats.anthropic",
)


def test_a_cold_search_imports_only_what_it_needs(tmp_path):
    d = tmp_path / "sessions"
    d.mkdir()
    (d / "a.jsonl").write_bytes(b'{"role":"user","content":"deploy the okapi"}\n{"role":"assistant","content":"done"}\n')
    env = {**os.environ, "SESSIONVIEW_INDEX": str(tmp_path / "index.sqlite")}
    subprocess.run([sys.executable, "-m", "sessionview", "index", "-q", str(d)], env=env, check=True)
    code = (
        "import sys\n"
        "from sessionview.cli import main\n"
        f"rc = main(['search', 'okapi', {str(d)!r}])\n"
        "print('rc', rc)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    hit, rc, mods = out.splitlines()[0], out.splitlines()[-2], set(out.splitlines()[-1].split())
    assert hit.endswith("a.jsonl:#1 user") and rc == "rc 0"
    loaded = sorted(m for m in mods if any(m == n or m.startswith(n + ".") for n in SEARCH_NEVER))
    assert loaded == [], f"a cold search loaded {loaded}"
    assert "sessionview.core.formats.brute" in mods  # the format of the hit, to make its snippet


def test_formats_imports_adapters_on_first_use():
    code = (
        "import sys\n"
        "from sessionview.core import formats\n"
        "def loaded(): return sorted(m for m in sys.modules if m.startswith('sessionview.core.formats.'))\n"
        "print(loaded())\n"
        "print(type(formats.by_name('pi')).__name__, 'brute' in formats.BY_NAME, 'nope' in formats.BY_NAME, len(formats.BY_NAME))\n"
        "print(loaded())\n"
        "print([a.__name__ for a in formats.ADAPTERS], formats._ALL[-1].__name__, formats.BruteAdapter.name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "[]"
    assert out[1] == "PiAdapter True False 9"
    assert "sessionview.core.formats.pi" in out[2] and "sessionview.core.formats.codex" not in out[2]
    assert out[3] == ("['CodexAdapter', 'ClaudeCodeAdapter', 'PiAdapter', 'GeminiAdapter', 'LittleGhostJsonlAdapter', "
                      "'OpenAIChatAdapter', 'AnthropicAdapter', 'BruteAdapter'] GenericAdapter brute")


def test_check_loads_none_of_the_editing_and_saving_code(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"hi"}\n{"role":"tool","content":"x","tool_call_id":"c9"}\n')
    code = (
        "import sys\n"
        "from sessionview.cli import main\n"
        f"rc = main(['check', {str(path)!r}])\n"
        "print('rc', rc)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    rc, mods = out.splitlines()[-2], set(out.splitlines()[-1].split())
    assert rc == "rc 1" and "orphan" in out  # it did check: the result has no call
    never = ("sessionview.core.ops", "sessionview.core.edit", "sessionview.core.store.save", "sessionview.core.store.backups")
    loaded = sorted(m for m in mods if any(m == n or m.startswith(n + ".") for n in never))
    assert loaded == [], f"check loaded {loaded}"
