"""What a commit tells the value counts resolve keeps per process (reads/value_counts.py) when it
knows more than its history rows would: a schema change set's commit moves a million Records, and
its changes' counts were taken from its staged rows before the head moved (schema_changes/counts.py),
so the first resolve at the new head takes them as they are instead of counting the Kind again.

The reads own the counts; a change set reaches them only through `KeptCounts` (the Runtime's
`kept_counts`, set where keeper's servicer is made): the two sit side by side in keeper's layers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from lorebase_store import BranchChain, Txn

Where = tuple[str, str]  # (Kind, Attribute)


@dataclass(frozen=True)
class CountsMoved:
    """A commit on a branch's first-parent chain `chain` (its segments) from generation `before` to
    `after`: the (Kind, Attribute) its Record changes name (`named`), and for some of them their
    distinct values with their Records at `after` (`counts`: exactly what a count there gives)."""

    domain_id: int
    branch: str
    incarnation: tuple[Any, ...]  # the Domain's and the branch's creation times
    chain: tuple[tuple[str, int, int | None], ...]
    before: int
    after: int
    named: frozenset[Where]
    counts: Mapping[Where, Mapping[str, int]] = field(default_factory=dict)


class KeptCounts(Protocol):
    async def at_head(
        self,
        txn: Txn,
        domain_id: int,
        branch: str,
        chain: BranchChain,
        generation: int,
        attributes: dict[Where, int],
        incarnation: tuple[Any, ...],
    ) -> dict[Where, dict[str, int] | None]:
        """The kept counts of these Attributes (-> limit) at the head `txn` reads (chain, generation),
        brought there (or counted) as a resolve would; None: more distinct values than kept."""
        ...

    def landing(self, moved: CountsMoved) -> None:
        """The commit `moved` describes is about to land (its transaction not committed yet): a read
        at its head waits for `committed` or `abandoned` rather than count its Attributes again."""
        ...

    def committed(self, moved: CountsMoved) -> None:
        """The commit `moved` describes landed: move the kept counts to its head."""
        ...

    def abandoned(self, moved: CountsMoved) -> None:
        """The commit `moved` describes did not land (or answered without committing)."""
        ...


__all__ = ["CountsMoved", "KeptCounts", "Where"]
