"""Loads (docs/rest.md, "Imports" and "Sources"): Records and Links written in one Revision, checked
like Operations; an import (origin import) or a Source's sync (origin source_sync, with the keys
it listed, which coverage reads)."""

from lorebase_keeper.imports.load import Load, load, run_import
from lorebase_keeper.imports.sources import sync_source, visible_source

__all__ = [
    "Load",
    "load",
    "run_import",
    "sync_source",
    "visible_source",
]
