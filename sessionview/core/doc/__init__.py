"""Documents and parsing: records of raw bytes, their classification, views and tool pairing."""
