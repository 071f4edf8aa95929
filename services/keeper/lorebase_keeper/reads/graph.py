"""Walking the graph: the neighbourhood of some Records, and paths of Relations (POST /neighborhood,
POST /traverse; the base of context packs).

A walk goes hop by hop from its seeds along readable Relations (forward or inverse names), one
statement per Relation and direction per hop. It stops at the depth asked for, and caps say where it
was cut: read.traverse.max_fanout bounds the Links followed from one Record per hop, max_records
and max_links the whole walk; `capped` reports any cut. Kinds and Relations the caller may not read
are never followed, so they never show up, not even in counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.snapshots import ReadPoint
from lorebase_store import LinkRow, Txn

Ref = tuple[str, str]  # (Kind, key)


@dataclass(frozen=True)
class Step:
    """A Relation followed in one direction: from its `from` Kind (forward) or its `to` Kind (inverse)."""

    relation: str
    direction: str  # forward | inverse
    anchor: str  # the Kind walked from
    other: str  # the Kind walked to

    @property
    def name(self) -> str:
        return self.relation if self.direction == "forward" else f"~{self.relation}"


@dataclass
class Walk:
    depth_of: dict[Ref, int] = field(default_factory=dict)
    links: dict[tuple[str, str, str], LinkRow] = field(default_factory=dict)
    capped: bool = False
    # Links of the last hop walked by their keys alone (`ranked`): in `links` with no values, the
    # caller decides whether the answer depends on them (context packs: budget.fit's `unseen`).
    unread: set[tuple[str, str, str]] = field(default_factory=set)
    # A ranked last hop that left out Links the caps did not refuse: read it again, whole.
    incomplete: bool = False


@dataclass(frozen=True)
class Caps:
    max_records: int
    max_links: int
    max_fanout: int

    @classmethod
    def of(cls, domain: Domain, *, max_records: int | None = None, max_links: int | None = None) -> Caps:
        traverse = domain.settings.model.read.traverse
        return cls(
            max_records=max_records or traverse.max_records,
            max_links=max_links or traverse.max_links,
            max_fanout=traverse.max_fanout,
        )


def parse_ref(value: Any, path: str) -> Ref:
    if not isinstance(value, str) or value.count("/") < 1:
        raise Problem(
            422,
            "validation-failed",
            f"{path} is a Record reference Kind/key, like Supplier/S-1001",
            issues=[{"path": path, "rule": "ref", "message": "expected Kind/key"}],
        )
    kind, _, key = value.partition("/")
    return kind, key


def steps_for(
    access: Access, domain: Domain, branch: str, names: list[str] | None, *, path: str = "relations"
) -> list[Step]:
    """The readable Relations to follow (every one in both directions when `names` is None)."""
    readable = readable_view(access, domain, branch).relations
    steps: list[Step] = []
    if names is None:
        for name in readable:
            r = domain.schema.relations[name]
            steps += [
                Step(name, "forward", r.from_kind, r.to_kind),
                Step(name, "inverse", r.to_kind, r.from_kind),
            ]
        return steps
    for index, name in enumerate(names):
        named = domain.schema.relation_named(name) if isinstance(name, str) else None
        if named is None or named[0].name not in readable:
            raise Problem(
                422,
                "validation-failed",
                f"unknown Relation {name!r}; GET /schema lists them",
                issues=[
                    {
                        "path": f"{path}[{index}]",
                        "rule": "relation.unknown",
                        "message": f"unknown Relation {name!r}",
                    }
                ],
            )
        relation, direction = named
        if direction == "forward":
            steps.append(Step(relation.name, "forward", relation.from_kind, relation.to_kind))
        else:
            steps.append(Step(relation.name, "inverse", relation.to_kind, relation.from_kind))
    return steps


def _capped(rows: list[LinkRow], step: Step, fanout: int) -> tuple[list[LinkRow], bool]:
    """At most `fanout` Links per Record walked from, in key order; and whether any was cut."""
    per_anchor: dict[str, int] = {}
    kept: list[LinkRow] = []
    cut = False
    for row in sorted(rows, key=lambda r: (r.from_key, r.to_key)):
        anchor = row.from_key if step.direction == "forward" else row.to_key
        per_anchor[anchor] = per_anchor.get(anchor, 0) + 1
        if per_anchor[anchor] > fanout:
            cut = True
            continue
        kept.append(row)
    return kept, cut


async def _snapshot_links(
    txn: Txn, domain: Domain, point: ReadPoint, at: tuple[str, int], step: Step, keys: list[str]
) -> list[LinkRow]:
    """The Links of `step` from these Records as of a Revision's position `at`."""
    wanted = set(keys)
    rows = []
    for change in await txn.snapshot_entities(domain.id, point.chain, at, "link", step.relation):
        from_key, _, to_key = change.key.partition("->")
        if (from_key if step.direction == "forward" else to_key) in wanted:
            revision = str(change.provenance.get("$link", ""))
            rows.append(
                LinkRow(step.relation, from_key, to_key, change.after or {}, change.provenance, revision)
            )
    return rows


