"""Widgets of the sessionview UI, one concept per module."""
