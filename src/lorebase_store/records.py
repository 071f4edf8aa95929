"""The materialised head: Records and Links of each branch, one row each.

`RecordsTxn` is the store's mixin for them, made of one mixin per family of reads and writes:
`RecordReadsTxn` (lorebase_store.record_reads: one Record, the Records of a Kind, search, the copy of
a branch's rows), `RecordSetsTxn` (lorebase_store.record_sets: the Records of many (Kind, key) pairs
in one statement) and `LinksTxn` (lorebase_store.links: the Links of Relations).
"""

from __future__ import annotations

from lorebase_store.links import LinkRow, LinksTxn
from lorebase_store.record_reads import RecordReadsTxn, RecordRow
from lorebase_store.record_sets import RecordSetsTxn, RefsRead


class RecordsTxn(RecordReadsTxn, RecordSetsTxn, LinksTxn):
    """Records and Links at a branch's head: every family's methods on one mixin (lorebase_store.store.Txn)."""


__all__ = ["LinkRow", "LinksTxn", "RecordReadsTxn", "RecordRow", "RecordSetsTxn", "RecordsTxn", "RefsRead"]
