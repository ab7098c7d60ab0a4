"""Message text drawn as Markdown (Rich's renderer over markdown-it-py), made safe for untrusted content.

- The source is escaped (:func:`~sessionview.core.text.escape_control`) before it is parsed, and every drawn
  segment is escaped again afterwards: markdown-it decodes entities such as ``&#x202e;``, so a control or
  bidi character could appear only after parsing.
- Raw HTML is not interpreted (``html: False``): ``<b>`` stays the text ``<b>``, nothing is hidden. A newline
  inside a paragraph is a line break, as in a chat.
- Links are drawn as their text and their URL in plain text (``hyperlinks=False``), never as OSC 8
  hyperlinks; any link or meta (Textual ``@click``) on a segment's style is removed.
- Nothing is parsed as Textual or Rich markup: Rich's Markdown builds ``Text`` objects from plain strings.
- Code fences are highlighted by Rich Syntax (pygments), with the transcript's background.

markdown-it-py and Rich's Markdown load in a thread while the first screen is drawn (:func:`warm_up`; until
then text is drawn plain, then redrawn), and pygments when the first code is drawn: the renderers do not
delay the first screen.
"""

from __future__ import annotations

import re
import threading
from fnmatch import fnmatchcase
from functools import lru_cache

from typing import TYPE_CHECKING, Any, Callable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from rich.theme import Theme
from textual.strip import Strip

if TYPE_CHECKING:
    from pygments.lexer import Lexer

from sessionview.core.text import escape_control

SOURCE_LINE_BUDGET = 2  # source lines parsed per display line asked for (Markdown adds blank lines)
MAX_SOURCE_LINES = 400  # at most this much of a message is drawn as Markdown, even unfolded (m shows it all raw)
MAX_SOURCE_CHARS = 48_000


@lru_cache(maxsize=256)
def lexer_named(name: str) -> Lexer:
    """The pygments lexer called ``name`` (a code fence's info), plain text when there is none. Cached: pygments
    looks an unknown name up in every lexer it has, which costs a tenth of a second each time."""
    from pygments.lexers import get_lexer_by_name
    from pygments.lexers.special import TextLexer
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(name[:40]) if name and name != "text" else TextLexer()
    except ClassNotFound:
        return TextLexer()


@lru_cache(maxsize=256)
def _lexer_for_extension(ext: str) -> Lexer:
    from pygments.lexers import find_lexer_class, get_lexer_for_filename
    from pygments.lexers.special import TextLexer
    from pygments.util import ClassNotFound

    simple, globs = _extensions()
    only = simple.get(ext, ())
    if len(only) == 1 and not any(fnmatchcase("x" + ext, g) for g in globs):  # the one lexer for "*.ext"
        cls = find_lexer_class(next(iter(only)))
        if cls is not None:
            return cls()
    try:  # pygments looks the name up in every lexer's patterns (each compiled on first use)
        return get_lexer_for_filename("x" + ext) if ext else TextLexer()
    except ClassNotFound:
        return TextLexer()


@lru_cache(maxsize=1)
def _extensions() -> tuple[dict[str, set[str]], list[str]]:
    """From pygments' table of lexers: extension -> the names of the lexers whose pattern is ``*.ext``, and
    the patterns that are not that simple."""
    from pygments.lexers._mapping import LEXERS

    simple: dict[str, set[str]] = {}
    globs: list[str] = []
    for _module, name, _aliases, patterns, _mimetypes in LEXERS.values():
        for pattern in patterns:
            if _SIMPLE.fullmatch(pattern):
                simple.setdefault(pattern[1:], set()).add(name)
            elif pattern.startswith("*"):
                globs.append(pattern)
    return simple, globs


_SIMPLE = re.compile(r"\*\.[A-Za-z0-9_+-]+")


def lexer_for_path(path: str) -> Lexer:
    """The lexer for a file name, by its extension (or its whole name: ``Makefile``), cached."""
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    ext = ("." + base.rsplit(".", 1)[1]) if "." in base.lstrip(".") else base
    if not ext.startswith("."):
        return _lexer_for_name_of_file(base)
    return _lexer_for_extension(ext.lower()[:20])


@lru_cache(maxsize=64)
def _lexer_for_name_of_file(base: str) -> Lexer:
    from pygments.lexers import get_lexer_for_filename
    from pygments.lexers.special import TextLexer
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(base[:40]) if base else TextLexer()
    except ClassNotFound:
        return TextLexer()


#: what can make a text more than paragraphs: inline marks, links, HTML, entities, escapes, headings, quotes,
#: tables, lists, rules and indented code
_SYNTAX = re.compile(r"[`*_#\[\]|>~<&\\]|^(?: {4}|\t)|^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)|^ {0,3}(?:-{2,}|={2,})[ \t]*$", re.M)


def needs_markdown(text: str, limit: int = MAX_SOURCE_CHARS) -> bool:
    """Whether the start of ``text`` has any Markdown syntax; plain paragraphs are drawn as they are (the same
    lines, at a sixth of the cost)."""
    return _SYNTAX.search(text, 0, limit) is not None


_READY = threading.Event()


def markdown_ready() -> bool:
    """Whether the Markdown renderer is loaded (see :func:`warm_up`)."""
    return _READY.is_set()


def load() -> None:
    """Load the Markdown renderer now (tests, scripts)."""
    _renderer()


