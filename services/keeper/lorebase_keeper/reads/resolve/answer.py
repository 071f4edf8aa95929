"""The answer of POST /resolve: candidates, unmatched words, intent hints, skipped levels and the
coverage block, and the misses kept for Scribe's suggestions.

Coverage is the query's (reads/coverage.py: per Kind its Records, `as_of` and `approximate`; per
Attribute a candidate's predicate or a hint uses, how many Records lack it; Sources and notes),
with `unknown`: the words nothing matched that are neither function words nor numbers, each with
the note "term unknown in this Domain". Only those are kept as misses (unless `record_misses` is
false or the request reads an older Revision).
"""

from __future__ import annotations

from datetime import UTC, date, timedelta
from typing import Any

from lorebase.contract.reads import ResolveBody
from lorebase.ids import utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.coverage import coverage
from lorebase_keeper.reads.embeddings import check_vector
from lorebase_keeper.reads.resolve.embedding import nearest_values
from lorebase_keeper.reads.resolve.ground import is_number, merged, ordered, similar
from lorebase_keeper.reads.resolve.phrases import needs_today, phrases
from lorebase_keeper.reads.resolve.titles import keys, titles
from lorebase_keeper.reads.resolve.vocabulary import vocabulary
from lorebase_keeper.reads.resolve.words import tokens
from lorebase_keeper.reads.snapshots import read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn

SIGNS = {"<", ">", "<=", ">=", "="}


async def resolve(rt: Runtime, access: Access, domain: Domain, request: ResolveBody) -> dict[str, Any]:
    """Ground the words of `text` in the schema and the stored values; keep the words nothing
    matched that are real gaps (unless `record_misses` is false or the request reads an older
    Revision)."""
    text_ = request.text
    if not text_.strip():
        raise Problem(
            422,
            "validation-failed",
            "text is required: the words to ground",
            issues=[{"path": "text", "rule": "required", "message": "text is required"}],
        )
    vector = check_vector(request.query_vector, "query_vector") if request.query_vector is not None else None
    limits = domain.settings.model.read.resolve
    words = tokens(text_, limits.language)

    async def read(txn: Txn) -> tuple[dict[str, Any], list[str]]:
        point = await read_point(txn, domain, request.branch, request.at)
        branch = point.branch.name
        readable = list(readable_view(access, domain, branch).kinds)
        kinds = readable
        if request.kinds is not None:
            for k in request.kinds:
                if k not in readable:
                    raise Problem(
                        404, "not-found", f"unknown Kind {k!r}; GET /schema lists the Kinds you may read"
                    )
            kinds = [k for k in readable if k in request.kinds]
        head = None if point.snapshot is not None else (point.chain, point.branch.generation)
        vocab = await vocabulary(
            txn, access, domain, branch, kinds, point.revision, point.snapshot, head, point.branch.created_at
        )
        used = [False] * len(words)
        candidates = await titles(txn, access, domain, point, words, used, vocab, limits, whole=True)
        today = None
        if point.revision is not None and needs_today(words):
            row = await txn.get_revision(domain.id, point.revision)
            today = row.created_at.astimezone(UTC).date() if row is not None else None
        found, hinted = phrases(words, used, vocab, domain, today)
        candidates += found
        candidates += await keys(txn, domain, point, words, used, vocab)
        candidates += await titles(txn, access, domain, point, words, used, vocab, limits)
        candidates += [c for span in similar(words, used, vocab, limits) for c in merged(span)]
        candidates = ordered(candidates)
        unmatched = [w.key for w, u in zip(words, used, strict=True) if not u]
        unknown = [
            w.key
            for w, u in zip(words, used, strict=True)
            if not u and w.key not in vocab.stop and w.key not in SIGNS and not is_number(w)
        ]
        skipped: list[dict[str, str]] = []
        if candidates:
            skipped = [{"level": "embedding", "reason": "other levels matched"}]
        elif vector is None:
            skipped = [{"level": "embedding", "reason": "no query_vector"}]
        else:
            candidates = await nearest_values(txn, access, domain, branch, kinds, vector, text_.strip())
            if not candidates:
                skipped = [{"level": "embedding", "reason": "no Record has an embedding of these dimensions"}]
        doc: dict[str, Any] = {
            "domain": domain.name,
            "branch": branch,
            "revision": point.revision,
            "candidates": candidates,
            "unmatched": unmatched,
            "hints": hinted,
            "skipped": skipped,
        }
        if request.coverage:
            matched = [k for k in kinds if any(c["kind"] == k for c in candidates)]
            matched += [k for k in kinds if k not in matched and any(h.get("kind") == k for h in hinted)]
            used_in: dict[str, set[str]] = {
                "where": {
                    c["predicate"]["attr"] for c in candidates if "predicate" in c and "relation" not in c
                },
                "select": {
                    c["attribute"] for c in candidates if c["target"] == "attribute" and "relation" not in c
                },
                "group_by": {str(h["attribute"]) for h in hinted if h["hint"] == "group_by"},
            }
            block = await coverage(txn, access, domain, point, sorted(matched), used_in)
            doc["coverage"] = {
                "kinds": block["kinds"],
                "attributes": block["attributes"],
                "unknown": unknown,
                "sources": block["sources"],
                "notes": [f"{w}: term unknown in this Domain" for w in unknown]
                + _intervals(candidates)
                + block["notes"],
                **({"omitted": block["omitted"]} if "omitted" in block else {}),
            }
        return doc, unknown

    doc, unknown = await rt.db.read("resolve", read)
    if unknown and request.record_misses and not request.at:

        async def keep(txn: Txn) -> None:
            await txn.record_misses(domain.id, sorted(set(unknown)), utc_now())

        await rt.db.run_interaction("record_misses", keep)
    return doc


def _intervals(candidates: list[dict[str, Any]]) -> list[str]:
    """One note per date said relative to the Revision's day, with the days it was read as."""
    notes: dict[str, str] = {}
    for c in candidates:
        said = c.get("interval")
        if said is None or c["matched"] in notes:
            continue
        last = (date.fromisoformat(said["before"]) - timedelta(days=1)).isoformat()
        days = said["from"] if said["from"] >= last else f"{said['from']} to {last}"
        if said["from"] == said["before"]:
            days = f"the start of {said['from']}"
        notes[c["matched"]] = (
            f"{c['matched']}: read as {days}, counted from {said['today']} (the day of the Revision read, UTC)"
        )
    return [notes[k] for k in sorted(notes)]


__all__ = ["resolve"]
