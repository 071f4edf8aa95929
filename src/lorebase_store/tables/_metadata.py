"""The one MetaData every table of the store is declared on (these modules' and
lorebase_store.memory_tables'), the target_metadata of the migrations' environment."""

from __future__ import annotations

from sqlalchemy import MetaData

metadata = MetaData()

__all__ = ["metadata"]