@dataclass
class _Hop:
    """The Links of a hop's steps, and for a ranked hop (`_links_from`) those read by their keys
    alone and how many Links each step has in all (the Links not returned: beyond the caps)."""

    links_of: dict[Step, list[LinkRow]]
    unread: set[tuple[str, str, str, str]] = field(default_factory=set)  # (direction, relation, from, to)
    totals: dict[tuple[str, str], int] | None = None  # by (direction, relation)


async def _links_from(
    txn: Txn,
    domain: Domain,
    point: ReadPoint,
    keys_of: dict[Step, list[str]],
    ranked: tuple[int, int, list[str], int] | None = None,
) -> _Hop:
    """The Links of each step from its Records: at a branch head, every step in one statement.
    With `ranked` (whole, first, known keys, fanout: `RecordsTxn.links_ranked`), the first Links
    of each step in the walk's order and those beyond that can still count, the Links to the
    first `whole` Records of a step by key read whole, the others by their keys."""
    if point.at is not None:
        at = point.at
        return _Hop(
            {
                step: await _snapshot_links(txn, domain, point, at, step, keys)
                for step, keys in keys_of.items()
            }
        )
    forward = [(s.relation, k) for s, keys in keys_of.items() if s.direction == "forward" for k in keys]
    inverse = [(s.relation, k) for s, keys in keys_of.items() if s.direction == "inverse" for k in keys]
    found: dict[tuple[str, str], list[LinkRow]] = {}
    hop = _Hop({})
    if ranked is None:
        rows = await txn.links_of_keys(domain.id, point.branch.name, forward=forward, inverse=inverse)
    else:
        whole, first, known, fanout = ranked
        read, hop.totals = await txn.links_ranked(
            domain.id,
            point.branch.name,
            forward=forward,
            inverse=inverse,
            whole=whole,
            first=first,
            known=known,
            fanout=fanout,
        )
        rows = []
        for direction, row in read:
            if isinstance(row, tuple):
                hop.unread.add((direction, *row))
                row = LinkRow(*row, {}, {}, "")
            rows.append((direction, row))
    for direction, row in rows:
        found.setdefault((row.relation, direction), []).append(row)
    hop.links_of = {step: found.get((step.relation, step.direction), []) for step in keys_of}
    return hop


# A ranked last hop pays off only when a step has several times more Links than the budget can
# show (at the generator's 1M shape, 89 Links per hop, its lookups of the Links read whole cost more
# than the plain read's one index scan): the walk ranks a last hop when the Links it expects, from
# the Links per Record each step had in this process's earlier walks, are RANKED_FANOUT times the
# far neighbours read whole or more. Either way the answer is the same; this only picks the cheaper.
RANKED_FANOUT = 4
_PER_RECORD: dict[tuple[int, str, str], float] = {}  # (Domain, Relation, direction): Links per Record


def _expected(domain: Domain, keys_of: dict[Step, list[str]]) -> float:
    return sum(
        len(keys) * _PER_RECORD.get((domain.id, s.relation, s.direction), 0.0) for s, keys in keys_of.items()
    )


