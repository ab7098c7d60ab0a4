"""What a tool call is, for a person: a command, a file write, an edit, a read, a todo list, or something else.

:func:`classify` looks at a call's name *and* the shape of its arguments, so the same renderer serves every
format (Brute ``shell``/``write``/``patch``/``read``, Claude Code ``Bash``/``Write``/``Edit``/``MultiEdit``/
``Read``/``TodoWrite``, Codex ``shell``/``exec_command``/``apply_patch``/``update_plan``, pi ``bash``/``write``/
``edit``/``read``, Gemini CLI ``run_shell_command``/``write_file``/``replace``/``read_file``...). The results are
plain data (strings, small frozen values); drawing them is the UI's job. :func:`result_info` reads a result:
its exit code, whether it failed, and its text without the wrapper a harness put around an error.

Nothing here escapes text: the caller escapes what it prints (:func:`sessionview.core.text.escape_control`).
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from sessionview.core.doc.model import Kind, ToolCall, ToolResult, View
from sessionview.core.values import Frozen

_set = object.__setattr__  # the values below are frozen (sessionview.core.values: no dataclass to build at import)

DIFF_CAP = 200_000  # characters of old + new text above which no difflib diff is computed (all -, then all +)
LINES_CAP = 5000  # lines a rendering holds at most (the rest is counted)


class DiffLine(Frozen):
    __slots__ = ("kind", "text")
    kind: str  # "file" (a path header), "hunk" (@@), "add", "del", "ctx", "note"
    text: str

    def __init__(self, kind: str, text: str) -> None:
        _set(self, "kind", kind)
        _set(self, "text", text)


class CommandCall(Frozen):
    __slots__ = ("command", "cwd", "description")
    command: str  # the script, as a person would type it
    cwd: str | None
    description: str | None

    def __init__(self, command: str, cwd: str | None = None, description: str | None = None) -> None:
        _set(self, "command", command)
        _set(self, "cwd", cwd)
        _set(self, "description", description)


class FileWrite(Frozen):
    __slots__ = ("path", "content")
    path: str
    content: str

    def __init__(self, path: str, content: str) -> None:
        _set(self, "path", path)
        _set(self, "content", content)


class FileEdit(Frozen):
    __slots__ = ("path", "diff", "added", "removed")
    path: str  # "" when a patch names several files (each has its own "file" line)
    diff: tuple[DiffLine, ...]
    added: int
    removed: int

    def __init__(self, path: str, diff: tuple[DiffLine, ...], added: int, removed: int) -> None:
        _set(self, "path", path)
        _set(self, "diff", diff)
        _set(self, "added", added)
        _set(self, "removed", removed)


class FileRead(Frozen):
    __slots__ = ("path", "start", "limit")
    path: str
    start: int | None  # the first line asked for (1-based), where the call says
    limit: int | None

    def __init__(self, path: str, start: int | None = None, limit: int | None = None) -> None:
        _set(self, "path", path)
        _set(self, "start", start)
        _set(self, "limit", limit)


class TodoItem(Frozen):
    __slots__ = ("status", "text")
    status: str  # "pending", "in_progress", "completed", "cancelled" or the format's own word
    text: str

    def __init__(self, status: str, text: str) -> None:
        _set(self, "status", status)
        _set(self, "text", text)


class Todo(Frozen):
    __slots__ = ("items",)
    items: tuple[TodoItem, ...]

    def __init__(self, items: tuple[TodoItem, ...]) -> None:
        _set(self, "items", items)


class JsonLine(Frozen):
    __slots__ = ("indent", "text", "block")
    indent: int
    text: str
    block: bool  # a line of a multi-line string, shown as text (no quotes, no escapes)

    def __init__(self, indent: int, text: str, block: bool = False) -> None:
        _set(self, "indent", indent)
        _set(self, "text", text)
        _set(self, "block", block)


class Generic(Frozen):
    __slots__ = ("lines", "more")
    lines: tuple[JsonLine, ...]
    more: int  # lines left out (over LINES_CAP)

    def __init__(self, lines: tuple[JsonLine, ...], more: int = 0) -> None:
        _set(self, "lines", lines)
        _set(self, "more", more)


Rendering = CommandCall | FileWrite | FileEdit | FileRead | Todo | Generic

_COMMAND = {"bash", "shell", "local_shell", "exec_command", "run_shell_command", "shell_command", "exec", "terminal", "run_terminal_cmd", "execute_command", "container.exec"}
_WRITE = {"write", "fs_write", "write_file", "create_file", "file_write"}
_EDIT = {"edit", "multiedit", "fs_patch", "patch", "edit_file", "str_replace", "replace", "fs_edit", "file_edit", "str_replace_editor"}
_READ = {"read", "fs_read", "read_file", "view", "file_read", "cat"}
_TODO = {"todowrite", "todo_write", "update_plan", "write_todos", "todo"}
_PATH_KEYS = ("file_path", "path", "filePath", "filename", "file", "absolute_path", "target_file")
_CONTENT_KEYS = ("content", "contents", "file_text", "text")
_EDIT_KEYS = (("old_string", "new_string"), ("oldText", "newText"), ("old_str", "new_str"), ("old", "new"), ("old_text", "new_text"))


def classify(call: ToolCall) -> Rendering:
    """How to show ``call``: by its name and the shape of its arguments; :class:`Generic` when unsure."""
    name = (call.name or "").strip()
    low = name.lower()
    args = call.arguments
    if args is None and call.raw_arguments is not None:
        args = call.raw_arguments
    if isinstance(args, str) and low in ("apply_patch", "applypatch") or isinstance(args, str) and args.lstrip().startswith("*** Begin Patch"):
        return patch_edit(args)
    if isinstance(args, str) and args.startswith("{") and args.endswith("}") and len(args) < DIFF_CAP:
        try:  # arguments written as a JSON string inside the JSON string
            inner = json.loads(args)
        except ValueError:
            inner = None
        if isinstance(inner, dict):
            args = inner
    if isinstance(args, dict):
        found = _classify_dict(low, args)
        if found is not None:
            return found
    return generic(args)


def _classify_dict(low: str, args: dict[str, Any]) -> Rendering | None:
    path = _first_str(args, _PATH_KEYS)
    if low in ("apply_patch", "applypatch"):
        body = _first_str(args, ("input", "patch", "content", "diff"))
        if body is not None:
            return patch_edit(body)
    command = args.get("command", args.get("cmd"))
    if command is not None and (low in _COMMAND or "shell" in low or "bash" in low) and not isinstance(command, dict):
        script = command_text(command)
        if script is not None:
            if re.match(r"\s*apply_patch\b", script) and "*** Begin Patch" in script:
                return patch_edit(script[script.index("*** Begin Patch") :])
            return CommandCall(script, _first_str(args, ("cwd", "workdir", "dir_path", "directory")), _first_str(args, ("description", "justification")))
    if low in _TODO or (isinstance(args.get("todos"), list) and "todo" in low):
        items = args.get("todos", args.get("plan"))
        if isinstance(items, list):
            return Todo(tuple(_todo_item(i) for i in items))
    if path is not None:
        if isinstance(args.get("edits"), list) and all(isinstance(e, dict) for e in args["edits"]) and (low in _EDIT or args["edits"]):
            pairs = [_edit_pair(e) for e in args["edits"]]
            if pairs and all(p is not None for p in pairs):
                return file_edit(path, [p for p in pairs if p is not None])
        pair = _edit_pair(args)
        if pair is not None and (low in _EDIT or low not in _WRITE):
            return file_edit(path, [pair])
        content = _first_str(args, _CONTENT_KEYS)
        if content is not None and (low in _WRITE or low not in _READ):
            return FileWrite(path, content)
        if low in _READ:
            start = _first_int(args, ("offset", "start_line", "line", "start"))
            return FileRead(path, start, _first_int(args, ("limit", "end_line", "lines")))
    return None


def _first_str(args: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for k in keys:
        if isinstance(args.get(k), str):
            return args[k]
    return None


def _first_int(args: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    for k in keys:
        v = args.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _edit_pair(args: dict[str, Any]) -> tuple[str, str] | None:
    for old, new in _EDIT_KEYS:
        if isinstance(args.get(old), str) and isinstance(args.get(new), str):
            return args[old], args[new]
    return None


def _todo_item(item: Any) -> TodoItem:
    if isinstance(item, dict):
        text = item.get("content", item.get("step", item.get("text", item.get("description"))))
        status = item.get("status", "pending")
        return TodoItem(str(status), text if isinstance(text, str) else json.dumps(text, ensure_ascii=False))
    return TodoItem("pending", item if isinstance(item, str) else json.dumps(item, ensure_ascii=False))


def command_text(command: Any) -> str | None:
    """A command argument as one script: a string as is; ``["bash", "-lc", script]`` as its script; any
    other list of words joined as a shell would quote them."""
    if isinstance(command, str):
        return command
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        if len(command) == 3 and command[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and command[1] in ("-c", "-lc", "-lic"):
            return command[2]
        import shlex  # only here: not imported before the first screen

        return shlex.join(command)
    return None


# -- edits -------------------------------------------------------------------------------------------


def file_edit(path: str, pairs: list[tuple[str, str]]) -> FileEdit:
    """A unified diff of each (old, new) pair, one after the other (hunk line numbers count within the old text)."""
    lines: list[DiffLine] = []
    for i, (old, new) in enumerate(pairs):
        if len(pairs) > 1:
            lines.append(DiffLine("note", f"edit {i + 1} of {len(pairs)}"))
        lines.extend(text_diff(old, new))
    return _edit(path, lines)


def text_diff(old: str, new: str) -> list[DiffLine]:
    """The unified diff of two texts (difflib, 3 lines of context), without the ---/+++ header."""
    a = old.splitlines()
    b = new.splitlines()
    if len(old) + len(new) > DIFF_CAP:
        return [DiffLine("note", "too long to compare: the old text, then the new")] + [DiffLine("del", "-" + x) for x in a] + [DiffLine("add", "+" + x) for x in b]
    out: list[DiffLine] = []
    for i, line in enumerate(difflib.unified_diff(a, b, lineterm="", n=3)):
        if i >= 2:  # the first two lines are the ---/+++ header
            out.append(_diff_line(line))
    if not out:
        out.append(DiffLine("note", "no change"))
    return out


def _diff_line(line: str) -> DiffLine:
    if line.startswith("@@"):
        return DiffLine("hunk", line)
    if line.startswith("+"):
        return DiffLine("add", line)
    if line.startswith("-"):
        return DiffLine("del", line)
    return DiffLine("ctx", line)


_PATCH_FILE = re.compile(r"\*\*\* (Add|Update|Delete) File: (.*)$|\*\*\* Move to: (.*)$")


def patch_edit(body: str) -> FileEdit:
    """A Codex ``apply_patch`` body (``*** Begin Patch`` … ``*** End Patch``) as the diff it is."""
    lines: list[DiffLine] = []
    paths: list[str] = []
    for line in body.splitlines():
        m = _PATCH_FILE.match(line)
        if m:
            path = m.group(2) or m.group(3) or ""
            paths.append(path)
            lines.append(DiffLine("file", f"{(m.group(1) or 'Move to').lower()} {path}"))
        elif line.startswith(("*** Begin Patch", "*** End Patch", "*** End of File")):
            continue
        else:
            lines.append(_diff_line(line) if line[:1] in ("+", "-", "@") else DiffLine("ctx", line))
    return _edit(paths[0] if len(set(paths)) == 1 else "", lines)


def _edit(path: str, lines: list[DiffLine]) -> FileEdit:
    added = sum(1 for d in lines if d.kind == "add")
    removed = sum(1 for d in lines if d.kind == "del")
    return FileEdit(path, tuple(lines), added, removed)


def unified_lines(diff_text: str) -> list[DiffLine]:
    """A unified diff held as text (a result's ``diff``), line by line."""
    return [DiffLine("file", line) if line.startswith(("---", "+++")) else _diff_line(line) for line in diff_text.splitlines()]


# -- anything else: pretty JSON with multi-line strings as blocks ------------------------------------


def generic(value: Any, cap: int = LINES_CAP) -> Generic:
    out: list[JsonLine] = []
    _walk(value, 0, "", "", out, cap + 1)
    more = max(0, len(out) - cap)
    return Generic(tuple(out[:cap]), more)


def _scalar(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


MAX_DEPTH = 64


def _walk(value: Any, indent: int, prefix: str, comma: str, out: list[JsonLine], cap: int) -> None:
    if len(out) >= cap:
        return
    if indent > 2 * MAX_DEPTH and isinstance(value, (dict, list)) and value:
        out.append(JsonLine(indent, prefix + "… (nested too deeply to show here; i shows the record)" + comma))
        return
    if isinstance(value, dict) and value:
        out.append(JsonLine(indent, prefix + "{"))
        items = list(value.items())
        for i, (k, v) in enumerate(items):
            _walk(v, indent + 2, _scalar(str(k)) + ": ", "," if i < len(items) - 1 else "", out, cap)
            if len(out) >= cap:
                return
        out.append(JsonLine(indent, "}" + comma))
    elif isinstance(value, list) and value:
        out.append(JsonLine(indent, prefix + "["))
        for i, v in enumerate(value):
            _walk(v, indent + 2, "", "," if i < len(value) - 1 else "", out, cap)
            if len(out) >= cap:
                return
        out.append(JsonLine(indent, "]" + comma))
    elif isinstance(value, str) and "\n" in value.strip("\n"):
        out.append(JsonLine(indent, prefix.rstrip() + (" " if prefix else "") + "⏎"))  # the text follows, as it is
        for line in value.split("\n"):
            out.append(JsonLine(indent + 2, line, block=True))
            if len(out) >= cap:
                return
    else:
        out.append(JsonLine(indent, prefix + _scalar(value) + comma))


# -- results -----------------------------------------------------------------------------------------


class ResultInfo(Frozen):
    __slots__ = ("text", "error", "exit_code")
    text: str  # what to show: the content without an error wrapper or an exit-code trailer
    error: bool
    exit_code: int | None

    def __init__(self, text: str, error: bool, exit_code: int | None = None) -> None:
        _set(self, "text", text)
        _set(self, "error", error)
        _set(self, "exit_code", exit_code)


_WRAPPER = re.compile(r"^\s*<(tool_use_error|error)>(.*)</\1>\s*$", re.S)
_EXIT_PATTERNS = (
    re.compile(r"\n?\[exit code: (-?\d+)\]\s*$"),  # Brute shell
    re.compile(r"\n*Command exited with code (-?\d+)\s*$"),  # pi bash
    re.compile(r"^(?:Error: )?Exit code:? (-?\d+)\n(?:Wall time: [^\n]*\n)?(?:Output:\n)?"),  # Codex shell, Claude Code Bash
    re.compile(r"^(?:Chunk ID: [^\n]*\n)?(?:Wall time: [^\n]*\n)?Process exited with code (-?\d+)\n(?:Original token count: [^\n]*\n)?(?:Output:\n)?"),  # Codex exec_command
    re.compile(r"(?:\n|\\n)Exit Code: (-?\d+)(?=\n|\\n|$)"),  # Gemini CLI run_shell_command (some write "\\n")
)
#: each pattern's literal (no match without it), and for the two that end with the text (``\s*$``) the character
#: their match may start with before it (``\n?``, ``\n*``)
_EXIT_LITERALS = (("[exit code: ", "\n"), ("Command exited with code ", "\n"), ("Exit code", ""), ("Process exited with code ", ""), ("Exit Code: ", ""))


def _exit_code(text: str) -> re.Match[str] | None:
    """The match of the first of :data:`_EXIT_PATTERNS` found in ``text``, as ``pattern.search(text)`` finds it.

    ``re.search`` walks every character of a text that holds none of them: about 12 ms a megabyte for each of the
    first two, so each megabyte of a tool's output cost about 30 ms at every draw. A text without a pattern's
    literal is passed over by ``str.find``. The first two end with the text (only digits and ``\\s*`` after the
    literal), so their literal is its last occurrence, and the match starts there or in the newlines right
    before it: the search starts at the first of those newlines, and finds what a search from the start finds."""
    for pattern, (literal, lead) in zip(_EXIT_PATTERNS, _EXIT_LITERALS, strict=True):
        if lead:
            at = text.rfind(literal)
            if at == -1:
                continue
            while at > 0 and text[at - 1] == lead:
                at -= 1
            found = pattern.search(text, at)
        elif literal in text:
            found = pattern.search(text)
        else:
            continue
        if found:
            return found
    return None


def result_info(result: ToolResult, command: bool = False) -> ResultInfo:
    """A result's text, error flag and exit code. ``command``: the result of a :class:`CommandCall` (then an
    exit code is looked for in the text, where the tools put it)."""
    text = result.content or ""
    error = bool(result.is_error)
    m = _WRAPPER.match(text)
    if m:
        text, error = m.group(2).strip("\n"), True
    code: int | None = None
    if command:
        found = _exit_code(text)
        if found:
            code = int(found.group(1))
            if found.re is not _EXIT_PATTERNS[-1]:  # Gemini's stays in the text
                text = text[: found.start()] + text[found.end() :]
        if code is not None and code != 0:
            error = True
    return ResultInfo(text, error, code)


def is_error_result(result: ToolResult) -> bool:
    return result_info(result, command=True).error


_LOUD_META = re.compile(r"error|refusal|abort|fail", re.I)


def is_housekeeping(view: View) -> bool:
    """A bookkeeping record (a snapshot, a queue operation, a turn context, token counts...) rather than
    conversation: shown as one dim line until unfolded. Errors and refusals are never quiet."""
    return view.kind is Kind.META and not view.tool_calls and not _LOUD_META.search(view.label or "")


_NUMBERED = re.compile(r"^\s*(\d+)(?:\t|\u2192|: |\| )(.*)$")


class Numbered(Frozen):
    __slots__ = ("first", "lines", "rest")
    first: int  # the number of lines[0]
    lines: list[str]  # the lines, without the numbers a tool put in front
    rest: list[str]  # what follows the numbered lines (a note such as "(Showing lines 1-40 of 90 …)")

    def __init__(self, first: int, lines: list[str], rest: list[str]) -> None:
        _set(self, "first", first)
        _set(self, "lines", lines)
        _set(self, "rest", rest)


def numbered_lines(text: str, start: int | None = None) -> Numbered:
    """A read's result as numbered lines: the numbers a tool put in front (``   12\\tcode``, ``12→code``)
    taken off, or counted from ``start`` (or 1) when the lines carry none."""
    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    matches = [_NUMBERED.match(ln) for ln in lines]
    if lines and matches[0] is not None and sum(1 for m in matches if m) >= len(lines) * 0.5:
        first = int(matches[0].group(1))
        out: list[str] = []
        for m in matches:
            if m is None or int(m.group(1)) != first + len(out):
                break
            out.append(m.group(2))
        return Numbered(first, out, lines[len(out) :])
    return Numbered(start if start and start > 0 else 1, lines, [])
