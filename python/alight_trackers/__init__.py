"""The experiment trackers `alight train --report-to` writes to (see __main__.py)."""
