"""Proposals, their reviews, merge attempts and Conflicts, and where the last merge of a branch stood."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import ColumnElement, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.tables import branch_merges, conflicts, merge_attempts, proposal_reviews, proposals
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class ProposalRow:
    id: str
    domain_id: int
    source_ref: str
    target_ref: str
    title: str
    description: str
    intent: str | None
    task: str | None
    status: str  # open | merged | closed
    author: str
    review_policy: bool  # an Operation's review policy asked for the review: it needs an approval
    executions: list[dict[str, Any]]
    kinds: list[str]  # the Kinds its changes touch (Relations count their two Kinds)
    merged_revision: str | None
    merged_by: str | None
    merged_at: datetime | None
    closed_by: str | None
    closed_at: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ReviewRow:
    reviewer: str
    decision: str  # approve | request_changes
    comment: str | None
    created_at: datetime


@dataclass(frozen=True)
class AttemptRow:
    id: str
    result: str  # fast_forward | merge | conflicts
    counts: dict[str, int]
    open_conflicts: int
    resolved_conflicts: int
    revision: str | None
    by: str
    created_at: datetime
    source_head: str | None = None  # the heads it merged (null for attempts before migration 0013)
    target_head: str | None = None


@dataclass(frozen=True)
class ConflictRow:
    id: str
    proposal_id: str
    fingerprint: str
    code: str
    entity: str
    name: str
    key: str
    attribute: str | None
    details: dict[str, Any]
    status: str  # open | resolved
    resolution: dict[str, Any] | None
    resolved_by: str | None
    resolved_at: datetime | None
    created_at: datetime


def _proposal(row: Any) -> ProposalRow:
    return ProposalRow(**{name: getattr(row, name) for name in ProposalRow.__dataclass_fields__})


def _conflict(row: Any) -> ConflictRow:
    return ConflictRow(**{name: getattr(row, name) for name in ConflictRow.__dataclass_fields__})


def _attempt(row: Any) -> AttemptRow:
    return AttemptRow(**{name: getattr(row, name) for name in AttemptRow.__dataclass_fields__})


_INSERT_OPEN = text(
    """
INSERT INTO proposals (id, domain_id, source_ref, target_ref, title, description, intent, task, status,
                       author, review_policy, executions, kinds, created_at, updated_at)
VALUES (:id, :domain_id, :source_ref, :target_ref, :title, :description, :intent, :task, 'open',
        :author, :review_policy, CAST(:executions AS jsonb), CAST(:kinds AS jsonb), :at, :at)
ON CONFLICT (domain_id, source_ref, target_ref) WHERE status = 'open' DO NOTHING
"""
)


_ANY_OPEN_ON = """
SELECT EXISTS (SELECT 1 FROM proposals WHERE domain_id = $1 AND status = 'open' AND source_ref = $2)
    OR EXISTS (SELECT 1 FROM proposals WHERE domain_id = $1 AND status = 'open' AND target_ref = $2)