def warm_up(done: Callable[[], None]) -> None:
    """Load the Markdown renderer in a thread, then call ``done`` (from that thread)."""

    def run() -> None:
        _renderer()
        try:
            done()
        except RuntimeError:  # the app ended meanwhile
            pass

    threading.Thread(target=run, name="markdown-warm-up", daemon=True).start()


@lru_cache(maxsize=1)
def _renderer() -> Any:
    """The Markdown renderable class (built on first use: it imports markdown-it-py and Rich's Markdown)."""
    from markdown_it import MarkdownIt
    from rich.markdown import CodeBlock, Markdown
    from rich.syntax import Syntax

    parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")

    class Code(CodeBlock):
        """A code fence or an indented block: highlighted, folded at the width, on the transcript's background."""

        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            code = str(self.text).rstrip()
            yield Syntax(code, lexer_named(self.lexer_name), theme=self.theme, word_wrap=True, background_color="default", padding=(0, 1))

    class SafeMarkdown(Markdown):
        elements = {**Markdown.elements, "fence": Code, "code_block": Code}

        def __init__(self, markup: str, code_theme: str) -> None:  # Markdown's own __init__ builds a parser each time
            self.markup = markup
            self.parsed = parser.parse(markup)
            for token in self.parsed:  # a newline is a line break, as in a chat
                for child in token.children or ():
                    if child.type == "softbreak":
                        child.type = "hardbreak"
            self.code_theme = code_theme
            self.justify = None
            self.style = "none"
            self.hyperlinks = False
            self.inline_code_lexer = None
            self.inline_code_theme = code_theme

    _READY.set()
    return SafeMarkdown


def safe_segment(seg: Segment) -> Segment | None:
    """``seg`` escaped, without a link, meta or background (the transcript's own background and cursor show
    through); None for a control segment."""
    if seg.control:
        return None
    style = seg.style
    if style is not None:
        style = Style(color=style.color, bold=style.bold, italic=style.italic, underline=style.underline, strike=style.strike, dim=style.dim)
    return Segment(escape_control(seg.text).replace("\t", "    ").replace("\n", " "), style)


def markdown_theme(accent: Style, dim: Style, code: Style, link: Style) -> Theme:
    """Rich's ``markdown.*`` styles in the transcript's colours (headings in the accent colour, quotes dim)."""
    return Theme(
        {
            "markdown.h1": accent + Style(bold=True, underline=True),
            "markdown.h2": accent + Style(bold=True),
            "markdown.h3": accent + Style(bold=True),
            "markdown.h4": Style(bold=True, italic=True),
            "markdown.block_quote": dim + Style(italic=True),
            "markdown.code": code,
            "markdown.code_block": Style(),
            "markdown.list": dim,
            "markdown.item.number": dim,
            "markdown.item.bullet": dim + Style(bold=True),
            "markdown.link": link,
            "markdown.link_url": link + Style(underline=True),
            "markdown.table.border": dim,
            "markdown.table.header": Style(bold=True),
            "markdown.hr": dim,
        },
        inherit=True,
    )


def markdown_lines(
    text: str,
    console: Console,
    width: int,
    max_lines: int,
    base: Style,
    code_theme: str = "monokai",
    term: str = "",
    match: Style | None = None,
    theme: Theme | None = None,
) -> tuple[list[Strip], str]:
    """``text`` as Markdown at ``width``, at most ``max_lines`` lines, and the part of the source that was
    not drawn ("" when all of it was)."""
    lines_budget = min(max_lines * SOURCE_LINE_BUDGET, MAX_SOURCE_LINES)
    char_budget = min(max_lines * max(width, 10) * SOURCE_LINE_BUDGET, MAX_SOURCE_CHARS)
    end = 0
    for _ in range(lines_budget):  # the first lines, without splitting a text of megabytes
        found = text.find("\n", end, char_budget + 1)
        if found < 0:
            end = len(text)
            break
        end = found + 1
    head = text[: min(end, char_budget)].rstrip("\n") if end < len(text) else text[:char_budget]
    rest = text[len(head) :]
    md = _renderer()(escape_control(head), code_theme)
    options = console.options.update(width=max(10, width), height=None)
    if theme is not None:
        console.push_theme(theme)
    try:
        rendered = console.render_lines(md, options, style=base, pad=False, new_lines=False)
    finally:
        if theme is not None:
            console.pop_theme()
    rendered = [line for i, line in enumerate(rendered) if i == 0 or _text(line).strip() or _text(rendered[i - 1]).strip()]  # one blank line at most
    while rendered and not _text(rendered[-1]).strip():
        rendered.pop()
    if len(rendered) > max_lines:
        # the lines not drawn: estimate where in the source they start, by proportion
        kept = max_lines / len(rendered)
        cut = int(len(head) * kept)
        rest = text[cut:]
        rendered = rendered[:max_lines]
    out: list[Strip] = []
    for line in rendered:
        segments = [s for s in (safe_segment(seg) for seg in line) if s is not None]
        if term and match is not None:
            t = Text.assemble(*((s.text, s.style or Style()) for s in segments))
            t.highlight_words([escape_control(term)], match, case_sensitive=False)
            segments = list(t.render(console, end=""))
        out.append(Strip(segments).adjust_cell_length(width, base))
    return out, rest


def _text(line: list[Segment]) -> str:
    return "".join(s.text for s in line)
