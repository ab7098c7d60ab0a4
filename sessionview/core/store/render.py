"""The new content of a save, as ``render`` yields it: new bytes, and spans of the loaded file copied in the kernel.

A JSONL edit keeps almost every byte of the file: its ``render`` yields the kept runs of lines as
:data:`Span` ``(start, end)`` byte ranges of the file as loaded, and only the changed records as bytes.
:func:`write_rendered` writes them into the temporary file: bytes through Python in large writes, spans by
``copy_file_range`` from the file being replaced (:meth:`~.staging.TempFile.copy_from`).
"""

from __future__ import annotations

from typing import Iterable, Union

from sessionview.core.store import fsio
from sessionview.core.store.fsio import Limit
from sessionview.core.store.staging import TempFile
from sessionview.core.store.steps import step

__all__ = ["Span", "Piece", "WRITE_CHUNKS", "write_rendered"]

#: bytes ``[start, end)`` of the file as loaded, which the save copies in the kernel (never through Python)
Span = tuple[int, int]
#: what ``render`` yields: new bytes, or a span of the loaded file
Piece = Union[bytes, Span]

WRITE_CHUNKS = 8  # bytes are written fsio.CHUNK * this at a time (fewer writes, one hash hand-off each)


def write_rendered(tmp: TempFile, pieces: Iterable[Piece], *, source_fd: int, loaded: int, hold: bytes, limit: Limit) -> bool:
    """Write ``pieces`` into ``tmp``, spans copied from ``source_fd`` (they must lie within its first ``loaded``
    bytes). When the content ends with ``hold`` (an unfinished line appended since load), those last bytes
    are left out and True is returned: the caller carries them over from the file once they are whole."""
    keep = len(hold)
    size = WRITE_CHUNKS * fsio.CHUNK
    buf = bytearray()
    for piece in pieces:
        if isinstance(piece, tuple):
            start, end = piece
            if not 0 <= start <= end <= loaded:
                raise ValueError(f"span {start}:{end} is outside the {loaded} bytes loaded")
            if buf:
                tmp.write(bytes(buf), limit)
                buf.clear()
                step("write")
            tmp.copy_from(source_fd, start, end, limit)
            step("copy")
            continue
        buf += piece
        if len(buf) >= size + keep:
            n = len(buf) - keep
            tmp.write(bytes(buf[:n]), limit)
            del buf[:n]
            step("write")
    held = keep > 0 and buf.endswith(hold)
    if held:
        del buf[len(buf) - keep :]
    if buf:
        tmp.write(bytes(buf), limit)
        buf.clear()
        step("write")
    return held
