"""The vault (migration 0014): the values of vault Attributes, sealed, each under its ref; the
Domains' ref keys; and the erasures that deleted values.

Every other table holds `{"$vault": <ref>}` where a vault value would be. An entry is written once
per ref (the ref is deterministic for its Domain, Record, Attribute and value), so the same value on
many branches and in many Revisions is one row, and deleting its sealed bytes erases it everywhere.
Writing an erased ref again (the same value written after its erasure) stores it anew: it is a new
fact about the Record, and the Revisions naming the ref show it again (docs/erasure.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Text, and_, any_, cast, delete, literal, select, tuple_, union, update
from sqlalchemy.dialects.postgresql import ARRAY, insert

from lorebase_store.tables import (
    erasures,
    history,
    records,
    resolve_misses,
    suggestions,
    trace_entries,
    vault_entries,
    vault_keys,
)
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class VaultEntry:
    ref: str
    domain_id: int
    kind: str
    record_key: str
    attribute: str
    sealed: str | None  # None: erased
    erased_at: datetime | None


@dataclass(frozen=True)
class ErasureRow:
    id: str
    seq: int
    records: list[str]
    attributes: list[str]
    refs: int
    reason: str
    created_by: str
    created_at: datetime


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _time(value: str | datetime) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value.replace("Z", "+00:00"))


def _erasure(row: Any) -> ErasureRow:
    return ErasureRow(
        row.id, row.seq, row.records, row.attributes, row.refs, row.reason, row.created_by, row.created_at
    )


class VaultTxn(TxnBase):
    async def vault_key(self, domain_id: int, sealed: str, at: datetime) -> str:
        """The Domain's sealed ref key: the one stored, else `sealed` (stored now)."""
        await self.conn.execute(
            insert(vault_keys)
            .values(domain_id=domain_id, sealed=sealed, created_at=at)
            .on_conflict_do_nothing(index_elements=["domain_id"])
        )
        return str(
            await self.conn.scalar(select(vault_keys.c.sealed).where(vault_keys.c.domain_id == domain_id))
        )

    async def write_vault_entries(self, domain_id: int, rows: list[dict[str, Any]]) -> None:
        """Store the entries a commit names ({ref, kind, record_key, attribute, sealed, created_at});
        one stored already stays, an erased one takes the value again."""
        if not rows:
            return
        unique = {row["ref"]: row for row in rows}
        statement = insert(vault_entries).values(
            [
                {**row, "domain_id": domain_id, "created_at": _time(row["created_at"])}
                for row in unique.values()
            ]
        )
        await self.conn.execute(
            statement.on_conflict_do_update(
                index_elements=["ref"],
                set_={"sealed": statement.excluded.sealed, "erased_at": None, "erasure_id": None},
                where=vault_entries.c.sealed.is_(None),
            )
        )

    async def get_vault_entries(self, refs: list[str]) -> dict[str, VaultEntry]:
        if not refs:
            return {}
        rows = await self.conn.execute(
            select(vault_entries).where(vault_entries.c.ref.in_(sorted(set(refs))))
        )
        return {
            row.ref: VaultEntry(
                row.ref, row.domain_id, row.kind, row.record_key, row.attribute, row.sealed, row.erased_at
            )
            for row in rows
        }

    async def erase_vault_entries(
        self, domain_id: int, records: list[tuple[str, str]], *, erasure: dict[str, Any]
    ) -> list[str]:
        """Delete the values of every entry of `records` (Kind, key) not erased yet, under a new
        erasure row (`erasure`: id, reason, created_by, created_at, records); the attributes erased."""
        await self.conn.execute(
            insert(erasures).values(
                domain_id=domain_id,
                attributes=[],
                refs=0,
                **{**erasure, "created_at": _time(erasure["created_at"])},
            )
        )
        erased = await self.conn.execute(
            update(vault_entries)
            .where(
                and_(
                    vault_entries.c.domain_id == domain_id,
                    tuple_(vault_entries.c.kind, vault_entries.c.record_key).in_(records),
                    vault_entries.c.sealed.is_not(None),
                )
            )
            .values(sealed=None, erased_at=_time(erasure["created_at"]), erasure_id=erasure["id"])
            .returning(vault_entries.c.kind, vault_entries.c.attribute)
        )
        rows = list(erased)
        attributes = sorted({f"{row.kind}.{row.attribute}" for row in rows})
        count = len(rows)
        await self.conn.execute(
            update(erasures).where(erasures.c.id == erasure["id"]).values(attributes=attributes, refs=count)
        )
        return attributes

    async def records_known(self, domain_id: int, refs: list[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which (Kind, key) ever existed in the Domain, on any branch (their history)."""
        if not refs:
            return set()
        rows = await self.conn.execute(
            select(history.c.name, history.c.key)
            .where(
                history.c.domain_id == domain_id,
                history.c.entity == "record",
                tuple_(history.c.name, history.c.key).in_(refs),
            )
            .distinct()
        )
        return {(row.name, row.key) for row in rows}

    async def subject_keys(self, domain_id: int, kind: str, attribute: str, value: Any) -> list[str]:
        """Keys of the Records of `kind` whose `attribute` held `value` (canonical), on any branch,
        now or in their history."""
        current = select(records.c.key).where(
            records.c.domain_id == domain_id,
            records.c.kind == kind,
            records.c["values"].contains({attribute: value}),
        )
        past = select(history.c.key).where(
            history.c.domain_id == domain_id,
            history.c.entity == "record",
            history.c.name == kind,
            history.c.after.contains({attribute: value}),
        )
        rows = await self.conn.execute(union(current, past))
        return sorted(row.key for row in rows)

    async def vault_values_of(self, domain_id: int, kind: str, attribute: str) -> list[tuple[str, str]]:
        """(record key, sealed value) of the entries of one vault Attribute not erased yet."""
        rows = await self.conn.execute(
            select(vault_entries.c.record_key, vault_entries.c.sealed).where(
                vault_entries.c.domain_id == domain_id,
                vault_entries.c.kind == kind,
                vault_entries.c.attribute == attribute,
                vault_entries.c.sealed.is_not(None),
            )
        )
        return [(row.record_key, row.sealed) for row in rows]

    async def sealed_values_of(self, domain_id: int, refs: list[tuple[str, str]]) -> list[str]:
        """The sealed values, not erased yet, of the entries of these (Kind, key)."""
        if not refs:
            return []
        rows = await self.conn.execute(
            select(vault_entries.c.sealed).where(
                vault_entries.c.domain_id == domain_id,
                tuple_(vault_entries.c.kind, vault_entries.c.record_key).in_(refs),
                vault_entries.c.sealed.is_not(None),
            )
        )
        return [row.sealed for row in rows]

    async def forget_phrases(self, domain_id: int, domain: str, texts: list[str]) -> int:
        """Delete what callers typed that holds one of `texts` (case-insensitive): resolve misses,
        the suggestions mined from them, and the agent-trace entries of the Domain. How many rows."""
        if not texts:
            return 0
        patterns = literal(["%" + _like(text) + "%" for text in texts], ARRAY(Text))
        deleted = 0
        for statement in (
            delete(resolve_misses).where(
                resolve_misses.c.domain_id == domain_id, resolve_misses.c.phrase.ilike(any_(patterns))
            ),
            delete(suggestions).where(
                suggestions.c.domain_id == domain_id, suggestions.c.phrase.ilike(any_(patterns))
            ),
            delete(trace_entries).where(
                trace_entries.c.domain == domain, cast(trace_entries.c.details, Text).ilike(any_(patterns))
            ),
        ):
            deleted += (await self.conn.execute(statement)).rowcount or 0
        return deleted

    async def get_erasure(self, erasure_id: str) -> ErasureRow | None:
        row = (await self.conn.execute(select(erasures).where(erasures.c.id == erasure_id))).first()
        return None if row is None else _erasure(row)

    async def list_erasures(self, domain_id: int, *, before: int | None, limit: int) -> list[ErasureRow]:
        """Erasures newest first (by sequence), those older than `before` when given."""
        cond = [erasures.c.domain_id == domain_id]
        if before is not None:
            cond.append(erasures.c.seq < before)
        rows = await self.conn.execute(
            select(erasures).where(*cond).order_by(erasures.c.seq.desc()).limit(limit)
        )
        return [_erasure(row) for row in rows]


__all__ = ["ErasureRow", "VaultEntry", "VaultTxn"]
