import pytest
from clihelpers import CONVO, line


@pytest.fixture
def session(tmp_path):
    """A Brute session of :data:`clihelpers.CONVO`, one line per message."""
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(line(m) for m in CONVO))
    return p
