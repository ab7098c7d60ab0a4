"""The speed-ups of the save path keep every byte: writeback started while copying, the SHA-256 of a
loaded file taken in the background, and the id search in threads."""

from __future__ import annotations

import errno
import os

import pytest

from sessionview.core.store import fsio


def _pair(tmp_path, data: bytes) -> tuple[int, int]:
    src = tmp_path / "src"
    src.write_bytes(data)
    s = os.open(src, os.O_RDONLY)
    d = os.open(tmp_path / "dst", os.O_RDWR | os.O_CREAT, 0o600)
    return s, d


@pytest.mark.parametrize("kernel", [True, False])
def test_copy_span_in_many_chunks_with_writeback_copies_exactly(tmp_path, monkeypatch, kernel):
    data = os.urandom(300_000)
    monkeypatch.setattr(fsio, "KERNEL_CHUNK", 4096 * 7)
    monkeypatch.setattr(fsio, "CHUNK", 4096)
    calls = []
    real = fsio.start_writeback
    monkeypatch.setattr(fsio, "start_writeback", lambda fd, pos, n: (calls.append((pos, n)), real(fd, pos, n)))
    if not kernel:
        def refuse(*a):
            raise OSError(errno.EXDEV, "cross-device")
        monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    s, d = _pair(tmp_path, data)
    try:
        os.pwrite(d, b"head", 0)
        how = fsio.copy_span(s, 1000, 250_000, d, 4)
        os.fsync(d)
    finally:
        os.close(s)
        os.close(d)
    assert how == ("copy_file_range" if kernel and hasattr(os, "copy_file_range") else "copy")
    assert (tmp_path / "dst").read_bytes() == b"head" + data[1000:251_000]
    assert calls, "writeback was started while copying"
    assert all(4 <= pos and pos + n <= 250_004 for pos, n in calls)  # only ever on the bytes just copied


def test_start_writeback_on_a_bad_descriptor_is_only_a_hint(tmp_path):
    fsio.start_writeback(987654, 0, 4096)  # EBADF: ignored
    fsio.start_writeback(-1, 0, 0)