"""


class ProposalsTxn(TxnBase):
    async def insert_proposal(
        self,
        *,
        id: str,
        domain_id: int,
        source_ref: str,
        target_ref: str,
        title: str,
        description: str,
        intent: str | None,
        task: str | None,
        author: str,
        review_policy: bool,
        executions: list[dict[str, Any]],
        kinds: list[str],
        at: datetime,
    ) -> bool:
        """Open a Proposal; False when one is open for this source and target already."""
        result = await self.conn.execute(
            _INSERT_OPEN,
            {
                "id": id,
                "domain_id": domain_id,
                "source_ref": source_ref,
                "target_ref": target_ref,
                "title": title,
                "description": description,
                "intent": intent,
                "task": task,
                "author": author,
                "review_policy": review_policy,
                "executions": orjson.dumps(executions).decode(),
                "kinds": orjson.dumps(kinds).decode(),
                "at": at,
            },
        )
        return bool(result.rowcount)

    async def get_proposal(
        self, domain_id: int, proposal_id: str, *, for_update: bool = False
    ) -> ProposalRow | None:
        stmt = select(proposals).where(proposals.c.domain_id == domain_id, proposals.c.id == proposal_id)
        if for_update:
            stmt = stmt.with_for_update()
        row = (await self.conn.execute(stmt)).first()
        return None if row is None else _proposal(row)

    async def open_proposal(self, domain_id: int, source: str, target: str) -> ProposalRow | None:
        row = (
            await self.conn.execute(
                select(proposals).where(
                    proposals.c.domain_id == domain_id,
                    proposals.c.source_ref == source,
                    proposals.c.target_ref == target,
                    proposals.c.status == "open",
                )
            )
        ).first()
        return None if row is None else _proposal(row)

    async def open_proposal_sources(self) -> list[tuple[int, str]]:
        """(Domain id, source branch) of every open Proposal, each pair once: what a keeper that
        starts re-checks, since checks reported before it stopped may not have run."""
        rows = await self.conn.execute(
            select(proposals.c.domain_id, proposals.c.source_ref)
            .where(proposals.c.status == "open")
            .distinct()
            .order_by(proposals.c.domain_id, proposals.c.source_ref)
        )
        return [(row.domain_id, row.source_ref) for row in rows]

    async def any_open_proposal_on(self, domain_id: int, branch: str) -> bool:
        """Whether an open Proposal has `branch` as its source or target: one indexed statement
        through the driver (every commit asks it, and the answer is nearly always no)."""
        driver = await self.driver()
        return bool(await driver.fetchval(_ANY_OPEN_ON, domain_id, branch))

    async def open_proposals_on(self, domain_id: int, branch: str) -> list[ProposalRow]:
        """The open Proposals whose source or target is `branch`."""
        rows = await self.conn.execute(
            select(proposals)
            .where(
                proposals.c.domain_id == domain_id,
                proposals.c.status == "open",
                (proposals.c.source_ref == branch) | (proposals.c.target_ref == branch),
            )
            .order_by(proposals.c.id)
        )
        return [_proposal(row) for row in rows]

    async def proposals_from(self, domain_id: int, source: str, *, status: str = "open") -> list[ProposalRow]:
        rows = await self.conn.execute(
            select(proposals)
            .where(
                proposals.c.domain_id == domain_id,
                proposals.c.source_ref == source,
                proposals.c.status == status,
            )
            .order_by(proposals.c.id)
        )
        return [_proposal(row) for row in rows]

    async def proposal_with_invocation(self, domain_id: int, invocation_id: str) -> ProposalRow | None:
        row = (
            await self.conn.execute(
                select(proposals)
                .where(
                    proposals.c.domain_id == domain_id,
                    proposals.c.executions.contains([{"invocation_id": invocation_id}]),
                )
                .order_by(proposals.c.id.desc())
                .limit(1)
            )
        ).first()
        return None if row is None else _proposal(row)

    async def list_proposals(
        self, domain_id: int, *, status: str | None, after: str | None, limit: int
    ) -> list[ProposalRow]:
        cond = [proposals.c.domain_id == domain_id]
        if status is not None:
            cond.append(proposals.c.status == status)
        if after is not None:
            cond.append(proposals.c.id < after)
        rows = await self.conn.execute(
            select(proposals).where(*cond).order_by(proposals.c.id.desc()).limit(limit)
        )
        return [_proposal(row) for row in rows]

    async def update_proposal(self, proposal_id: str, **values: Any) -> None:
        await self.conn.execute(update(proposals).where(proposals.c.id == proposal_id).values(**values))

    async def add_review(
        self, proposal_id: str, reviewer: str, decision: str, comment: str | None, at: datetime
    ) -> None:
        await self.conn.execute(
            proposal_reviews.insert().values(
                proposal_id=proposal_id, reviewer=reviewer, decision=decision, comment=comment, created_at=at
            )
        )

    async def reviews(self, proposal_id: str) -> list[ReviewRow]:
        rows = await self.conn.execute(
            select(proposal_reviews)
            .where(proposal_reviews.c.proposal_id == proposal_id)
            .order_by(proposal_reviews.c.seq)
        )
        return [ReviewRow(r.reviewer, r.decision, r.comment, r.created_at) for r in rows]

    async def proposals_bringing(
        self, domain_id: int, target: str, revisions: list[tuple[str, str, datetime]]
    ) -> dict[str, ProposalRow]:
        """For Revisions made on other branches (id, branch, time): the merged Proposal into `target`
        that brought each, i.e. the first one from that branch merged after the Revision was made."""
        found: dict[str, ProposalRow] = {}
        for revision_id, branch, at in revisions:
            source = branch.split("~", 1)[0]  # a deleted branch's Revisions carry an archive name
            row = (
                await self.conn.execute(
                    select(proposals)
                    .where(
                        proposals.c.domain_id == domain_id,
                        proposals.c.source_ref == source,
                        proposals.c.target_ref == target,
                        proposals.c.status == "merged",
                        proposals.c.merged_at >= at,
                    )
                    .order_by(proposals.c.merged_at)
                    .limit(1)
                )
            ).first()
            if row is not None:
                found[revision_id] = _proposal(row)
        return found

    async def insert_attempt(self, proposal_id: str, attempt: AttemptRow) -> None:
        await self.conn.execute(
            merge_attempts.insert().values(
                id=attempt.id,
                proposal_id=proposal_id,
                result=attempt.result,
                counts=attempt.counts,
                open_conflicts=attempt.open_conflicts,
                resolved_conflicts=attempt.resolved_conflicts,
                revision=attempt.revision,
                by=attempt.by,
                created_at=attempt.created_at,
                source_head=attempt.source_head,
                target_head=attempt.target_head,
            )
        )

    async def latest_attempt(self, proposal_id: str) -> AttemptRow | None:
        row = (
            await self.conn.execute(
                select(merge_attempts)
                .where(merge_attempts.c.proposal_id == proposal_id)
                .order_by(merge_attempts.c.id.desc())
                .limit(1)
            )
        ).first()
        return None if row is None else _attempt(row)

    async def conflicts_of(self, proposal_id: str) -> list[ConflictRow]:
        rows = await self.conn.execute(
            select(conflicts).where(conflicts.c.proposal_id == proposal_id).order_by(conflicts.c.id)
        )
        return [_conflict(row) for row in rows]

    async def get_conflict(
        self, proposal_id: str, conflict_id: str, *, for_update: bool = False
    ) -> ConflictRow | None:
        stmt = select(conflicts).where(conflicts.c.proposal_id == proposal_id, conflicts.c.id == conflict_id)
        if for_update:
            stmt = stmt.with_for_update()
        row = (await self.conn.execute(stmt)).first()
        return None if row is None else _conflict(row)

    async def add_conflicts(
        self,
        proposal_id: str,
        rows: list[dict[str, Any]],
        at: datetime,
        *,
        resolution: dict[str, Any] | None = None,
    ) -> None:
        """Store newly found Conflicts, open (or resolved with `resolution`: found resolved, as a
        value a change set cleared); one already stored (same fingerprint) keeps its state."""
        if not rows:
            return
        state = (
            {"status": "open"}
            if resolution is None
            else {"status": "resolved", "resolution": resolution, "resolved_at": at}
        )
        await self.conn.execute(
            pg_insert(conflicts)
            .values([{**row, "proposal_id": proposal_id, **state, "created_at": at} for row in rows])
            .on_conflict_do_nothing(index_elements=["proposal_id", "fingerprint"])
        )

    async def drop_open_conflicts(self, proposal_id: str, keep: list[str]) -> None:
        """Forget open Conflicts that the latest attempt no longer finds."""
        await self._drop_conflicts(proposal_id, keep, conflicts.c.status == "open")

    async def drop_conflicts_of_code(self, proposal_id: str, code: str, keep: list[str]) -> None:
        """Forget Conflicts with `code` that the latest attempt no longer finds, whatever their state:
        for those found resolved (`schema_cleared`, a value a change set cleared), which no one
        resolves and which say only what the attempt found."""
        await self._drop_conflicts(proposal_id, keep, conflicts.c.code == code)

    async def _drop_conflicts(self, proposal_id: str, keep: list[str], which: ColumnElement[bool]) -> None:
        await self.conn.execute(
            conflicts.delete().where(
                conflicts.c.proposal_id == proposal_id,
                which,
                conflicts.c.fingerprint.not_in(keep),
            )
        )

    async def resolve_conflict(
        self, conflict_id: str, resolution: dict[str, Any], by: str, at: datetime
    ) -> None:
        await self.conn.execute(
            update(conflicts)
            .where(conflicts.c.id == conflict_id)
            .values(status="resolved", resolution=resolution, resolved_by=by, resolved_at=at)
        )

    async def last_merge(self, domain_id: int, source: str, target: str) -> tuple[int, int] | None:
        """(source generation, target generation) of the last merge of `source` into `target`."""
        row = (
            await self.conn.execute(
                select(branch_merges.c.source_generation, branch_merges.c.target_generation).where(
                    branch_merges.c.domain_id == domain_id,
                    branch_merges.c.source == source,
                    branch_merges.c.target == target,
                )
            )
        ).first()
        return None if row is None else (int(row[0]), int(row[1]))

    async def set_last_merge(
        self,
        domain_id: int,
        source: str,
        target: str,
        source_generation: int,
        target_generation: int,
        at: datetime,
    ) -> None:
        stmt = pg_insert(branch_merges).values(
            domain_id=domain_id,
            source=source,
            target=target,
            source_generation=source_generation,
            target_generation=target_generation,
            merged_at=at,
        )
        await self.conn.execute(
            stmt.on_conflict_do_update(
                index_elements=["domain_id", "source", "target"],
                set_={
                    "source_generation": stmt.excluded.source_generation,
                    "target_generation": stmt.excluded.target_generation,
                    "merged_at": stmt.excluded.merged_at,
                },
            )
        )


__all__ = ["AttemptRow", "ConflictRow", "ProposalRow", "ProposalsTxn", "ReviewRow"]
