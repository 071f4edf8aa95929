"""`reveal`: the one place keeper swaps vault refs for what the caller may see.

Every keeper answer passes through it (api/rpc.py, after the session trace has kept the answer as
stored, refs and all). An answer holding no ref costs one byte search. For one that does, the
entries are read in one statement and each ref becomes its value when the caller holds the
clearances of its Attribute (`pii.read`, ...) in the Domain the request names, `***` when not, and
`[erased]` once an erasure deleted it: on every surface (record reads at any `at`, history, lineage,
explain in JSON and Markdown, diff, context packs, query, operation answers and replays) alike.
"""

from __future__ import annotations

from typing import Any

import orjson

from lorebase.v1 import keeper_pb2 as pb
from lorebase.vault import ERASED, MASK, holds_refs, refs_in, substitute
from lorebase_keeper.domains import Domain
from lorebase_keeper.vault.keys import Vault
from lorebase_store import Txn, VaultEntry


async def reveal(
    vault: Vault, body: bytes, *, json: bool, domain: Domain | None, permissions: frozenset[str]
) -> bytes:
    """`body` with its refs shown as the caller may see them (unchanged when it holds none)."""
    if not holds_refs(body):
        return body
    refs = refs_in(body)
    if not refs:
        return body
    entries = await vault.db.read("vault_reveal", _entries, refs)
    shown: dict[str, Any] = {}
    for ref in refs:
        entry = entries.get(ref)
        if entry is None or entry.sealed is None:
            shown[ref] = ERASED
        elif not _cleared(entry, domain, permissions):
            shown[ref] = MASK
        else:
            shown[ref] = orjson.loads(vault.sealer.unseal(entry.sealed))
    return substitute(body, shown, json=json)


async def reveal_reply(
    vault: Vault, answer: pb.Reply, *, domain: Domain | None, permissions: frozenset[str]
) -> pb.Reply:
    if not holds_refs(answer.body):
        return answer
    body = await reveal(
        vault,
        answer.body,
        json=answer.content_type.startswith("application/json"),
        domain=domain,
        permissions=permissions,
    )
    if body is answer.body:
        return answer
    return pb.Reply(
        body=body,
        revision=answer.revision,
        content_type=answer.content_type,
        status=answer.status,
        headers=dict(answer.headers),
    )


def _cleared(entry: VaultEntry, domain: Domain | None, permissions: frozenset[str]) -> bool:
    if domain is None or entry.domain_id != domain.id:
        return False
    kind = domain.schema.kinds.get(entry.kind)
    attribute = kind.attributes.get(entry.attribute) if kind is not None else None
    if attribute is None:
        return False
    return all(f"{tag}.read" in permissions for tag in attribute.sensitivity)


async def _entries(txn: Txn, refs: list[str]) -> dict[str, VaultEntry]:
    return await txn.get_vault_entries(refs)


__all__ = ["reveal", "reveal_reply"]
