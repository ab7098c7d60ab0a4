"""The search query language, and its safe translation to SQLite FTS5.

A query is words separated by spaces: ``deploy``, ``"exact phrase"``, ``prefix*``, and ``-word`` or
``-"a phrase"`` to leave out records that have it. Matching is case-insensitive on whole words: a word is a
run of letters and digits (``deploy.sh`` is the phrase ``deploy sh``). In substring mode (``--substring``)
every term is a case-insensitive substring instead (``ploy.s`` finds ``deploy.sh``).

User text never reaches FTS5's MATCH syntax: every term is a double-quoted FTS5 string (quotes inside
doubled), joined with ``AND``/``OR``/``NOT`` here. The substring index keeps no positions, so a substring is
looked up as some of its trigrams and each candidate is checked against the record's text
(:meth:`Term.pattern`); word candidates are checked the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

TOKEN = re.compile(r"[^\W_]+")  # what the unicode61 tokenizer keeps: letters and digits
MAX_GRAMS = 12  # trigrams of one substring term looked up (spread over the term)


class QueryError(ValueError):
    """The query cannot be searched (empty, only exclusions, a substring shorter than 3 characters)."""


@dataclass(frozen=True, slots=True)
class Term:
    text: str  # as typed, without quotes, ``*`` or ``-``
    phrase: bool = False
    prefix: bool = False
    negated: bool = False

    @property
    def tokens(self) -> list[str]:
        return TOKEN.findall(self.text)

    def pattern(self, substring: bool = False) -> re.Pattern[str]:
        """A regex that finds this term in text as the index matches it."""
        if substring:
            return re.compile(re.escape(self.text), re.IGNORECASE)
        tokens = self.tokens
        body = r"[\W_]+".join(re.escape(t) for t in tokens)
        end = "" if self.prefix else r"(?![^\W_])"
        return re.compile(r"(?<![^\W_])" + body + end, re.IGNORECASE)

    def finder(self, substring: bool = False, whole: bool = False) -> Finder:
        """A quick :class:`Finder` of what :meth:`pattern` finds (``whole``: of :meth:`word_pattern`)."""
        if substring:
            return Finder(re.compile(re.escape(self.text), re.IGNORECASE), False, False)
        tokens = self.tokens
        if not tokens:
            return Finder(self.word_pattern() if whole else self.pattern(), False, False)
        body = r"[\W_]+".join(re.escape(t) for t in tokens)
        return Finder(re.compile(body, re.IGNORECASE), True, whole or not self.prefix)

    def word_pattern(self) -> re.Pattern[str]:
        """This term as whole words (for ranking a whole-word match first)."""
        body = r"[\W_]+".join(re.escape(t) for t in self.tokens) or re.escape(self.text)
        return re.compile(r"(?<![^\W_])" + body + r"(?![^\W_])", re.IGNORECASE)


_ALNUM = re.compile(r"[^\W_]")


class Finder:
    """Finds a term in text as its regex with look-arounds would, but quicker: the words alone are searched
    for (a plain case-insensitive scan), and each occurrence's ends checked after (a leading look-behind
    makes Python's regex engine try every position: 10-40x slower on the long tool results)."""

    __slots__ = ("core", "left", "right")

    def __init__(self, core: re.Pattern[str], left: bool, right: bool) -> None:
        self.core = core
        self.left = left  # the match must not follow a letter or digit
        self.right = right  # nor be followed by one

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        find = self.core.search
        while True:
            m = find(text, pos)
            if m is None:
                return None
            a, b = m.span()
            if (not self.left or a == 0 or not _ALNUM.match(text, a - 1)) and \
                    (not self.right or b >= len(text) or not _ALNUM.match(text, b)):
                return m
            pos = a + 1

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        pos = 0
        while pos <= len(text):
            m = self.search(text, pos)
            if m is None:
                return
            yield m
            pos = m.end() if m.end() > m.start() else m.end() + 1


@dataclass(frozen=True, slots=True)
class Query:
    terms: tuple[Term, ...]
    text: str = ""

    @property
    def positive(self) -> list[Term]:
        return [t for t in self.terms if not t.negated]

    @property
    def negative(self) -> list[Term]:
        return [t for t in self.terms if t.negated]

    def highlight(self) -> str:
        """The first term to mark in a transcript (the in-session search highlights one string)."""
        pos = self.positive
        return pos[0].text if pos else ""


_PIECE = re.compile(r'(-?)"([^"]*)"?|(\S+)')


def parse(text: str) -> Query:
    """Parse a query; :class:`QueryError` when nothing in it can be searched for."""
    terms: list[Term] = []
    for m in _PIECE.finditer(text):
        if m.group(3) is not None:
            word = m.group(3)
            negated = word.startswith("-") and len(word) > 1
            if negated:
                word = word[1:]
            prefix = word.endswith("*")
            word = word.rstrip("*")
            if word:
                terms.append(Term(word, phrase=False, prefix=prefix, negated=negated))
        else:
            inner = m.group(2).strip()
            if inner:
                terms.append(Term(inner, phrase=True, negated=bool(m.group(1))))
    query = Query(tuple(terms), text)
    if not query.positive:
        raise QueryError("nothing to search for" if not terms else "a query needs at least one word that is not excluded")
    return query


def quote(token: str) -> str:
    """``token`` as an FTS5 string: double quotes, with any double quote inside doubled."""
    return '"' + token.replace('"', '""') + '"'


def _word_expr(term: Term) -> str | None:
    """The term as one FTS5 string (the tokenizer splits it into the same words: a phrase), or a prefix."""
    if not term.tokens:
        return None
    text = quote(term.text)
    if term.prefix:
        return f"{text} *"  # the whole word goes first among the hits (:func:`sessionview.core.index.hits.search`)
    return text


def grams(text: str, limit: int = MAX_GRAMS) -> list[str]:
    """The trigrams of ``text`` looked up for a substring term (at most ``limit``, spread evenly, both ends kept)."""
    folded = text.lower()
    all_grams = [folded[i : i + 3] for i in range(len(folded) - 2)]
    if len(all_grams) <= limit:
        return list(dict.fromkeys(all_grams))
    step = (len(all_grams) - 1) / (limit - 1)
    return list(dict.fromkeys(all_grams[round(i * step)] for i in range(limit)))


def _gram_expr(term: Term) -> str | None:
    g = grams(term.text)
    if not g:
        return None
    parts = [quote(x) for x in g]
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


def to_match(query: Query, substring: bool = False) -> str:
    """The FTS5 MATCH expression for ``query`` (word index, or the trigram index in substring mode).

    :class:`QueryError` when no positive term has anything the index can look up."""
    expr = _gram_expr if substring else _word_expr
    positive = [e for e in (expr(t) for t in query.positive) if e is not None]
    if not positive:
        if substring:
            raise QueryError("a substring search needs a term of at least 3 characters")
        raise QueryError("the query has no letters or digits to search for")
    match = " AND ".join(positive)
    # exclusions are also checked against the text (a substring can only be excluded exactly there)
    if not substring:
        negative = [e for e in (_word_expr(t) for t in query.negative) if e is not None]
        if negative:
            match = f"({match}) NOT ({' OR '.join(negative)})"
    return match
