"""Many byte strings found in one pass over a buffer, through Hyperscan (the ``hyperscan`` package, Intel's
regular-expression engine, which compiles a set of literals into one SIMD automaton).

The integrity check's id search (:mod:`.idscan`) looks for every id a change touches and for the escapes
that could spell one (``\\u0020``-``\\u007f``): with ``memmem`` that is one pass of the file per needle (the
one for ``\\u00`` alone cost ~0.75 s of CPU on the 1 GiB bench session); here it is one pass for all of them,
~0.45 s of CPU per GiB with the reads, and the scan lets go of the GIL, so two threads search two halves
(0.24 s). Where the package is missing (it has wheels for x86-64 only), or a set of literals does not compile,
:func:`compile_literals` gives None and the id search uses ``memmem``.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["ESCAPES", "Literals", "available", "compile_literals"]

#: what an escaped printable ASCII character starts with: ``\\u002``-``\\u007`` (then one more hex digit)
ESCAPES = tuple(b"\\u00" + bytes([d]) for d in b"234567")
MAX_LITERALS = 20000  # more ids than this: the id search's other ways (a common prefix, the full pairing)

_module: Any = None  # None: not imported yet; False: there is none


def available() -> bool:
    return _hyperscan() is not None


def _hyperscan() -> Any:
    global _module
    if _module is None:
        try:
            import hyperscan

            _module = hyperscan
        except ImportError:  # no wheel for this machine: the id search uses memmem
            _module = False
    return _module or None


class Literals:
    """A compiled set of byte strings: a :meth:`scanner` (one per thread) gives, for one buffer, where each of
    them starts (by its index in the set), in one pass."""

    def __init__(self, db: Any, needles: list[bytes], module: Any) -> None:
        self.needles = needles
        self._db = db
        self._module = module

    def scanner(self) -> "Callable[[bytes], list[tuple[int, int]]]":
        """``scan(buf) -> [(index, start)]``, every occurrence of every needle in ``buf``, in the order found
        (by end offset). One scanner per thread: its scratch space is not shared."""
        db, lengths = self._db, [len(n) for n in self.needles]
        scratch = self._module.Scratch(db)
        hits: list[tuple[int, int]] = []

        def on_match(index: int, _start: int, end: int, _flags: int, _context: object) -> None:
            hits.append((index, end - lengths[index]))

        def scan(buf: bytes) -> list[tuple[int, int]]:
            hits.clear()
            db.scan(buf, match_event_handler=on_match, scratch=scratch)
            return list(hits)

        return scan


def compile_literals(needles: list[bytes]) -> Literals | None:
    """``needles`` compiled into one database, or None (no Hyperscan here, too many, or it would not compile)."""
    hs = _hyperscan()
    if hs is None or not needles or len(needles) > MAX_LITERALS or any(not n for n in needles):
        return None
    try:
        db = hs.Database(mode=hs.HS_MODE_BLOCK)
        db.compile(expressions=list(needles), ids=list(range(len(needles))), elements=len(needles), flags=0, literal=True)
    except Exception:  # hyperscan.error (an engine that refuses the set): the other search
        return None
    return Literals(db, list(needles), hs)
