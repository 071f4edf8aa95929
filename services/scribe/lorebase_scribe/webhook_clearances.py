"""Clearances: a webhook with clearances receives the values of operation events they cover,
re-rendered from the invocation's clear parameters (lorebase.operation_events).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lorebase_store.outbox import OutboxEvent
from lorebase_store.webhooks import DeliveryRow, WebhookRow

if TYPE_CHECKING:  # names for annotations only
    from lorebase_store.db import Database
    from lorebase_store.store import Txn


def _wants_reveal(hook: WebhookRow | None, event: OutboxEvent | None) -> bool:
    return (
        hook is not None
        and event is not None
        and bool(hook.clearances)
        and event.type.startswith("operation.")
        and bool(event.event.get("invocation_id"))
    )


async def cleared_inputs(
    db: Database,
    page: list[DeliveryRow],
    hooks: dict[str, WebhookRow],
    events: dict[int, OutboxEvent],
    schemas: dict[tuple[int, str], Any],
) -> dict[str, dict[str, Any]]:
    """The invocations behind the page's operation events bound for webhooks with clearances (by
    id), and the schemas their Revisions were committed under (parsed into `schemas`, by Domain id
    and Revision)."""
    wanted = [
        events[d.sequence] for d in page if _wants_reveal(hooks.get(d.webhook_id), events.get(d.sequence))
    ]
    if not wanted:
        return {}
    from lorebase.schema import load_schema

    async def load(txn: Txn) -> tuple[dict[str, dict[str, Any]], dict[tuple[int, str], dict[str, Any]]]:
        return (
            await txn.invocations_by_id_full([str(e.event["invocation_id"]) for e in wanted]),
            await txn.revision_schemas(
                [
                    (e.domain_id, e.revision)
                    for e in wanted
                    if e.revision and (e.domain_id, e.revision) not in schemas
                ]
            ),
        )

    found, documents = await db.read("webhook_reveal_load", load)
    for ref, document in documents.items():
        try:
            schemas[ref] = load_schema(document)
        except Exception:  # a schema that no longer loads reveals nothing
            schemas[ref] = None
    return found


def delivery_document(
    hook: WebhookRow,
    event: OutboxEvent,
    cleared: dict[str, dict[str, Any]],
    schemas: dict[tuple[int, str], Any],
) -> dict[str, Any]:
    """What this webhook receives: the stored document, with the values its clearances cover
    re-rendered (lorebase.operation_events) for operation events."""
    document = event.document()
    if not _wants_reveal(hook, event):
        return document
    invocation = cleared.get(str(event.event["invocation_id"]))
    schema = schemas.get((event.domain_id, event.revision or ""))
    if invocation is None or schema is None:
        return document
    from lorebase.operation_events import revealed

    return revealed(document, schema, invocation, hook.clearances)


__all__ = ["cleared_inputs", "delivery_document"]
