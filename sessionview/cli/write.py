"""The writing commands' engine: plan, save, report, and start again when another process rewrites the file.

Brute's SessionLog rewrites its session in place (truncate, then one line per message). A read in the middle
of that sees a shrunk or half-written file. So a writing command waits for a quiet moment before it loads,
checks after planning that the file did not change under it, and when it did (or the save reports a
conflict) waits again and starts over from a fresh load, a bounded number of times. A re-plan is only
written if the records the command names still hold the bytes they held the first time; otherwise it is
refused. Either way nothing is half done: the file is written once, or not at all.

Status lines go to stderr (as git does); stdout carries only what was asked for (the ``--dry-run`` diff).
Once the new file is in place, failing to print is never a failure.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import time
from typing import Any, Callable

from sessionview.cli import CliError, _Out, _err, _open

ATTEMPTS = 6  # the first try and 5 more after the file was rewritten under us
QUIET = 0.1  # seconds the file must be unchanged before a load, when it is being written
RECENT = 1.0  # a file modified less than this long ago is waited on before the first load
STABLE_TIMEOUT = 1.0  # then try anyway: a plan and a save need only a short quiet window
INPUT_CAP = 64 * 1024 * 1024  # --content-file / --summary-file


class Rewriting(Exception):
    """The file changed under a read or a save: wait for it to settle and start over."""


# --------------------------------------------------------------------------------------------------
# input files


def read_input(path: str, what: str) -> str:
    """Text for ``--content-file``/``--summary-file``: a regular file or ``-`` (stdin), at most INPUT_CAP bytes."""
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise CliError(f"{what} -: stdin is closed")
        data = stream.read(INPUT_CAP + 1)
        name = "stdin"
    else:
        name = path
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            raise CliError(f"{what} {path}: {exc.strerror or exc}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                from sessionview.core.doc.document import describe_mode

                raise CliError(f"{what} {path}: not a regular file ({describe_mode(st.st_mode)}); use a file or -")
            if st.st_size > INPUT_CAP:
                raise CliError(f"{what} {path}: too large ({st.st_size:,} bytes; the limit is {INPUT_CAP:,})")
            chunks, size = [], 0
            while size <= INPUT_CAP:
                chunk = os.read(fd, min(1 << 20, INPUT_CAP + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            data = b"".join(chunks)
        except OSError as exc:
            raise CliError(f"{what} {path}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
    if len(data) > INPUT_CAP:
        raise CliError(f"{what} {name}: too large (more than {INPUT_CAP:,} bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CliError(f"{what} {name}: not UTF-8") from None


# --------------------------------------------------------------------------------------------------
# reporting


def status(message: str) -> None:
    """A status line on stderr (escaped). Never raises: the work it reports is done."""
    _err(message)


def report(path: str, outcome: Any) -> int:
    """Print the outcome of a save and every warning the core produced; 1 if another process's bytes were not carried."""
    result = outcome.result
    if not outcome.changed:
        status(f"{path}: {outcome.description}: nothing to write")
        return 0
    extra = ""
    appended = getattr(result, "rebased_bytes", 0) + getattr(result, "carried_bytes", 0)
    if appended:
        extra = f"; {appended} bytes another process appended were carried over"
    status(f"{path}: {outcome.description}: written (backup kept; 'sessionview undo' restores it){extra}")
    for w in getattr(result, "warnings", ()) or ():
        status(f"warning: {path}: {w}")
    missing = getattr(result, "not_carried_bytes", 0) or getattr(result, "lost_partial_bytes", 0) or 0
    if missing:
        kept = tuple(getattr(result, "kept_paths", ()) or ())
        where = f"they are kept in {', '.join(kept)}" if kept else "they could not be kept anywhere"
        status(f"{path}: {missing} bytes another process wrote during the save are not in the new file; {where}")
        return 1
    return 0


# --------------------------------------------------------------------------------------------------
# the retry loop


