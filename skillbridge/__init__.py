"""skillbridge: the runner and the command-line interface that wire the packages together."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("skillbridge")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.1.0"
