"""The fallback adapter: any JSONL. Lines with a string ``role`` are messages, the rest are shown raw."""

from sessionview.core.formats.base import Adapter, Capabilities


class GenericAdapter(Adapter):
    name = "jsonl"
    title = "JSONL"
    capabilities = Capabilities(editable=True, compactable=True)
