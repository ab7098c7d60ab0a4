"""Backups are bounded: the last N per file, at most M bytes in all, oldest first, never the newest."""

from __future__ import annotations

import itertools
import os
import pathlib
import shutil

import pytest

from sessionview.core.config import ConfigError, load_config
from sessionview.core import sizes
from sessionview.core.store import backups, retention, save
from sessionview.core.store.stamp import stamp_document
from sessionview.core.doc.document import Document, Line


def save_edit(path, root, raw: bytes) -> save.SaveResult:
    doc = Document.load(path)
    try:
        stamp = stamp_document(doc)
        new = doc.splice(1, 1, [Line(raw)])
        return save.save(path, lambda a: itertools.chain(new.iter_bytes(), [a]), stamp, root=root)
    finally:
        doc.close()


@pytest.fixture
def config(tmp_path, monkeypatch):
    p = tmp_path / "config.toml"
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(p))

    def write(text: str) -> pathlib.Path:
        p.write_text(text)
        return p

    return write


def make_session(tmp_path, name="s.jsonl", size=100):
    p = tmp_path / name
    p.write_bytes(b'{"pad":"' + b"x" * size + b'"}\n{"role":"user","content":"hi"}\n')
    return p


def test_default_keeps_the_last_20_per_file(tmp_path):
    s = make_session(tmp_path)
    contents = []
    for i in range(25):
        contents.append(s.read_bytes())
        save_edit(s, tmp_path, b'{"v":%d}' % i)
    found = backups.list_backups(s)
    assert len(found) == 20
    assert [pathlib.Path(b.path).read_bytes() for b in found] == contents[:4:-1]  # the newest 20, newest first


def test_keep_and_max_bytes_come_from_the_config(tmp_path, config):
    config("backups_keep = 3\nbackups_max_bytes = 1000000\n")
    assert retention.current_retention() == retention.Retention(3, 1000000)
    s = make_session(tmp_path)
    for i in range(6):
        save_edit(s, tmp_path, b'{"v":%d}' % i)
    assert len(backups.list_backups(s)) == 3


def padded(tag: bytes, i: int) -> bytes:
    return b'{"pad":"' + b"x" * 1000 + b'","%s":%d}' % (tag, i)


def test_max_bytes_prunes_oldest_first_across_files_but_never_a_newest(tmp_path, config):
    a, b = make_session(tmp_path, "a.jsonl", 1000), make_session(tmp_path, "b.jsonl", 1000)
    config("backups_max_bytes = \"1KiB\"\n")  # less than even one backup of each file
    for i in range(3):
        save_edit(a, tmp_path, padded(b"a", i))
        save_edit(b, tmp_path, padded(b"b", i))
    # each file keeps its newest backup, whatever the limit; everything else went
    assert len(backups.list_backups(a)) == 1 and len(backups.list_backups(b)) == 1
    assert pathlib.Path(backups.list_backups(a)[0].path).read_bytes().startswith(padded(b"a", 1))


def test_max_bytes_removes_the_globally_oldest(tmp_path):
    a, b = make_session(tmp_path, "a.jsonl", 1000), make_session(tmp_path, "b.jsonl", 1000)
    save_edit(a, tmp_path, padded(b"a", 9))  # every backup is then the same size
    save_edit(b, tmp_path, padded(b"b", 9))
    for i in range(3):
        save_edit(a, tmp_path, padded(b"a", i))
    for i in range(3):
        save_edit(b, tmp_path, padded(b"b", i))
    sizes = {x.size for x in backups.list_backups(a)[:3] + backups.list_backups(b)[:3]}
    assert len(sizes) == 1
    size = sizes.pop()
    retention.prune(retention=retention.Retention(3, 10**9))
    oldest_a = backups.list_backups(a)[-2:]
    # room for four backups of the six: the two oldest (both a's) go
    report = retention.prune(retention=retention.Retention(20, 4 * size))
    assert [x.path for x in report.removed] == [x.path for x in reversed(oldest_a)]
    assert len(backups.list_backups(a)) == 1 and len(backups.list_backups(b)) == 3
    assert report.used == 4 * size == retention.usage()


def test_prune_named_files_dry_run_and_protect(tmp_path):
    a, b = make_session(tmp_path, "a.jsonl"), make_session(tmp_path, "b.jsonl")
    for i in range(4):
        save_edit(a, tmp_path, b'{"a":%d}' % i)
        save_edit(b, tmp_path, b'{"b":%d}' % i)
    dry = retention.prune([str(a)], retention=retention.Retention(1, 10**9), dry_run=True)
    assert len(dry.removed) == 3 and all(os.path.exists(x.path) for x in dry.removed)
    assert len(backups.list_backups(a)) == 4
    keep = backups.list_backups(a)[-1].path  # the oldest
    done = retention.prune([str(a)], retention=retention.Retention(1, 10**9), protect=frozenset({keep}))
    assert len(done.removed) == 2 and not any(os.path.exists(x.path) for x in done.removed)
    assert [x.path for x in backups.list_backups(a)][1:] == [keep]
    assert len(backups.list_backups(b)) == 4  # not named: untouched


