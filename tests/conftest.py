import pathlib

import pytest

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> pathlib.Path:
    return FIXTURES


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch):
    """Backups and config never touch the real home directory during tests."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("SESSIONVIEW_STATE_DIR", str(state / "backups"))
    monkeypatch.setenv("XDG_STATE_HOME", str(state / "xdg"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(state / "config"))
    monkeypatch.setenv("SESSIONVIEW_INDEX", str(state / "index" / "index.sqlite"))
    yield
