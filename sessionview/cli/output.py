"""What the CLI prints: one-line errors with an exit code, escaped paths, UTF-8 on stdout that survives a
closed pipe. Status lines go to stderr (as git does); stdout carries only what was asked for.
"""

from __future__ import annotations

import os
import sys

PROG = "sessionview"


class CliError(Exception):
    """A one-line error for stderr, with an exit code."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def err(message: str) -> None:
    """One escaped line on stderr. Never raises: what it reports has already happened."""
    from sessionview.core.text import escape_control

    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(f"{PROG}: {escape_control(message, one_line=True)}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def shown(path: str) -> str:
    """A path as it may be printed: control characters, C1 bytes and bidi overrides escaped."""
    from sessionview.core.text import escape_control

    return escape_control(os.fspath(path), one_line=True)


class Out:
    """UTF-8 output to stdout's buffer that survives a closed pipe."""

    def __init__(self) -> None:
        self.buf = getattr(sys.stdout, "buffer", None)

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "backslashreplace")
        if self.buf is not None:
            self.buf.write(data)
        elif sys.stdout is not None:  # pragma: no cover - stdout replaced by a text-only stream
            sys.stdout.write(data.decode("utf-8"))

    def write_bytes(self, data: bytes) -> None:
        """Bytes already encoded as UTF-8 (what :meth:`write` makes of text)."""
        if self.buf is not None:
            self.buf.write(data)
        elif sys.stdout is not None:  # pragma: no cover - stdout replaced by a text-only stream
            sys.stdout.write(data.decode("utf-8", "backslashreplace"))

    def flush(self) -> None:
        stream = self.buf or sys.stdout
        if stream is not None:
            stream.flush()


def sanitize_std_fds() -> None:
    """Give a closed fd 0, 1 or 2 to /dev/null (as git does), so no file we open lands on it."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                null = os.open(os.devnull, os.O_RDWR)
            except OSError:
                return
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115


def status(message: str) -> None:
    """A status line on stderr (escaped). Never raises: the work it reports is done."""
    err(message)
