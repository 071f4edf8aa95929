"""`$via`: how a value brought over by a merge names the merge that brought it (and keeps the
`$evidence` of an extracted value).

A value brought over keeps the Revision of the source that set it, and its provenance gains a `$via`
entry for that Attribute: the merge Revision, the source branch, and the Proposal and resolution when
there is one (docs/branches.md). A value set by a resolution with a `value` is stamped with the
merge Revision itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lorebase_keeper.merge.attempt import MergeRequest
from lorebase_keeper.merge.base import Ref
from lorebase_keeper.writes import Change


def via_note(request: MergeRequest, resolution: dict[str, Any] | None = None) -> dict[str, Any]:
    note: dict[str, Any] = {"source_branch": request.source}
    if request.proposal:
        note["proposal"] = request.proposal
    if resolution is not None:
        note["resolution"] = resolution
    return note


def via_provenance(
    taken: dict[Ref, dict[str, dict[str, Any]]], s_provenance: dict[Ref, dict[str, Any]]
) -> Callable[[Change, dict[str, Any], str], dict[str, Any]]:
    """The merge commit's `provenance_of`: the source's provenance and a `$via` note for each
    Attribute brought over (`taken`), from the source side's provenance (`s_provenance`)."""

    def provenance_of(change: Change, provenance: dict[str, Any], revision: str) -> dict[str, Any]:
        ref = (change.entity, change.name, change.key)
        notes = taken.get(ref) or {}
        if not notes:
            return provenance
        via = dict(provenance.get("$via") or {})
        evidence = dict(provenance.get("$evidence") or {})
        source_evidence = s_provenance.get(ref, {}).get("$evidence") or {}
        for attribute, note in notes.items():
            if change.after is None or attribute not in change.after:
                continue
            if "resolution" in note and note["resolution"]["choice"] == "value":
                via[attribute] = {**note, "revision": revision}
                continue
            original = s_provenance.get(ref, {}).get(attribute)
            if original is not None:
                provenance[attribute] = original
            if attribute in source_evidence:  # an extracted value keeps its evidence
                evidence[attribute] = source_evidence[attribute]
            via[attribute] = {**note, "revision": revision}
        if via:
            provenance["$via"] = via
        if evidence:
            provenance["$evidence"] = evidence
        return provenance

    return provenance_of


__all__ = ["via_note", "via_provenance"]
