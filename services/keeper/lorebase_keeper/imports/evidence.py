"""Extraction evidence on a write: checked, named by digest, stamped into provenance.

An import's records may carry evidence (lorebase.contract.evidence): `extraction` on the batch (the
default), `extraction` on a Record (all its values) or `evidence` per Attribute (wins for that one).
An Operation execution may carry `extraction`: the evidence of every value it sets.
Each distinct piece of evidence gets the id `SHA-256(canonical JSON)`, so the same passage read by
the same model and prompt is one row of the `extractions` table however many values it supports
(lorebase_store.extractions). The commit names the evidence of each value it changes in the
provenance's `$evidence` (Attribute -> id), beside the Revision id that `_stamp` writes; a later
change of the value drops it (writes/plan.py), a merge keeps it with the value
(merge/provenance.py). Evidence for a value the load does not change is not recorded: the value's
provenance stays with the Revision that set it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.contract.evidence import Evidence, span_problem
from lorebase.contract.writes import Load as Batch
from lorebase.ids import iso
from lorebase_keeper.writes import Change


def evidence_document(evidence: Evidence) -> dict[str, Any]:
    """The canonical form of a piece of evidence (what its id digests, and what reads show)."""
    document: dict[str, Any] = msgspec.to_builtins(evidence)
    document.setdefault("confidence", None)
    return document


def extraction_id(document: dict[str, Any]) -> str:
    return sha256_hex(canonical_json(document))


@dataclass
class Extracted:
    """The evidence of a load: per Record (Kind, key), per Attribute, the extraction id."""

    by_record: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    everywhere: str | None = None  # the evidence of every value of every Record (an Operation's)

    def __bool__(self) -> bool:
        return bool(self.by_record) or self.everywhere is not None

    @classmethod
    def of_every_value(cls, evidence: Evidence) -> Extracted:
        """The evidence of an Operation execution: it supports every value the execution sets."""
        document = evidence_document(evidence)
        found = extraction_id(document)
        return cls(documents={found: document}, everywhere=found)

    def provenance_of(self) -> Callable[[Change, dict[str, Any], str], dict[str, Any]]:
        """plan_commit's hook: name the evidence of each extracted value the commit changes."""

        def provenance_of(change: Change, provenance: dict[str, Any], revision: str) -> dict[str, Any]:
            if change.entity != "record" or change.after is None:
                return provenance
            ids = self.by_record.get((change.name, change.key))
            if ids is None and self.everywhere is not None:
                ids = {name: self.everywhere for name in change.attributes}
            if not ids:
                return provenance
            held = dict(provenance.get("$evidence") or {})
            for name in change.attributes:
                if name in ids and name in change.after:
                    held[name] = ids[name]
                    self.used.add(ids[name])
            if held:
                provenance["$evidence"] = held
            return provenance

        return provenance_of

    def rows(self, revision: str, by: str, at: datetime) -> list[dict[str, Any]]:
        """The `extractions` rows of the evidence the commit used (written if new)."""
        return [
            {**self.documents[i], "id": i, "revision": revision, "created_by": by, "created_at": iso(at)}
            for i in sorted(self.used)
        ]


def collect(batch: Batch, records: list[Any]) -> tuple[Extracted, list[dict[str, Any]]]:
    """The evidence of a load's records (`records`: its checked (Kind, key, values, path), one per
    item of `batch.records`, in order), or the issues that make it unusable."""
    extracted = Extracted()
    issues: list[dict[str, Any]] = []
    default = getattr(batch, "extraction", None)
    items = batch.records or ()
    if default is None and not any(item.extraction is not None or item.evidence for item in items):
        return extracted, issues  # no evidence: nothing to walk per value (most imports)

    def named(evidence: Evidence, path: str) -> str | None:
        problem = span_problem(evidence.span)
        if problem is not None:
            issues.append({"path": f"{path}.span", "rule": "evidence.span", "message": problem})
            return None
        document = evidence_document(evidence)
        found = extraction_id(document)
        extracted.documents[found] = document
        return found

    default_id = named(default, "extraction") if default is not None else None
    for item, (kind, key, values, path) in zip(items, records, strict=True):
        own = named(item.extraction, f"{path}.extraction") if item.extraction is not None else None
        ids: dict[str, str] = {}
        for name in values:
            if own or default_id:
                ids[name] = own or default_id or ""
        for name, evidence in (item.evidence or {}).items():
            where = f"{path}.evidence.{name}"
            if name not in values:
                issues.append(
                    {
                        "path": where,
                        "rule": "evidence.attribute",
                        "message": f"evidence for {name}, which this record does not set: give its "
                        f"value in values, or drop the evidence",
                    }
                )
                continue
            value_id = named(evidence, where)
            if value_id is not None:
                ids[name] = value_id
        if ids:
            extracted.by_record[(kind.name, key)] = ids
    return extracted, issues


__all__ = ["Extracted", "collect", "evidence_document", "extraction_id"]
