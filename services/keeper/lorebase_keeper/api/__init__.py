"""Keeper's RPC layer."""

from lorebase_keeper.api.keeper import KeeperServicer

__all__ = ["KeeperServicer"]
