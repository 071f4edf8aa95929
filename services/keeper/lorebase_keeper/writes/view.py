"""The state of a branch inside a commit group: the stored rows plus what earlier commits of the group
changed but have not written yet.

A commit group writes all its commits in one statement at its end (commit.py), so the second commit
of a group must read the first one's Records, Links, unique values and receipts from here rather
than from the database. Every read of a change set goes through a `BranchView`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lorebase_store import BranchChain, BranchRow, HistoryRow, LinkRow, Receipt, RecordRow, Txn
from lorebase_store.chains import branch_chain

# From this many keys or values on (a load's), a lookup first asks whether the branch holds any
# Record of the Kind: a first import into a Kind then sends none of its 100,000 keys to PostgreSQL.
MANY_KEYS = 1000


@dataclass
class BranchView:
    txn: Txn
    domain_id: int
    branch: str
    # Rows read from the database in this transaction (None: not there).
    stored_records: dict[tuple[str, str], RecordRow | None] = field(default_factory=dict)
    stored_links: dict[tuple[str, str, str], LinkRow | None] = field(default_factory=dict)
    # What earlier commits of the group left (None: deleted).
    records: dict[tuple[str, str], RecordRow | None] = field(default_factory=dict)
    links: dict[tuple[str, str, str], LinkRow | None] = field(default_factory=dict)
    receipts: dict[tuple[str, str], Receipt] = field(default_factory=dict)
    # The number of the last sync of each Source planned by the group (source syncs).
    source_syncs: dict[str, int] = field(default_factory=dict)

    async def _stored_records(self, kind: str, keys: list[str]) -> dict[str, RecordRow]:
        if len(keys) >= MANY_KEYS and not await self.txn.kind_has_records(self.domain_id, self.branch, kind):
            return {}  # a load into a Kind the branch has no Record of yet: no key to look up
        return await self.txn.get_records(self.domain_id, self.branch, kind, keys)

    async def _stored_links(
        self, relation: str, pairs: list[tuple[str, str]]
    ) -> dict[tuple[str, str], LinkRow]:
        return await self.txn.get_links(self.domain_id, self.branch, relation, pairs)

    async def _stored_links_of(
        self, relation: str, from_keys: list[str] | None, to_keys: list[str] | None
    ) -> list[LinkRow]:
        return await self.txn.links_of(
            self.domain_id, self.branch, relation, from_keys=from_keys, to_keys=to_keys
        )

    async def _stored_keys_with_value(
        self, kind: str, attribute: str, values: list[Any]
    ) -> dict[Any, list[str]]:
        if len(values) >= MANY_KEYS and not await self.txn.kind_has_records(
            self.domain_id, self.branch, kind
        ):
            return {}
        return await self.txn.keys_with_value(self.domain_id, self.branch, kind, attribute, values)

    async def _stored_keys_of_kind(self, kind: str) -> list[str]:
        return await self.txn.record_keys_of_kind(self.domain_id, self.branch, kind)

    async def _stored_pairs_of_relation(self, relation: str) -> list[tuple[str, str]]:
        return await self.txn.link_pairs(self.domain_id, self.branch, relation)

    async def keys_of_kind(self, kind: str) -> list[str]:
        """The keys of every Record of a Kind (a schema change migrates them all), in key order."""
        stored = await self._stored_keys_of_kind(kind)
        if not any(name == kind for name, _ in self.records):
            # A million keys in a set and sorted from it hold the event loop for a second; in key
            # order already, sorting them again takes linear time.
            return sorted(stored)
        keys = set(stored)
        for (name, key), row in self.records.items():
            if name == kind:
                if row is None:
                    keys.discard(key)
                else:
                    keys.add(key)
        return sorted(keys)

    async def pairs_of_relation(self, relation: str) -> list[tuple[str, str]]:
        """The (from, to) keys of every Link of a Relation."""
        pairs = set(await self._stored_pairs_of_relation(relation))
        for (name, from_key, to_key), row in self.links.items():
            if name == relation:
                if row is None:
                    pairs.discard((from_key, to_key))
                else:
                    pairs.add((from_key, to_key))
        return sorted(pairs)

    async def get_records(self, kind: str, keys: list[str]) -> dict[str, RecordRow]:
        wanted = [
            k
            for k in dict.fromkeys(keys)
            if (kind, k) not in self.records and (kind, k) not in self.stored_records
        ]
        for start in range(0, len(wanted), 50000):
            chunk = wanted[start : start + 50000]
            found = await self._stored_records(kind, chunk)
            self.stored_records.update(((kind, key), found.get(key)) for key in chunk)
        result: dict[str, RecordRow] = {}
        planned, stored = self.records, self.stored_records
        for key in keys:
            ref = (kind, key)
            row = planned[ref] if ref in planned else stored.get(ref)
            if row is not None:
                result[key] = row
        return result

    async def prefetch(self, kind: str, keys: list[str]) -> None:
        await self.get_records(kind, keys)

    async def get_links(self, relation: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], LinkRow]:
        wanted = [
            p
            for p in dict.fromkeys(pairs)
            if (relation, *p) not in self.links and (relation, *p) not in self.stored_links
        ]
        for start in range(0, len(wanted), 50000):
            chunk = wanted[start : start + 50000]
            fetched = await self._stored_links(relation, chunk)
            for pair in chunk:
                self.stored_links[(relation, *pair)] = fetched.get(pair)
        found: dict[tuple[str, str], LinkRow] = {}
        for pair in pairs:
            ref = (relation, *pair)
            row = self.links[ref] if ref in self.links else self.stored_links.get(ref)
            if row is not None:
                found[pair] = row
        return found

    async def links_of(
        self, relation: str, *, from_keys: list[str] | None = None, to_keys: list[str] | None = None
    ) -> list[LinkRow]:
        rows = {(r.from_key, r.to_key): r for r in await self._stored_links_of(relation, from_keys, to_keys)}
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
        found = await self._stored_keys_with_value(kind, attribute, values)
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

    async def next_source_sync(self, source: str) -> int:
        """The number the next sync of `source` on this branch takes."""
        if source not in self.source_syncs:
            self.source_syncs[source] = await self.txn.last_source_sync(self.domain_id, self.branch, source)
        return self.source_syncs[source] + 1

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


@dataclass
class OverlayView(BranchView):
    """The view of an overlay branch: it stores no materialised rows, only its own history; its
    state is the snapshot of its first-parent history (its changes over the base at the fork point)."""

    chain: BranchChain = field(default_factory=BranchChain)
    generation: int = 0

    @property
    def _upto(self) -> tuple[str, int]:
        return (self.branch, self.generation)

    async def _stored_records(self, kind: str, keys: list[str]) -> dict[str, RecordRow]:
        rows = await self.txn.snapshot_entities(self.domain_id, self.chain, self._upto, "record", kind, keys)
        return {row.key: record_of(row) for row in rows}

    async def _stored_links(
        self, relation: str, pairs: list[tuple[str, str]]
    ) -> dict[tuple[str, str], LinkRow]:
        keys = [f"{f}->{t}" for f, t in pairs]
        rows = await self.txn.snapshot_entities(
            self.domain_id, self.chain, self._upto, "link", relation, keys
        )
        found = (link_of(row) for row in rows)
        return {(link.from_key, link.to_key): link for link in found}

    async def _stored_links_of(
        self, relation: str, from_keys: list[str] | None, to_keys: list[str] | None
    ) -> list[LinkRow]:
        rows = await self.txn.snapshot_links_of(
            self.domain_id, self.chain, self._upto, relation, from_keys=from_keys, to_keys=to_keys
        )
        return [link_of(row) for row in rows]

    async def _stored_keys_of_kind(self, kind: str) -> list[str]:
        rows = await self.txn.snapshot_entities(self.domain_id, self.chain, self._upto, "record", kind)
        return [row.key for row in rows]

    async def _stored_pairs_of_relation(self, relation: str) -> list[tuple[str, str]]:
        rows = await self.txn.snapshot_entities(self.domain_id, self.chain, self._upto, "link", relation)
        return [(link.from_key, link.to_key) for link in (link_of(row) for row in rows)]

    async def _stored_keys_with_value(
        self, kind: str, attribute: str, values: list[Any]
    ) -> dict[Any, list[str]]:
        return await self.txn.snapshot_keys_with_value(
            self.domain_id, self.chain, self._upto, kind, attribute, values
        )


async def open_view(txn: Txn, branch: BranchRow) -> BranchView:
    """The view a change set reads a branch through, by the branch's mode."""
    if branch.mode != "overlay":
        return BranchView(txn, branch.domain_id, branch.name)
    chain = await branch_chain(txn, branch.domain_id, branch)
    return OverlayView(txn, branch.domain_id, branch.name, chain=chain, generation=branch.generation)


def record_of(row: HistoryRow) -> RecordRow:
    """A Record as a history row left it (its creation Revision is not known from one row)."""
    return RecordRow(row.name, row.key, row.after or {}, row.provenance, row.revision, row.revision)


def link_of(row: HistoryRow) -> LinkRow:
    from_key, _, to_key = row.key.partition("->")
    return LinkRow(row.name, from_key, to_key, row.after or {}, row.provenance, row.revision)


__all__ = ["BranchView", "OverlayView", "link_of", "open_view", "record_of"]
