"""Screens of the sessionview UI: the session browser, the transcript, help."""
