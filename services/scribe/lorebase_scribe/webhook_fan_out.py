"""Fan-out, the first step of a webhook delivery pass: outbox events after the cursor `webhooks`
(feed_cursors) up to the outbox fence become one pending delivery per matching webhook, and the
cursor moves, in one transaction per page. A delivery is keyed (webhook, sequence), so a repeated
fan-out adds nothing. A webhook gets only the events after its `start_after` (`start_position`,
taken when it is created).
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from lorebase.ids import utc_now
from lorebase_store.webhooks import WebhookRow

if TYPE_CHECKING:  # names for annotations only
    from lorebase_store.db import Database
    from lorebase_store.store import Txn

CURSOR = "webhooks"
_FAN_OUT_PAGE = 500


async def fan_out(db: Database) -> int:
    """Queue a delivery per event after the cursor (up to the fence) and matching webhook."""
    from lorebase_store.fence import Fence

    start = await db.read("webhook_cursor", lambda txn: txn.cursor(CURSOR))
    if start is None:
        # The first pass starts at the fence: webhooks receive what commits from now on. A fresh
        # fence stays at 0 while a write transaction that began before it runs; starting there
        # would deliver the whole history, so the cursor waits for a pass where it has moved.
        fence = await Fence().advance(db)
        if fence == 0 and await db.read_one("outbox_taken", lambda txn: txn.sequence_taken()) > 0:
            return 0
        await db.run_interaction("webhook_cursor_init", lambda txn: txn.set_cursor(CURSOR, fence))
        return 0
    upto = await Fence(safe=start).advance(db)
    queued = 0
    position = start
    while position < upto:

        async def page(txn: Txn, after: int = position) -> tuple[int, int]:
            events = await txn.events_after(after, upto=upto, limit=_FAN_OUT_PAGE)
            hooks: dict[int, list[WebhookRow]] = {}
            rows = []
            now = utc_now()
            for event in events:
                if event.domain_id not in hooks:
                    hooks[event.domain_id] = await txn.list_webhooks(event.domain_id)
                for hook in hooks[event.domain_id]:
                    if hook.wants(event):
                        rows.append(
                            {
                                "id": "dlv_" + secrets.token_hex(10),
                                "webhook_id": hook.id,
                                "sequence": event.sequence,
                                "type": event.type,
                                "status": "pending",
                                "attempts": 0,
                                "next_attempt_at": now,
                                "created_at": now,
                            }
                        )
            await txn.add_deliveries(rows)
            reached = upto if len(events) < _FAN_OUT_PAGE else events[-1].sequence
            await txn.set_cursor(CURSOR, reached)
            return reached, len(rows)

        position, count = await db.run_interaction("webhook_fan_out", page)
        queued += count
    return queued


__all__ = ["CURSOR", "fan_out"]
