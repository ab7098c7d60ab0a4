"""The shape of ``sessionview/ui`` that the redesign set out: no module over 500 lines, no ``type: ignore``
(the parts talk through typed interfaces), no import cycle between its modules, and the session screen
composed of its controllers (no mixin)."""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "sessionview" / "ui"
MODULES = sorted(UI.rglob("*.py"))


def _name(path: Path) -> str:
    parts = path.relative_to(UI.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_ui_module_is_over_500_lines():
    long = {str(p.relative_to(UI)): n for p in MODULES if (n := len(p.read_text().splitlines())) > 500}
    assert not long


def test_no_type_ignore_in_the_ui():
    found = [f"{p.relative_to(UI)}:{i}" for p in MODULES for i, line in enumerate(p.read_text().splitlines(), 1) if "type: ignore" in line]
    assert not found


def test_no_import_cycle_between_ui_modules():
    names = {_name(p): p for p in MODULES}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                deps |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
        graph[name] = {d for d in deps if d in names and d != name}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(name):] + [name]))
        if name in done:
            return
        for dep in graph[name]:
            visit(dep, path + [name])
        done.add(name)

    for name in graph:
        visit(name, [])


def test_the_session_screen_is_composed_not_mixed_in():
    from textual.screen import Screen

    from sessionview.ui.screens.session import SessionScreen

    assert SessionScreen.__bases__ == (Screen,)
