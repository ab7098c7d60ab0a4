"""The pure core of sessionview: stdlib and orjson only. Never import textual or rich here."""
