"""A merge attempt: what it is asked (`MergeRequest`), the Conflicts it finds (`Found`), what it
answers (`MergeResult`), and the agent task events it writes when it merges.

A Conflict's fingerprint names it across attempts: a resolution stored under it (proposals/conflicts.py)
applies when the next attempt finds the same Conflict again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.ids import iso
from lorebase_keeper.domains import Domain
from lorebase_store import BranchRow, CommitRows, RevisionRow, Txn


@dataclass
class Found:
    """A Conflict found by a merge attempt."""

    code: str
    entity: str
    name: str
    key: str
    attribute: str | None
    ours: Any
    theirs: Any
    base: Any = None
    # The resolutions a Conflict of a schema migration takes, when the merge that found it can apply
    # them (kept with it, not in its fingerprint: proposals/conflicts.py `choices`).
    takes: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> str:
        return sha256_hex(
            canonical_json(
                [self.code, self.entity, self.name, self.key, self.attribute, self.ours, self.theirs]
            )
        )[:32]

    def row(self, conflict_id: str) -> dict[str, Any]:
        return {
            "id": conflict_id,
            "fingerprint": self.fingerprint,
            "code": self.code,
            "entity": self.entity,
            "name": self.name,
            "key": self.key,
            "attribute": self.attribute,
            "details": {
                "base": self.base,
                "ours": self.ours,
                "theirs": self.theirs,
                **({"takes": list(self.takes)} if self.takes else {}),
            },
        }


@dataclass
class MergeResult:
    result: str  # fast_forward | merge | conflicts
    head: str | None  # the target's head after the attempt
    generation: int
    conflicts: list[Found]
    resolved: int
    changes: int
    # Values the source's change sets cleared on the target (on_invalid: clear): they block nothing.
    cleared: list[Found] = field(default_factory=list)
    # False when the attempt stopped before it knew what they clear (a schema Conflict, or a value
    # a change set refuses, stopped it first): the values earlier attempts found cleared then stay
    # listed. True, `cleared` is all of them: a value an earlier attempt found cleared that is not
    # in it no longer is (proposals/attempts.py drops its Conflict).
    cleared_known: bool = True


@dataclass(frozen=True)
class MergeRequest:
    domain: Domain
    source: str
    target: str
    author: str
    message: str
    proposal: str | None
    at: datetime
    # The resolutions of Conflicts resolved earlier, by fingerprint.
    resolutions: dict[str, dict[str, Any]]
    # Events to write in the merge transaction (an agent task's deferred operation events).
    events: list[dict[str, Any]] = field(default_factory=list)
    # Commits the source's change sets the target has not (Revision, changes; oldest first) on the
    # target, in the merge's transaction, and answers the Conflicts of the target's values that do
    # not fit them (lorebase_keeper.schema_changes.catch_up). None: the merge answers 409
    # schema-conflict with the changes to apply to the target first.
    catch_up: CatchUp | None = None
    # The branch the merge writes when it is not `target` itself: a stand-in for the target, an
    # overlay forked from its head in the attempt's savepoint, so that an attempt that is never
    # kept does not hold the target while it migrates its data (proposals/attempts.py). The merge
    # base, messages and Conflicts still name the target.
    into: str | None = None
    # Schema elements whose Conflict a resolution settled before the catch-up: after it, the
    # target's version of each is the one to keep (merge/schema_merge.py, schema_conflicts).
    settled: frozenset[str] = frozenset()

    @property
    def written(self) -> str:
        """The branch the merge writes: the stand-in, or the target."""
        return self.into or self.target


CatchUp = Callable[
    [Txn, MergeRequest, BranchRow, list[tuple[RevisionRow, list[Any]]]],
    Awaitable[tuple[list[Found], list[Found]]],
]


def add_task_events(
    rows: CommitRows, request: MergeRequest, head: str | None, generation: int, *, fast_forward: bool
) -> None:
    """An agent task's operation events, written once, when its Proposal merges. `revisions` names
    the Revisions that brought the execution to the target, as a direct execution's names the one
    it committed: after a fast-forward the execution's own Revision (now on the target's history),
    after a merge the merge Revision."""
    for doc in request.events:
        own = [r for r in doc.get("revisions") or [] if isinstance(r, str)]
        event = {
            **doc,
            "branch": request.target,
            "head": head,
            "revisions": own if fast_forward else ([head] if head else []),
            "source_branch": request.source,
            "proposal": request.proposal,
        }
        rows.events.append(
            {"type": doc["type"], "revision": head, "event": event, "created_at": iso(request.at)}
        )


__all__ = ["Found", "MergeRequest", "MergeResult", "add_task_events"]
