"""The state of a branch inside a commit group: the stored rows plus what earlier commits of the group
changed but have not written yet.

A commit group writes all its commits in one statement at its end (commit.py), so the second commit
of a group must read the first one's Records, Links, unique values and receipts from here rather
than from the database. Every read of a change set goes through a `BranchView`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lorebase_store import LinkRow, Receipt, RecordRow, Txn


@dataclass
class BranchView:
    txn: Txn
    domain_id: int
    branch: str
    # Rows read from the database in this transaction (None: not there).
    stored_records: dict[tuple[str, str], RecordRow | None] = field(default_factory=dict)
    # What earlier commits of the group left (None: deleted).
    records: dict[tuple[str, str], RecordRow | None] = field(default_factory=dict)
    links: dict[tuple[str, str, str], LinkRow | None] = field(default_factory=dict)
    receipts: dict[tuple[str, str], Receipt] = field(default_factory=dict)

    async def get_records(self, kind: str, keys: list[str]) -> dict[str, RecordRow]:
        wanted = [
            k
            for k in dict.fromkeys(keys)
            if (kind, k) not in self.records and (kind, k) not in self.stored_records
        ]
        for start in range(0, len(wanted), 50000):
            chunk = wanted[start : start + 50000]
            found = await self.txn.get_records(self.domain_id, self.branch, kind, chunk)
            for key in chunk:
                self.stored_records[(kind, key)] = found.get(key)
        result: dict[str, RecordRow] = {}
        for key in keys:
            ref = (kind, key)
            row = self.records[ref] if ref in self.records else self.stored_records.get(ref)
            if row is not None:
                result[key] = row
        return result

    async def prefetch(self, kind: str, keys: list[str]) -> None:
        await self.get_records(kind, keys)

    async def get_links(self, relation: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], LinkRow]:
        stored_pairs = [p for p in pairs if (relation, *p) not in self.links]
        found: dict[tuple[str, str], LinkRow] = {}
        for start in range(0, len(stored_pairs), 50000):
            found.update(
                await self.txn.get_links(
                    self.domain_id, self.branch, relation, stored_pairs[start : start + 50000]
                )
            )
        for pair in pairs:
            ref = (relation, *pair)
            if ref in self.links:
                row = self.links[ref]
                if row is None:
                    found.pop(pair, None)
                else:
                    found[pair] = row
        return found

    async def links_of(
        self, relation: str, *, from_keys: list[str] | None = None, to_keys: list[str] | None = None
    ) -> list[LinkRow]:
        rows = {
            (r.from_key, r.to_key): r
            for r in await self.txn.links_of(
                self.domain_id, self.branch, relation, from_keys=from_keys, to_keys=to_keys
            )
        }
        from_set = None if from_keys is None else set(from_keys)
        to_set = None if to_keys is None else set(to_keys)
        for (rel, from_key, to_key), row in self.links.items():
            if rel != relation:
                continue
            if (from_set is not None and from_key not in from_set) or (
                to_set is not None and to_key not in to_set
            ):
                continue
            if row is None:
                rows.pop((from_key, to_key), None)
            else:
                rows[(from_key, to_key)] = row
        return [rows[k] for k in sorted(rows)]

    async def keys_with_value(self, kind: str, attribute: str, values: list[Any]) -> dict[Any, list[str]]:
        found = await self.txn.keys_with_value(self.domain_id, self.branch, kind, attribute, values)
        wanted = set(values)
        for (row_kind, key), row in self.records.items():
            if row_kind != kind:
                continue
            for value in list(found):
                if key in found[value] and (row is None or row.values.get(attribute) != value):
                    found[value].remove(key)
            if row is not None and row.values.get(attribute) in wanted:
                holders = found.setdefault(row.values[attribute], [])
                if key not in holders:
                    holders.append(key)
        return found

    async def get_receipt(self, principal: str, key: str) -> Receipt | None:
        if (principal, key) in self.receipts:
            return self.receipts[(principal, key)]
        return await self.txn.get_receipt(self.domain_id, principal, key)

    def apply(
        self,
        records: dict[tuple[str, str], RecordRow | None],
        links: dict[tuple[str, str, str], LinkRow | None],
        receipt: tuple[str, str, Receipt] | None = None,
    ) -> None:
        """Remember what a commit of the group changed, for the commits after it."""
        self.records.update(records)
        self.links.update(links)
        if receipt is not None:
            principal, key, value = receipt
            self.receipts[(principal, key)] = value


__all__ = ["BranchView"]
