"""Lorebase: shared, versioned knowledge for AI agents (the shared core every service imports)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lorebase")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
