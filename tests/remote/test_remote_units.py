"""Pure parts of the remote code: addresses, quoting, the block cache (no server needed)."""

import random
import shlex
import subprocess

import pytest

from sessionview.cli.remote import remote_argv
from sessionview.remote.address import Address, parse
from sessionview.remote.sftp import BlockCache
from sessionview.remote.writes import command_line


@pytest.mark.parametrize(
    "text, want",
    [
        ("ssh://host/srv/s.jsonl", Address("host", "/srv/s.jsonl")),
        ("ssh://me@host:2222/srv/a b.jsonl", Address("host", "/srv/a b.jsonl", "me", 2222)),
        ("ssh://host", Address("host", "")),
        ("ssh://host/~/runs", Address("host", "runs")),
        ("ssh://[::1]:22/x", Address("::1", "/x", None, 22)),
        ("ssh://host/a%20b", Address("host", "/a b")),
        ("host:runs/s.jsonl", Address("host", "runs/s.jsonl")),
        ("me@web-1.example.com:/srv/s.jsonl", Address("web-1.example.com", "/srv/s.jsonl", "me")),
        ("host:", Address("host", "")),
        ("[fe80::1]:/x", Address("fe80::1", "/x")),
    ],
)
def test_remote_addresses(text, want):
    assert parse(text) == want


@pytest.mark.parametrize(
    "text",
    ["s.jsonl", "./host:s.jsonl", "dir/host:s.jsonl", "/abs/host:s.jsonl", "C:\\x", "c:x", ":x", "ho st:x",
     "ssh://host:99999/x", "ssh://", "-x:y", "host..:x", "s.jsonl:3", "a.JSON:x"],
)
def test_local_paths_stay_local(text):
    assert parse(text) is None


def test_an_existing_local_name_with_a_colon_is_local(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert parse("host:s.jsonl") is not None
    (tmp_path / "host:s.jsonl").write_text("")
    assert parse("host:s.jsonl") is None
    assert parse("host:s.jsonl", check_local=False) is not None


def test_addresses_print_back():
    for text in ("ssh://me@host:2222/srv/x", "host:runs/x", "ssh://host/srv/x"):
        assert parse(str(parse(text))) == parse(text)


NASTY = ["a b", "it's", 'say "hi"', "$(touch pwned)", "`id`", "; rm -rf /", "x\ny", "--", "-", "*", "~", "$HOME", "\\", ""]


def test_the_remote_command_line_survives_a_posix_shell(tmp_path):
    """What the host's login shell runs gives the program exactly the arguments we meant."""
    line = command_line(NASTY).replace("sessionview", "printf '%s\\0'", 1)
    out = subprocess.run(["sh", "-c", line], capture_output=True, cwd=tmp_path, check=True).stdout
    assert out.split(b"\0")[:-1] == [a.encode() for a in NASTY]
    assert not (tmp_path / "pwned").exists()
    assert shlex.split(command_line(NASTY))[1:] == NASTY


def test_only_the_file_argument_is_replaced():
    argv = ["edit", "h:s.jsonl", "4", "--content", "h:s.jsonl"]
    assert remote_argv(argv, "edit", "h:s.jsonl", "/srv/s.jsonl") == ["edit", "/srv/s.jsonl", "4", "--content", "h:s.jsonl"]
    argv = ["compact", "--summary", "h:s.jsonl", "h:s.jsonl", "2:3"]
    assert remote_argv(argv, "compact", "h:s.jsonl", "s.jsonl") == ["compact", "--summary", "h:s.jsonl", "s.jsonl", "2:3"]


def test_the_block_cache_reads_what_the_file_holds_and_sees_appends():
    rng = random.Random(7)
    data = bytearray(rng.randbytes(300_000))
    calls = []

    def read(offset, size):
        calls.append((offset, size))
        return bytes(data[offset : offset + size])

    cache = BlockCache(read, block=4096, blocks=8)
    for _ in range(2000):
        off = rng.randrange(0, len(data) + 10)
        size = rng.randrange(0, 9000)
        assert cache(off, size) == bytes(data[off : off + size])
    before = len(calls)
    assert cache(100, 50) == bytes(data[100:150]) and cache(120, 50) == bytes(data[120:170])
    assert len(calls) - before <= 1  # one block read, then served from the cache
    tail = len(data) - 10
    assert cache(tail, 100) == bytes(data[tail:])
    data += b"appended"
    assert cache(tail, 100) == bytes(data[tail:])  # a short block at the end is not kept
