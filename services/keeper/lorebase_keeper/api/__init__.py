"""Keeper's RPC layer."""

from lorebase_keeper.api.keeper import KeeperServicer
from lorebase_keeper.api.memory import MemoryStoreServicer

__all__ = ["KeeperServicer", "MemoryStoreServicer"]
