"""What a change set works on: the Records and Links of its branch that it has read or edited, each
with its stored row (`before`) and its values now (`values`; None: deleted), read in batches through
the branch's view.

Derived Attributes are recomputed on this state (derive.py); the edits and their checks are the
change set's (changes.py), which is this state with its issues.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lorebase.schema import DomainSchema
from lorebase_keeper.writes.pace import Pacer
from lorebase_keeper.writes.view import BranchView
from lorebase_store import LinkRow, RecordRow


@dataclass
class RecordState:
    kind: str
    key: str
    before: RecordRow | None
    values: dict[str, Any] | None  # None: deleted


@dataclass
class LinkState:
    relation: str
    from_key: str
    to_key: str
    before: LinkRow | None
    values: dict[str, Any] | None


@dataclass
class ChangeState:
    """The Records (by Kind and key) and Links (by Relation, from and to key) read or edited so far,
    over the branch's view; `preload_*` reads those not held yet, in batches. The work over all of
    them (derive.py, changes.py) pauses as `pacer` says (pace.py): a large change set's seconds of
    CPU are not one stretch of keeper's event loop."""

    view: BranchView
    schema: DomainSchema
    records: dict[tuple[str, str], RecordState] = field(default_factory=dict)
    links: dict[tuple[str, str, str], LinkState] = field(default_factory=dict)
    pacer: Pacer = field(default_factory=Pacer)

    async def preload_records(self, kind: str, keys: list[str]) -> None:
        missing = [k for k in dict.fromkeys(keys) if (kind, k) not in self.records]
        for start in range(0, len(missing), 50000):
            chunk = missing[start : start + 50000]
            found = await self.view.get_records(kind, chunk)
            for key in chunk:
                row = found.get(key)
                self.records[(kind, key)] = RecordState(
                    kind, key, row, None if row is None else dict(row.values)
                )
                if self.pacer.due():
                    await self.pacer.step()

    async def preload_links(self, relation: str, pairs: list[tuple[str, str]]) -> None:
        missing = [p for p in dict.fromkeys(pairs) if (relation, *p) not in self.links]
        for start in range(0, len(missing), 50000):
            chunk = missing[start : start + 50000]
            found = await self.view.get_links(relation, chunk)
            for pair in chunk:
                row = found.get(pair)
                self.links[(relation, *pair)] = LinkState(
                    relation, pair[0], pair[1], row, None if row is None else dict(row.values)
                )
                if self.pacer.due():
                    await self.pacer.step()


__all__ = ["ChangeState", "LinkState", "RecordState"]
