"""sessionview: look inside, follow and repair LLM agent sessions."""

__version__ = "0.1.0"
