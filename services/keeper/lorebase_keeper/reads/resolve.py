"""POST /resolve: ground the words of a question in the schema and the stored values (seed section 2).

Phrases of one to three words, longest first, are tried level by level: exact names (Kinds,
Attributes) and indexed values; schema aliases and value_aliases (synonym); similar spelling
(trigram similarity, as pg_trgm computes it); and, only when nothing else matched and the request
carries a query_vector, the nearest Records (not available yet: Records carry no embeddings).
It interprets nothing, runs no query and calls no model.

Which Attributes have their values indexed: enums always; strings with few distinct, short values
(read.resolve.max_indexed_values, max_value_chars); `resolvable: true|false` forces it; sensitive
Attributes never. Candidates never name a Kind or Attribute the caller may not read. With `at`, the
indexed values are those of that Revision, read from its snapshot (the one queries with `at` read);
the embedding level still reads the head's embeddings, which keep no history.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from lorebase.contract.reads import ResolveBody
from lorebase.ids import utc_now
from lorebase.problems import Problem
from lorebase.vocabulary import indexed, similarity
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.coverage import OMITTED, source_coverage
from lorebase_keeper.reads.snapshots import read_point
from lorebase_keeper.reads.value_counts import ValueCounts
from lorebase_keeper.runtime import Runtime
from lorebase_store import BranchChain, Txn

WORD = re.compile(r"[\w][\w'-]*", re.UNICODE)
LEVEL_SCORE = {"exact": 1.0, "synonym": 0.95}


@dataclass
class Term:
    """Something a phrase can mean: a Kind, an Attribute, or stored values of an Attribute."""

    target: str  # kind | attribute | value
    kind: str
    attribute: str | None = None
    type: str | None = None
    values: dict[str, int] = field(default_factory=dict)  # stored value -> Records


@dataclass
class Vocabulary:
    exact: dict[str, list[Term]] = field(default_factory=dict)
    synonyms: dict[str, list[Term]] = field(default_factory=dict)

    def add(self, table: dict[str, list[Term]], word: str, term: Term) -> None:
        table.setdefault(word.casefold().strip(), []).append(term)


_VOCABULARIES: OrderedDict[tuple[Any, ...], Vocabulary] = OrderedDict()
_COUNTS = ValueCounts()
_CACHED = 32


async def vocabulary(
    txn: Txn,
    access: Access,
    domain: Domain,
    branch: str,
    kinds: list[str],
    revision: str | None = None,
    snapshot: tuple[BranchChain, tuple[str, int]] | None = None,
    head: tuple[BranchChain, int] | None = None,
) -> Vocabulary:
    """The vocabulary of these Kinds at a Revision (the head, or with `snapshot` the Revision read as
    of), built once per Revision and readable Attributes."""
    view = readable_view(access, domain, branch)
    readable = tuple(tuple(sorted(view.cleared(k))) for k in kinds)
    key = (domain.id, branch, revision, tuple(kinds), readable)
    if revision is not None and key in _VOCABULARIES:
        _VOCABULARIES.move_to_end(key)
        return _VOCABULARIES[key]
    vocab = await _build_vocabulary(txn, access, domain, branch, kinds, snapshot, head)
    if revision is not None:
        _VOCABULARIES[key] = vocab
        if len(_VOCABULARIES) > _CACHED:
            _VOCABULARIES.popitem(last=False)
    return vocab


async def _build_vocabulary(
    txn: Txn,
    access: Access,
    domain: Domain,
    branch: str,
    kinds: list[str],
    snapshot: tuple[BranchChain, tuple[str, int]] | None,
    head: tuple[BranchChain, int] | None = None,
) -> Vocabulary:
    vocab = Vocabulary()
    view = readable_view(access, domain, branch)
    limit = int(domain.settings.get("read.resolve.max_indexed_values", 50))
    for kind_name in kinds:
        kind = domain.schema.kinds[kind_name]
        readable_names = view.cleared(kind_name)
        wanted = {
            name: max(limit, 1000 if attr.resolvable else limit)
            for name, attr in kind.attributes.items()
            if name in readable_names
            and not attr.sensitivity
            and attr.resolvable is not False
            and attr.type in ("enum", "string")
        }
        kept: dict[str, list[tuple[str, int]] | None] = {}
        if head is not None and snapshot is None and wanted:
            kept = await _COUNTS.distinct(txn, domain.id, branch, head[0], head[1], kind.name, wanted)
        vocab.add(vocab.exact, kind.name, Term("kind", kind.name))
        for alias in kind.aliases:
            vocab.add(vocab.synonyms, alias, Term("kind", kind.name))
        for name, attr in kind.attributes.items():
            if name not in readable_names:
                continue
            attribute = Term("attribute", kind.name, name, attr.type_name)
            vocab.add(vocab.exact, name, attribute)
            vocab.add(vocab.exact, name.replace("_", " "), attribute)
            for alias in attr.aliases:
                vocab.add(vocab.synonyms, alias, attribute)
            if attr.sensitivity or attr.resolvable is False or attr.type not in ("enum", "string"):
                continue
            if name in kept and kept[name] is None and attr.resolvable is not True and attr.type != "enum":
                continue  # more distinct values than could ever be indexed
            distinct = kept.get(name)
            if distinct is None:
                distinct = await txn.value_counts(
                    domain.id, branch, kind.name, name, limit=wanted[name], snapshot=snapshot
                )
            if not indexed(attr, distinct, domain.settings):
                continue
            counts = dict(distinct)
            for value, records in distinct:
                vocab.add(
                    vocab.exact, value, Term("value", kind.name, name, attr.type_name, {value: records})
                )
            for stored, aliases in attr.value_aliases.items():
                for alias in aliases:
                    vocab.add(
                        vocab.synonyms,
                        alias,
                        Term("value", kind.name, name, attr.type_name, {stored: counts.get(stored, 0)}),
                    )
    return vocab


def _candidate(term: Term, level: str, score: float, matched: str) -> dict[str, Any]:
    out: dict[str, Any] = {"target": term.target, "kind": term.kind}
    if term.attribute is not None:
        out["attribute"] = term.attribute
        out["type"] = term.type
    if term.target == "value":
        values = sorted(term.values)
        out["values"] = values
        out["predicate"] = (
            {"attr": term.attribute, "op": "eq", "value": values[0]}
            if len(values) == 1
            else {"attr": term.attribute, "op": "in", "value": values}
        )
    out.update(score=round(score, 4), level=level, matched=matched)
    if term.target == "value":
        out["records"] = sum(term.values.values())
    return out


def _merge(found: list[tuple[Term, str, float]], matched: str) -> list[dict[str, Any]]:
    """One candidate per (target, Kind, Attribute): the values of every level that matched, the best level."""
    merged: dict[tuple[str, str, str | None], tuple[Term, str, float]] = {}
    for term, level, score in found:
        key = (term.target, term.kind, term.attribute)
        if key in merged:
            known, known_level, known_score = merged[key]
            values = {**known.values, **term.values}
            best = (known_level, known_score) if known_score >= score else (level, score)
            merged[key] = (Term(term.target, term.kind, term.attribute, term.type, values), best[0], best[1])
        else:
            merged[key] = (
                Term(term.target, term.kind, term.attribute, term.type, dict(term.values)),
                level,
                score,
            )
    return [_candidate(term, level, score, matched) for term, level, score in merged.values()]


def ground(words: list[str], vocab: Vocabulary, threshold: float) -> tuple[list[dict[str, Any]], list[str]]:
    """Candidates for the phrases of `words` (longest first) and the words nothing matched."""
    candidates: list[dict[str, Any]] = []
    used = [False] * len(words)
    for size in (3, 2, 1):
        for start in range(len(words) - size + 1):
            if any(used[start : start + size]):
                continue
            phrase = " ".join(words[start : start + size])
            key = phrase.casefold()
            found = [(t, "exact", 1.0) for t in vocab.exact.get(key, [])]
            found += [(t, "synonym", LEVEL_SCORE["synonym"]) for t in vocab.synonyms.get(key, [])]
            if found:
                candidates += _merge(found, phrase)
                used[start : start + size] = [True] * size
    for index, word in enumerate(words):
        if used[index] or len(word) < 3:
            continue
        scored = []
        for term_word, terms in list(vocab.exact.items()) + list(vocab.synonyms.items()):
            score = similarity(word, term_word)
            if score >= threshold:
                scored += [(t, "similar", min(score, 0.9)) for t in terms]
        if scored:
            candidates += _merge(scored, word)
            used[index] = True
    unmatched = [w for w, u in zip(words, used, strict=True) if not u]
    candidates.sort(
        key=lambda c: (-c["score"], c["matched"], c["target"], c["kind"], c.get("attribute") or "")
    )
    return candidates, unmatched


async def _nearest_values(
    txn: Txn, access: Access, domain: Domain, branch: str, kinds: list[str], vector: list[float], matched: str
) -> list[dict[str, Any]]:
    """The embedding level: the indexed values of the Records nearest to the query vector."""
    limit = int(domain.settings.get("read.resolve.nearest_records", 5))
    nearest = await txn.nearest(domain.id, branch, kinds, vector, limit=limit)
    if not nearest:
        return []
    vocab = await vocabulary(txn, access, domain, branch, sorted({kind for kind, _, _ in nearest}))
    indexed = {(t.kind, t.attribute) for terms in vocab.exact.values() for t in terms if t.target == "value"}
    by_kind: dict[str, list[str]] = {}
    for kind, key, _ in nearest:
        by_kind.setdefault(kind, []).append(key)
    values: dict[tuple[str, str], dict[str, Any]] = {}
    for kind, keys in by_kind.items():
        for key, row in (await txn.get_records(domain.id, branch, kind, keys)).items():
            values[(kind, key)] = row.values
    merged: dict[tuple[str, str], tuple[Term, float]] = {}
    for kind, key, distance in nearest:
        attributes = domain.schema.kinds[kind].attributes
        for name, value in values.get((kind, key), {}).items():
            if (kind, name) not in indexed:
                continue
            ident = (kind, name)
            known, best = merged.get(ident, (Term("value", kind, name, attributes[name].type_name, {}), 0.0))
            known.values[str(value)] = known.values.get(str(value), 0) + 1
            merged[ident] = (known, max(best, 1 - distance))
    return [_candidate(term, "embedding", score, matched) for term, score in merged.values()]


async def resolve(rt: Runtime, access: Access, domain: Domain, request: ResolveBody) -> dict[str, Any]:
    """Ground the words of `text` in the schema and the stored values; record the words nothing
    matched (unless `record_misses` is false or the request reads an older Revision)."""
    text_ = request.text
    if not text_.strip():
        raise Problem(
            422,
            "validation-failed",
            "text is required: the words to ground",
            issues=[{"path": "text", "rule": "required", "message": "text is required"}],
        )
    vector = request.query_vector
    words = [w.casefold() for w in WORD.findall(text_)][:64]
    threshold = float(domain.settings.get("read.resolve.similarity_threshold", 0.45))

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, request.branch, request.at)
        branch = point.branch.name
        access.require("data.read", branch)
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
        vocab = await vocabulary(txn, access, domain, branch, kinds, point.revision, point.snapshot, head)
        candidates, unmatched = ground(words, vocab, threshold)
        skipped: list[dict[str, str]] = []
        if candidates:
            skipped = [{"level": "embedding", "reason": "other levels matched"}]
        elif vector is None:
            skipped = [{"level": "embedding", "reason": "no query_vector"}]
        else:
            candidates = await _nearest_values(txn, access, domain, branch, kinds, vector, text_.strip())
            if not candidates:
                skipped = [{"level": "embedding", "reason": "no Record has an embedding of these dimensions"}]
        doc: dict[str, Any] = {
            "domain": domain.name,
            "branch": branch,
            "revision": point.revision,
            "candidates": candidates,
            "unmatched": unmatched,
            "skipped": skipped,
        }
        if request.coverage:
            matched = [k for k in kinds if any(c["kind"] == k for c in candidates)]
            block: dict[str, Any] = {
                "kinds": sorted(matched),
                "unknown": unmatched,
                "sources": [],
                "notes": [f"{w}: term unknown in this Domain" for w in unmatched],
            }
            if point.at is not None or branch != domain.default_branch:
                block["omitted"] = OMITTED
            else:
                block["sources"], notes = await source_coverage(txn, domain, point, matched)
                block["notes"] += notes
            doc["coverage"] = block
        return doc

    doc = await rt.db.read("resolve", read)
    if doc["unmatched"] and request.record_misses and not request.at:

        async def keep(txn: Txn) -> None:
            await txn.record_misses(domain.id, sorted(set(doc["unmatched"])), utc_now())

        await rt.db.run_interaction("record_misses", keep)
    return doc


__all__ = ["ground", "resolve", "vocabulary"]
