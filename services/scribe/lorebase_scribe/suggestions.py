"""The suggestions job: frequent resolve misses become alias, value_alias or description suggestions.

Per Domain, a pass forgets misses last seen more than agents.resolve.miss_retention_days ago, then
takes the phrases missed at least agents.resolve.suggest_min_count times and compares each, by
trigram similarity (the one resolve uses), with the Domain's vocabulary: Kind and Attribute names
and aliases (an `alias` suggestion on that Kind or Attribute) and the values resolve indexes, with
their value_aliases (a `value_alias` suggestion on that Attribute). The most similar term at
agents.resolve.suggest_similarity or above wins; with none, the phrase gets a `description`
suggestion (say what it means, on the closest Kind or the Domain). A phrase that now resolves
exactly is left alone. Suggestions change nothing: a person accepts (and edits the schema) or
dismisses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from lorebase.config import Settings
from lorebase.ids import new_id, utc_now
from lorebase.schema import DomainSchema, load_schema
from lorebase.vocabulary import indexed, similarity
from lorebase_store import Database, DomainRow, Txn


@dataclass(frozen=True)
class Term:
    word: str
    type: str  # alias | value_alias
    target: dict[str, Any]


async def suggest(db: Database, settings: Settings) -> int:
    """One pass over every Domain; the number of suggestions added or refreshed."""
    domains: list[DomainRow] = await db.read("suggestions_domains", lambda txn: txn.list_domains())
    made = 0
    for domain in domains:
        # A Domain's invalid stored overrides are left out, as keeper does (lorebase_keeper.domains).
        effective, _ = settings.overlay_valid(domain.settings)
        made += await db.run_interaction("suggestions", _suggest_domain, domain, effective)
    return made


async def _terms(txn: Txn, domain: DomainRow, schema: DomainSchema, settings: Settings) -> list[Term]:
    terms: list[Term] = []
    limits = settings.model.read.resolve
    for kind in schema.kinds.values():
        for word in (kind.name, *kind.aliases):
            terms.append(Term(word, "alias", {"kind": kind.name}))
        for name, attr in kind.attributes.items():
            target = {"kind": kind.name, "attribute": name}
            for word in (name, name.replace("_", " "), *attr.aliases):
                terms.append(Term(word, "alias", target))
            if attr.sensitivity or attr.resolvable is False or attr.type not in ("enum", "string"):
                continue
            distinct = (
                [(value, 0) for value in attr.values]
                if attr.type == "enum"
                else await txn.value_counts(
                    domain.id, domain.default_branch, kind.name, name, limit=limits.max_indexed_values
                )
            )
            if not indexed(attr, distinct, limits):
                continue
            for value, _ in distinct:
                terms.append(Term(value, "value_alias", {**target, "value": value}))
            for stored, aliases in attr.value_aliases.items():
                for alias in aliases:
                    terms.append(Term(alias, "value_alias", {**target, "value": stored}))
    return terms


def _patch(type_: str, target: dict[str, Any], phrase: str) -> dict[str, Any]:
    """The schema change a person applies on accepting (dotted paths into the schema document)."""
    kind, attribute = target.get("kind"), target.get("attribute")
    if type_ == "value_alias":
        path = f"kinds.{kind}.attributes.{attribute}.value_aliases.{target['value']}"
    elif type_ == "alias":
        path = f"kinds.{kind}.attributes.{attribute}.aliases" if attribute else f"kinds.{kind}.aliases"
    else:
        path = f"kinds.{kind}.description" if kind else "description"
        return {"op": "describe", "path": path, "value": phrase}
    return {"op": "add", "path": path, "value": phrase}


def propose(phrase: str, terms: list[Term], threshold: float) -> tuple[str, dict[str, Any], float] | None:
    """(type, target, score) for a missed phrase; None when it now resolves exactly."""
    key = phrase.casefold()
    if any(term.word.casefold() == key for term in terms):
        return None
    scored = sorted(
        ((similarity(phrase, term.word), term) for term in terms),
        key=lambda item: (-item[0], item[1].type, sorted(item[1].target.items())),
    )
    if scored and scored[0][0] >= threshold:
        score, term = scored[0]
        return term.type, term.target, round(score, 4)
    closest = next((term.target["kind"] for score, term in scored if score > 0), None)
    return "description", ({"kind": closest} if closest else {}), round(scored[0][0], 4) if scored else 0.0


async def _suggest_domain(txn: Txn, domain: DomainRow, settings: Settings) -> int:
    now = utc_now()
    resolve = settings.model.agents.resolve
    await txn.purge_misses(domain.id, now - timedelta(days=resolve.miss_retention_days))
    misses = await txn.misses(
        domain.id, limit=resolve.suggest_max_phrases, min_count=resolve.suggest_min_count
    )
    if not misses:
        return 0
    branch = await txn.get_branch(domain.id, domain.default_branch)
    schema = load_schema(await txn.schema_document(domain, None if branch is None else branch.schema_digest))
    terms = await _terms(txn, domain, schema, settings)
    made = 0
    for phrase, count in misses:
        proposed = propose(phrase, terms, resolve.suggest_similarity)
        if proposed is None:
            continue
        type_, target, score = proposed
        await txn.save_suggestion(
            domain.id,
            id=new_id("sug"),
            phrase=phrase,
            type=type_,
            target=target,
            patch=_patch(type_, target, phrase),
            score=score,
            misses=count,
            at=now,
        )
        made += 1
    return made


__all__ = ["propose", "suggest"]
