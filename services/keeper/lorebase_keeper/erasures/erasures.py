"""Erasures (docs/erasure.md): `POST /erasures` deletes the vault values of Records; `GET` lists them.

An erasure names Records (`Kind/key`) or a subject (the Records of a Kind whose Attribute equals a
value: on any branch, now or in their history; for a vault Attribute, the Records whose vault entry
holds the value). It deletes the sealed value of every vault entry of those Records. Entries are
shared by ref across branches and Revisions, so that one statement covers every Revision on every
branch; the rows stay, with `erased_at` and the erasure's id, and every surface shows `[erased]`.
Nothing else changes: Revisions, history and provenance keep their refs and ids. Needs data.erase
(the admin role) and is audited in `audit_log` (`data.erase`). Erasing again is harmless: the
second erasure is recorded with `refs: 0`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from lorebase.canonical import ValueProblem, canonical_value
from lorebase.contract.erasures import NewErasure, Subject
from lorebase.cursors import decode_cursor, encode_cursor
from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem, invalid
from lorebase.schema import Kind
from lorebase.vault import text_of
from lorebase.vocabulary import words_of
from lorebase_keeper.access import Access, Readable, readable
from lorebase_keeper.domains import Domain
from lorebase_keeper.runtime import Runtime
from lorebase_store import ErasureRow, Txn

DEFAULT_LIMIT = 50


def _issue(path: str, rule: str, message: str) -> Problem:
    return invalid([{"path": path, "rule": rule, "message": message}])


def erasure_issues(view: Readable, new: NewErasure) -> Problem | None:
    """The problem of an erasure naming a Kind or Attribute the caller may not read, worded exactly
    as for one that does not exist (the policy point asks this first; lorebase_keeper.api.targets):
    a narrowed admin learns nothing of hidden Records by erasing them."""
    try:
        _check_names(new, view.kind, view.attributes)
    except Problem as problem:
        return problem
    return None


def _check_names(
    new: NewErasure, kind_of: Callable[[str], Kind | None], attributes_of: Callable[[str], Mapping[str, Any]]
) -> None:
    if isinstance(new.records, list):
        for index, ref in enumerate(new.records):
            name = ref.partition("/")[0]
            if kind_of(name) is None:
                raise _issue(
                    f"records[{index}]", "kind.unknown", f"unknown Kind {name!r}; name a Record as Kind/key"
                )
    if isinstance(new.subject, Subject):
        kind = kind_of(new.subject.kind)
        if kind is None:
            raise _issue("subject.kind", "kind.unknown", f"unknown Kind {new.subject.kind!r}")
        if new.subject.attribute not in attributes_of(kind.name):
            raise _issue(
                "subject.attribute",
                "attribute.unknown",
                f"{kind.name} has no Attribute {new.subject.attribute!r}",
            )


def _records(named: list[str]) -> list[tuple[str, str]]:
    found = [(kind, key) for kind, _, key in (ref.partition("/") for ref in named)]
    return list(dict.fromkeys(found))


async def _subject_records(rt: Runtime, domain: Domain, subject: Subject) -> list[tuple[str, str]]:
    kind = domain.schema.kinds[subject.kind]
    attribute = kind.attributes[subject.attribute]
    try:
        value = canonical_value(attribute, subject.value)
    except ValueProblem as exc:
        raise _issue("subject.value", exc.rule, exc.message) from None
    if value is None:
        raise _issue("subject.value", "value.required", "give the value whose Records to erase")
    if not attribute.vault:
        keys = await rt.db.read(
            "erasure_subject", lambda txn: txn.subject_keys(domain.id, kind.name, attribute.name, value)
        )
        return [(kind.name, key) for key in keys]
    sealer = rt.vault.sealer
    wanted = orjson.dumps(value)
    entries = await rt.db.read(
        "erasure_subject", lambda txn: txn.vault_values_of(domain.id, kind.name, attribute.name)
    )
    matching = sorted(
        {key for key, sealed in entries if orjson.dumps(orjson.loads(sealer.unseal(sealed))) == wanted}
    )
    return [(kind.name, key) for key in matching]


# Shorter values and words are not looked for in what callers typed: "42" would delete every phrase
# with 42.
MIN_PHRASE = 4


async def _phrases(rt: Runtime, domain: Domain, wanted: list[tuple[str, str]]) -> list[str]:
    """The values about to be erased, as text, and each of their words, to forget where callers
    typed them (resolve misses, suggestions, agent traces): a phrase holding any word of an erased
    value goes too (a caller who typed the local part of an erased e-mail address). Read before the
    erasure deletes them."""
    sealed = await rt.db.read("erasure_values", lambda txn: txn.sealed_values_of(domain.id, wanted))
    if not sealed:
        return []
    sealer = rt.vault.sealer
    texts = {text_of(orjson.loads(sealer.unseal(value))) for value in sealed}
    words = {word for text in texts for word in words_of(text, min_length=MIN_PHRASE)}
    return sorted({text for text in texts if len(text) >= MIN_PHRASE} | words)


def describe_erasure(domain: Domain, row: ErasureRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "domain": domain.name,
        "records": row.records,
        "attributes": row.attributes,
        "refs": row.refs,
        "reason": row.reason,
        "by": row.created_by,
        "at": iso(row.created_at),
    }


async def create_erasure(rt: Runtime, access: Access, domain: Domain, new: NewErasure) -> dict[str, Any]:
    """POST /erasures: the model has checked the members' types; one of records or subject; the
    policy point has checked that the caller may read the Kinds it names (erasure_issues)."""
    named = new.records if isinstance(new.records, list) else None
    has_records = named is not None
    has_subject = isinstance(new.subject, Subject)
    if has_records == has_subject:
        raise _issue(
            "records" if has_records else "subject",
            "erasure.target",
            'name the Records (records: ["Kind/key", ...]) or a subject ({kind, attribute, value}), '
            "one of the two",
        )
    schema = domain.schema
    _check_names(new, schema.kinds.get, lambda kind: schema.kinds[kind].attributes)
    if named is not None:
        wanted = _records(named)
    else:
        assert isinstance(new.subject, Subject)
        wanted = await _subject_records(rt, domain, new.subject)
    if not wanted and has_subject:
        raise Problem(404, "not-found", "no Record matches the subject on any branch; nothing to erase")
    at = utc_now()
    by = access.principal.id
    erasure_id = new_id("ers")
    phrases = await _phrases(rt, domain, wanted)
    references = [f"{kind}/{key}" for kind, key in wanted]

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        known = await txn.records_known(domain.id, wanted)
        missing = [f"{kind}/{key}" for kind, key in wanted if (kind, key) not in known]
        if missing:
            raise Problem(
                404,
                "not-found",
                f"unknown Record {missing[0]}: no branch ever held it; nothing was erased",
                records=missing,
            )
        await txn.erase_vault_entries(
            domain.id,
            wanted,
            erasure={
                "id": erasure_id,
                "records": references,
                "reason": new.reason,
                "created_by": by,
                "created_at": iso(at),
            },
        )
        forgotten = await txn.forget_phrases(domain.id, domain.name, phrases)
        row = await txn.get_erasure(erasure_id)
        assert row is not None
        await txn.audit(
            by,
            "data.erase",
            at,
            domain=domain.name,
            target=erasure_id,
            details={
                "records": references,
                "attributes": row.attributes,
                "refs": row.refs,
                "reason": new.reason,
                "phrases_forgotten": forgotten,
            },
        )
        return describe_erasure(domain, row)

    return await rt.db.run_interaction("create_erasure", txn_fn)


async def list_erasures(
    rt: Runtime, access: Access, domain: Domain, *, limit: int, cursor: str
) -> dict[str, Any]:
    """The erasures, newest first; one naming a Record of a Kind the caller may not read is left
    out (its references name the hidden Records)."""
    limit = limit or DEFAULT_LIMIT
    kinds = set(readable(access, domain, domain.default_branch).kinds)
    before = (
        decode_cursor(cursor, lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0)
        if cursor
        else None
    )
    rows = await rt.db.read(
        "list_erasures", lambda txn: txn.list_erasures(domain.id, before=before, limit=limit + 1)
    )
    more = len(rows) > limit
    rows = rows[:limit]
    shown = [row for row in rows if all(ref.partition("/")[0] in kinds for ref in row.records)]
    return {
        "domain": domain.name,
        "erasures": [describe_erasure(domain, row) for row in shown],
        "next_cursor": encode_cursor(rows[-1].seq) if more else None,
    }


__all__ = ["create_erasure", "erasure_issues", "list_erasures"]
