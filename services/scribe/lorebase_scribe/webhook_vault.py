"""Vault values in webhook deliveries, read when the delivery is sent (the seed: "vault values are
read from the vault when the delivery is sent, so an erased one arrives as [erased]").

Outbox events never hold a vault value: where one would be they hold its ref (docs/erasure.md), so
NATS, the event stream and the changes feed carry refs only. A delivery's document is revealed just
before it is signed and sent: a ref becomes `[erased]` once erased, the value when the webhook's
clearances cover every sensitivity tag of its Attribute (read in the schema of the event's Domain),
else `***`. An operation event's `parameters` stay masked for every webhook, whatever its
clearances (docs/feed.md): a vault ref there is `***` before anything is revealed. A document
without refs costs one byte search.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from lorebase.vault import ERASED, MASK, holds_refs, is_ref, refs_in, substitute
from lorebase.webhook_secrets import Sealer
from lorebase_store.outbox import OutboxEvent
from lorebase_store.webhooks import WebhookRow

if TYPE_CHECKING:  # names for annotations only
    from lorebase_store.db import Database


async def reveal_delivery(
    db: Database,
    sealer: Sealer,
    hook: WebhookRow,
    event: OutboxEvent,
    document: dict[str, Any],
    schemas: dict[tuple[int, str], Any],
) -> dict[str, Any]:
    """`document` with its vault refs shown as this webhook may see them, as of now."""
    body = orjson.dumps(document)
    if not holds_refs(body):
        return document
    if "parameters" in document:
        document = {**document, "parameters": _masked(document["parameters"])}
        body = orjson.dumps(document)
    refs = refs_in(body)
    if not refs:
        return document
    entries = await db.read("webhook_vault_reveal", lambda txn: txn.get_vault_entries(refs))
    schema = schemas.get((event.domain_id, event.revision or ""))
    shown: dict[str, Any] = {}
    for ref in refs:
        entry = entries.get(ref)
        if entry is None or entry.sealed is None:
            shown[ref] = ERASED
            continue
        kind = (
            schema.kinds.get(entry.kind)
            if schema is not None and entry.domain_id == event.domain_id
            else None
        )
        attribute = kind.attributes.get(entry.attribute) if kind is not None else None
        if attribute is None or not set(attribute.sensitivity) <= set(hook.clearances):
            shown[ref] = MASK
        else:
            shown[ref] = orjson.loads(sealer.unseal(entry.sealed))
    return dict(orjson.loads(substitute(body, shown, json=True)))


def _masked(value: Any) -> Any:
    """`value` with every vault ref in it replaced by `***`."""
    if is_ref(value):
        return MASK
    if isinstance(value, dict):
        return {name: _masked(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_masked(item) for item in value]
    return value


__all__ = ["reveal_delivery"]
