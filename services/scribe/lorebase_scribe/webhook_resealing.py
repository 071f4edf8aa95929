"""Re-sealing, a step of a webhook delivery pass: signing keys stored unsealed or under a previous
key are sealed again under the current key (lorebase.webhook_secrets).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorebase.webhook_secrets import Sealer, SecretKeyError

if TYPE_CHECKING:  # names for annotations only
    from lorebase_store.db import Database
    from lorebase_store.store import Txn


async def reseal(db: Database, sealer: Sealer, *, batch: int) -> int:
    """Seal up to `batch` signing keys stored unsealed or under a previous key with the current key."""
    if sealer.current is None:
        return 0

    async def run(txn: Txn) -> int:
        done = 0
        for hook in await txn.list_webhooks():
            if done >= batch:
                break
            if sealer.needs_resealing(hook.signing_key):
                try:
                    digest = sealer.unseal(hook.signing_key)
                except SecretKeyError:
                    continue  # its deliveries fail naming the setting
                await txn.update_webhook(hook.id, signing_key=sealer.seal(digest))
                done += 1
        return done

    return await db.run_interaction("webhook_reseal", run)


__all__ = ["reseal"]
