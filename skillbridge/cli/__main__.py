"""``python -m skillbridge.cli``: the same as the ``skillbridge`` command."""

from skillbridge.cli import run

run()
