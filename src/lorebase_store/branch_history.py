"""What a branch's history is made of: Revisions (`RevisionRow`), their changes of Records and Links
(`HistoryRow`, one row per changed Record or Link per Revision) and a first-parent history
(`BranchChain`).

A branch's first-parent history is its own Revisions plus, for a branch forked from another, the
history of that branch up to the fork point. The Txn mixins of lorebase_store.revisions,
lorebase_store.entity_history and lorebase_store.snapshots read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_

from lorebase_store.stored_form import ALL, expand


@dataclass(frozen=True)
class RevisionRow:
    id: str
    branch: str
    generation: int
    parents: list[str]
    author: str
    message: str
    origin: dict[str, Any]
    stats: dict[str, Any]
    created_at: datetime
    # The schema version it was committed under (schema_versions); None: the creation schema.
    schema_digest: str | None = None


@dataclass(frozen=True)
class HistoryRow:
    """One change of a Record (entity 'record', name = Kind) or Link (entity 'link', name = Relation)."""

    entity: str
    name: str
    key: str
    change: str
    attributes: list[str]
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    provenance: dict[str, Any]  # whole, whatever its stored form (stored_form.py)
    revision: str = ""
    generation: int = 0
    branch: str = ""
    seq: int = 0

    def __post_init__(self) -> None:
        if ALL in self.provenance:
            object.__setattr__(self, "provenance", expand(self.after, self.provenance))


# The provenance note of a history row that moved a Record or Link to a renamed Kind or Relation:
# the name it had before (lorebase_keeper.schema_changes.migrate).
RENAMED_FROM = "$renamed_from"


@dataclass(frozen=True)
class BranchChain:
    """A first-parent history as segments (branch, first generation, last generation or None for
    the branch's open end), newest first. Generations only grow along a history, so a position on it
    is its generation, and "up to a Revision" is "generation at most the Revision's"."""

    segments: tuple[tuple[str, int, int | None], ...] = field(default_factory=tuple)

    def clause(self, table: Any, upto: tuple[str, int] | None = None) -> Any:
        """SQL condition selecting the rows of `table` on this history (up to a Revision's position)."""
        parts = []
        for branch, low, high in self.segments:
            if upto is not None:
                high = upto[1] if high is None else min(high, upto[1])
            if high is not None and high < low:
                continue
            cond = table.c.branch == branch
            if low > 0:
                cond = and_(cond, table.c.generation >= low)
            if high is not None:
                cond = and_(cond, table.c.generation <= high)
            parts.append(cond)
        return or_(*parts) if parts else table.c.branch.is_(None)

    def holds(self, branch: str, generation: int) -> bool:
        """Whether the Revision at (branch, generation) is on this history."""
        return any(
            name == branch and low <= generation and (high is None or generation <= high)
            for name, low, high in self.segments
        )

    def upto(self, generation: int) -> BranchChain:
        """This history cut at a generation (the chain of a branch forked there)."""
        kept = []
        for name, low, high in self.segments:
            if low > generation:
                continue
            kept.append((name, low, generation if high is None else min(high, generation)))
        return BranchChain(tuple(kept))

    def document(self) -> list[list[Any]]:
        return [list(segment) for segment in self.segments]

    @classmethod
    def from_document(cls, doc: list[list[Any]]) -> BranchChain:
        return cls(tuple((str(b), int(lo), None if hi is None else int(hi)) for b, lo, hi in doc))


def revision_row(row: Any) -> RevisionRow:
    return RevisionRow(
        row.id,
        row.branch,
        row.generation,
        row.parents,
        row.author,
        row.message,
        row.origin,
        row.stats,
        row.created_at,
        row.schema_digest,
    )


def history_row(row: Any) -> HistoryRow:
    return HistoryRow(
        entity=row.entity,
        name=row.name,
        key=row.key,
        change=row.change,
        attributes=row.attributes,
        before=row.before,
        after=row.after,
        provenance=row.provenance,
        revision=row.revision,
        generation=row.generation,
        branch=row.branch,
        seq=row.seq,
    )


__all__ = ["RENAMED_FROM", "BranchChain", "HistoryRow", "RevisionRow", "history_row", "revision_row"]
