"""``open_document_session`` on a file that starts like a JSON document but is read as JSON lines: the line
session it opened to find out is closed, not left holding the file's descriptor."""

import os

from sessionview.core.view.documents import open_document_session


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_a_line_file_that_looks_like_a_document_leaves_no_descriptor(tmp_path):
    path = tmp_path / "broken.json"
    path.write_bytes(b'{"role":"user",\n"x"\n{"role":"assistant","content":"yo"}\n')
    before = _fds()
    assert open_document_session(str(path)) is None
    assert _fds() - before == set()


def test_a_document_is_still_given_back(tmp_path):
    path = tmp_path / "doc.json"
    path.write_bytes(b'{\n  "messages": [\n    {"role": "user", "content": "hi"}\n  ]\n}\n')
    session = open_document_session(str(path))
    assert session is not None
    session.close()


def test_a_closed_session_reads_nothing_even_when_its_descriptor_number_is_taken_again(tmp_path):
    import pytest

    from sessionview.core.session import open_session

    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"mine"}\n')
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"role":"user","content":"SOMEONE ELSE"}\n')
    session = open_session(str(path))
    source = session.doc.source
    assert source.read(0, 10) == b'{"role":"u'
    session.close()
    fd = os.open(other, os.O_RDONLY)  # most likely the number the session had
    try:
        with pytest.raises(ValueError, match="closed"):
            source.read(0, 10)
    finally:
        os.close(fd)
