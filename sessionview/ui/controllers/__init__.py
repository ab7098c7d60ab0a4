"""What the session screen owns besides its widgets: the open file and its followers (:mod:`.follow`),
search and filter (:mod:`.search`), and the editing flows (:mod:`.editing`, :mod:`.writer`)."""