def _key(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _now_key(path: str) -> tuple[int, int, int, int] | None:
    try:
        return _key(os.stat(path))
    except OSError:
        return None


def _loaded_key(session: Any) -> tuple[int, int, int, int] | None:
    st = getattr(session, "_stat", None)  # a LittleGhost document (its .doc raises when read-only)
    if st is None:
        st = getattr(getattr(session, "doc", None), "loaded_stat", None)
    return _key(st) if st is not None else None


def _pin(change: Any) -> tuple[int, tuple[bytes, ...], Any]:
    return (change.first, tuple(line.data for line in change.old_lines), change.anchor)


def _same_target(pin: tuple[int, tuple[bytes, ...], Any], change: Any) -> bool:
    first, old, anchor = pin
    now = tuple(line.data for line in change.old_lines)
    # truncate --keep N drops what was appended since too: the records it named must still lead
    return change.first == first and now[: len(old)] == old and change.anchor == anchor


def wait_quiet(path: str) -> None:
    from sessionview.core.store.stable import wait_stable

    wait_stable(path, quiet=QUIET, timeout=STABLE_TIMEOUT)


def _maybe_wait_first(path: str) -> None:
    """Before the first load: wait for a quiet moment if the file was modified just now."""
    try:
        st = os.stat(path)
    except OSError:
        return
    if time.time() - st.st_mtime < RECENT:
        wait_quiet(path)


def run_write(args: argparse.Namespace, plan: Callable[[Any], Any]) -> int:
    """Plan and write ``args.file``, starting over from a fresh load while another process rewrites it."""
    path = args.file
    pin = None
    sizes: list[int] = []
    _maybe_wait_first(path)
    for attempt in range(ATTEMPTS):
        if attempt:
            wait_quiet(path)
        try:
            return _attempt(args, plan, pin, sizes)
        except Rewriting as exc:
            if exc.args and exc.args[0] is not None:
                pin = exc.args[0]
            continue
    raise rewriting_refusal(path)


def rewriting_refusal(path: str) -> CliError:
    return CliError(
        f"{path}: refused: another process is rewriting the file (it changed under each of {ATTEMPTS} tries); "
        "nothing was written. Try again when it is idle",
        1,
    )


def _attempt(args: argparse.Namespace, plan: Callable[[Any], Any], pin: Any, sizes: list[int]) -> int:
    from sessionview.core.doc.linescan import SourceChanged
    from sessionview.core.edit.plan import InvalidEdit, Refused
    from sessionview.core.errors import AnotherWriter, Conflict, SaveError
    from sessionview.core.edit.summary import SummarizerFailed

    path = args.file
    try:
        session = _open(path)
    except SourceChanged:
        raise Rewriting(None) from None
    loaded = _loaded_key(session)
    try:

        def changed() -> bool:
            return loaded is not None and _now_key(path) != loaded

        def shrank() -> bool:
            return bool(sizes) and loaded is not None and loaded[2] < max(sizes)

        try:
            if session.read_only_reason:
                raise CliError(f"{path}: read-only: {session.read_only_reason}", 1)
            change = plan(session)
            if changed():
                raise Rewriting(pin if pin is not None else None)
            if pin is not None and not _same_target(pin, change):
                raise CliError(
                    f"{path}: refused: another process rewrote the file and the records this command names "
                    "no longer hold what they held when it started; nothing was written",
                    1,
                )
            this_pin = pin if pin is not None else _pin(change)
            return _write(args, session, change, this_pin)
        except Rewriting:
            raise
        except SourceChanged:
            raise Rewriting(pin) from None
        except (Refused, InvalidEdit, ValueError) as exc:
            if changed() or shrank():
                raise Rewriting(pin) from None
            raise CliError(str(exc), 1 if isinstance(exc, Refused) else 2) from None
        except SummarizerFailed as exc:
            raise CliError(f"compaction refused: {exc}; nothing was written", 1) from None
        except Conflict as exc:
            raise Rewriting(getattr(exc, "pin", pin)) from None
        except AnotherWriter as exc:
            if changed():
                raise Rewriting(pin) from None
            raise CliError(str(exc), exc.exit_code) from None
        except SaveError as exc:
            raise CliError(str(exc), getattr(exc, "exit_code", 1)) from None
    finally:
        if loaded is not None:
            sizes.append(loaded[2])
        session.close()


def _write(args: argparse.Namespace, session: Any, change: Any, pin: Any) -> int:
    from sessionview.core.edit import writeback
    from sessionview.core.errors import Conflict
    from sessionview.core.store.paths import default_root

    for w in change.warnings:
        status(f"warning: {args.file}: {w}")
    if args.dry_run:
        out = _Out()
        out.write(writeback.diff(session, change, args.file))
        out.flush()
        return 0
    if not change.lines and change.last < change.first:
        status(f"{args.file}: nothing to write ({change.description})")
        return 0
    try:
        outcome = writeback.commit(session, change, root=default_root(args.file), force=args.force)
    except Conflict as exc:
        exc.pin = pin  # type: ignore[attr-defined]  # the re-plan must name the same records
        raise
    return report(args.file, outcome)

