"""The small Brute conversation the CLI tests edit, and how one of its lines is written."""

import json

from convo import CONVO  # noqa: F401  (the CLI tests import it from here)


def line(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
