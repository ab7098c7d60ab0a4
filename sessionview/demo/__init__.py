"""Bundled example sessions (one per supported format) and a simulated agent for ``sessionview demo``."""

from __future__ import annotations

import os

DEMO_DIR = os.path.dirname(os.path.abspath(__file__))
SUFFIXES = (".jsonl", ".json")


def example_files() -> list[str]:
    """Paths of the bundled example sessions."""
    return sorted(os.path.join(DEMO_DIR, n) for n in os.listdir(DEMO_DIR) if n.endswith(SUFFIXES))
