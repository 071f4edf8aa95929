"""A change set: edits applied to the state of a branch inside a commit transaction.

Operations and imports both turn their edits into calls on a `ChangeSet`, which reads the current
Records and Links through the transaction, checks what needs the stored state (the Record exists,
keys, required values, unique values, Link ends, cardinality) and yields the changes to commit.
Type-level checks (types, canonical form, patterns, ranges) happen before, on the values alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from lorebase.schema import Kind, Relation
from lorebase_keeper.writes.derive import materialize
from lorebase_keeper.writes.pace import sorted_paced
from lorebase_keeper.writes.states import ChangeState, LinkState, RecordState
from lorebase_store import LinkRow, RecordRow

if TYPE_CHECKING:
    from lorebase_keeper.vault import VaultWriter


# From this many Records and Links on, a change set is large: its changes are listed in slices
# (pace.py), and a commit writes its changed Records by COPY (lorebase_store.staged_rows).
LARGE = 10_000


@dataclass(slots=True)
class Change:
    """What one Revision does to one Record or Link. Not changed once made (not frozen: a frozen
    dataclass's __init__ cost a large import 0.3 s of its 100,000 changes)."""

    entity: str  # record | link
    name: str  # Kind or Relation
    key: str  # Record key, or "from->to" for a Link
    change: str  # created | modified | deleted
    attributes: list[str]
    before: dict[str, Any] | None  # values of the changed Attributes before
    after: dict[str, Any] | None  # every value after (None when deleted)

    @property
    def ref(self) -> str:
        return f"{self.name}/{self.key}"


def link_key(from_key: str, to_key: str) -> str:
    return f"{from_key}->{to_key}"


@dataclass
class ChangeSet(ChangeState):
    """Edits on the Records and Links of a branch, checked against the schema and the stored state;
    `finish` lists the changes to commit."""

    issues: list[dict[str, Any]] = field(default_factory=list)
    # Where each upserted Link came from in the request, for the issues of its ends.
    link_paths: dict[tuple[str, str, str], str] = field(default_factory=dict)
    # The refs of vault values (lorebase_keeper.vault); None for a schema without vault Attributes.
    vault: VaultWriter | None = None

    def issue(self, path: str, rule: str, message: str) -> None:
        self.issues.append({"path": path, "rule": rule, "message": message})

    async def _record(self, kind: str, key: str) -> RecordState:
        if (kind, key) not in self.records:
            await self.preload_records(kind, [key])
        return self.records[(kind, key)]

    # Record edits

    async def upsert_record(self, kind: Kind, key: str, values: dict[str, Any], path: str) -> None:
        await self._record(kind.name, key)
        self.upsert_read_record(kind, key, values, path)

    def upsert_read_record(self, kind: Kind, key: str, values: dict[str, Any], path: str) -> None:
        """upsert_record of a Record read already (preload_records): a load's 100,000 edits without
        a coroutine each."""
        state = self.records[(kind.name, key)]
        if not self._key_matches(kind, key, values, path):
            return
        if kind.vault:  # vault values are stored as their refs, from here on (docs/erasure.md)
            if self.vault is None:
                raise RuntimeError(f"a write of {kind.name} needs its vault writer")
            vault = self.vault
            values = {
                name: vault.ref(kind.name, key, name, value)
                if name in kind.vault and value is not None
                else value
                for name, value in values.items()
            }
        if state.values is None:  # a new Record: nothing to clear
            merged = {name: value for name, value in values.items() if value is not None}
        else:
            merged = dict(state.values)
            for name, value in values.items():
                if value is None:
                    merged.pop(name, None)
                else:
                    merged[name] = value
        if len(kind.key) == 1:
            merged[kind.key[0]] = key
        else:
            merged.update(self._key_values(kind, key))
        state.values = merged

    async def update_record(self, kind: Kind, key: str, values: dict[str, Any], path: str) -> None:
        state = await self._record(kind.name, key)
        if state.values is None:
            self.issue(
                f"{path}.key", "record.not_found", f"there is no {kind.name} with key {key!r} to update"
            )
            return
        await self.upsert_record(kind, key, values, path)

    async def delete_record(self, kind: Kind, key: str, path: str) -> None:
        state = await self._record(kind.name, key)
        if state.values is None:
            self.issue(
                f"{path}.key", "record.not_found", f"there is no {kind.name} with key {key!r} to delete"
            )
            return
        state.values = None
        # A deleted Record takes its Links with it.
        for relation in self.schema.relations.values():
            if relation.from_kind == kind.name:
                rows = await self.view.links_of(relation.name, from_keys=[key])
            elif relation.to_kind == kind.name:
                rows = await self.view.links_of(relation.name, to_keys=[key])
            else:
                continue
            for row in rows:
                link = self.links.setdefault(
                    (relation.name, row.from_key, row.to_key),
                    LinkState(relation.name, row.from_key, row.to_key, row, dict(row.values)),
                )
                link.values = None

    def _key_values(self, kind: Kind, key: str) -> dict[str, Any]:
        if len(kind.key) == 1:
            return {kind.key[0]: key}
        return dict(zip(kind.key, key.split("|"), strict=False))

    def _key_matches(self, kind: Kind, key: str, values: dict[str, Any], path: str) -> bool:
        if len(kind.key) == 1 and key:
            given = values.get(kind.key[0])
            if given is None or given == key:  # the usual case: the key's own value, or none
                return True
        parts = key.split("|") if len(kind.key) > 1 else [key]
        if len(parts) != len(kind.key) or not all(parts):
            self.issue(
                f"{path}.key",
                "record.key",
                f"a {kind.name} key has {len(kind.key)} part(s): {', '.join(kind.key)}",
            )
            return False
        for name, part in zip(kind.key, parts, strict=True):
            if name in values and values[name] is not None and str(values[name]) != part:
                self.issue(
                    f"{path}.values.{name}",
                    "record.key",
                    f"{name} is the key of {kind.name} and cannot change (key {part!r}, value {values[name]!r})",
                )
                return False
        return True

    # Link edits

    async def upsert_link(
        self, relation: Relation, from_key: str, to_key: str, values: dict[str, Any], path: str
    ) -> None:
        if (relation.name, from_key, to_key) not in self.links:
            await self.preload_links(relation.name, [(from_key, to_key)])
        state = self.links[(relation.name, from_key, to_key)]
        merged = dict(state.values or {})
        for name, value in values.items():
            if value is None:
                merged.pop(name, None)
            else:
                merged[name] = value
        state.values = merged
        # Ends and cardinality are checked in finish(), once every Record edit is applied.
        self.link_paths[(relation.name, from_key, to_key)] = path

    async def delete_link(self, relation: Relation, from_key: str, to_key: str, path: str) -> None:
        if (relation.name, from_key, to_key) not in self.links:
            await self.preload_links(relation.name, [(from_key, to_key)])
        state = self.links[(relation.name, from_key, to_key)]
        if state.values is None:
            self.issue(
                path, "link.not_found", f"there is no {relation.name} Link {from_key} -> {to_key} to delete"
            )
            return
        state.values = None

    def stored(self) -> tuple[dict[tuple[str, str], RecordRow], dict[tuple[str, str, str], LinkRow]]:
        """The Records and Links as they were before this change set (what plan_commit builds on)."""
        records = {k: s.before for k, s in self.records.items() if s.before is not None}
        links = {k: s.before for k, s in self.links.items() if s.before is not None}
        return records, links

    # Checks that need every edit applied

    async def finish(self) -> list[Change]:
        """Check what needs the whole change set, materialise derived Attributes, then list the changes
        (empty when issues were found)."""
        await self._check_records()
        await self._check_links()
        if self.issues:
            return []
        await materialize(self)  # derived Attributes of the affected Records (derive.py)
        if len(self.records) + len(self.links) >= LARGE:
            # Seconds of CPU for a schema change over a million Records: in slices (pace.py), so the
            # process serves its other requests meanwhile.
            return await self._changes_paced()
        return self._changes()

    async def _check_records(self) -> None:
        by_kind: dict[str, list[RecordState]] = {}
        for state in self.records.values():
            if state.values is not None and (state.before is None or state.values != state.before.values):
                by_kind.setdefault(state.kind, []).append(state)
        for kind_name, states in by_kind.items():
            kind = self.schema.kinds[kind_name]
            required = [attr for attr in kind.attributes.values() if attr.required]
            for state in states:
                if self.pacer.due():  # a large change set lets the process serve others
                    await self.pacer.step()
                assert state.values is not None
                for attr in required:
                    if state.values.get(attr.name) is None:
                        self.issue(
                            f"{kind_name}/{state.key}.{attr.name}",
                            "value.required",
                            f"{attr.name} is required on {kind_name}; give it a value",
                        )
            for attr in kind.attributes.values():
                if not attr.unique:
                    continue
                await self._check_unique(kind, attr.name, states)

    async def _check_unique(self, kind: Kind, attribute: str, states: list[RecordState]) -> None:
        wanted: dict[Any, list[str]] = {}
        for state in states:
            if self.pacer.due():
                await self.pacer.step()
            assert state.values is not None
            value = state.values.get(attribute)
            before = None if state.before is None else state.before.values.get(attribute)
            if value is not None and value != before:
                wanted.setdefault(value, []).append(state.key)
        if not wanted:
            return
        values = list(wanted)
        taken: dict[Any, list[str]] = {}
        for start in range(0, len(values), 50000):
            taken.update(await self.view.keys_with_value(kind.name, attribute, values[start : start + 50000]))
        for value, keys in wanted.items():
            if self.pacer.due():
                await self.pacer.step()
            if len(keys) == 1 and value not in taken:
                continue  # one holder (a load's usual case: 100,000 values, none stored)
            holders = set(keys)
            for other in taken.get(value, []):
                other_state = self.records.get((kind.name, other))
                if other_state is not None and (
                    other_state.values is None or other_state.values.get(attribute) != value
                ):
                    continue  # changed away in this change set
                holders.add(other)
            if len(holders) > 1:
                for key in keys:
                    others = sorted(holders - {key})
                    self.issue(
                        f"{kind.name}/{key}.{attribute}",
                        "value.unique",
                        f"{attribute} must be unique on {kind.name}; {value!r} is also held by {', '.join(others)}",
                    )

    async def _check_links(self) -> None:
        live = [s for s in self.links.values() if s.values is not None and s.before is None]
        by_relation: dict[str, list[LinkState]] = {}
        for state in live:
            by_relation.setdefault(state.relation, []).append(state)
        for relation_name, states in by_relation.items():
            relation = self.schema.relations[relation_name]
            await self.preload_records(relation.from_kind, [s.from_key for s in states])
            await self.preload_records(relation.to_kind, [s.to_key for s in states])
            for state in states:
                path = self.link_paths.get((relation_name, state.from_key, state.to_key), relation_name)
                for end, kind, key in (
                    ("from", relation.from_kind, state.from_key),
                    ("to", relation.to_kind, state.to_key),
                ):
                    if self.records[(kind, key)].values is None:
                        self.issue(
                            f"{path}.{end}",
                            "link.end_missing",
                            f"{relation_name} links {relation.from_kind} -> {relation.to_kind}; there is no {kind} {key!r}",
                        )
            await self._check_cardinality(relation, states)

    async def _check_cardinality(self, relation: Relation, states: list[LinkState]) -> None:
        single_from = relation.cardinality in ("many_to_one", "one_to_one")
        single_to = relation.cardinality in ("one_to_many", "one_to_one")
        for single, end in ((single_from, "from"), (single_to, "to")):
            if not single:
                continue
            keys = sorted({s.from_key if end == "from" else s.to_key for s in states})
            rows = await self.view.links_of(
                relation.name,
                from_keys=keys if end == "from" else None,
                to_keys=keys if end == "to" else None,
            )
            for row in rows:
                self.links.setdefault(
                    (relation.name, row.from_key, row.to_key),
                    LinkState(relation.name, row.from_key, row.to_key, row, dict(row.values)),
                )
            counts: dict[str, int] = {}
            wanted = set(keys)
            for state in self.links.values():
                if state.relation == relation.name and state.values is not None:
                    anchor = state.from_key if end == "from" else state.to_key
                    if anchor in wanted:
                        counts[anchor] = counts.get(anchor, 0) + 1
            other = relation.to_kind if end == "from" else relation.from_kind
            for anchor, count in sorted(counts.items()):
                if count > 1:
                    self.issue(
                        f"{relation.name}.{end}",
                        "link.cardinality",
                        f"{relation.name} is {relation.cardinality}: {anchor} may link to one {other} only "
                        f"(it would have {count}); delete the other Link first",
                    )

    async def _changes_paced(self) -> list[Change]:
        """`_changes`, in slices of the change set's pacer."""
        changes: list[Change] = []
        records = await sorted_paced(list(self.records.values()), attrgetter("kind", "key"), self.pacer)
        for state in records:
            before = None if state.before is None else state.before.values
            change = diff_change("record", state.kind, state.key, before, state.values)
            if change is not None:
                changes.append(change)
            if self.pacer.due():
                await self.pacer.step()
        links = await sorted_paced(
            list(self.links.values()), attrgetter("relation", "from_key", "to_key"), self.pacer
        )
        for link in links:
            before = None if link.before is None else link.before.values
            change = diff_change(
                "link", link.relation, link_key(link.from_key, link.to_key), before, link.values
            )
            if change is not None:
                changes.append(change)
            if self.pacer.due():
                await self.pacer.step()
        return changes

    def _changes(self) -> list[Change]:
        changes: list[Change] = []
        for state in sorted(self.records.values(), key=attrgetter("kind", "key")):
            before = None if state.before is None else state.before.values
            change = diff_change("record", state.kind, state.key, before, state.values)
            if change is not None:
                changes.append(change)
        for link in sorted(self.links.values(), key=lambda s: (s.relation, s.from_key, s.to_key)):
            before = None if link.before is None else link.before.values
            change = diff_change(
                "link", link.relation, link_key(link.from_key, link.to_key), before, link.values
            )
            if change is not None:
                changes.append(change)
        return changes


def diff_change(
    entity: str, name: str, key: str, before: dict[str, Any] | None, after: dict[str, Any] | None
) -> Change | None:
    if before is None and after is None:
        return None
    if before is None:
        assert after is not None
        return Change(entity, name, key, "created", sorted(after), None, dict(after))
    if after is None:
        return Change(entity, name, key, "deleted", sorted(before), dict(before), None)
    changed = sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
    if not changed:
        return None
    return Change(entity, name, key, "modified", changed, {n: before.get(n) for n in changed}, dict(after))


__all__ = ["Change", "ChangeSet", "diff_change", "link_key"]
