"""The shipped evaluation suite: YAML task files (see skillbridge/suite.py for the format)."""