def test_a_backup_just_written_survives_even_when_older_names_sort_later(tmp_path, config):
    """Clock skew: backups named in the future must not make the new backup 'the oldest' and prune it."""
    config("backups_keep = 2\n")
    s = make_session(tmp_path)
    save_edit(s, tmp_path, b'{"v":0}')
    d = backups.backup_dir(s)
    first = backups.list_backups(s)[0].path
    for n in range(2):
        shutil.copy(first, os.path.join(d, f"20990101T000000.00000{n}-0.bak"))
    os.unlink(first)
    r = save_edit(s, tmp_path, b'{"v":1}')
    assert os.path.exists(r.backup.path)
    assert r.backup.path in [b.path for b in backups.list_backups(s)]


def test_unmerged_files_are_never_pruned_and_are_listed(tmp_path):
    s = make_session(tmp_path)
    kept = backups.write_unmerged(str(s), b"late bytes\n")
    again = backups.write_unmerged(str(s), b"more\n")  # same microsecond or not: never overwritten
    assert kept != again and pathlib.Path(kept).read_bytes() == b"late bytes\n"
    for i in range(3):
        save_edit(s, tmp_path, b'{"v":%d}' % i)
    report = retention.prune(retention=retention.Retention(1, 0))
    assert os.path.exists(kept) and os.path.exists(again)
    assert sorted(u.path for u in report.unmerged) == sorted([kept, again])
    assert all(u.kind == "unmerged" for u in backups.list_unmerged(s))
    assert len(backups.list_backups(s)) == 1  # unmerged files are not backups, not counted
    assert os.stat(kept).st_mode & 0o777 == 0o600


def test_a_broken_config_never_fails_a_save_and_prunes_nothing(tmp_path, config):
    s = make_session(tmp_path)
    for i in range(3):
        save_edit(s, tmp_path, b'{"v":%d}' % i)
    config("backups_keep = 0\n")
    save_edit(s, tmp_path, b'{"v":9}')
    assert len(backups.list_backups(s)) == 4
    with pytest.raises(ConfigError, match="backups_keep"):
        retention.current_retention()


@pytest.mark.parametrize(
    "text, value",
    [("0", 0), ("512", 512), ("2GiB", 2 * 1024**3), ("2 GiB", 2 * 1024**3), ("1.5G", 3 * 1024**3 // 2),
     ("100MB", 100 * 10**6), ("500mib", 500 * 1024**2), ("1k", 1024), ("7B", 7)],
)
def test_parse_size(text, value):
    assert sizes.parse_size(text) == value


@pytest.mark.parametrize("bad", ["", "2 GiBs", "-1", "1e9", "lots", True, -5, 1.5, None])
def test_parse_size_refuses_clearly(bad):
    with pytest.raises(ValueError, match="size"):
        sizes.parse_size(bad)


def test_format_size_and_describe():
    assert sizes.format_size(512) == "512 B"
    assert sizes.format_size(2 * 1024**3) == "2.0 GiB"
    assert retention.Retention().describe() == "keeping the last 20 backups per file, 2.0 GiB in all"
    assert retention.Retention(1, 1536).describe() == "keeping the last backup per file, 1.5 KiB in all"


def test_config_keys(tmp_path):
    p = tmp_path / "c.toml"
    c = load_config(str(tmp_path / "none.toml"))
    assert (c.backups_keep, c.backups_max_bytes) == (20, 2 * 1024**3)
    p.write_text('backups_keep = 5\nbackups_max_bytes = "300MiB"\n')
    c = load_config(str(p))
    assert (c.backups_keep, c.backups_max_bytes) == (5, 300 * 1024**2)
    p.write_text("backups_max_bytes = 1048576\n")
    assert load_config(str(p)).backups_max_bytes == 1048576


@pytest.mark.parametrize(
    "text, word",
    [("backups_keep = 0\n", "backups_keep"), ('backups_keep = "20"\n', "backups_keep"), ("backups_keep = true\n", "backups_keep"),
     ('backups_max_bytes = "2 GiBs"\n', "backups_max_bytes"), ("backups_max_bytes = -1\n", "backups_max_bytes"),
     ("backups_max_bytes = 1.5\n", "backups_max_bytes")],
)
def test_bad_config_values_are_clear(tmp_path, text, word):
    p = tmp_path / "config.toml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=f"config.toml: {word}"):
        load_config(str(p))

