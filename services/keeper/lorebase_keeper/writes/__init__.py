"""The write path under every Revision: change sets and their checks, derived values, the state of
a branch inside a commit group, commits grouped per branch, and what a write answers.

Operations, imports, source syncs and merges build their changes here and commit through the
process's `Committer`; memory commands share its group queue and its `Outcome`. Nothing here needs
the Runtime: the Runtime holds the committer."""

from lorebase_keeper.writes.changes import LARGE, Change, ChangeSet, diff_change, link_key
from lorebase_keeper.writes.commit import Committer, remember, schema_changed
from lorebase_keeper.writes.derive import materialize
from lorebase_keeper.writes.group_queue import GroupQueue, Queued
from lorebase_keeper.writes.kept_counts import CountsMoved, KeptCounts, Where
from lorebase_keeper.writes.moves import BranchMoves
from lorebase_keeper.writes.outcome import (
    Outcome,
    check_expected_head,
    idempotency_key,
    replay,
    request_digest,
)
from lorebase_keeper.writes.pace import Pacer, sorted_paced
from lorebase_keeper.writes.plan import (
    ChangeDigest,
    ChangeSummary,
    Committed,
    Head,
    Origin,
    RevisionPlan,
    SchemaVersion,
    changes_digest,
    element,
    plan_commit,
    plan_revision,
    plan_rows,
    revision_id,
    summarise,
)
from lorebase_keeper.writes.planner_statistics import ANALYZE_AFTER, PlannerStatistics
from lorebase_keeper.writes.states import ChangeState, LinkState, RecordState
from lorebase_keeper.writes.view import BranchView, OverlayView, link_of, open_view, record_of

__all__ = [
    "LARGE",
    "ANALYZE_AFTER",
    "BranchMoves",
    "BranchView",
    "Change",
    "ChangeDigest",
    "ChangeSet",
    "ChangeSummary",
    "ChangeState",
    "Committed",
    "Committer",
    "CountsMoved",
    "GroupQueue",
    "Head",
    "KeptCounts",
    "LinkState",
    "Origin",
    "Outcome",
    "Pacer",
    "OverlayView",
    "PlannerStatistics",
    "Queued",
    "RecordState",
    "RevisionPlan",
    "SchemaVersion",
    "changes_digest",
    "check_expected_head",
    "diff_change",
    "element",
    "idempotency_key",
    "link_key",
    "link_of",
    "materialize",
    "open_view",
    "plan_commit",
    "plan_revision",
    "plan_rows",
    "record_of",
    "remember",
    "replay",
    "request_digest",
    "revision_id",
    "schema_changed",
    "sorted_paced",
    "summarise",
    "Where",
]
