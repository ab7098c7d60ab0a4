import pytest

from sessionview.core.config import ConfigError, load_config


def test_missing_config_is_empty(tmp_path):
    c = load_config(str(tmp_path / "none.toml"))
    assert c.keymap == {} and c.summarizer is None and c.path is None


def test_keymap_and_summarizer(tmp_path, monkeypatch):
    p = tmp_path / "config.toml"
    p.write_text('summarizer = "cat"\nsummarizer_timeout = 5\n[keymap]\nedit = "i"\nundo = "ctrl+z,u"\n')
    monkeypatch.setenv("SESSIONVIEW_CONFIG", str(p))
    c = load_config()
    assert c.keymap == {"edit": "i", "undo": "ctrl+z,u"} and c.summarizer == "cat" and c.summarizer_timeout == 5.0


@pytest.mark.parametrize("text", ["[keymap]\nedit = 3\n", "summarizer = 1\n", "this is not toml", "summarizer_timeout = -1\n"])
def test_broken_config_is_a_clear_error(tmp_path, text):
    p = tmp_path / "config.toml"
    p.write_text(text)
    with pytest.raises(ConfigError, match="config.toml"):
        load_config(str(p))
