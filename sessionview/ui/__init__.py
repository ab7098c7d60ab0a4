"""The Textual user interface. Nothing here is imported by ``sessionview --help``: see :mod:`sessionview.ui.launch`."""
