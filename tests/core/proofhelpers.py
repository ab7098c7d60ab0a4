"""For the tests of the stat proof (:mod:`sessionview.core.store.proof`)."""

import os

import pytest

from sessionview.core.store import proof


def settle_at_once_or_skip(path, monkeypatch) -> None:
    """A ctime counts as settled as soon as the clock has passed it (no 2 s wait in a test); skip where the file
    system of ``path`` does not keep ctime (the proof is never used there)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        kind = proof.fs_type(fd)
    finally:
        os.close(fd)
    if kind not in proof.TRUSTED:
        pytest.skip(f"the test directory's file system (f_type {kind}) does not get the stat proof")
    monkeypatch.setattr(proof, "SETTLE_NS", 0)
