"""Merging one branch into another (docs/branches.md): a fast-forward when the target has not moved,
else a three-way merge at Attribute level against the merge base, with the Conflicts it finds and
the `$via` provenance of what it brings over, in one transaction that locks both branches.

It writes through writes/ and needs no Runtime: Proposals and agent tasks call `merge` inside their
own transactions."""

from lorebase_keeper.merge.attempt import Found, MergeRequest, MergeResult, add_task_events
from lorebase_keeper.merge.base import (
    Ref,
    Side,
    current_values,
    find_base,
    lock_pair,
    prefetch,
    schema_changes_to_bring,
    touched_kinds,
)
from lorebase_keeper.merge.conflicts import (
    link_end_conflicts,
    required_value_conflicts,
    unique_value_conflicts,
)
from lorebase_keeper.merge.fast_forward import fast_forward
from lorebase_keeper.merge.merges import change_sets_to_catch_up, merge
from lorebase_keeper.merge.provenance import via_note, via_provenance
from lorebase_keeper.merge.three_way_merge import three_way_merge

__all__ = [
    "Found",
    "MergeRequest",
    "MergeResult",
    "Ref",
    "Side",
    "add_task_events",
    "change_sets_to_catch_up",
    "current_values",
    "fast_forward",
    "find_base",
    "link_end_conflicts",
    "lock_pair",
    "merge",
    "schema_changes_to_bring",
    "prefetch",
    "required_value_conflicts",
    "three_way_merge",
    "touched_kinds",
    "unique_value_conflicts",
    "via_note",
    "via_provenance",
]
