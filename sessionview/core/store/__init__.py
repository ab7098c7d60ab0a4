"""Storage: load stamps, file I/O, other writers, atomic saves and backups."""
