"""Lorebase: shared, versioned knowledge for AI agents (the shared core every service imports).

`__version__` is the release, written here and in pyproject.toml (a test keeps them equal), not
read from the installed metadata: an editable install keeps the version it was installed with.
0.9.0 is the first release with both memory feed contracts (seed 002: 0.8.0 brought version 1,
0.9.0 version 2); `/health` reports it with the capabilities themselves (lorebase.features).
"""

__version__ = "0.9.0"

__all__ = ["__version__"]