def _observe(domain: Domain, keys_of: dict[Step, list[str]], read: _Hop) -> None:
    """Keep each step's Links per Record walked from (a moving average over the walks)."""
    for step, keys in keys_of.items():
        if len(_PER_RECORD) > 10_000:  # many Domains: start again rather than grow
            _PER_RECORD.clear()
        total = len(read.links_of.get(step, []))
        if read.totals is not None:
            total = max(total, read.totals.get((step.direction, step.relation), 0))
        key = (domain.id, step.relation, step.direction)
        seen = total / max(1, len(keys))
        _PER_RECORD[key] = seen if key not in _PER_RECORD else 0.8 * _PER_RECORD[key] + 0.2 * seen


async def walk(
    txn: Txn,
    domain: Domain,
    point: ReadPoint,
    seeds: list[Ref],
    *,
    depth: int,
    steps: list[Step],
    caps: Caps,
    kinds: set[str] | None = None,
    ranked: int | None = None,
) -> Walk:
    """Breadth-first from `seeds` along `steps` up to `depth` hops; `kinds` limits the neighbours.
    Each hop reads the Links of all its steps in one statement. With `ranked`, a last hop beyond
    the first reads whole only the Links to the first `ranked` Records of each step by key, the
    others by their keys (`Walk.unread`): the same Records, Links and caps either way."""
    result = Walk(depth_of={ref: 0 for ref in seeds})
    frontier = list(dict.fromkeys(seeds))
    for hop in range(1, depth + 1):
        found: list[Ref] = []
        keys_of: dict[Step, list[str]] = {}
        for step in steps:
            keys = sorted({key for kind, key in frontier if kind == step.anchor})
            if keys and (kinds is None or step.other in kinds):
                keys_of[step] = keys
        last = None
        if (
            ranked is not None
            and hop == depth
            and hop > 1
            and _expected(domain, keys_of) >= RANKED_FANOUT * ranked
        ):
            # Enough of each step, in the walk's order, to reach the cap on new Records twice over
            # (a Record reached by several Links takes one place); what the statement leaves out
            # can then only be refused by that cap.
            first = 2 * max(0, caps.max_records - len(result.depth_of)) + 16
            last = (ranked, first, [key for _, key in result.depth_of], caps.max_fanout)
        read = await _links_from(txn, domain, point, keys_of, last) if keys_of else _Hop({})
        links_of, unread = read.links_of, read.unread
        _observe(domain, keys_of, read)
        for step in keys_of:
            rows, cut = _capped(links_of[step], step, caps.max_fanout)
            result.capped |= cut
            for row in rows:
                if len(result.links) >= caps.max_links:
                    result.capped = True
                    break
                other = (step.other, row.to_key if step.direction == "forward" else row.from_key)
                if other not in result.depth_of:
                    if len(result.depth_of) >= caps.max_records:
                        result.capped = True
                        continue
                    result.depth_of[other] = hop
                    found.append(other)
                link = (row.relation, row.from_key, row.to_key)
                if (step.direction, *link) in unread:
                    if link in result.links:  # read whole already (an earlier hop, another step)
                        continue
                    result.unread.add(link)
                else:
                    result.unread.discard(link)
                result.links[link] = row
            if read.totals is not None and read.totals.get((step.direction, step.relation), 0) > len(
                links_of[step]
            ):
                # Links of this step the statement left out come after those it returned in the
                # walk's order, and each leads to a Record not reached yet: refused once the cap
                # on Records is reached (as this one is), and otherwise the hop must be read whole.
                if len(result.depth_of) >= caps.max_records:
                    result.capped = True
                else:
                    result.incomplete = True
        frontier = found
        if not frontier:
            break
    return result


async def load_records(
    txn: Txn, domain: Domain, point: ReadPoint, refs: list[Ref]
) -> dict[Ref, dict[str, Any]]:
    """The values of these Records at the read point (missing ones left out): at a branch head, in
    one statement."""
    if point.at is None:
        return await txn.values_of(domain.id, point.branch.name, refs)
    by_kind: dict[str, list[str]] = {}
    for kind, key in refs:
        by_kind.setdefault(kind, []).append(key)
    out: dict[Ref, dict[str, Any]] = {}
    for kind, keys in by_kind.items():
        for change in await txn.snapshot_entities(domain.id, point.chain, point.at, "record", kind, keys):
            out[(kind, change.key)] = change.after or {}
    return out


__all__ = ["Caps", "Ref", "Step", "Walk", "load_records", "parse_ref", "steps_for", "walk"]
