"""Reconciliation: the rules that make two Records of one Kind candidates for being the same thing,
their score, and the scan of a branch that stores them (docs/reconciliation.md).

Three rules, per Kind, over the materialised Records of a branch:

- `unique`: both hold the same value of a unique Attribute (case and spacing folded, as health's
  duplicate groups fold them). Score 1.0: the schema says there is one such Record.
- `title`: both hold the same title (the Kind's `title` Attribute, when it is not unique). Score 0.9.
- `similar_title`: their titles differ once folded but are at least `scribe.reconciliation.similarity`
  similar by pg_trgm (case folded). Score 0.9 x the similarity. Only on Kinds of at most
  `max_records_per_kind` Records: the comparison looks at every pair.

A pair's score is the best of its rules; its evidence lists every rule that matched with the values
compared (stored as they are; a read masks what the caller may not see). The scan is deterministic:
the same Records, schema and settings give the same candidates, evidence and scores. It keeps at most
`max_candidates_per_kind` per Kind (highest score, then keys in byte order), never proposes a
dismissed pair again (nor one accepted as a Proposal still open), refreshes the open ones still found and forgets the open ones no longer found;
a branch whose head, schema and settings are those of its last scan is not scanned again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.ids import new_id
from lorebase.schema import DomainSchema, Kind
from lorebase.settings_model import Reconciliation
from lorebase_store import BranchRow, Txn

SCORES = {"unique": 1.0, "title": 0.9}
SIMILAR_WEIGHT = 0.9
_SPACES = re.compile(r"\s+")


def fold(value: Any) -> str:
    """A value as the exact rules compare it: spacing collapsed and trimmed, case folded."""
    return _SPACES.sub(" ", str(value)).strip().casefold()


def exact_rules(kind: Kind) -> list[tuple[str, str]]:
    """(Attribute, rule) the exact comparisons use: the unique Attributes, and the title when it is
    not unique (health's duplicate groups check the same)."""
    checked = [(name, "unique") for name, attr in kind.attributes.items() if attr.unique]
    if kind.title and kind.title in kind.attributes and not kind.attributes[kind.title].unique:
        checked.append((kind.title, "title"))
    return checked


@dataclass
class Pair:
    """What the rules found for one pair of Records (keys in byte order)."""

    kind: str
    a: str
    b: str
    evidence: list[dict[str, Any]]

    @property
    def score(self) -> float:
        return score_of(self.evidence)


@dataclass(frozen=True)
class ScanResult:
    branch: str
    revision: str | None
    scanned: bool  # False: the head, schema and settings were those of the last scan
    candidates: int  # open candidates after the scan
    dropped: int  # open candidates no longer found


def _exact_pairs(
    kind: Kind, records: list[tuple[str, dict[str, Any]]], cap: int
) -> dict[tuple[str, str], Pair]:
    pairs: dict[tuple[str, str], Pair] = {}
    for attribute, rule in exact_rules(kind):
        groups: dict[str, list[tuple[str, Any]]] = {}
        for key, values in records:
            if values.get(attribute) is not None:
                groups.setdefault(fold(values[attribute]), []).append((key, values[attribute]))
        for folded in sorted(groups):
            members = sorted(groups[folded])[: cap + 1]  # a group of n yields n(n-1)/2 pairs
            for (a, value_a), (b, value_b) in combinations(members, 2):
                pair = pairs.setdefault((a, b), Pair(kind.name, a, b, []))
                pair.evidence.append({"rule": rule, "attribute": attribute, "values": [value_a, value_b]})
    return pairs


async def _kind_pairs(
    txn: Txn, domain_id: int, branch: str, kind: Kind, limits: Reconciliation
) -> list[Pair]:
    records = await txn.records_of_kind(domain_id, branch, kind.name)
    pairs = _exact_pairs(kind, records, limits.max_candidates_per_kind)
    title = kind.title
    if title and title in kind.attributes and len(records) <= limits.max_records_per_kind:
        values = dict(records)
        similar = await txn.similar_values(
            domain_id,
            branch,
            kind.name,
            title,
            threshold=limits.similarity,
            limit=limits.max_candidates_per_kind * 4,
        )
        for a, b, similarity in similar:
            value_a, value_b = values[a].get(title), values[b].get(title)
            if fold(value_a) == fold(value_b):
                continue  # the exact `title` or `unique` rule says it
            pair = pairs.setdefault((a, b), Pair(kind.name, a, b, []))
            pair.evidence.append(
                {
                    "rule": "similar_title",
                    "attribute": title,
                    "similarity": round(similarity, 4),
                    "values": [value_a, value_b],
                }
            )
    return sorted(pairs.values(), key=lambda p: (-p.score, p.a, p.b))


async def pair_evidence(
    txn: Txn, kind: Kind, values_a: dict[str, Any], values_b: dict[str, Any], threshold: float
) -> list[dict[str, Any]]:
    """The rules that hold now for two Records (their current values), as a scan would find them:
    an accept checks that its candidate still holds with this."""
    found: list[dict[str, Any]] = []
    for attribute, rule in exact_rules(kind):
        value_a, value_b = values_a.get(attribute), values_b.get(attribute)
        if value_a is not None and value_b is not None and fold(value_a) == fold(value_b):
            found.append({"rule": rule, "attribute": attribute, "values": [value_a, value_b]})
    title = kind.title
    if title and title in kind.attributes:
        value_a, value_b = values_a.get(title), values_b.get(title)
        if value_a is not None and value_b is not None and fold(value_a) != fold(value_b):
            similarity = await txn.similarity(str(value_a), str(value_b))
            if similarity >= threshold:
                found.append(
                    {
                        "rule": "similar_title",
                        "attribute": title,
                        "similarity": round(similarity, 4),
                        "values": [value_a, value_b],
                    }
                )
    return found


def score_of(evidence: list[dict[str, Any]]) -> float:
    """The score of a pair: the best of its rules (0.0: none)."""
    return max(
        (
            round(SIMILAR_WEIGHT * e["similarity"], 4) if e["rule"] == "similar_title" else SCORES[e["rule"]]
            for e in evidence
        ),
        default=0.0,
    )


def _fingerprint(schema_document: dict[str, Any], limits: Reconciliation) -> dict[str, Any]:
    return {
        "schema": sha256_hex(canonical_json(schema_document)),
        "similarity": limits.similarity,
        "max_records_per_kind": limits.max_records_per_kind,
        "max_candidates_per_kind": limits.max_candidates_per_kind,
    }


async def scan_branch(
    txn: Txn,
    domain_id: int,
    branch: BranchRow,
    schema: DomainSchema,
    schema_document: dict[str, Any],
    limits: Reconciliation,
    at: datetime,
    *,
    force: bool = False,
) -> ScanResult:
    """Compute the candidates of `branch` at its head and store them (see the module docstring)."""
    fingerprint = _fingerprint(schema_document, limits)
    previous = await txn.reconciliation_scan(domain_id, branch.name)
    existing = await txn.open_candidates(domain_id, branch.name)
    if (
        not force
        and previous is not None
        and previous.revision == branch.head
        and previous.settings == fingerprint
    ):
        return ScanResult(branch.name, branch.head, False, len(existing), 0)
    settled = await txn.settled_pairs(domain_id, branch.name)
    found: list[dict[str, Any]] = []
    if branch.mode != "overlay":  # an overlay branch has no materialised Records to compare
        for name in sorted(schema.kinds):
            kept = 0
            for pair in await _kind_pairs(txn, domain_id, branch.name, schema.kinds[name], limits):
                if (name, pair.a, pair.b) in settled:
                    continue
                if kept == limits.max_candidates_per_kind:
                    break
                kept += 1
                found.append(
                    {
                        "id": new_id("rcn"),
                        "branch": branch.name,
                        "kind": name,
                        "record_a": pair.a,
                        "record_b": pair.b,
                        "score": pair.score,
                        "evidence": pair.evidence,
                        "revision": branch.head,
                    }
                )
    await txn.save_candidates(domain_id, found, at=at)
    pairs = {(f["kind"], f["record_a"], f["record_b"]) for f in found}
    gone = [c.id for c in existing if (c.kind, c.record_a, c.record_b) not in pairs]
    await txn.drop_open_candidates(domain_id, gone)
    await txn.save_reconciliation_scan(
        domain_id, branch.name, revision=branch.head, settings=fingerprint, at=at
    )
    return ScanResult(branch.name, branch.head, True, len(found), len(gone))


__all__ = [
    "SCORES",
    "SIMILAR_WEIGHT",
    "Pair",
    "ScanResult",
    "exact_rules",
    "fold",
    "pair_evidence",
    "scan_branch",
    "score_of",
]
