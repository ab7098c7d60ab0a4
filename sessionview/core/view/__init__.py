"""The view model of a transcript, for the fronts (still free of Textual)."""
